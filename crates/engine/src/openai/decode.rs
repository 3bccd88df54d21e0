//! Reading a Chat Completions chunk stream: content and reasoning deltas, tool calls assembled by
//! `index` from fragments (the id and name come with a call's first fragment), `finish_reason`,
//! the usage chunk `stream_options.include_usage` asks for, and `data: [DONE]`.
//!
//! Compatible servers differ in small ways, all accepted: reasoning as `reasoning_content`
//! (vLLM, llama.cpp, DeepSeek) or `reasoning` (Ollama, OpenRouter); a call without an id gets
//! `call_<index>`; a fragment without an index belongs to the call at its position.
//!
//! Only the first choice is read (`n` is never set). `Finish` is held back until `[DONE]`, so the
//! stream reports a finish reason only for a response that arrived whole, after its usage.

use std::collections::{BTreeSet, VecDeque};

use seedpod_protocol::{CallId, FinishReason, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::http::{Decoded, Decoder, error_object, reported_error, truncate};
use crate::provider::{ProviderError, ProviderEvent};
use crate::sse::{ERROR_EVENT, SseEvent};

/// The data of the event that ends a stream.
const DONE: &str = "[DONE]";

/// The most characters of a malformed chunk quoted in the error.
const MAX_QUOTED_CHUNK_CHARS: usize = 200;

#[derive(Debug, Default)]
pub(super) struct OpenAiDecoder {
    /// Indexes of the tool calls already started.
    calls: BTreeSet<u32>,
    /// From the last chunk that had one, reported at `[DONE]`.
    finish: Option<FinishReason>,
}

#[derive(Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    delta: Option<ChoiceDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceDelta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    /// What a model says instead of answering when it declines; shown as its text.
    refusal: Option<String>,
    tool_calls: Option<Vec<CallFragment>>,
}

#[derive(Deserialize)]
struct CallFragment {
    index: Option<u32>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

impl Decoder for OpenAiDecoder {
    const TERMINATOR: &'static str = "data: [DONE]";

    fn decode(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<Decoded, ProviderError> {
        if event.event == ERROR_EVENT {
            return Err(error_event(&event.data));
        }
        if event.data.trim() == DONE {
            out.push_back(ProviderEvent::Finish(
                self.finish.unwrap_or(FinishReason::Stop),
            ));
            return Ok(Decoded::Complete);
        }
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|err| {
            ProviderError::permanent(format!(
                "openai: malformed chunk ({err}): {}",
                truncate(&event.data, MAX_QUOTED_CHUNK_CHARS)
            ))
        })?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        let first = chunk
            .choices
            .into_iter()
            .flatten()
            .find(|choice| choice.index == 0);
        if let Some(choice) = first {
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(finish_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            out.push_back(ProviderEvent::Usage(usage_from(usage)));
        }
        Ok(Decoded::More)
    }
}

impl OpenAiDecoder {
    fn delta(&mut self, delta: ChoiceDelta, out: &mut VecDeque<ProviderEvent>) {
        let non_empty = |text: Option<String>| text.filter(|t| !t.is_empty());
        if let Some(thinking) = non_empty(delta.reasoning_content).or(non_empty(delta.reasoning)) {
            out.push_back(ProviderEvent::ThinkingDelta(thinking));
        }
        if let Some(text) = non_empty(delta.content) {
            out.push_back(ProviderEvent::TextDelta(text));
        }
        if let Some(text) = non_empty(delta.refusal) {
            out.push_back(ProviderEvent::TextDelta(text));
        }
        for (position, fragment) in delta.tool_calls.into_iter().flatten().enumerate() {
            let index = fragment
                .index
                .unwrap_or_else(|| u32::try_from(position).unwrap_or(u32::MAX));
            let (name, arguments) = match fragment.function {
                Some(function) => (function.name, function.arguments),
                None => (None, None),
            };
            if self.calls.insert(index) {
                let call_id = fragment
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{index}"));
                out.push_back(ProviderEvent::ToolCallStart {
                    index,
                    call_id: CallId::new(call_id),
                    name: name.unwrap_or_default(),
                });
            }
            if let Some(arguments) = non_empty(arguments) {
                out.push_back(ProviderEvent::ToolCallDelta { index, arguments });
            }
        }
    }
}

/// OpenAI counts cached tokens inside `prompt_tokens`; `Usage` keeps them apart (as Anthropic
/// reports them), so `input_tokens` is the uncached part.
fn usage_from(wire: WireUsage) -> Usage {
    let cached = wire
        .prompt_tokens_details
        .and_then(|details| details.cached_tokens)
        .unwrap_or(0);
    let prompt = wire.prompt_tokens.unwrap_or(0);
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: wire.completion_tokens.unwrap_or(0),
        cache_read_tokens: cached.min(prompt),
        cache_creation_tokens: 0,
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolUse,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Unknown,
    }
}

/// An error sent inside the stream as a chunk (`data: {"error": …}`). Servers give it as
/// `{"message", "type", "code"}` with no common vocabulary; see `http::reported_error` for how it
/// is classified.
fn stream_error(error: &Value) -> ProviderError {
    reported_error("openai", "the stream reported an error", error)
}

/// An `error` event (llama.cpp's `error:` line): its data is the error object, or a sentence.
fn error_event(data: &str) -> ProviderError {
    let error = error_object(data);
    stream_error(&error)
}
