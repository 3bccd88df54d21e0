//! Searching the transcript (`/find`, Ctrl-F): which cells hold a text and how many times, in
//! order. Works on every cell the client holds, the pages loaded from earlier segments
//! included; what a cell is searched by is what it shows (or shows when expanded), not the
//! wire format. Where an occurrence sits on screen (its line) is the view's to say
//! (`render/search.rs`), since only the view knows the width.

use std::borrow::Cow;

use seedpod_protocol::flatten_to_text;

use super::cells::CellKind;
use super::transcript::Transcript;

impl Transcript {
    /// The indices of the committed cells whose text contains `query`, ignoring case, oldest
    /// first. An empty query finds nothing.
    pub fn find(&self, query: &str) -> Vec<usize> {
        let query = query.trim().to_lowercase();
        if query.is_empty() {
            return Vec::new();
        }
        self.cells[..self.committed]
            .iter()
            .enumerate()
            .filter(|(_, cell)| searchable(&cell.kind).to_lowercase().contains(&query))
            .map(|(index, _)| index)
            .collect()
    }
}

/// One occurrence of a search: the `nth` (from 0) time the text appears in cell `cell`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    pub cell: usize,
    pub nth: usize,
}

impl Transcript {
    /// Every occurrence of `query` in the committed cells, ignoring case, oldest first: a text
    /// found eleven times in one answer is eleven occurrences. An empty query finds nothing.
    pub fn occurrences(&self, query: &str) -> Vec<Occurrence> {
        let query = query.trim().to_lowercase();
        if query.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        for (cell, held) in self.cells[..self.committed].iter().enumerate() {
            let count = searchable(&held.kind)
                .to_lowercase()
                .matches(query.as_str())
                .count();
            found.extend((0..count).map(|nth| Occurrence { cell, nth }));
        }
        found
    }
}

impl Transcript {
    /// What cell `index` says, as text (what `/copy` takes from a focused cell).
    pub fn cell_text(&self, index: usize) -> Option<String> {
        let cell = self.cells.get(index)?;
        let text = searchable(&cell.kind).into_owned();
        (!text.trim().is_empty()).then_some(text)
    }
}

/// The last fenced code block in `text` (its content, without the fences).
pub fn last_code_block(text: &str) -> Option<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        match (&mut current, fence) {
            (None, true) => current = Some(Vec::new()),
            (Some(lines), true) => {
                blocks.push(lines.join("\n"));
                current = None;
            }
            (Some(lines), false) => lines.push(line),
            (None, false) => {}
        }
    }
    blocks.pop()
}

/// The text a person would search a cell by.
fn searchable(kind: &CellKind) -> Cow<'_, str> {
    match kind {
        CellKind::UserInput { segments } => Cow::Owned(flatten_to_text(segments)),
        CellKind::AssistantText { text, .. } | CellKind::Thinking { text, .. } => {
            Cow::Borrowed(text)
        }
        CellKind::ToolCall {
            name,
            arguments,
            output,
            ..
        } => Cow::Owned(format!("{name} {arguments}\n{output}")),
        CellKind::Approval { request, .. } => {
            Cow::Owned(format!("{} {}", request.summary, request.arguments))
        }
        CellKind::Notification { message } => Cow::Borrowed(message),
        CellKind::FileAttachment { path, body } => Cow::Owned(format!("{path}\n{body}")),
        CellKind::Knowledge { slug, body } | CellKind::Workflow { slug, body } => {
            Cow::Owned(format!("{slug}\n{body}"))
        }
        CellKind::TaskReminder { body, .. } | CellKind::Interrupt { body } => Cow::Borrowed(body),
        CellKind::Alert { message, .. } => Cow::Borrowed(message),
        CellKind::RunEnd { message, .. } => Cow::Borrowed(message.as_deref().unwrap_or("")),
        CellKind::Compaction { record } => Cow::Borrowed(&record.summary),
        CellKind::ApprovalRevoked { rule } | CellKind::StandingAllowed { rule } => {
            Cow::Borrowed(rule)
        }
        CellKind::Unknown { raw, .. } => Cow::Borrowed(raw),
        CellKind::PodEvent { event } => Cow::Owned(format!("{event:?}")),
        CellKind::SegmentStart { .. }
        | CellKind::Noted
        | CellKind::ModelChanged { .. }
        | CellKind::DateChanged { .. }
        | CellKind::ContextPruned { .. }
        | CellKind::WindowLearned { .. }
        | CellKind::LogHead { .. } => Cow::Borrowed(""),
    }
}
