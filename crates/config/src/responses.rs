//! `[responses]`: what a pod on the `openai-responses` provider asks of OpenAI's Responses API
//! beyond the history (docs/configuration.md §The Responses API). Each key shapes the request
//! body, so like `temperature` it is recorded when a pod is created (`pod.json`, then the
//! segment's logged model) and an existing pod keeps what it was created with.

use seedpod_protocol::{ReasoningEffort, ReasoningSummary, ResponsesOptions};
use serde::Deserialize;

use crate::source::{Setting, Source};

/// `[responses]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponsesFile {
    pub store: Option<bool>,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub reasoning_summary: Option<ReasoningSummary>,
    pub parallel_tool_calls: Option<bool>,
}

/// The resolved `[responses]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponsesSettings {
    /// Let OpenAI keep each response. Off by default: the pod's log is the record, and the
    /// reasoning travels encrypted in every request instead.
    pub store: Setting<bool>,
    /// Not sent unless set (the model's default effort applies).
    pub reasoning_effort: Option<Setting<ReasoningEffort>>,
    /// Not sent unless set; without it, reasoning models send no summary to show.
    pub reasoning_summary: Option<Setting<ReasoningSummary>>,
    /// Not sent unless set (the API allows parallel calls by default).
    pub parallel_tool_calls: Option<Setting<bool>>,
}

impl ResponsesSettings {
    pub(crate) fn defaults() -> ResponsesSettings {
        ResponsesSettings {
            store: Setting::default(false),
            reasoning_effort: None,
            reasoning_summary: None,
            parallel_tool_calls: None,
        }
    }

    pub(crate) fn layer(&mut self, file: ResponsesFile, source: &Source) {
        self.store.layer(file.store, source);
        crate::source::layer_opt(&mut self.reasoning_effort, file.reasoning_effort, source);
        crate::source::layer_opt(&mut self.reasoning_summary, file.reasoning_summary, source);
        crate::source::layer_opt(
            &mut self.parallel_tool_calls,
            file.parallel_tool_calls,
            source,
        );
    }

    /// What the request asks, as recorded for a new pod.
    pub fn options(&self) -> ResponsesOptions {
        ResponsesOptions {
            store: self.store.value,
            reasoning_effort: self.reasoning_effort.as_ref().map(|s| s.value),
            reasoning_summary: self.reasoning_summary.as_ref().map(|s| s.value),
            parallel_tool_calls: self.parallel_tool_calls.as_ref().map(|s| s.value),
        }
    }

    /// An existing pod keeps the options it was created with (none recorded: the defaults).
    pub(crate) fn keep_recorded(&mut self, recorded: Option<ResponsesOptions>) {
        let recorded = recorded.unwrap_or_default();
        self.store = Setting::new(recorded.store, Source::Recorded);
        self.reasoning_effort = recorded
            .reasoning_effort
            .map(|v| Setting::new(v, Source::Recorded));
        self.reasoning_summary = recorded
            .reasoning_summary
            .map(|v| Setting::new(v, Source::Recorded));
        self.parallel_tool_calls = recorded
            .parallel_tool_calls
            .map(|v| Setting::new(v, Source::Recorded));
    }
}
