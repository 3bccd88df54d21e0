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
    /// Model reasoning. `signature` is opaque provider data that must be sent back verbatim.
    Reasoning {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
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
    },
    /// A `SystemItem`'s body, sent as a system-role message.
    SystemMessage {
        text: String,
    },
}

impl ModelItem {
    /// Whether this item is a tool call (the turn loop answers these before the next request).
    pub fn as_tool_call(&self) -> Option<(&str, &str, &str)> {
        match self {
            ModelItem::ToolCall {
                call_id,
                name,
                arguments,
            } => Some((call_id.as_str(), name, arguments)),
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
            call_id: "c1".into(),
            name: "read".into(),
            arguments: raw.into(),
        };
        let json = serde_json::to_string(&item).unwrap();
        let back: ModelItem = serde_json::from_str(&json).unwrap();
        assert_eq!(back.as_tool_call(), Some(("c1", "read", raw)));
    }

    #[test]
    fn reasoning_without_signature_omits_the_field() {
        let item = ModelItem::Reasoning {
            text: "hmm".into(),
            signature: None,
        };
        assert_eq!(
            serde_json::to_string(&item).unwrap(),
            r#"{"type":"reasoning","text":"hmm"}"#
        );
    }
}
