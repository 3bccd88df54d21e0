//! The completion popup: what the pod suggested for the `@`/`#`/`/` word being typed, or the
//! model name after `/model `.
//!
//! Suggestions come from the pod (`list_completions`), so they arrive a little later than the
//! keystroke; a reply is used only if it still answers the word under the cursor.

use seedpod_protocol::{Completion, CompletionKind};

use crate::composer::{MODEL_SIGIL, Sigil};

/// Rows the popup shows at most.
pub const POPUP_ROWS: usize = 8;

/// The kinds a sigil asks for.
pub fn kinds_for(sigil: char) -> &'static [CompletionKind] {
    match sigil {
        '@' => &[CompletionKind::File],
        '#' => &[CompletionKind::Knowledge],
        '/' => &[CompletionKind::Command, CompletionKind::Workflow],
        MODEL_SIGIL => &[CompletionKind::Model],
        _ => &[],
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Popup {
    pub sigil: char,
    pub prefix: String,
    pub items: Vec<(CompletionKind, Completion)>,
    pub selected: usize,
    pub truncated: bool,
}

impl Popup {
    pub fn new(sigil: char, prefix: String) -> Popup {
        Popup {
            sigil,
            prefix,
            items: Vec::new(),
            selected: 0,
            truncated: false,
        }
    }

    /// The word moved on: keep what still fits while the pod's new answer is on its way.
    pub fn retarget(&mut self, prefix: String) {
        self.items.retain(|(kind, item)| match kind {
            CompletionKind::File => true,
            CompletionKind::Command
            | CompletionKind::Workflow
            | CompletionKind::Knowledge
            | CompletionKind::Model
            | CompletionKind::Unknown => item.value.starts_with(&prefix),
        });
        self.prefix = prefix;
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
    }

    /// A reply for `kind` and `prefix`: used only if the popup still completes that prefix.
    pub fn answer(
        &mut self,
        kind: CompletionKind,
        prefix: &str,
        items: Vec<Completion>,
        truncated: bool,
    ) -> bool {
        if prefix != self.prefix || !kinds_for(self.sigil).contains(&kind) {
            return false;
        }
        self.items.retain(|(k, _)| *k != kind);
        self.items
            .extend(items.into_iter().map(|item| (kind, item)));
        // Commands before workflows, in the pod's order within each.
        let order = |k: &CompletionKind| kinds_for(self.sigil).iter().position(|x| x == k);
        self.items.sort_by_key(|(k, _)| order(k));
        self.truncated = truncated;
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
        true
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn up(&mut self) {
        self.selected = self
            .selected
            .checked_sub(1)
            .unwrap_or(self.items.len().saturating_sub(1));
    }

    pub fn down(&mut self) {
        self.selected = if self.selected + 1 >= self.items.len() {
            0
        } else {
            self.selected + 1
        };
    }

    /// The chosen item, as (reference kind, value, final). A command is no reference: it is
    /// typed out and runs on Enter.
    pub fn choice(&self) -> Option<(Option<Sigil>, String, bool)> {
        let (kind, item) = self.items.get(self.selected)?;
        let value = item.value.clone();
        Some(match kind {
            CompletionKind::File => {
                let is_final = !value.ends_with('/');
                (Some(Sigil::File), value, is_final)
            }
            CompletionKind::Knowledge => (Some(Sigil::Knowledge), value, true),
            CompletionKind::Workflow => (Some(Sigil::Workflow), value, true),
            CompletionKind::Command | CompletionKind::Model | CompletionKind::Unknown => {
                (None, value, true)
            }
        })
    }

    /// The rows to show: a window of `POPUP_ROWS` around the selection.
    pub fn window(&self) -> (usize, &[(CompletionKind, Completion)]) {
        let start = self
            .selected
            .saturating_sub(POPUP_ROWS - 1)
            .min(self.items.len().saturating_sub(POPUP_ROWS));
        let end = (start + POPUP_ROWS).min(self.items.len());
        (start, &self.items[start..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(value: &str) -> Completion {
        Completion::new(value, "")
    }

    #[test]
    fn stale_answers_are_ignored() {
        let mut popup = Popup::new('@', "sr".into());
        assert!(!popup.answer(CompletionKind::File, "s", vec![c("src/")], false));
        assert!(!popup.answer(CompletionKind::Knowledge, "sr", vec![c("x")], false));
        assert!(popup.answer(CompletionKind::File, "sr", vec![c("src/")], false));
        assert_eq!(
            popup.choice(),
            Some((Some(Sigil::File), "src/".into(), false))
        );
    }

    #[test]
    fn commands_come_before_workflows_and_selection_wraps() {
        let mut popup = Popup::new('/', "re".into());
        popup.answer(CompletionKind::Workflow, "re", vec![c("review")], false);
        popup.answer(CompletionKind::Command, "re", vec![c("resume")], false);
        assert_eq!(popup.choice(), Some((None, "resume".into(), true)));
        popup.down();
        assert_eq!(
            popup.choice(),
            Some((Some(Sigil::Workflow), "review".into(), true))
        );
        popup.down();
        assert_eq!(popup.selected, 0);
        popup.up();
        assert_eq!(popup.selected, 1);
        popup.retarget("rev".into());
        assert_eq!(popup.items.len(), 1);
    }
}
