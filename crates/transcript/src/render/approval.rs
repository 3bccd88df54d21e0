//! Approval requests: which call waits for a person (tool and summary), its arguments in brief,
//! and where the request stands (waiting, approved, approved always, denied, closed).
//!
//! `argument_lines` and `standing_scope` are public: the app's approval prompt shows the same
//! words as the cell.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use seedpod_protocol::{ApprovalRequest, StandingApproval};

use super::format::count;
use super::text::{sanitize, truncate};
use super::theme::{Role, Theme};
use super::wrap::{hard_wrap, wrap};
use crate::model::ApprovalStatus;

/// Argument lines shown while an approval cell is collapsed.
pub const COLLAPSED_ARGUMENT_LINES: usize = 6;

/// The arguments of a call, one `key: value` per line (strings unquoted, other values as
/// compact JSON), then multi-line strings indented under their key. Arguments that are not a JSON
/// object are shown as they are. Safe to draw: control characters are removed.
pub fn argument_lines(arguments: &str) -> Vec<String> {
    let trimmed = arguments.trim();
    if trimmed.is_empty() || trimmed == "{}" {
        return Vec::new();
    }
    let clean = |s: &str| -> Vec<String> {
        let cleaned = sanitize(s);
        cleaned
            .trim_end_matches('\n')
            .split('\n')
            .map(str::to_string)
            .collect()
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(trimmed)
    else {
        return clean(trimmed);
    };
    // One-line values first: a file's path says more than the first lines of its content.
    let mut short = Vec::new();
    let mut long = Vec::new();
    for (key, value) in &map {
        let key = sanitize(key).replace('\n', " ");
        match value {
            serde_json::Value::String(text) if text.contains('\n') => {
                long.push(format!("{key}:"));
                long.extend(clean(text).into_iter().map(|line| format!("  {line}")));
            }
            serde_json::Value::String(text) => {
                short.push(format!("{key}: {}", sanitize(text)));
            }
            other => {
                let json = serde_json::to_string(other).unwrap_or_default();
                short.push(format!("{key}: {}", sanitize(&json)));
            }
        }
    }
    short.extend(long);
    short
}

/// What an `approve_always` answer covers, in a few words: `shell: cargo …` (commands starting
/// with `cargo`) or just the tool's name.
pub fn standing_scope(standing: &StandingApproval) -> String {
    sanitize(&standing.display()).replace('\n', "⏎")
}

/// The summary without the tool name it usually starts with (`shell: cargo test`), since the
/// header names the tool already.
fn subject(request: &ApprovalRequest) -> String {
    let summary = sanitize(&request.summary).replace('\n', " ");
    let tool_prefix = format!("{}:", request.tool);
    match summary.strip_prefix(&tool_prefix) {
        Some(rest) => rest.trim().to_string(),
        None => summary.trim().to_string(),
    }
}

pub(crate) fn approval(
    request: &ApprovalRequest,
    status: &ApprovalStatus,
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let hang = [Span::raw("    ")];
    let toggle = if expanded { "▾ " } else { "▸ " };
    let first = [
        Span::styled(toggle, theme.style(Role::Dim)),
        Span::styled("◈ ", theme.style(Role::Warn)),
    ];
    let tool = if request.tool.is_empty() {
        "tool".to_string()
    } else {
        sanitize(&request.tool).replace('\n', " ")
    };
    let mut header = vec![Span::styled(
        tool,
        theme.style(Role::Tool).add_modifier(Modifier::BOLD),
    )];
    let subject = subject(request);
    if !subject.is_empty() {
        header.push(Span::raw(" "));
        header.push(Span::styled(subject, theme.style(Role::Assistant)));
    }
    // Approved, the card says so in one line under its call (whose own cell shows what it
    // did); Enter on it shows the arguments again. A waiting request, a denial (its reason
    // matters) and a closed one keep their room.
    let approved = matches!(
        status,
        ApprovalStatus::Approved | ApprovalStatus::ApprovedAlways(_)
    );
    if !expanded && approved {
        let (glyph, label, detail) = status_words(status, theme);
        let mut spans = vec![Span::styled(glyph, label.style), label];
        spans.extend(detail);
        spans.push(Span::styled(" · ", theme.style(Role::Dim)));
        spans.extend(header);
        let line = super::text::truncate_spans(&spans, available.saturating_sub(2));
        let mut all = vec![Span::styled(toggle, theme.style(Role::Dim))];
        all.extend(line);
        return vec![Line::from(all)];
    }
    let mut out = wrap(&header, available, &first, &hang);
    out.extend(arguments(&request.arguments, expanded, available, theme));
    let (glyph, label, detail) = status_words(status, theme);
    let lead = [
        Span::styled("  └ ", theme.style(Role::Dim)),
        Span::styled(glyph, label.style),
    ];
    let mut spans = vec![label];
    spans.extend(detail);
    out.extend(wrap(&spans, available, &lead, &hang));
    out
}

fn arguments(
    arguments: &str,
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let bar = [Span::styled("  │ ", dim)];
    let lines = argument_lines(arguments);
    let mut out = Vec::new();
    if expanded {
        for line in &lines {
            out.extend(hard_wrap(
                &[Span::styled(line.clone(), dim)],
                available,
                &bar,
                &bar,
            ));
        }
        return out;
    }
    let room = available.saturating_sub(4);
    for line in lines.iter().take(COLLAPSED_ARGUMENT_LINES) {
        let mut spans = bar.to_vec();
        spans.push(Span::styled(truncate(line, room), dim));
        out.push(Line::from(spans));
    }
    if lines.len() > COLLAPSED_ARGUMENT_LINES {
        let more = count(
            lines.len() - COLLAPSED_ARGUMENT_LINES,
            "more line",
            "more lines",
        );
        out.push(Line::from(Span::styled(format!("  … {more}"), dim)));
    }
    out
}

/// The state line's glyph, its label (styled) and any detail after it.
fn status_words(
    status: &ApprovalStatus,
    theme: &Theme,
) -> (&'static str, Span<'static>, Vec<Span<'static>>) {
    let styled = |text: &'static str, role: Role| Span::styled(text, theme.style(role));
    let detail = |text: String, style: Style| vec![Span::styled(text, style)];
    match status {
        ApprovalStatus::Waiting => ("◌ ", styled("waiting for approval", Role::Warn), Vec::new()),
        ApprovalStatus::Approved => ("✓ ", styled("approved", Role::Ok), Vec::new()),
        ApprovalStatus::ApprovedAlways(standing) => (
            "✓ ",
            styled("approved always", Role::Ok),
            detail(
                format!(" ({})", standing_scope(standing)),
                theme.style(Role::Dim),
            ),
        ),
        ApprovalStatus::Denied { reason } => {
            let reason = sanitize(reason).replace('\n', " ");
            let reason = reason.trim();
            let text = if reason.is_empty() {
                String::new()
            } else {
                format!(": {reason}")
            };
            (
                "✗ ",
                styled("denied", Role::Error),
                detail(text, theme.style(Role::Assistant)),
            )
        }
        ApprovalStatus::Closed => (
            "■ ",
            styled("closed without an answer", Role::Warn),
            detail(" (the run ended)".to_string(), theme.style(Role::Dim)),
        ),
        ApprovalStatus::Unknown => (
            "? ",
            styled("answered", Role::Warn),
            detail(
                " in a way this client does not know".to_string(),
                theme.style(Role::Dim),
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_read_as_key_value_lines() {
        assert_eq!(
            argument_lines(r#"{"command":"cargo test","timeout":30}"#),
            vec!["command: cargo test", "timeout: 30"]
        );
        assert_eq!(
            argument_lines(r#"{"content":"a\nb","path":"x.rs"}"#),
            vec!["path: x.rs", "content:", "  a", "  b"]
        );
        assert_eq!(argument_lines("{}"), Vec::<String>::new());
        assert_eq!(
            argument_lines("not json\n\u{1b}[31mred"),
            vec!["not json", "red"]
        );
    }

    #[test]
    fn scopes_name_the_prefix_or_the_tool() {
        let cargo = StandingApproval {
            tool: "shell".into(),
            rule: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
        };
        assert_eq!(standing_scope(&cargo), "shell: cargo …");
        let whole = StandingApproval {
            tool: "write_file".into(),
            rule: None,
        };
        assert_eq!(standing_scope(&whole), "write_file");
    }
}
