//! History items for the context module's tests, so each test reads as a conversation.

use seedpod_protocol::{CallId, ModelItem};

pub fn user(text: &str) -> ModelItem {
    ModelItem::UserMessage { text: text.into() }
}

pub fn text(text: &str) -> ModelItem {
    ModelItem::AssistantText { text: text.into() }
}

/// A `read_file` call with id `id`.
pub fn call(id: &str) -> ModelItem {
    ModelItem::ToolCall {
        call_id: CallId::new(id),
        name: "read_file".into(),
        arguments: r#"{"path":"a"}"#.into(),
    }
}

pub fn result(id: &str, content: &str) -> ModelItem {
    ModelItem::ToolResult {
        call_id: CallId::new(id),
        content: content.into(),
        is_error: false,
        images: Vec::new(),
    }
}
