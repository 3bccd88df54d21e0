//! Which history items pruning may touch (the protected zone of docs/agent-loop.md §Pruning):
//! never the first user message, never the last N assistant messages and the tool results that
//! answer them. (The system prompt is not part of history, so it is out of reach by
//! construction.)

use seedpod_protocol::ModelItem;

/// Index of the first item of the protected tail: the start of the `keep`-th last assistant
/// message, where one assistant message is a run of consecutive assistant items (reasoning,
/// text, tool calls) — the tool results after it belong to it and fall inside the tail too.
/// `history.len()` when there are no assistant messages to keep.
pub fn protected_tail_start(history: &[ModelItem], keep: usize) -> usize {
    if keep == 0 {
        return history.len();
    }
    let mut found = 0;
    let mut i = history.len();
    while i > 0 {
        i -= 1;
        if is_assistant(&history[i]) && (i == 0 || !is_assistant(&history[i - 1])) {
            found += 1;
            if found == keep {
                return i;
            }
        }
    }
    0
}

/// Index of the first user message, which stays whatever happens.
pub fn first_user_message(history: &[ModelItem]) -> Option<usize> {
    history
        .iter()
        .position(|item| matches!(item, ModelItem::UserMessage { .. }))
}

pub fn is_assistant(item: &ModelItem) -> bool {
    match item {
        ModelItem::AssistantText { .. }
        | ModelItem::Reasoning { .. }
        | ModelItem::ToolCall { .. } => true,
        ModelItem::UserMessage { .. }
        | ModelItem::ToolResult { .. }
        | ModelItem::SystemMessage { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::items::{self, call, text, user};

    fn result(id: &str) -> ModelItem {
        items::result(id, "x")
    }

    #[test]
    fn the_tail_starts_at_the_kth_last_assistant_message() {
        // 0 user, 1-2 assistant(text+call), 3 result, 4 call, 5 result, 6 text
        let h = vec![
            user("u"),
            text("a"),
            call("1"),
            result("1"),
            call("2"),
            result("2"),
            text("done"),
        ];
        assert_eq!(protected_tail_start(&h, 1), 6);
        assert_eq!(protected_tail_start(&h, 2), 4);
        assert_eq!(
            protected_tail_start(&h, 3),
            1,
            "text and call are one message"
        );
        assert_eq!(
            protected_tail_start(&h, 9),
            0,
            "fewer messages than kept: all protected"
        );
        assert_eq!(protected_tail_start(&h, 0), h.len());
        assert_eq!(first_user_message(&h), Some(0));
    }
}
