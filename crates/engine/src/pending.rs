//! Finding tool calls that history holds without their results.
//!
//! A run can stop between committing a model's tool calls and committing their results (pause,
//! crash, `kill -9`). The calls are in the log, so they are in history; the next request must not
//! be sent until they are answered, because providers reject a call without a result. Deriving
//! them from history, rather than remembering them, keeps the loop free of state that the log
//! does not hold.

use seedpod_protocol::{CallId, ModelItem};

/// A tool call waiting for its result.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall {
    pub call_id: CallId,
    pub name: String,
    /// The raw argument text the model produced.
    pub arguments: String,
}

/// The tool calls history holds without results (`seedpod_protocol::unanswered_tool_calls`).
pub fn unanswered_tool_calls(items: &[ModelItem]) -> Vec<PendingCall> {
    seedpod_protocol::unanswered_tool_calls(items)
        .into_iter()
        .map(|(call_id, name, arguments)| PendingCall {
            call_id: call_id.clone(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ModelItem {
        ModelItem::ToolCall {
            call_id: CallId::new(id),
            name: "echo".into(),
            arguments: format!("{{\"id\":\"{id}\"}}"),
        }
    }

    fn result(id: &str) -> ModelItem {
        ModelItem::ToolResult {
            call_id: CallId::new(id),
            content: "ok".into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    fn ids(items: &[ModelItem]) -> Vec<CallId> {
        unanswered_tool_calls(items)
            .into_iter()
            .map(|c| c.call_id)
            .collect()
    }

    #[test]
    fn calls_without_results_in_order() {
        let items = vec![
            ModelItem::UserMessage { text: "go".into() },
            ModelItem::AssistantText { text: "ok".into() },
            call("a"),
            call("b"),
            call("c"),
            result("b"),
        ];
        assert_eq!(ids(&items), [CallId::new("a"), CallId::new("c")]);
        let pending = unanswered_tool_calls(&items);
        assert_eq!(pending[0].arguments, r#"{"id":"a"}"#);
    }

    #[test]
    fn answered_and_empty_histories_have_none() {
        assert!(ids(&[]).is_empty());
        let items = vec![
            ModelItem::UserMessage { text: "go".into() },
            call("a"),
            result("a"),
            ModelItem::AssistantText {
                text: "done".into(),
            },
        ];
        assert!(ids(&items).is_empty());
    }

    #[test]
    fn only_the_trailing_model_turn_counts() {
        let items = vec![
            call("old"),
            ModelItem::UserMessage {
                text: "next".into(),
            },
            call("new"),
        ];
        assert_eq!(ids(&items), [CallId::new("new")]);
        let closed = vec![call("old"), ModelItem::SystemMessage { text: "x".into() }];
        assert!(ids(&closed).is_empty());
    }

    #[test]
    fn history_of_only_model_items_is_scanned_whole() {
        assert_eq!(
            ids(&[call("a"), result("a"), call("b")]),
            [CallId::new("b")]
        );
    }
}
