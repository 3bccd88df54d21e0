//! Recognising "the prompt does not fit the context window" in a provider's error, and reading
//! the limit (and the size of the refused prompt) that the error states.
//!
//! Servers say it in their own words; each wording below is quoted from the server that sends it
//! (the tests hold the real bodies):
//!
//! | server | wording |
//! |---|---|
//! | OpenAI, DeepSeek, OpenRouter, llama-cpp-python | `This model's maximum context length is N tokens. However, your messages resulted in M tokens` / `you requested M tokens`; code `context_length_exceeded` |
//! | OpenAI (newer models) | `Your input exceeds the context window of this model`; code `context_length_exceeded` |
//! | vLLM | `maximum context length is N tokens … your request has M input tokens`; `… is longer than the maximum model length of N` (`max_model_len`) |
//! | Anthropic | `prompt is too long: M tokens > N maximum`; `input length and max_tokens exceed context limit: M + K > N` |
//! | llama.cpp server | `request (M tokens) exceeds the available context size (N tokens)`; `input (M tokens) is larger than the max context size (N tokens)`; older builds `the request exceeds the available context size` with `n_prompt_tokens`/`n_ctx` fields; type `exceed_context_size_error` |
//! | LM Studio | `… the model is loaded with context length of only N tokens, which is not enough`; `tokens to keep from the initial prompt is greater than the context length (n_keep: M>= n_ctx: N)`; MLX engine `Context size has been exceeded` |
//! | Ollama | `input length exceeds the context length` (its own runner; over the OpenAI API it usually truncates instead) |
//! | Mistral | `Prompt contains M tokens … too large for model with N maximum context length` |
//! | Gemini (OpenAI-compatible) | `The input token count (M) exceeds the maximum number of tokens allowed (N)` |
//!
//! The HTTP layer keeps the server's message and any `n_prompt_tokens`/`n_ctx` fields in the
//! error's message (`http/error_body.rs`) and classifies every overflow as permanent, so a
//! deterministic 400 is never retried blindly; this module only reads.

use crate::provider::ProviderError;

/// A request refused for not fitting the model's context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The window the server states, in tokens, when it states one.
    pub limit: Option<u64>,
    /// The size of the refused request (its prompt) in tokens, when the server says.
    pub requested: Option<u64>,
}

/// Our own words for a request the server failed both streamed and unstreamed without saying
/// why (`retry.rs`): read like a refusal that states no window.
const UNSTATED: &str = "taken as a prompt over the server's context window, which it did not state";

/// Phrases (lowercase) that mean the prompt does not fit, whoever says them.
const MARKERS: &[&str] = &[
    UNSTATED,
    "context_length_exceeded",
    "context length exceeded",
    "exceed_context_size_error",
    "maximum context length",
    "context window of this model",
    "prompt is too long",
    "exceed context limit",
    "exceeds the available context size",
    "larger than the max context size",
    "input is larger than the max context size",
    "maximum model length",
    "context size has been exceeded",
    "context length of only",
    "greater than the context length",
    "input length exceeds the context length",
    "too large for model with",
    "exceeds the maximum number of tokens allowed",
];

/// The refusal a server made by cutting a stream (`cut`, retried as usual) and failing the same
/// request unstreamed (`answer`) without a reason: permanent, and an overflow with no window.
pub(crate) fn unstated_overflow(cut: &ProviderError, answer: &ProviderError) -> ProviderError {
    ProviderError::permanent(format!(
        "{cut}; the same request unstreamed failed too ({answer}): {UNSTATED}"
    ))
}

/// What an error says about a context overflow, or `None` if it is not one. A rate limit (HTTP
/// 429) is never an overflow, whatever its words (OpenAI's "tokens per minute" errors count
/// tokens too).
pub fn overflow_of(err: &ProviderError) -> Option<Overflow> {
    if err.status() == Some(429) {
        return None;
    }
    overflow_in(err.message())
}

/// `overflow_of` for a bare message; also used by the HTTP layer to classify.
pub(crate) fn overflow_in(message: &str) -> Option<Overflow> {
    let text = message.to_lowercase();
    if !MARKERS.iter().any(|marker| text.contains(marker)) {
        return None;
    }
    Some(Overflow {
        limit: limit_in(&text),
        requested: requested_in(&text),
    })
}

/// The stated window: the first phrase that names one.
fn limit_in(text: &str) -> Option<u64> {
    let after = [
        "maximum context length is",
        "maximum model length of",
        "available context size (",
        "max context size (",
        "context length of only",
        "maximum number of tokens allowed (",
        "too large for model with",
        "n_ctx",
    ];
    if let Some(limit) = after.iter().find_map(|phrase| number_after(text, phrase)) {
        return Some(limit);
    }
    // Anthropic: `M tokens > N maximum`, `M + K > N, decrease …`.
    let tail = &text[text.find(" > ")? + 3..];
    leading_number(tail)
}

/// The stated size of the refused request: the first phrase that names one.
fn requested_in(text: &str) -> Option<u64> {
    let after = [
        "your messages resulted in",
        "you requested",
        "your request has",
        "prompt is too long:",
        "exceed context limit:",
        "request (",
        "input (",
        "prompt (length",
        "prompt contains",
        "keep the first",
        "input token count (",
        "n_prompt_tokens",
    ];
    after.iter().find_map(|phrase| number_after(text, phrase))
}

/// The number right after `phrase` (skipping spaces, `:`, `=`, `"`, `~` and the word "about").
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let start = text.find(phrase)? + phrase.len();
    let rest = text[start..].trim_start_matches([' ', ':', '=', '"', '~']);
    let rest = rest.strip_prefix("about ").unwrap_or(rest);
    leading_number(rest)
}

/// The unsigned integer `text` starts with, allowing `,` or `_` between digit groups.
fn leading_number(text: &str) -> Option<u64> {
    let mut value: u64 = 0;
    let mut digits = 0;
    for c in text.chars() {
        match c {
            '0'..='9' => {
                value = value
                    .checked_mul(10)?
                    .checked_add(u64::from(c as u8 - b'0'))?;
                digits += 1;
            }
            ',' | '_' if digits > 0 => {}
            _ => break,
        }
    }
    (digits > 0).then_some(value)
}

#[cfg(test)]
mod tests;
