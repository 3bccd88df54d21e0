//! Everything neither person nor model wrote: notifications, child pod events, attachments,
//! knowledge, workflows, reminders, interrupts, alerts, separators and unknown items.

use std::borrow::Cow;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use seedpod_protocol::{AlertLevel, PodEvent, ReminderSource, RunEndReason, SegmentId, Usage};

use super::format::{bytes, compact, count, duration_ms};
use super::text::{sanitize, truncate, width};
use super::theme::{Role, Theme};
use super::wrap::{hard_wrap, wrap, wrap_text};
use crate::model::SegmentOrigin;

/// The hanging indent of continuation lines.
const HANG: [Span<'static>; 1] = [Span {
    style: Style::new(),
    content: Cow::Borrowed("  "),
}];

/// A notification: a banner with its message (the body the model saw is not shown).
pub(crate) fn notification(message: &str, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let style = theme.style(Role::Notification);
    let first = [Span::styled("◆ ", style)];
    let message = sanitize(message);
    wrap_text(message.trim_end(), style, available, &first, &HANG)
}

/// A child pod's report: its name and what happened.
pub(crate) fn pod_event(event: &PodEvent, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let name = |pod: &str| {
        Span::styled(
            sanitize(pod).into_owned(),
            theme.style(Role::Assistant).add_modifier(Modifier::BOLD),
        )
    };
    let plain = |text: String| Span::styled(text, theme.style(Role::Assistant));
    let spans = match event {
        PodEvent::TurnEnded { pod, .. } => vec![name(pod), plain(" finished a turn".into())],
        PodEvent::Errored { pod, message, .. } => vec![
            name(pod),
            Span::styled(" failed: ", theme.style(Role::Error)),
            plain(sanitize(message).replace('\n', " ")),
        ],
        PodEvent::ShutDown { pod, .. } => vec![name(pod), plain(" shut down".into())],
        PodEvent::ScopeSubDelegated {
            pod, child, scope, ..
        } => vec![
            name(pod),
            plain(format!(" delegated {} to ", scope.join(", "))),
            name(child),
        ],
        PodEvent::Unknown => vec![Span::styled(
            "a child pod reported an event this client does not know",
            theme.style(Role::Dim),
        )],
    };
    let first = [Span::styled("◇ ", theme.style(Role::Tool))];
    wrap(&spans, available, &first, &HANG)
}

/// A header that opens onto a body: attachments, knowledge, workflows, reminders.
pub(crate) fn collapsible(
    mut header: Vec<Span<'static>>,
    body: &str,
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let toggle = if expanded { "▾ " } else { "▸ " };
    header.insert(0, Span::styled(toggle, theme.style(Role::Dim)));
    let mut out = wrap(&header, available, &[], &HANG);
    if expanded {
        let bar = [Span::styled("  │ ", theme.style(Role::Dim))];
        let body = sanitize(body);
        for line in body.trim_end_matches('\n').split('\n') {
            let spans = [Span::styled(line.to_string(), theme.style(Role::Dim))];
            out.extend(hard_wrap(&spans, available, &bar, &bar));
        }
    }
    out
}

/// `@path · 1.2 KiB · 40 lines`, `#slug · knowledge · 3 lines` and the like.
pub(crate) fn body_header(
    chip: String,
    what: Option<&str>,
    body: &str,
    theme: &Theme,
) -> Vec<Span<'static>> {
    let lines = body.trim_end_matches('\n').split('\n').count();
    let mut detail = String::new();
    if let Some(what) = what {
        detail.push_str(" · ");
        detail.push_str(&sanitize(what).replace('\n', " "));
    }
    detail.push_str(&format!(
        " · {} · {}",
        bytes(body.len()),
        count(lines, "line", "lines")
    ));
    vec![
        Span::styled(sanitize(&chip).replace('\n', " "), theme.style(Role::Chip)),
        Span::styled(detail, theme.style(Role::Dim)),
    ]
}

/// Why a reminder was sent, in a person's words (`None`: a kind this client does not know).
pub(crate) fn reminder_reason(source: ReminderSource) -> Option<&'static str> {
    match source {
        ReminderSource::TaskInactivity => Some("open tasks left untouched for a while"),
        ReminderSource::Unknown => None,
    }
}

/// The note a stopped turn leaves. Its body is written for the model ("The user cancelled
/// …"), so the person sees what happened; the body shows, as what the model was told, when
/// the cell is expanded.
pub(crate) fn interrupt(
    body: &str,
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let toggle = if expanded { "▾ " } else { "▸ " };
    let header = [
        Span::styled(toggle, theme.style(Role::Dim)),
        Span::styled("■ turn interrupted", theme.style(Role::Warn)),
        Span::styled(" · what was not shown was not done", theme.style(Role::Dim)),
    ];
    let mut out = wrap(&header, available, &[], &HANG);
    if expanded {
        let body = sanitize(body);
        let told = format!("the model was told: {}", without_tag(body.trim()));
        let bar = [Span::styled("  │ ", theme.style(Role::Dim))];
        out.extend(wrap_text(
            &told,
            theme.style(Role::Dim),
            available,
            &bar,
            &bar,
        ));
    }
    out
}

/// Bodies written for the model open with a tag (`[interrupted] ...`); the header already
/// says it.
fn without_tag(body: &str) -> &str {
    match body.strip_prefix('[').and_then(|rest| rest.split_once(']')) {
        Some((tag, rest)) if tag.len() <= 20 && !tag.contains(' ') => rest.trim_start(),
        Some(_) | None => body,
    }
}

pub(crate) fn alert(
    level: AlertLevel,
    message: &str,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (glyph, label, role) = match level {
        AlertLevel::Warn => ("! ", "warning: ", Role::Warn),
        AlertLevel::Error => ("✗ ", "error: ", Role::Error),
        AlertLevel::Info | AlertLevel::Unknown => ("i ", "note: ", Role::Dim),
    };
    let first = [
        Span::styled(glyph, theme.style(role)),
        Span::styled(label, theme.style(role).add_modifier(Modifier::BOLD)),
    ];
    let message = sanitize(message);
    wrap_text(
        message.trim(),
        theme.style(Role::Assistant),
        available,
        &first,
        &HANG,
    )
}

/// The separator after a run: how it ended, how long it took, what it cost.
pub(crate) fn run_end(
    reason: RunEndReason,
    message: Option<&str>,
    duration: Option<u64>,
    tokens: Option<&Usage>,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (label, role) = match reason {
        RunEndReason::Completed => ("done", Role::Dim),
        RunEndReason::LimitReached => ("stopped at the iteration limit", Role::Warn),
        RunEndReason::NoProgress => ("stopped: no progress", Role::Warn),
        RunEndReason::Cancelled => ("cancelled", Role::Warn),
        RunEndReason::Abandoned => ("abandoned", Role::Warn),
        RunEndReason::Error => ("failed", Role::Error),
        RunEndReason::Unknown => ("ended", Role::Dim),
    };
    let mut details = Vec::new();
    if let Some(ms) = duration {
        details.push(duration_ms(ms));
    }
    if let Some(usage) = tokens {
        let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens;
        if input + usage.output_tokens > 0 {
            details.push(format!(
                "{} in · {} out",
                compact(input),
                compact(usage.output_tokens)
            ));
        }
        // Prompt caching at work (Anthropic breakpoints, OpenAI's automatic cache).
        if usage.cache_read_tokens > 0 {
            details.push(format!("{} cached", compact(usage.cache_read_tokens)));
        }
    }
    let mut label_spans = vec![Span::styled(label, theme.style(role))];
    if !details.is_empty() {
        label_spans.push(Span::styled(
            format!(" · {}", details.join(" · ")),
            theme.style(Role::Dim),
        ));
    }
    let mut out = vec![rule(label_spans, available, theme)];
    if let Some(message) = message.map(sanitize).filter(|m| !m.trim().is_empty()) {
        out.extend(wrap_text(
            message.trim(),
            theme.style(role),
            available,
            &HANG,
            &HANG,
        ));
    }
    out
}

/// `── label ───────` across the width; the label is cut before the line overflows.
pub(crate) fn rule(label: Vec<Span<'static>>, available: usize, theme: &Theme) -> Line<'static> {
    let dim = theme.style(Role::Dim);
    // "── " before the label and at least " ─" after it.
    let room = available.saturating_sub(5);
    let mut spans = vec![Span::styled("── ", dim)];
    let mut label_width = 0;
    for span in label {
        let left = room.saturating_sub(label_width);
        if left == 0 {
            break;
        }
        let text = truncate(&span.content, left);
        label_width += width(&text);
        spans.push(Span::styled(text, span.style));
    }
    let used = 3 + label_width;
    if available > used + 1 {
        spans.push(Span::styled(
            format!(" {}", "─".repeat(available - used - 1)),
            dim,
        ));
    }
    Line::from(spans)
}

/// Hex digits of a segment id a label shows.
const SHORT_ID_DIGITS: usize = 8;

/// A segment id as a label shows it: the last eight hex digits. Ids are UUIDv7, whose first
/// digits are a timestamp (segments made within a minute share them) and whose last are
/// random, so the tail tells segments apart.
pub(crate) fn short_segment_id(id: &str) -> String {
    let digits: Vec<char> = id.chars().filter(char::is_ascii_hexdigit).collect();
    if digits.len() < SHORT_ID_DIGITS || digits.len() + 4 < id.chars().count() {
        // Not a UUID (a test's `s1`, a hand-made id): as it is.
        return id.to_string();
    }
    digits[digits.len() - SHORT_ID_DIGITS..].iter().collect()
}

pub(crate) fn segment_start(
    segment_id: &SegmentId,
    provider: &str,
    model: &str,
    origin: &SegmentOrigin,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let this = short_segment_id(segment_id.as_str());
    let label = match origin {
        SegmentOrigin::New => format!("segment {this} · {provider}/{model}"),
        // Like `/clear`'s: the compaction cell under it says what the summary replaced.
        SegmentOrigin::CompactedFrom(_) => {
            format!("new segment (compacted) · {this} · {provider}/{model}")
        }
        // Older ids in full: time-ordered ids of segments made a minute apart share their
        // first eight characters.
        SegmentOrigin::ForkedFrom(from) => {
            format!("segment {this} · {provider}/{model} · forked from {from}")
        }
        SegmentOrigin::ClearedFrom(_) => {
            format!("new segment (cleared) · {this} · {provider}/{model}")
        }
        SegmentOrigin::RecomposedFrom(_) => {
            format!("new segment (compact prompt) · {this} · {provider}/{model}")
        }
        SegmentOrigin::RewoundFrom(from) => {
            format!("new segment (rewound) · {this} · {provider}/{model} · from {from}")
        }
        SegmentOrigin::Unknown => {
            format!("segment {this} · {provider}/{model} · of an unknown origin")
        }
    };
    let label = sanitize(&label).replace('\n', " ");
    let mut out = vec![rule(
        vec![Span::styled(label, theme.style(Role::Dim))],
        available,
        theme,
    )];
    if let SegmentOrigin::ClearedFrom(from) = origin {
        // Said under the rule because the cells above stay on screen but no longer reach the
        // model.
        let note = sanitize(&format!(
            "the model's history starts afresh here; segment {from} stays in the log"
        ))
        .into_owned();
        out.extend(wrap_text(
            &note,
            theme.style(Role::Dim),
            available,
            &HANG,
            &HANG,
        ));
    }
    out
}

pub(crate) fn model_changed(
    provider: &str,
    model: &str,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text = sanitize(&format!("model changed to {provider}/{model}")).into_owned();
    let first = [Span::styled("· ", theme.style(Role::Dim))];
    wrap_text(&text, theme.style(Role::Dim), available, &first, &HANG)
}

/// Something this client does not understand: its label, then what it knows of it, raw.
pub(crate) fn unknown(
    label: &str,
    raw: &str,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let first = [Span::styled("? ", theme.style(Role::Warn))];
    let label = sanitize(label).replace('\n', " ");
    let mut out = wrap_text(&label, theme.style(Role::Warn), available, &first, &HANG);
    let raw = sanitize(raw);
    if !raw.trim().is_empty() {
        let spans = [Span::styled(raw.replace('\n', " "), theme.style(Role::Dim))];
        out.extend(hard_wrap(&spans, available, &HANG, &HANG));
    }
    out
}
