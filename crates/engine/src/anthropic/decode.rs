//! Reading a Messages API event stream: `message_start`, content blocks (`text`, `thinking`,
//! `tool_use`) with their deltas, `message_delta`, `message_stop`, `ping` and `error`.
//!
//! Event and delta types this code does not know are skipped, as Anthropic's versioning policy
//! asks of clients. `redacted_thinking` blocks are skipped too: history has no item to keep their
//! opaque data in, so they cannot be sent back (the API accepts a turn without them).
//!
//! `Finish` is held back until `message_stop`, so the stream reports a finish reason only for a
//! response that arrived whole.

use std::collections::VecDeque;

use seedpod_protocol::{CallId, FinishReason, Usage};
use serde::Deserialize;

use crate::http::{
    Decoded, Decoder, MAX_QUOTED_EVENT_CHARS, classify, error_object, is_transient_status,
    parse_event, reported_error, truncate,
};
use crate::provider::{ProviderError, ProviderEvent};
use crate::sse::{ERROR_EVENT, SseEvent};

#[derive(Debug, Default)]
pub(super) struct AnthropicDecoder {
    /// Running totals: `message_start` brings the input side, `message_delta` the output.
    usage: Usage,
    /// From `message_delta`, reported at `message_stop`.
    finish: Option<FinishReason>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u32,
        content_block: ContentBlock,
    },
    ContentBlockDelta {
        index: u32,
        delta: Delta,
    },
    ContentBlockStop,
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ApiError,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    RedactedThinking,
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Usage as the API reports it; every count may be absent or null.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ApiError {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    message: String,
}

impl Decoder for AnthropicDecoder {
    const TERMINATOR: &'static str = "message_stop";

    fn decode(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<Decoded, ProviderError> {
        if event.event == ERROR_EVENT {
            return Err(error_event(&event.data));
        }
        let parsed: StreamEvent = parse_event("anthropic", &event)?;
        match parsed {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.merge_usage(usage, out);
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => block_start(index, content_block, out),
            StreamEvent::ContentBlockDelta { index, delta } => block_delta(index, delta, out),
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.finish = Some(finish_reason(&reason));
                }
                if let Some(usage) = usage {
                    self.merge_usage(usage, out);
                }
            }
            StreamEvent::MessageStop => {
                out.push_back(ProviderEvent::Finish(
                    self.finish.unwrap_or(FinishReason::Stop),
                ));
                return Ok(Decoded::Complete);
            }
            StreamEvent::Error { error } => return Err(stream_error(error)),
            StreamEvent::ContentBlockStop | StreamEvent::Ping | StreamEvent::Unknown => {}
        }
        Ok(Decoded::More)
    }
}

impl AnthropicDecoder {
    /// Fold in the counts this event carries (each is a running total) and report the sum.
    fn merge_usage(&mut self, wire: WireUsage, out: &mut VecDeque<ProviderEvent>) {
        let usage = &mut self.usage;
        let counts = [
            (&mut usage.input_tokens, wire.input_tokens),
            (&mut usage.output_tokens, wire.output_tokens),
            (
                &mut usage.cache_creation_tokens,
                wire.cache_creation_input_tokens,
            ),
            (&mut usage.cache_read_tokens, wire.cache_read_input_tokens),
        ];
        for (total, count) in counts {
            if let Some(count) = count {
                *total = count;
            }
        }
        out.push_back(ProviderEvent::Usage(self.usage));
    }
}

fn block_start(index: u32, block: ContentBlock, out: &mut VecDeque<ProviderEvent>) {
    match block {
        ContentBlock::Text { text } if !text.is_empty() => {
            out.push_back(ProviderEvent::TextDelta(text))
        }
        ContentBlock::Thinking { thinking } if !thinking.is_empty() => {
            out.push_back(ProviderEvent::ThinkingDelta(thinking));
        }
        ContentBlock::ToolUse { id, name } => out.push_back(ProviderEvent::ToolCallStart {
            index,
            call_id: CallId::new(id),
            name,
        }),
        ContentBlock::RedactedThinking => {
            tracing::debug!(
                index,
                "skipping a redacted_thinking block (not kept in history)"
            );
        }
        ContentBlock::Text { .. } | ContentBlock::Thinking { .. } | ContentBlock::Unknown => {}
    }
}

fn block_delta(index: u32, delta: Delta, out: &mut VecDeque<ProviderEvent>) {
    let event = match delta {
        Delta::Text { text } => ProviderEvent::TextDelta(text),
        Delta::Thinking { thinking } => ProviderEvent::ThinkingDelta(thinking),
        Delta::Signature { signature } => ProviderEvent::ThinkingSignature(signature),
        Delta::InputJson { partial_json } => ProviderEvent::ToolCallDelta {
            index,
            arguments: partial_json,
        },
        Delta::Unknown => return,
    };
    out.push_back(event);
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Unknown,
    }
}

/// An `error` event. Its types mirror HTTP statuses (`overloaded_error` is 529), so they are
/// classified the same way.
fn stream_error(error: ApiError) -> ProviderError {
    let status = match error.kind.as_str() {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "overloaded_error" => 529,
        _ => 500,
    };
    let message = format!(
        "anthropic: the stream reported {}: {}",
        error.kind,
        truncate(&error.message, MAX_QUOTED_EVENT_CHARS)
    );
    classify(message, Some(status), None, is_transient_status(status))
}

/// An `error` event. Anthropic's own carry `{"type":"error","error":{…}}`; a compatible server
/// (llama.cpp's `/v1/messages`) may send its own error object instead, which must end the
/// stream all the same rather than be skipped as an unknown event.
fn error_event(data: &str) -> ProviderError {
    if let Ok(StreamEvent::Error { error }) = serde_json::from_str::<StreamEvent>(data) {
        return stream_error(error);
    }
    let error = error_object(data);
    reported_error("anthropic", "the stream reported an error", &error)
}
