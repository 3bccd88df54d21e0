//! Reading a Responses API event stream. Every event names itself in its `type`:
//!
//! - `response.output_item.added`: a function call starts (its `call_id` and name);
//! - `response.output_text.delta` / `response.refusal.delta`: the answer's text;
//! - `response.function_call_arguments.delta`: a call's arguments, keyed by `output_index`;
//!   `…arguments.done` carries them whole, used only when no delta came;
//! - `response.reasoning_summary_text.delta` (and `response.reasoning_text.delta`, from servers
//!   that stream the reasoning itself): thinking, shown while it streams;
//! - `response.output_item.done`: a finished item. A `reasoning` item becomes one
//!   `ReasoningItem` (id, summary, encrypted content) to commit and send back; a call or a
//!   message whose pieces never streamed is reported whole;
//! - `response.completed` / `response.incomplete` (`max_output_tokens` → length,
//!   `content_filter`): usage, the finish reason, and the end of the stream;
//! - `response.failed` and `error`: the server's error, classified as every provider's is
//!   (`http/error_body.rs`: `rate_limit_exceeded`, `server_error` are transient; a
//!   `context_length_exceeded` is the window refusing, permanent).
//!
//! Other event types (`response.created`, `response.in_progress`, content and summary part
//! events, `….done` echoes of text already streamed, future ones) are skipped.

use std::collections::{BTreeMap, VecDeque};

use seedpod_protocol::{CallId, FinishReason, ResponsesReasoning, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::http::{Decoded, Decoder, error_object, parse_event, reported_error};
use crate::provider::{ProviderError, ProviderEvent};
use crate::sse::{ERROR_EVENT, SseEvent};

/// The provider's name in its error messages.
const PROVIDER: &str = "openai-responses";

#[derive(Debug, Default)]
pub(super) struct ResponsesDecoder {
    /// Calls started, by `output_index`, and whether any of their arguments have arrived.
    calls: BTreeMap<u32, bool>,
    /// Items whose text streamed as deltas (so their `done` adds nothing), by `output_index`.
    texted: std::collections::BTreeSet<u32>,
    /// A summary part was seen for this reasoning item (`output_index`): later parts are set
    /// apart by a blank line, as the committed text joins them.
    summarised: std::collections::BTreeSet<u32>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum StreamEvent {
    #[serde(rename = "response.output_item.added")]
    ItemAdded { output_index: u32, item: OutputItem },
    #[serde(rename = "response.output_item.done")]
    ItemDone { output_index: u32, item: OutputItem },
    #[serde(
        rename = "response.output_text.delta",
        alias = "response.refusal.delta"
    )]
    TextDelta { output_index: u32, delta: String },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta { output_index: u32, delta: String },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        output_index: u32,
        #[serde(default)]
        arguments: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    SummaryPartAdded { output_index: u32 },
    #[serde(
        rename = "response.reasoning_summary_text.delta",
        alias = "response.reasoning_text.delta"
    )]
    ThinkingDelta { delta: String },
    #[serde(rename = "response.completed")]
    Completed { response: WireResponse },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: WireResponse },
    #[serde(rename = "response.failed")]
    Failed { response: WireResponse },
    #[serde(rename = "error")]
    Error {},
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OutputItem {
    Reasoning {
        id: String,
        #[serde(default)]
        summary: Vec<SummaryPart>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        #[serde(default)]
        arguments: String,
    },
    Message {
        #[serde(default)]
        content: Vec<MessagePart>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct SummaryPart {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum MessagePart {
    OutputText {
        #[serde(default)]
        text: String,
    },
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    #[serde(other)]
    Unknown,
}

/// The response object of the terminal events; every field may be absent or null.
#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl Decoder for ResponsesDecoder {
    const TERMINATOR: &'static str = "response.completed";

    fn decode(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<Decoded, ProviderError> {
        if event.event == ERROR_EVENT {
            return Err(error_event(&event.data));
        }
        let parsed: StreamEvent = parse_event(PROVIDER, &event)?;
        match parsed {
            StreamEvent::ItemAdded { output_index, item } => {
                self.item_added(output_index, item, out)
            }
            StreamEvent::ItemDone { output_index, item } => self.item_done(output_index, item, out),
            StreamEvent::TextDelta {
                output_index,
                delta,
            } => {
                self.texted.insert(output_index);
                if !delta.is_empty() {
                    out.push_back(ProviderEvent::TextDelta(delta));
                }
            }
            StreamEvent::ArgumentsDelta {
                output_index,
                delta,
            } => self.arguments(output_index, delta, out)?,
            StreamEvent::ArgumentsDone {
                output_index,
                arguments,
            } => {
                if self.calls.get(&output_index) == Some(&false) {
                    self.arguments(output_index, arguments, out)?;
                }
            }
            StreamEvent::SummaryPartAdded { output_index } => {
                if !self.summarised.insert(output_index) {
                    out.push_back(ProviderEvent::ThinkingDelta("\n\n".into()));
                }
            }
            StreamEvent::ThinkingDelta { delta } => {
                if !delta.is_empty() {
                    out.push_back(ProviderEvent::ThinkingDelta(delta));
                }
            }
            StreamEvent::Completed { response } => {
                self.usage(&response, out);
                let finish = match self.calls.is_empty() {
                    true => FinishReason::Stop,
                    false => FinishReason::ToolUse,
                };
                out.push_back(ProviderEvent::Finish(finish));
                return Ok(Decoded::Complete);
            }
            StreamEvent::Incomplete { response } => {
                self.usage(&response, out);
                let reason = response.incomplete_details.and_then(|d| d.reason);
                out.push_back(ProviderEvent::Finish(incomplete_reason(reason.as_deref())));
                return Ok(Decoded::Complete);
            }
            StreamEvent::Failed { response } => return Err(failed(response.error)),
            StreamEvent::Error {} => return Err(error_event(&event.data)),
            StreamEvent::Unknown => {}
        }
        Ok(Decoded::More)
    }
}

impl ResponsesDecoder {
    fn item_added(&mut self, index: u32, item: OutputItem, out: &mut VecDeque<ProviderEvent>) {
        if let OutputItem::FunctionCall {
            call_id,
            name,
            arguments,
        } = item
        {
            self.start_call(index, call_id, name, out);
            if !arguments.is_empty() {
                self.calls.insert(index, true);
                out.push_back(ProviderEvent::ToolCallDelta { index, arguments });
            }
        }
    }

    fn item_done(&mut self, index: u32, item: OutputItem, out: &mut VecDeque<ProviderEvent>) {
        match item {
            OutputItem::Reasoning {
                id,
                summary,
                encrypted_content,
            } => out.push_back(ProviderEvent::ReasoningItem(ResponsesReasoning {
                id,
                summary: summary.into_iter().map(|part| part.text).collect(),
                encrypted_content,
            })),
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                // A server that skipped the `added` event or the deltas still gets its call.
                self.start_call(index, call_id, name, out);
                if self.calls.insert(index, true) == Some(false) && !arguments.is_empty() {
                    out.push_back(ProviderEvent::ToolCallDelta { index, arguments });
                }
            }
            OutputItem::Message { content } => {
                if self.texted.insert(index) {
                    for part in content {
                        let text = match part {
                            MessagePart::OutputText { text } => text,
                            MessagePart::Refusal { refusal } => refusal,
                            MessagePart::Unknown => continue,
                        };
                        if !text.is_empty() {
                            out.push_back(ProviderEvent::TextDelta(text));
                        }
                    }
                }
            }
            OutputItem::Unknown => {}
        }
    }

    fn start_call(
        &mut self,
        index: u32,
        call_id: String,
        name: String,
        out: &mut VecDeque<ProviderEvent>,
    ) {
        if self.calls.contains_key(&index) {
            return;
        }
        self.calls.insert(index, false);
        out.push_back(ProviderEvent::ToolCallStart {
            index,
            call_id: CallId::new(call_id),
            name,
        });
    }

    fn arguments(
        &mut self,
        index: u32,
        delta: String,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let Some(streamed) = self.calls.get_mut(&index) else {
            return Err(ProviderError::permanent(format!(
                "{PROVIDER}: the provider sent a malformed response: arguments arrived for \
                 output item #{index}, which is no function call"
            )));
        };
        *streamed = true;
        if !delta.is_empty() {
            out.push_back(ProviderEvent::ToolCallDelta {
                index,
                arguments: delta,
            });
        }
        Ok(())
    }

    fn usage(&self, response: &WireResponse, out: &mut VecDeque<ProviderEvent>) {
        if let Some(usage) = &response.usage {
            out.push_back(ProviderEvent::Usage(usage_from(usage)));
        }
    }
}

/// The API counts cached tokens inside `input_tokens`; `Usage` keeps them apart (as the other
/// providers report them), so `input_tokens` is the uncached part. Reasoning tokens are part
/// of `output_tokens` already.
fn usage_from(wire: &WireUsage) -> Usage {
    let input = wire.input_tokens.unwrap_or(0);
    let cached = wire
        .input_tokens_details
        .as_ref()
        .and_then(|details| details.cached_tokens)
        .unwrap_or(0)
        .min(input);
    Usage {
        input_tokens: input - cached,
        output_tokens: wire.output_tokens.unwrap_or(0),
        cache_read_tokens: cached,
        cache_creation_tokens: 0,
    }
}

fn incomplete_reason(reason: Option<&str>) -> FinishReason {
    match reason {
        Some("max_output_tokens") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(_) | None => FinishReason::Unknown,
    }
}

/// `response.failed`: its `error` is `{code, message}`.
fn failed(error: Option<Value>) -> ProviderError {
    let error =
        error.unwrap_or_else(|| Value::String("the response failed without saying why".into()));
    reported_error(PROVIDER, "the response failed", &error)
}

/// An `error` event: `{"type":"error","code","message","param"}`, or a server's own error
/// object or sentence.
fn error_event(data: &str) -> ProviderError {
    reported_error(
        PROVIDER,
        "the stream reported an error",
        &error_object(data),
    )
}
