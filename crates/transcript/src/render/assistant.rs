//! What the model said: its answer as markdown, and its thinking (dim, one line until opened).

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::markdown::markdown;
use super::text::{sanitize, truncate, width};
use super::theme::{Role, Theme};
use super::wrap::wrap_text;

pub(crate) fn assistant_text(
    text: &str,
    streaming: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if text.trim().is_empty() {
        let shown = if streaming { "…" } else { "(empty answer)" };
        return vec![Line::from(Span::styled(shown, theme.style(Role::Dim)))];
    }
    let lines = markdown(text, width, theme);
    if lines.is_empty() {
        // Markdown with nothing to draw (only link definitions, say) still gets a line.
        return vec![Line::from(Span::styled(
            "(empty answer)",
            theme.style(Role::Dim),
        ))];
    }
    lines
}

/// Under an answer that was stopped before it finished.
pub(crate) fn interrupted(theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(
        "⋯ interrupted — the answer stopped here",
        theme.style(Role::Dim),
    ))
}

/// A notification or report the model took note of without answering (`NO_REPLY`).
pub(crate) fn noted(theme: &Theme) -> Vec<Line<'static>> {
    vec![Line::from(Span::styled(
        "· noted, no reply needed",
        theme.style(Role::Dim),
    ))]
}

pub(crate) fn thinking(
    text: &str,
    streaming: bool,
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim).add_modifier(Modifier::ITALIC);
    let text = sanitize(text);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let label = if streaming { "thinking…" } else { "thinking" };
    if expanded {
        let mut out = vec![Line::from(vec![
            Span::styled("▾ ", theme.style(Role::Dim)),
            Span::styled(label, dim),
        ])];
        let indent = [Span::raw("  ")];
        out.extend(wrap_text(text.trim(), dim, available, &indent, &indent));
        return out;
    }
    // While streaming, the newest line says what the model is doing now; once committed, the
    // first line says what it set out to do.
    let summary = if streaming {
        lines.next_back()
    } else {
        lines.next()
    };
    let mut spans = vec![
        Span::styled("▸ ", theme.style(Role::Dim)),
        Span::styled(label, dim),
    ];
    if let Some(summary) = summary {
        let used = 2 + width(label) + 3;
        let room = available.saturating_sub(used);
        if room > 1 {
            spans.push(Span::styled(" · ", theme.style(Role::Dim)));
            spans.push(Span::styled(truncate(summary, room), dim));
        }
    }
    vec![Line::from(spans)]
}
