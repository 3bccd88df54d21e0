//! The modal's body: everything about the call a person decides on, as rows at the modal's
//! width, nothing cut — the whole command (`$ …`, wrapped) and the other arguments; or, for a
//! file edit, the file, a `+N −M` summary and each hunk with its line numbers. The modal shows a
//! window of these rows and scrolls it (`app::approval::scroll`).

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use seedpod_protocol::{ApprovalRequest, Preview};
use seedpod_transcript::render::argument_lines;
use seedpod_transcript::render::wrap_columns as wrap_rows;
use seedpod_transcript::{Role, Theme};

use super::clean;
use crate::diff::{ChangeKind, DiffLine, FileChange, Hunk, Tag};

/// The body's rows and where each hunk of a diff starts among them.
pub struct Body {
    pub rows: Vec<Line<'static>>,
    pub hunks: Vec<usize>,
}

/// What the call is about, in a few words for the modal's title line.
pub fn asks(
    request: &ApprovalRequest,
    preview: Preview,
    change: Option<&FileChange>,
) -> &'static str {
    match change.map(|c| &c.kind) {
        Some(ChangeKind::Create) => " wants to create a file",
        Some(ChangeKind::Change | ChangeKind::Edit { .. }) => " wants to change a file",
        Some(ChangeKind::Replace { .. }) => " wants to replace a file",
        None if command(request, preview).is_some() => " wants to run a command",
        None => " asks for approval",
    }
}

/// The body of `request` at `width` columns.
pub fn body(
    request: &ApprovalRequest,
    preview: Preview,
    change: Option<&FileChange>,
    width: usize,
    theme: &Theme,
) -> Body {
    let width = width.max(1);
    let subject = |text: &str| -> Vec<Line<'static>> {
        wrap_rows(text, width)
            .into_iter()
            .map(|row| Line::styled(row, theme.style(Role::Assistant)))
            .collect()
    };
    let mut rows = Vec::new();
    let mut hunks = Vec::new();
    let arguments = match change {
        Some(change) => {
            rows.extend(subject(&clean(&change.path)));
            rows.extend(
                wrap_rows(&summary(change), width)
                    .into_iter()
                    .map(|row| Line::styled(row, theme.style(Role::Dim))),
            );
            // What the diff does not already say (not the path or the texts).
            let known = ["path", "old", "new", "content", "replace_all"];
            other_arguments(&request.arguments, &known)
        }
        None => match command(request, preview) {
            Some((command, rest)) => {
                rows.extend(subject(&format!("$ {}", clean(&command))));
                rest
            }
            None => {
                rows.extend(subject(&summary_of(request)));
                argument_lines(&request.arguments)
            }
        },
    };
    if !arguments.is_empty() {
        rows.push(Line::raw(""));
        rows.extend(
            arguments
                .iter()
                .flat_map(|line| wrap_rows(line, width))
                .map(|row| Line::styled(row, theme.style(Role::Dim))),
        );
    }
    if let Some(change) = change {
        let gutter = Gutter::for_change(change);
        for (index, hunk) in change.hunks.iter().enumerate() {
            rows.push(Line::raw(""));
            hunks.push(rows.len());
            rows.push(Line::styled(
                header(change, hunk, index),
                theme.style(Role::Heading),
            ));
            for line in &hunk.lines {
                rows.extend(diff_rows(line, &gutter, width, theme));
            }
        }
    }
    Body { rows, hunks }
}

/// The command of a call previewed as one (`Preview::Command`) and its other arguments, when
/// the arguments parse.
fn command(request: &ApprovalRequest, preview: Preview) -> Option<(String, Vec<String>)> {
    if preview != Preview::Command {
        return None;
    }
    let serde_json::Value::Object(mut map) =
        serde_json::from_str::<serde_json::Value>(&request.arguments).ok()?
    else {
        return None;
    };
    let serde_json::Value::String(command) = map.remove("command")? else {
        return None;
    };
    let rest = serde_json::Value::Object(map).to_string();
    Some((command, argument_lines(&rest)))
}

/// The summary without the tool name it starts with (the title says it).
fn summary_of(request: &ApprovalRequest) -> String {
    let tool_prefix = format!("{}:", request.tool);
    let summary = request.summary.trim();
    clean(
        summary
            .strip_prefix(&tool_prefix)
            .map_or(summary, str::trim_start),
    )
}

/// The arguments but `known` ones, as `key: value` lines.
fn other_arguments(arguments: &str, known: &[&str]) -> Vec<String> {
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(arguments) else {
        return Vec::new();
    };
    map.retain(|key, _| !known.contains(&key.as_str()));
    if map.is_empty() {
        return Vec::new();
    }
    argument_lines(&serde_json::Value::Object(map).to_string())
}

/// One line about the whole change: what kind, how many lines go and come, in how many hunks.
pub fn summary(change: &FileChange) -> String {
    let counts = format!("+{} −{}", change.added, change.removed);
    let hunks = match change.hunks.len() {
        0 => "no change to the text".to_string(),
        1 => "1 hunk".to_string(),
        n => format!("{n} hunks"),
    };
    match &change.kind {
        ChangeKind::Create => format!("create (a new file) · {} lines", change.added),
        ChangeKind::Change => format!("change · {counts} · {hunks}"),
        ChangeKind::Replace { why } => format!(
            "replace · its current content is not shown ({}) · {} lines written",
            clean(why),
            change.added
        ),
        ChangeKind::Edit { every: false } => format!("edit · {counts} · {hunks}"),
        ChangeKind::Edit { every: true } if change.numbered() => {
            format!("edit every occurrence · {counts} · {hunks}")
        }
        ChangeKind::Edit { every: true } => {
            format!("edit every occurrence · {counts} · {hunks} (lines of the edit, not the file)")
        }
    }
}

/// A hunk's header: where it is in the file, or which hunk of the edit it is.
fn header(change: &FileChange, hunk: &Hunk, index: usize) -> String {
    if change.numbered() {
        format!(
            "@@ −{},{} +{},{} @@",
            hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len
        )
    } else {
        format!("@@ hunk {} of {} @@", index + 1, change.hunks.len())
    }
}

/// The line-number columns of a diff: the old and new numbers, each as wide as the largest.
struct Gutter {
    old: Option<usize>,
    new: Option<usize>,
}

impl Gutter {
    fn for_change(change: &FileChange) -> Gutter {
        if !change.numbered() {
            return Gutter {
                old: None,
                new: None,
            };
        }
        let lines = change.hunks.iter().flat_map(|h| &h.lines);
        let widest = |n: Option<usize>| n.map(|n| n.to_string().len());
        let old = lines.clone().filter_map(|l| widest(l.old)).max();
        let new = lines.filter_map(|l| widest(l.new)).max();
        Gutter { old, new }
    }

    fn cells(&self, line: Option<&DiffLine>) -> String {
        let cell = |width: Option<usize>, n: Option<usize>| match width {
            None => String::new(),
            Some(width) => match n {
                Some(n) => format!("{n:>width$} "),
                None => " ".repeat(width + 1),
            },
        };
        let (old, new) = line.map_or((None, None), |l| (l.old, l.new));
        cell(self.old, old) + &cell(self.new, new)
    }
}

/// One diff line as rows: line numbers, a `-`/`+` marker, the text wrapped in what is left
/// (later rows under the text, so nothing is cut).
fn diff_rows(line: &DiffLine, gutter: &Gutter, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let (marker, role) = match line.tag {
        Tag::Same => ("  ", None),
        Tag::Removed => ("- ", Some(Role::Error)),
        Tag::Added => ("+ ", Some(Role::Ok)),
    };
    let numbers = gutter.cells(Some(line));
    let blank = gutter.cells(None);
    let room = width.saturating_sub(numbers.chars().count() + 2).max(1);
    let text_style = role.map_or(theme.style(Role::Assistant), |r| theme.style(r));
    let text = clean(&line.text).replace('\n', " ");
    let mut rows: Vec<Line<'static>> = wrap_rows(&text, room)
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let numbers = if i == 0 {
                numbers.clone()
            } else {
                blank.clone()
            };
            Line::from(vec![
                Span::styled(numbers, theme.style(Role::Dim)),
                Span::styled(marker, text_style.add_modifier(Modifier::BOLD)),
                Span::styled(chunk, text_style),
            ])
        })
        .collect();
    if line.no_newline {
        rows.push(Line::from(vec![
            Span::raw(blank),
            Span::styled("  ⊘ no line break at the end", theme.style(Role::Dim)),
        ]));
    }
    rows
}
