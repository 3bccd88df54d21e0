//! What the person typed: text as typed, references and pastes as chips. Under the line that
//! holds a paste's chip, what was pasted: its first lines, folded, all of it when the cell is
//! expanded (Enter on the focused cell).

use ratatui::text::{Line, Span};
use seedpod_protocol::Segment;

use super::format::count;
use super::text::sanitize;
use super::theme::{Role, Theme};
use super::wrap::wrap;

/// The marker before user input.
const MARKER: &str = "› ";

/// Lines of a paste shown while its message is folded.
pub const PASTE_PREVIEW_LINES: usize = 3;

/// The bar before each line of pasted text.
const PASTE_BAR: &str = "  │ ";

pub(crate) fn user_input(
    segments: &[Segment],
    expanded: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let text_style = theme.style(Role::Assistant);
    let mut logical: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    // Pasted texts, each with the logical line its chip is on.
    let mut pasted: Vec<(usize, &str)> = Vec::new();
    let push = |logical: &mut Vec<Vec<Span<'static>>>, span: Span<'static>| {
        if let Some(line) = logical.last_mut() {
            line.push(span);
        }
    };
    for segment in segments {
        match segment {
            Segment::Text { text } => {
                for (n, piece) in sanitize(text).split('\n').enumerate() {
                    if n > 0 {
                        logical.push(Vec::new());
                    }
                    if !piece.is_empty() {
                        push(&mut logical, Span::styled(piece.to_string(), text_style));
                    }
                }
            }
            Segment::Paste {
                id,
                chars,
                lines,
                content,
                ..
            } => {
                pasted.push((logical.len() - 1, content));
                let label = format!(
                    "[Paste #{id} · {} · {}]",
                    count(*chars, "char", "chars"),
                    count(*lines, "line", "lines")
                );
                push(&mut logical, chip(&label, theme));
            }
            Segment::FileRef { path } => push(&mut logical, chip(&format!("@{path}"), theme)),
            Segment::KnowledgeRef { slug } => push(&mut logical, chip(&format!("#{slug}"), theme)),
            Segment::WorkflowInvoke { slug, args } => {
                push(&mut logical, chip(&format!("/{slug}"), theme));
                if !args.is_empty() {
                    let args = sanitize(args).replace('\n', " ");
                    push(&mut logical, Span::styled(format!(" {args}"), text_style));
                }
            }
            Segment::Unknown => {
                let span = Span::styled(
                    "[an input part this client does not know]",
                    theme.style(Role::Dim),
                );
                push(&mut logical, span);
            }
        }
    }
    let first = [Span::styled(MARKER, theme.style(Role::User))];
    let rest = [Span::raw(" ".repeat(MARKER.chars().count()))];
    let mut out = Vec::new();
    for (n, spans) in logical.iter().enumerate() {
        let prefix: &[Span<'static>] = if n == 0 { &first } else { &rest };
        out.extend(wrap(spans, width, prefix, &rest));
        for (_, content) in pasted.iter().filter(|(line, _)| *line == n) {
            out.extend(paste_lines(content, expanded, width, theme));
        }
    }
    out
}

/// What was pasted, under its chip: folded to its first lines unless `expanded`.
fn paste_lines(content: &str, expanded: bool, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let bar = [Span::styled(PASTE_BAR, theme.style(Role::Dim))];
    let text = sanitize(content);
    let all: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
    let shown = if expanded {
        all.len()
    } else {
        all.len().min(PASTE_PREVIEW_LINES)
    };
    let mut out = Vec::new();
    for line in &all[..shown] {
        let spans = [Span::styled(line.to_string(), theme.style(Role::Assistant))];
        out.extend(wrap(&spans, width, &bar, &bar));
    }
    let hidden = all.len() - shown;
    if hidden > 0 {
        let more = Span::styled(
            format!(
                "… {} · Enter on the focused message shows all",
                count(hidden, "more line", "more lines")
            ),
            theme.style(Role::Dim),
        );
        out.extend(wrap(&[more], width, &bar, &bar));
    }
    out
}

/// A chip stays in one piece when it fits a line: its spaces are made non-breaking.
fn chip(label: &str, theme: &Theme) -> Span<'static> {
    let label = sanitize(label).replace([' ', '\n'], "\u{a0}");
    Span::styled(label, theme.style(Role::Chip))
}
