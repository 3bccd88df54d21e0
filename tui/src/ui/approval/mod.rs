//! The approval modal: which tool wants to do what, all of it — for a command the whole command
//! line, for a file written or edited the file and its hunks (`body.rs`), as the tool's
//! declaration previews it (`ToolDecl::preview`, never its name) — in a window that scrolls
//! when it does not fit, with the keys below: dimmed, and a line saying the modal waits for a
//! pause in typing, until it takes answers; or the confirmation of a standing rule, or the
//! one-line reason input of a denial. Drawn over the transcript, across its whole width, while
//! `App::approval_modal` says it shows.

mod body;

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Padding, Paragraph};
use seedpod_protocol::{ApprovalRequest, CommandRule, Preview, quote_words};
use seedpod_transcript::{Role, Theme};
// Rows, tails and widths are the transcript's grapheme-aware ones.
use seedpod_transcript::render::{tail, width as columns, wrap_columns as wrap_rows};

use super::popups::{boxed, centred};
use crate::app::{ApprovalModal, window};
use crate::diff::file_change;

/// Said while the modal waits for a pause in typing before it takes answers.
const WAITING_FOR_A_PAUSE: &str =
    "◌ waiting for a pause in typing — until then keys go to your message below";

/// The keys that move the body, said when it does not fit.
const SCROLL_KEYS: &str = "↑↓ PgUp/PgDn Home/End";

/// What the frame laid out for the body: its rows, the rows it had room for, the rows at which
/// hunks start (for `App::approval_laid_out`).
pub struct LaidOut {
    pub len: usize,
    pub room: usize,
    pub hunks: Vec<usize>,
}

/// Draw the modal over `area` (the transcript's), as wide as it.
pub fn draw(
    frame: &mut Frame,
    modal: &ApprovalModal<'_>,
    theme: &Theme,
    area: Rect,
    now: Instant,
) -> LaidOut {
    let width = area.width;
    // Borders and one column of padding on each side.
    let inner = usize::from(width.saturating_sub(4)).max(1);
    let max_rows = usize::from(area.height.saturating_sub(2));
    let request = modal.request;
    let change = file_change(request, modal.preview);
    let body = body::body(request, modal.preview, change.as_ref(), inner, theme);
    let mut keys = keys(modal, theme, inner, now);

    // Title, blank, body, blank, keys: the body gets what is left, and scrolls in it.
    let mut room = max_rows.saturating_sub(3 + keys.len());
    if body.rows.len() > room {
        keys.push(scroll_legend(body.hunks.len() > 1, theme));
        room = room.saturating_sub(1);
    }
    let room = room.max(1);
    let shown = window(modal.scroll.top(), body.rows.len(), room);

    let tool = Span::styled(
        clean(&request.tool),
        theme.style(Role::Tool).add_modifier(Modifier::BOLD),
    );
    let asks = body::asks(request, modal.preview, change.as_ref());
    let mut lines = vec![Line::from(vec![tool, Span::raw(asks)]), Line::raw("")];
    let more = |n: usize, arrow: &str| {
        let what = if n == 1 { "line" } else { "lines" };
        Line::styled(format!("{arrow} {n} more {what}"), theme.style(Role::Focus))
    };
    if shown.above > 0 && room >= 3 {
        lines.push(more(shown.above, "↑"));
    }
    lines.extend(body.rows.iter().skip(shown.top).take(shown.shown).cloned());
    if shown.below > 0 && room >= 3 {
        lines.push(more(shown.below, "↓"));
    }
    lines.push(Line::raw(""));
    lines.extend(keys);

    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centred(area, width, height);
    frame.render_widget(Clear, rect);
    let block = boxed("approval needed", theme).padding(Padding::horizontal(1));
    frame.render_widget(Paragraph::new(lines).block(block), rect);
    LaidOut {
        len: body.rows.len(),
        room,
        hunks: body.hunks,
    }
}

/// The legend line of the scroll keys, and of the hunk keys when there are hunks to move
/// between.
fn scroll_legend(hunks: bool, theme: &Theme) -> Line<'static> {
    let key = |k: &str| Span::styled(format!("{k}  "), theme.style(Role::Code));
    let mut spans = vec![key(SCROLL_KEYS), Span::raw("scroll")];
    if hunks {
        spans.extend([
            Span::raw("   "),
            key("Tab/Shift-Tab"),
            Span::raw("next/previous hunk"),
        ]);
    }
    Line::from(spans)
}

/// What the keys do now: answer (once the modal takes answers), confirm a standing rule,
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
            wrap_words(&rule(modal.request, modal.preview), inner)
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
            Span::raw(format!(
                "{} — asks to confirm",
                always(modal.request, modal.preview)
            )),
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

/// What a confirmed `a` grants, exactly as the pod will remember it: for a command (whose
/// "always" is a rule over its words, `ApprovalRequest::always`) the rule, else the tool.
fn rule(request: &ApprovalRequest, preview: Preview) -> String {
    let tool = clean(&request.tool);
    match (&request.always, preview == Preview::Command) {
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
fn always(request: &ApprovalRequest, preview: Preview) -> String {
    match (&request.always, preview == Preview::Command) {
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
    use crate::test_support::preview_of;

    fn request(tool: &str, arguments: &str, prefix: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            call_id: seedpod_protocol::CallId::new("c"),
            tool: tool.into(),
            arguments: arguments.into(),
            summary: format!("{tool}: something"),
            always: prefix.map(|p| CommandRule::Prefix(p.split(' ').map(str::to_string).collect())),
            replaces: None,
        }
    }

    /// What `a` covers and grants, for the call previewed as its tool's declaration says.
    fn always(request: &ApprovalRequest) -> String {
        super::always(request, preview_of(&request.tool))
    }

    fn rule(request: &ApprovalRequest) -> String {
        super::rule(request, preview_of(&request.tool))
    }

    #[test]
    fn always_and_its_rule_say_what_the_pod_will_remember() {
        let shell = request("shell", r#"{"command":"cargo test"}"#, Some("cargo"));
        assert_eq!(always(&shell), "always allow `cargo …` in this pod");
        let write = request("write_file", r#"{"path":"a.txt"}"#, None);
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
    fn prose_wraps_at_spaces() {
        assert_eq!(tail("hello world", 5), "world");
        assert_eq!(
            wrap_words("runs without asking", 11),
            vec!["runs", "without", "asking"]
        );
        assert_eq!(wrap_words("a bb", 4), vec!["a bb"]);
    }
}
