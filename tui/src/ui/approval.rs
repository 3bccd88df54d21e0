//! The approval modal: which tool wants to do what (for `shell`, the command itself; for
//! `edit_file`/`write_file`, the file and a diff scrolled with ↑↓), the other arguments,
//! bounded, and the keys — dimmed, with a countdown, while type-ahead is ignored —
//! or the confirmation of a standing rule, or the one-line reason input of a denial. Drawn over
//! the transcript while `App::approval_modal` says it shows.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Padding, Paragraph};
use seedpod_protocol::{ApprovalRequest, CommandRule, quote_words};
use seedpod_transcript::render::argument_lines;
use seedpod_transcript::{Role, Theme};
// Rows, tails and widths are the transcript's grapheme-aware ones.
use seedpod_transcript::render::{tail, width as columns, wrap_columns as wrap_rows};

use super::popups::{boxed, centred};
use crate::app::ApprovalModal;
use crate::diff::{DIFF_ROWS, DiffLine, edit_diff};

/// The widest the modal gets.
const MODAL_WIDTH: u16 = 80;
/// Rows of the command (or summary) before it is cut.
const SUBJECT_ROWS: usize = 6;
/// Rows of the other arguments before they are cut.
const ARGUMENT_ROWS: usize = 8;
/// Said while the modal waits for a pause in typing before it takes answers.
const WAITING_FOR_A_PAUSE: &str =
    "◌ waiting for a pause in typing — until then keys go to your message below";
/// The tool whose requests are about a command line, shown as `$ command`; its `approve_always`
/// covers the command's first word (`ApprovalRequest::prefix`), not the whole tool.
const SHELL: &str = "shell";

pub fn draw(
    frame: &mut Frame,
    modal: &ApprovalModal<'_>,
    theme: &Theme,
    area: Rect,
    now: Instant,
) -> (usize, usize, Vec<usize>) {
    let width = area.width.min(MODAL_WIDTH);
    // Borders and one column of padding on each side.
    let inner = usize::from(width.saturating_sub(4)).max(1);
    let max_rows = usize::from(area.height.saturating_sub(2));
    let request = modal.request;
    // An edit shows the file and what changes in it, instead of its raw arguments.
    let diff = edit_diff(request);
    let (subject, arguments, is_command) = match &diff {
        Some((path, _)) => (clean(path), Vec::new(), false),
        None => subject_and_arguments(request),
    };
    let keys = keys(modal, theme, inner, now);

    let mut subject_rows = wrap_rows(&subject, inner);
    let mut argument_rows: Vec<String> = arguments
        .iter()
        .flat_map(|line| wrap_rows(line, inner))
        .collect();
    // Title, blank, subject, (blank, arguments), blank, keys: arguments give way first.
    let fixed = 3 + keys.len() + usize::from(!argument_rows.is_empty() || diff.is_some());
    let room = max_rows.saturating_sub(fixed);
    let subject_room = SUBJECT_ROWS.min(room).max(1);
    bound(&mut subject_rows, subject_room, inner);
    let rest_room = room.saturating_sub(subject_rows.len());
    let body: Vec<Line> = match &diff {
        Some((_, diff)) => diff_window(
            diff,
            modal.scroll.top(),
            DIFF_ROWS.min(rest_room),
            inner,
            theme,
        ),
        None => {
            bound(&mut argument_rows, ARGUMENT_ROWS.min(rest_room), inner);
            argument_rows
                .into_iter()
                .map(|row| Line::styled(row, theme.style(Role::Dim)))
                .collect()
        }
    };

    let tool = Span::styled(
        request.tool.clone(),
        theme.style(Role::Tool).add_modifier(Modifier::BOLD),
    );
    let asks = if is_command {
        " wants to run a command"
    } else if diff.is_some() {
        " wants to change a file"
    } else {
        " asks for approval"
    };
    let mut lines = vec![Line::from(vec![tool, Span::raw(asks)]), Line::raw("")];
    lines.extend(
        subject_rows
            .into_iter()
            .map(|row| Line::styled(row, theme.style(Role::Assistant))),
    );
    if !body.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(body);
    }
    lines.push(Line::raw(""));
    lines.extend(keys);

    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centred(area, width, height);
    frame.render_widget(Clear, rect);
    let block = boxed("approval needed", theme).padding(Padding::horizontal(1));
    frame.render_widget(Paragraph::new(lines).block(block), rect);
    let diff_len = diff.map_or(0, |(_, d)| d.len());
    (diff_len, DIFF_ROWS, Vec::new())
}

/// What the call does, in the words a person decides on (`$ cargo test` for a shell command,
/// else the summary), the arguments not already said there, and whether it is a command.
fn subject_and_arguments(request: &ApprovalRequest) -> (String, Vec<String>, bool) {
    if request.tool == SHELL
        && let Ok(serde_json::Value::Object(mut map)) =
            serde_json::from_str::<serde_json::Value>(&request.arguments)
        && let Some(serde_json::Value::String(command)) = map.remove("command")
    {
        let rest = serde_json::Value::Object(map).to_string();
        return (
            format!("$ {}", clean(&command)),
            argument_lines(&rest),
            true,
        );
    }
    let tool_prefix = format!("{}:", request.tool);
    let summary = request.summary.trim();
    let summary = summary
        .strip_prefix(&tool_prefix)
        .map_or(summary, str::trim_start);
    (clean(summary), argument_lines(&request.arguments), false)
}

/// What the keys do now: answer (once the grace period is over), confirm a standing rule,
/// type a reason, or wait for the pod.
fn keys(
    modal: &ApprovalModal<'_>,
    theme: &Theme,
    inner: usize,
    now: Instant,
) -> Vec<Line<'static>> {
    let key = |k: &str| Span::styled(format!("{k:<6}"), theme.style(Role::Code));
    if modal.sending {
        return vec![Line::styled("sending your answer…", theme.style(Role::Dim))];
    }
    if modal.confirming {
        let mut lines = vec![Line::styled(
            "Approve always? That sets a standing rule:",
            theme.style(Role::Heading),
        )];
        lines.extend(
            wrap_words(&rule(modal.request), inner)
                .into_iter()
                .map(|row| Line::styled(row, theme.style(Role::Assistant))),
        );
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            key("a"),
            Span::raw("or Enter: yes, approve always"),
        ]));
        lines.push(Line::from(vec![
            key("Esc"),
            Span::raw("or any other key: back to the question"),
        ]));
        return lines;
    }
    if let Some(reason) = modal.reason {
        // The end of what was typed, so the cursor stays in view.
        let shown = tail(reason, inner.saturating_sub(3));
        return vec![
            Line::raw("Why deny it? The model reads the reason (optional)."),
            Line::from(vec![
                Span::styled("› ", theme.style(Role::User)),
                Span::raw(shown),
                Span::styled(" ", theme.style(Role::Focus)),
            ]),
            Line::from(vec![
                key("Enter"),
                Span::raw("deny   "),
                key("Esc"),
                Span::raw("back to the question"),
            ]),
        ];
    }
    let mut lines = vec![
        Line::from(vec![key("y"), Span::raw("approve this call")]),
        Line::from(vec![
            key("a"),
            Span::raw(format!("{} — asks to confirm", always(modal.request))),
        ]),
        Line::from(vec![key("n"), Span::raw("deny (you may give a reason)")]),
        Line::from(vec![
            key("Esc"),
            Span::raw("hide; the request keeps waiting (Ctrl-A shows it)"),
        ]),
    ];
    if !modal.takes_answers(now) {
        for line in &mut lines {
            *line = std::mem::take(line).style(theme.style(Role::Dim));
        }
        lines.push(Line::styled(
            WAITING_FOR_A_PAUSE.to_string(),
            theme.style(Role::Dim),
        ));
    }
    lines
}

/// What a confirmed `a` grants, exactly as the pod will remember it.
fn rule(request: &ApprovalRequest) -> String {
    let tool = clean(&request.tool);
    match (&request.always, request.tool == SHELL) {
        (Some(CommandRule::Prefix(words)), true) => format!(
            "from now on, `{} …` commands run in this pod without asking (only as one plain \
             command: no pipes, redirections, substitutions or escapes), until revoked with \
             /approvals.",
            clean(&quote_words(words))
        ),
        (Some(CommandRule::Exact(words)), true) => format!(
            "from now on, exactly `{}` runs in this pod without asking, until revoked with \
             /approvals.",
            clean(&quote_words(words))
        ),
        (Some(rule), false) => format!(
            "from now on, {tool} calls for `{}` run in this pod without asking.",
            clean(&rule.display())
        ),
        (None, true) => "none, in fact: this is not one plain command a rule may cover, so \
                         the pod approves this call once and remembers nothing."
            .to_string(),
        (None, false) => {
            format!("from now on, every {tool} call runs in this pod without asking.")
        }
    }
}

/// What `a` (approve always) covers, as the pod will remember it.
fn always(request: &ApprovalRequest) -> String {
    match (&request.always, request.tool == SHELL) {
        (Some(rule), true) => format!("always allow `{}` in this pod", clean(&rule.display())),
        (Some(rule), false) => format!(
            "always allow {} `{}` in this pod",
            clean(&request.tool),
            clean(&rule.display())
        ),
        // The pod approves such a command once: no rule may cover it.
        (None, true) => "approve this command (no rule may cover it)".to_string(),
        (None, false) => format!("always allow {} in this pod", clean(&request.tool)),
    }
}

/// The part of a diff that fits in `rows` rows from line `scroll` on, each line cut at the
/// modal's width; when it does not all fit, the last row says where the window is.
fn diff_window(
    diff: &[DiffLine],
    scroll: usize,
    rows: usize,
    inner: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if rows == 0 {
        return Vec::new();
    }
    let shown = if diff.len() <= rows {
        diff.len()
    } else {
        rows.saturating_sub(1).max(1)
    };
    let start = scroll.min(diff.len() - shown);
    let width = inner.saturating_sub(2) as u16;
    let mut lines: Vec<Line<'static>> = diff[start..start + shown]
        .iter()
        .map(|line| {
            let (marker, role, text) = match line {
                DiffLine::Same(text) => ("  ", Role::Dim, text),
                DiffLine::Removed(text) => ("- ", Role::Error, text),
                DiffLine::Added(text) => ("+ ", Role::Ok, text),
            };
            Line::from(vec![
                Span::styled(marker, theme.style(role)),
                Span::raw(super::fit(&clean(text), width)),
            ])
        })
        .collect();
    if shown < diff.len() {
        lines.push(Line::styled(
            format!(
                "↑↓ scroll · lines {}–{} of {}",
                start + 1,
                start + shown,
                diff.len()
            ),
            theme.style(Role::Dim),
        ));
    }
    lines
}

/// Keep at most `rows` rows; the last kept one says how many were cut.
fn bound(rows: &mut Vec<String>, max: usize, inner: usize) {
    if rows.len() <= max {
        return;
    }
    let cut = rows.len() - max.saturating_sub(1);
    rows.truncate(max.saturating_sub(1));
    let more = if cut == 1 {
        "… 1 more line".to_string()
    } else {
        format!("… {cut} more lines")
    };
    rows.push(super::fit(&more, inner as u16));
}

/// Prose broken into rows at spaces (a word wider than a row is cut at the column).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in text.split(' ') {
        let used = columns(&row);
        let needed = columns(word) + usize::from(!row.is_empty());
        if !row.is_empty() && used + needed > width {
            rows.push(std::mem::take(&mut row));
        }
        if !row.is_empty() {
            row.push(' ');
        }
        row.push_str(word);
    }
    rows.push(row);
    rows.into_iter()
        .flat_map(|row| wrap_rows(&row, width))
        .collect()
}

/// Outside text made safe to draw: tabs become spaces, other controls go; newlines stay.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .filter(|c| *c == '\n' || !c.is_control())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, arguments: &str, prefix: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c".into(),
            tool: tool.into(),
            arguments: arguments.into(),
            summary: format!("{tool}: something"),
            always: prefix.map(|p| CommandRule::Prefix(p.split(' ').map(str::to_string).collect())),
            replaces: None,
        }
    }

    #[test]
    fn shell_requests_show_the_command_and_the_rest_of_the_arguments() {
        let shell = request(
            "shell",
            r#"{"command":"cargo test\u001b[2J","timeout":30}"#,
            Some("cargo"),
        );
        let (subject, rest, is_command) = subject_and_arguments(&shell);
        assert_eq!(subject, "$ cargo test[2J");
        assert_eq!(rest, vec!["timeout: 30"]);
        assert!(is_command);
        assert_eq!(always(&shell), "always allow `cargo …` in this pod");
        let write = request("write_file", r#"{"path":"a.txt"}"#, None);
        let (subject, rest, is_command) = subject_and_arguments(&write);
        assert_eq!(subject, "something");
        assert_eq!(rest, vec!["path: a.txt"]);
        assert!(!is_command);
        assert_eq!(always(&write), "always allow write_file in this pod");
        assert!(
            rule(&shell).contains("`cargo …` commands run in this pod without asking"),
            "{}",
            rule(&shell)
        );
        assert!(
            rule(&write).contains("every write_file call"),
            "{}",
            rule(&write)
        );
        let unknown = request("shell", r#"{"command":"$X"}"#, None);
        assert!(rule(&unknown).contains("once"), "{}", rule(&unknown));
    }

    #[test]
    fn long_text_is_wrapped_then_bounded() {
        let mut rows = wrap_rows(&"x".repeat(50), 20);
        assert_eq!(rows.len(), 3);
        bound(&mut rows, 2, 20);
        assert_eq!(rows, vec!["x".repeat(20), "… 2 more lines".to_string()]);
        assert_eq!(tail("hello world", 5), "world");
        assert_eq!(
            wrap_words("runs without asking", 11),
            vec!["runs", "without", "asking"]
        );
        assert_eq!(wrap_words("a bb", 4), vec!["a bb"]);
    }
}
