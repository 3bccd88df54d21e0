//! Reasoning as OpenAI's Responses API hands it out, and the request options that shape it.
//!
//! A reasoning model's chain of thought comes back as a `reasoning` output item: an id, the
//! summary the model wrote of its thinking, and (with `include: ["reasoning.encrypted_content"]`)
//! the thinking itself, encrypted. Sending the item back on the next request lets the model
//! continue that chain across tool calls. It is kept here, inside `ModelItem::Reasoning`, so it
//! is in the log and a restored pod sends it back exactly as the live one would
//! (docs/storage.md, docs/configuration.md §The Responses API).

use serde::{Deserialize, Serialize};

/// The part of a Responses API `reasoning` item that must go back verbatim. Typed rather than
/// one opaque string so that no other provider mistakes it for its own signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponsesReasoning {
    /// The item's id (`rs_…`), as the server gave it.
    pub id: String,
    /// Each `summary_text` part, in order (the joined text is the item's `text`, for people).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
    /// The encrypted reasoning, opaque to us; absent when the server sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
}

impl ResponsesReasoning {
    /// The summary as people read it: the parts, a blank line apart.
    pub fn summary_text(&self) -> String {
        self.summary.join("\n\n")
    }
}

/// How hard a reasoning model thinks (`reasoning.effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl ReasoningEffort {
    pub const ALL: [ReasoningEffort; 6] = [
        ReasoningEffort::None,
        ReasoningEffort::Minimal,
        ReasoningEffort::Low,
        ReasoningEffort::Medium,
        ReasoningEffort::High,
        ReasoningEffort::Xhigh,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::None => "none",
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::Xhigh => "xhigh",
        }
    }
}

/// How much of its reasoning the model summarises for people (`reasoning.summary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningSummary {
    Auto,
    Concise,
    Detailed,
}

impl ReasoningSummary {
    pub const ALL: [ReasoningSummary; 3] = [
        ReasoningSummary::Auto,
        ReasoningSummary::Concise,
        ReasoningSummary::Detailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningSummary::Auto => "auto",
            ReasoningSummary::Concise => "concise",
            ReasoningSummary::Detailed => "detailed",
        }
    }
}

/// What a Responses API request asks beyond the history. Part of `ModelConfig`, so it is in the
/// log: a restored pod asks exactly what the live one asked, whatever the files say today.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResponsesOptions {
    /// Let OpenAI keep the response (`store`). Off unless configured: the log is our record,
    /// and with it off the reasoning must travel encrypted, which is what keeps replay exact.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub store: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_summary: Option<ReasoningSummary>,
    /// Not sent unless set, so the API's default (parallel calls allowed) applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
}

impl ResponsesOptions {
    /// Whether every option is at its default (then none is recorded).
    pub fn is_default(&self) -> bool {
        *self == ResponsesOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_options_record_nothing_and_read_back() {
        assert_eq!(
            serde_json::to_string(&ResponsesOptions::default()).unwrap(),
            "{}"
        );
        let set = ResponsesOptions {
            store: true,
            reasoning_effort: Some(ReasoningEffort::High),
            reasoning_summary: Some(ReasoningSummary::Detailed),
            parallel_tool_calls: Some(false),
        };
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(
            json,
            r#"{"store":true,"reasoning_effort":"high","reasoning_summary":"detailed","parallel_tool_calls":false}"#
        );
        assert_eq!(
            serde_json::from_str::<ResponsesOptions>(&json).unwrap(),
            set
        );
    }

    #[test]
    fn names_match_their_wire_spelling() {
        for effort in ReasoningEffort::ALL {
            let json = serde_json::to_string(&effort).unwrap();
            assert_eq!(json, format!("\"{}\"", effort.as_str()));
        }
        for summary in ReasoningSummary::ALL {
            let json = serde_json::to_string(&summary).unwrap();
            assert_eq!(json, format!("\"{}\"", summary.as_str()));
        }
    }
}
