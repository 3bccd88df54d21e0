//! What a server's error says, and whether it is worth retrying.
//!
//! Three places meet a server's error: an HTTP error status (`Endpoint::status_error`), an error
//! reported inside a streamed 200 (an SSE error event), and a JSON error body sent where an event
//! stream was expected. All of them quote the server's own message and classify the same way:
//! a context overflow (`window::overflow_in`) is always permanent, whatever the status, because
//! the same request can never fit later; otherwise the status decides (`is_transient_status`),
//! and for in-stream errors without a usable status, words like `rate_limit` or `overloaded`.
//!
//! The facts a caller needs from a context overflow survive into the message even when the
//! server's sentence leaves them out: llama.cpp's `n_prompt_tokens` and `n_ctx` fields and its
//! `exceed_context_size_error` type are appended to the quoted message.

use std::time::Duration;

use serde_json::Value;

use crate::provider::ProviderError;
use crate::window::overflow_in;

/// The most characters of a provider's error message quoted in ours.
pub(crate) const MAX_QUOTED_CHARS: usize = 500;

/// Error `type`/`code` values that name a context overflow, kept in the message when the
/// server's sentence does not already say them.
const OVERFLOW_CODES: &[&str] = &["context_length_exceeded", "exceed_context_size_error"];

/// Numeric fields that llama.cpp adds to an overflow error, kept in the message as `name N`.
const OVERFLOW_COUNTS: &[&str] = &["n_prompt_tokens", "n_ctx"];

/// Words in an in-stream error's `type` or `code` that mean trying again later can help.
const TRANSIENT_WORDS: &[&str] = &[
    "rate_limit",
    "server_error",
    "overloaded",
    "timeout",
    "unavailable",
];

/// Statuses where the same request can succeed later: timeouts, rate limits, overload and server
/// faults (529 is Anthropic's "overloaded"). 501 and 505 are server faults no wait will fix.
pub(crate) fn is_transient_status(code: u16) -> bool {
    matches!(code, 408 | 429) || (code >= 500 && code != 501 && code != 505)
}

/// The error for a failure whose `message` quotes the server: permanent when it is a context
/// overflow or the status says retrying cannot help, transient when `transient` says it can.
pub(crate) fn classify(
    message: String,
    status: Option<u16>,
    retry_after: Option<Duration>,
    transient: bool,
) -> ProviderError {
    let message = crate::provider::printable(message);
    if transient && overflow_in(&message).is_none() {
        ProviderError::Transient {
            message,
            status,
            retry_after,
        }
    } else {
        ProviderError::Permanent { message, status }
    }
}

/// An error a server reported inside a successful response: `error` is its error object (or
/// string). `what` says where it was found, after the provider's name.
pub(crate) fn reported_error(provider: &str, what: &str, error: &Value) -> ProviderError {
    let wrapped = serde_json::json!({ "error": error });
    let message = format!(
        "{provider}: {what}: {}",
        provider_message(&wrapped.to_string())
    );
    // llama.cpp puts the HTTP status it would have answered with in `code`.
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (100..=599).contains(code));
    let kind = ["type", "code"]
        .iter()
        .filter_map(|field| error.get(field))
        .map(|v| v.to_string().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(" ");
    let transient = TRANSIENT_WORDS.iter().any(|word| kind.contains(word))
        || status.is_some_and(is_transient_status);
    classify(message, status, None, transient)
}

/// The error object in the data of an error event or an error body: the `error` member of a JSON
/// object, else the object itself, else the text as a string.
pub(crate) fn error_object(data: &str) -> Value {
    match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(mut object)) => match object.remove("error") {
            Some(inner) => inner,
            None => Value::Object(object),
        },
        Ok(_) | Err(_) => Value::String(data.trim().to_owned()),
    }
}

/// The explanation inside an error body: `error.message` (Anthropic, OpenAI and most compatible
/// servers), `error` as a string (Ollama; itself JSON when Ollama passes on its runner's error),
/// `message` or `detail`; else the words of the body on one line (`body_text.rs`). Overflow facts the sentence leaves out are
/// appended (see the module doc).
pub(crate) fn provider_message(body: &str) -> String {
    let parsed = serde_json::from_str::<Value>(body).ok();
    let found = parsed.as_ref().and_then(|v| explanation(v, 0));
    let (message, facts) = match found {
        Some((message, object)) => {
            let facts = overflow_facts(object, &message);
            (message, facts)
        }
        // A proxy's HTML page or a multi-line text: its words on one line.
        None => (super::body_text::one_line(body), String::new()),
    };
    if message.is_empty() {
        return "(the response gave no details)".to_owned();
    }
    // A server may echo what it was sent, headers included.
    let mut quoted = truncate(&crate::redact::redact(&message), MAX_QUOTED_CHARS);
    quoted.push_str(&facts);
    quoted
}

/// The message of a JSON error and the object that holds it. `depth` bounds the unwrapping of
/// an error string that is itself a JSON error.
fn explanation(v: &Value, depth: u8) -> Option<(String, &Value)> {
    let error = v.get("error");
    if let Some(object) = error.filter(|e| e.is_object())
        && let Some(message) = object.get("message").and_then(Value::as_str)
    {
        return Some((message.to_owned(), object));
    }
    if let Some(text) = error.and_then(Value::as_str) {
        if depth == 0
            && let Ok(inner) = serde_json::from_str::<Value>(text)
            && let Some((message, _)) = explanation(&inner, depth + 1)
        {
            // The outer object holds only this string, so the facts are the inner's.
            return Some((with_facts_of(&inner, message), v));
        }
        return Some((text.to_owned(), v));
    }
    for field in ["message", "detail"] {
        if let Some(text) = v.get(field).and_then(Value::as_str) {
            return Some((text.to_owned(), v));
        }
    }
    None
}

/// `message` followed by the overflow facts of the error object inside `inner`.
fn with_facts_of(inner: &Value, message: String) -> String {
    let object = inner
        .get("error")
        .filter(|e| e.is_object())
        .unwrap_or(inner);
    let facts = overflow_facts(object, &message);
    message + &facts
}

/// ` (exceed_context_size_error, n_prompt_tokens 1407, n_ctx 256)` for an overflow error whose
/// message does not already say these; empty for any other error.
fn overflow_facts(object: &Value, message: &str) -> String {
    let mut facts = Vec::new();
    for field in ["type", "code"] {
        if let Some(code) = object.get(field).and_then(Value::as_str)
            && OVERFLOW_CODES.contains(&code)
            && !message.contains(code)
        {
            facts.push(code.to_owned());
        }
    }
    for field in OVERFLOW_COUNTS {
        if let Some(count) = object.get(*field).and_then(Value::as_u64)
            && !message.contains(field)
        {
            facts.push(format!("{field} {count}"));
        }
    }
    if facts.is_empty() {
        String::new()
    } else {
        format!(" ({})", facts.join(", "))
    }
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    seedpod_protocol::ellipsize(text, max_chars)
}
