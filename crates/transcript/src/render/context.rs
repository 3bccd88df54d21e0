//! What keeping the model's context inside its window leaves in the transcript: the compaction
//! cell (a summary replaced the conversation above), notes for pruning steps and a learned
//! window, and the head of a transcript whose log goes further back than what is loaded.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use seedpod_protocol::{Compaction, CompactionTrigger};

use super::format::{compact, count, window};
use super::markdown::markdown;
use super::text::{sanitize, truncate};
use super::theme::{Role, Theme};
use super::wrap::{wrap, wrap_text};
use crate::model::LogHead;

/// The hanging indent of continuation lines.
const HANG: [Span<'static>; 1] = [Span {
    style: Style::new(),
    content: Cow::Borrowed("  "),
}];

/// The bar in front of the expanded summary, as in other expanded bodies.
const BAR: &str = "  │ ";

/// `⇣ compacted 143 messages → summary of 2.1k tokens (kept 4)`, what it was about and why
/// when a person did not ask; expanded, the summary as markdown.
pub(crate) fn compaction(
    record: &Compaction,
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let toggle = if expanded { "▾ " } else { "▸ " };
    // The pod's own estimate (bytes / 4): the summary is not a request of its own, so no
    // provider ever counted it.
    let summary_tokens = (record.summary.len() as u64).div_ceil(4);
    let mut header = vec![
        Span::styled(toggle, dim),
        Span::styled("⇣ ", theme.style(Role::Tool)),
        Span::styled(
            format!(
                "compacted {} → summary of {} tokens",
                count(record.compacted_items as usize, "message", "messages"),
                compact(summary_tokens)
            ),
            theme.style(Role::Assistant),
        ),
    ];
    if record.kept_items > 0 {
        header.push(Span::styled(format!(" (kept {})", record.kept_items), dim));
    }
    let mut out = wrap(&header, available, &[], &HANG);
    // In the gauge's own words (`short_count`): right after a compaction the status line shows
    // the same "after" figure, the estimate of the next request (docs/agent-loop.md §Compaction).
    let mut details = vec![format!(
        "context {} → {} tokens",
        seedpod_protocol::short_count(record.tokens_before),
        seedpod_protocol::short_count(record.tokens_after)
    )];
    if let Some(focus) = record.focus.as_deref().map(str::trim)
        && !focus.is_empty()
    {
        details.push(format!("focus: {}", sanitize(focus).replace('\n', " ")));
    }
    if !record.memory_flush.is_empty() {
        let notes: Vec<String> = record
            .memory_flush
            .iter()
            .map(|line| sanitize(line).replace('\n', " "))
            .collect();
        details.push(format!("memory: {}", notes.join(", ")));
    }
    match record.trigger {
        // A person's `/compact`: they know why.
        CompactionTrigger::Command | CompactionTrigger::Unknown => {}
        CompactionTrigger::Auto => details.push("automatic: the context was filling up".into()),
        CompactionTrigger::Overflow => {
            details.push("the model server said the conversation was too long".into());
        }
    }
    out.extend(wrap_text(
        &details.join(" · "),
        dim,
        available,
        &HANG,
        &HANG,
    ));
    if expanded {
        let bar = [Span::styled(BAR, dim)];
        let inner = available.saturating_sub(BAR.chars().count()).max(1);
        let summary = sanitize(&record.summary);
        let body = if summary.trim().is_empty() {
            vec![Line::from(Span::styled("(an empty summary)", dim))]
        } else {
            markdown(&summary, inner, theme)
        };
        for line in body {
            let mut spans = bar.to_vec();
            spans.extend(line.spans);
            out.push(Line::from(spans));
        }
    }
    out
}

/// `· trimmed 3 old tool results to save context`.
pub(crate) fn context_pruned(
    results: usize,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text = format!(
        "trimmed {} to save context",
        count(results, "old tool result", "old tool results")
    );
    note(&text, available, theme)
}

/// `· the model server's window is 16k tokens (learned from its error)`.
pub(crate) fn window_learned(tokens: u64, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let text = format!(
        "the model server's window is {} tokens (learned from its error)",
        window(tokens)
    );
    note(&text, available, theme)
}

/// The day changed since the model was last told the date, and it was told the new one.
pub(crate) fn date_changed(date: &str, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let text = format!("the model was told today is {}", sanitize(date));
    note(&text, available, theme)
}

/// A standing approval withdrawn: from here on those calls ask again.
pub(crate) fn approval_revoked(rule: &str, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let text = format!(
        "standing approval revoked: {} — such calls ask again",
        sanitize(rule).replace('\n', "⏎")
    );
    note(&text, available, theme)
}

/// Under a call a standing approval let through: which rule, so the person can revoke it.
pub(crate) fn standing_allowed(rule: &str, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let text = format!(
        "allowed by the standing rule `{}` (/approvals to revoke)",
        sanitize(rule).replace('\n', "⏎")
    );
    note(&text, available, theme)
}

/// The top of a transcript whose log goes further back. While pages can still come it is one
/// line at any width (cut if need be), so turning into "loading" never moves the cells under
/// it; the last words (the beginning, the cap) may wrap.
pub(crate) fn log_head(head: &LogHead, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let text = match head {
        LogHead::More => "↑ the log goes further back — PgUp loads more",
        LogHead::Loading => "loading earlier…",
        LogHead::Beginning => "— beginning of the pod's log —",
        LogHead::Capped { pod } => {
            let text = format!(
                "older entries are not loaded here — `seedpod history {} --all` shows them",
                sanitize(pod).replace('\n', " ")
            );
            return wrap_text(&text, dim, available, &[], &HANG);
        }
    };
    match head {
        LogHead::More | LogHead::Loading => {
            vec![Line::from(Span::styled(truncate(text, available), dim))]
        }
        LogHead::Beginning | LogHead::Capped { .. } => wrap_text(text, dim, available, &[], &HANG),
    }
}

/// A dim one-line note, like the model-changed line.
fn note(text: &str, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    let first = [Span::styled("· ", theme.style(Role::Dim))];
    wrap_text(text, theme.style(Role::Dim), available, &first, &HANG)
}
