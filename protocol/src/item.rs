//! `ModelItem`: the provider-neutral history a model sees. Engines map these to each provider's
//! wire shape. They live here, beside the log entries, because an `assistant_item` entry stores
//! one verbatim on disk and on the wire.

use serde::{Deserialize, Serialize};

use crate::ids::CallId;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelItem {
    /// What the person submitted, flattened once at commit time.
    UserMessage {
        text: String,
    },
    AssistantText {
        text: String,
    },
    /// Model reasoning. `signature` is opaque provider data that must be sent back verbatim
    /// (Anthropic's); `responses` is a Responses API reasoning item, sent back verbatim by that
    /// provider only. `text` is what people read either way.
    Reasoning {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        responses: Option<crate::reasoning::ResponsesReasoning>,
    },
    /// A tool call. `arguments` is the raw string the model produced, never re-serialised.
    ToolCall {
        call_id: CallId,
        name: String,
        arguments: String,
    },
    ToolResult {
        call_id: CallId,
        content: String,
        is_error: bool,
        /// Images of an MCP tool's result, for providers that read images in tool results;
        /// the others read only `content`, whose placeholder line describes each.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ToolImage>,
    },
    /// A `SystemItem`'s body, sent as a system-role message.
    SystemMessage {
        text: String,
    },
}

/// An image a tool returned, as providers carry it: checked when it was committed (a mime type
/// of `pod/src/mcp/image.rs`'s allowlist, bytes that are that kind of image, a bounded size).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolImage {
    pub mime_type: String,
    /// Base64, standard alphabet, padded.
    pub data: String,
}

/// The tool calls in the trailing run of model output (what follows the last user or system
/// message) that have no result there yet, in call order: `(call_id, name, arguments)`. A run
/// can stop between a model's calls and their results (a pause, a crash), and providers refuse
/// a call without its result, so these are answered before the next request. The one reading
/// of "unanswered": the turn loop and the log's fold both use it.
pub fn unanswered_tool_calls(items: &[ModelItem]) -> Vec<(&CallId, &str, &str)> {
    let tail_start = items
        .iter()
        .rposition(|item| {
            matches!(
                item,
                ModelItem::UserMessage { .. } | ModelItem::SystemMessage { .. }
            )
        })
        .map_or(0, |i| i + 1);
    let tail = &items[tail_start..];
    let answered = |id: &CallId| {
        tail.iter()
            .any(|item| matches!(item, ModelItem::ToolResult { call_id, .. } if call_id == id))
    };
    tail.iter()
        .filter_map(ModelItem::as_tool_call)
        .filter(|(call_id, _, _)| !answered(call_id))
        .collect()
}

impl ModelItem {
    /// Whether this item is a tool call (the turn loop answers these before the next request).
    pub fn as_tool_call(&self) -> Option<(&CallId, &str, &str)> {
        match self {
            ModelItem::ToolCall {
                call_id,
                name,
                arguments,
            } => Some((call_id, name, arguments)),
            ModelItem::UserMessage { .. }
            | ModelItem::AssistantText { .. }
            | ModelItem::Reasoning { .. }
            | ModelItem::ToolResult { .. }
            | ModelItem::SystemMessage { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_arguments_stay_raw() {
        let raw = r#"{ "path" :"a.txt",  "n":1 }"#;
        let item = ModelItem::ToolCall {
            call_id: CallId::new("c1"),
            name: "read".into(),
            arguments: raw.into(),
        };
        let json = serde_json::to_string(&item).unwrap();
        let back: ModelItem = serde_json::from_str(&json).unwrap();
        assert_eq!(back.as_tool_call(), Some((&CallId::new("c1"), "read", raw)));
    }

    #[test]
    fn reasoning_without_signature_omits_the_field() {
        let item = ModelItem::Reasoning {
            text: "hmm".into(),
            signature: None,
            responses: None,
        };
        assert_eq!(
            serde_json::to_string(&item).unwrap(),
            r#"{"type":"reasoning","text":"hmm"}"#
        );
    }
}
