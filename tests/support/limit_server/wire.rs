//! What the fake writes: HTTP responses, the two providers' event streams, and their real
//! "too long" error bodies.

use serde_json::{Value, json};

use super::LimitConfig;
use super::request::{Answer, Asked, Wire};

/// Characters of text per streamed delta, so a reply arrives in several events as a real one
/// does.
const DELTA_CHARS: usize = 48;
/// `created` in OpenAI chunks: a fixed time keeps the fake deterministic.
const CREATED: u64 = 1_700_000_000;
/// What the fake says once a tool result is in.
const AFTER_TOOL: &str = "I have read the file; its first and last lines are as shown above.";
/// Words a plain reply is made of (none of them `read`, `FACT:` or anything like "summary",
/// so a reply never looks like a request the fake treats specially).
const WORDS: &[&str] = &[
    "noted", "the", "plan", "holds", "and", "we", "keep", "going", "with", "care", "step", "by",
];

/// OpenAI's body for a request over the window, byte for byte as the API sends it.
pub fn openai_too_long(limit: u64, tokens: u64) -> String {
    format!(
        "{{\"error\":{{\"message\":\"This model's maximum context length is {limit} tokens. \
         However, your messages resulted in {tokens} tokens. Please reduce the length of the \
         messages.\",\"type\":\"invalid_request_error\",\"param\":\"messages\",\
         \"code\":\"context_length_exceeded\"}}}}"
    )
}

/// Whose words a refusal on the OpenAI wire is in. Each is the shape the real server sends
/// for a prompt over its window (the servers checked: docs/configuration.md §Context).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// OpenAI's own error object; llama-cpp-python sends the same, unstreamed.
    OpenAi,
    /// vLLM's flat error (`"object": "error"`, the status again in `code`), stating its
    /// `max_model_len` and the prompt plus the answer it would have had to hold.
    Vllm,
    /// LM Studio's llama.cpp engine: `error` as a bare string naming the context length it
    /// loaded the model with; a streamed request gets it as an `error` event in a `200`.
    LmStudio,
    /// A server that says "too long" and nothing more (llama.cpp builds before the counts were
    /// added): the pod must shrink its own window.
    Unsized,
}

/// The body of a refusal over `limit` of a `tokens`-token request, in `wording`.
pub fn too_long(wording: Wording, limit: u64, tokens: u64) -> String {
    match wording {
        Wording::OpenAi => openai_too_long(limit, tokens),
        Wording::Vllm => vllm_too_long(limit, tokens),
        Wording::LmStudio => lm_studio_too_long(limit, tokens),
        Wording::Unsized => "{\"error\":{\"code\":400,\"message\":\"the request exceeds the \
             available context size, try increasing it\",\"type\":\"exceed_context_size_error\"}}"
            .to_owned(),
    }
}

/// vLLM's body: the requested count is the prompt plus the answer's room (here 16 tokens).
fn vllm_too_long(limit: u64, tokens: u64) -> String {
    const COMPLETION: u64 = 16;
    let requested = tokens + COMPLETION;
    format!(
        "{{\"object\":\"error\",\"message\":\"This model's maximum context length is {limit} \
         tokens. However, you requested {requested} tokens ({tokens} in the messages, \
         {COMPLETION} in the completion). Please reduce the length of the messages or \
         completion.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}"
    )
}

/// LM Studio's body: a bare string, not an error object.
fn lm_studio_too_long(limit: u64, tokens: u64) -> String {
    format!(
        "{{\"error\":\"Trying to keep the first {tokens} tokens when context the overflows. \
         However, the model is loaded with context length of only {limit} tokens, which is not \
         enough. Try to load the model with a larger context length, or provide a shorter \
         input\"}}"
    )
}

/// Anthropic's body for a request over the window, byte for byte as the API sends it.
pub fn anthropic_too_long(limit: u64, tokens: u64) -> String {
    format!(
        "{{\"type\":\"error\",\"error\":{{\"type\":\"invalid_request_error\",\
         \"message\":\"prompt is too long: {tokens} tokens > {limit} maximum\"}}}}"
    )
}

/// A complete response with a JSON body.
pub(super) fn json_response(status: u16, body: &str) -> Vec<u8> {
    let reason = match status {
        400 => "Bad Request",
        404 => "Not Found",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A complete `200` event-stream response, close-delimited as servers stream.
pub(super) fn stream_response(events: &str) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
        cache-control: no-cache\r\nconnection: close\r\n\r\n"
        .to_vec();
    out.extend_from_slice(events.as_bytes());
    out
}

/// What the model says, before it is put on a wire.
enum Reply {
    Text(String),
    Call {
        id: String,
        name: String,
        arguments: String,
    },
}

/// The event stream answering `asked` (the `index`-th request, `tokens` by the server's count).
pub(super) fn answer_stream(
    wire: Wire,
    asked: &Asked,
    answer: &Answer,
    index: usize,
    tokens: u64,
    config: LimitConfig,
) -> String {
    let reply = match answer {
        Answer::Summary { facts } => Reply::Text(summary(facts)),
        Answer::ReadFile { path } => Reply::Call {
            id: match wire {
                Wire::OpenAi => format!("call_limit_{index}"),
                Wire::Anthropic => format!("toolu_limit_{index}"),
            },
            name: "read_file".to_owned(),
            arguments: json!({ "path": path }).to_string(),
        },
        Answer::Call { name, arguments } => Reply::Call {
            id: match wire {
                Wire::OpenAi => format!("call_limit_{index}"),
                Wire::Anthropic => format!("toolu_limit_{index}"),
            },
            name: name.clone(),
            arguments: arguments.clone(),
        },
        Answer::Shell { command } => Reply::Call {
            id: match wire {
                Wire::OpenAi => format!("call_limit_{index}"),
                Wire::Anthropic => format!("toolu_limit_{index}"),
            },
            name: "shell".to_owned(),
            arguments: json!({ "command": command }).to_string(),
        },
        Answer::AfterTool => Reply::Text(AFTER_TOOL.to_owned()),
        Answer::Text | Answer::Refused | Answer::Malformed(_) => {
            Reply::Text(filler(index, config.reply_chars))
        }
    };
    let output_tokens = match &reply {
        Reply::Text(text) => config.count(text),
        Reply::Call { arguments, .. } => config.count(arguments) + 8,
    };
    match wire {
        Wire::OpenAi => openai_stream(asked, &reply, index, tokens, output_tokens),
        Wire::Anthropic => anthropic_stream(asked, &reply, index, tokens, output_tokens),
    }
}

fn summary(facts: &[String]) -> String {
    let mut text = String::from(
        "Summary of the conversation so far: the person sent long messages and read a file; \
         the work continues.",
    );
    for fact in facts {
        text.push('\n');
        text.push_str(fact);
    }
    text
}

/// About `chars` characters of plain words, different for each request.
fn filler(index: usize, chars: usize) -> String {
    let mut text = format!("Reply {index}:");
    let mut word = index;
    while text.len() < chars {
        text.push(' ');
        text.push_str(WORDS[word % WORDS.len()]);
        word += 1;
    }
    text
}

/// `text` in pieces of `DELTA_CHARS` characters.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(DELTA_CHARS)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

fn openai_stream(
    asked: &Asked,
    reply: &Reply,
    index: usize,
    prompt_tokens: u64,
    completion_tokens: u64,
) -> String {
    let id = format!("chatcmpl-limit-{index}");
    let usage_field = asked.include_usage.then_some(Value::Null);
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut chunk = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": asked.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if let Some(usage) = &usage_field {
            chunk["usage"] = usage.clone();
        }
        format!("data: {chunk}\n\n")
    };
    let mut out = String::new();
    let finish = match reply {
        Reply::Text(text) => {
            out.push_str(&chunk(json!({"role": "assistant", "content": ""}), None));
            for piece in pieces(text) {
                out.push_str(&chunk(json!({"content": piece}), None));
            }
            "stop"
        }
        Reply::Call {
            id,
            name,
            arguments,
        } => {
            out.push_str(&chunk(json!({"role": "assistant", "content": null}), None));
            let start = json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]});
            out.push_str(&chunk(start, None));
            for piece in pieces(arguments) {
                let delta = json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]});
                out.push_str(&chunk(delta, None));
            }
            "tool_calls"
        }
    };
    out.push_str(&chunk(json!({}), Some(finish)));
    if asked.include_usage {
        let usage = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": asked.model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        });
        out.push_str(&format!("data: {usage}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn anthropic_stream(
    asked: &Asked,
    reply: &Reply,
    index: usize,
    input_tokens: u64,
    output_tokens: u64,
) -> String {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut out = event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_limit_{index}"), "type": "message", "role": "assistant",
            "model": asked.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": 1}}}),
    );
    let (block, deltas, stop_reason) = match reply {
        Reply::Text(text) => (
            json!({"type": "text", "text": ""}),
            pieces(text)
                .into_iter()
                .map(|piece| json!({"type": "text_delta", "text": piece}))
                .collect::<Vec<_>>(),
            "end_turn",
        ),
        Reply::Call {
            id,
            name,
            arguments,
        } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            pieces(arguments)
                .into_iter()
                .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
                .collect(),
            "tool_use",
        ),
    };
    out.push_str(&event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
    ));
    out.push_str(&event("ping", json!({"type": "ping"})));
    for delta in deltas {
        out.push_str(&event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ));
    }
    out.push_str(&event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    out.push_str(&event(
        "message_delta",
        json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens}}),
    ));
    out.push_str(&event("message_stop", json!({"type": "message_stop"})));
    out
}
