//! A deterministic token estimate: what the fill gauge, pruning and compaction decide on when
//! the provider has not (yet) said how many tokens a request was.
//!
//! Bytes / 4 (rounded up) plus a small per-message overhead. It over-counts English and code
//! for most tokenizers, which is the safe side: the pod compacts a little early rather than
//! late, and the provider's own count replaces the estimate after every response. It is O(1)
//! per item (string lengths only), so estimating 10,000 items costs microseconds.

use seedpod_protocol::{ContextFill, FillBasis, ModelItem, ToolSpec};
use seedpod_store::SegmentState;

/// Tokens a message costs beyond its text (role, separators) in common chat templates.
pub const MESSAGE_OVERHEAD: u64 = 4;

/// Estimated tokens of `bytes` bytes of text.
pub fn tokens_of_len(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

pub fn tokens(text: &str) -> u64 {
    tokens_of_len(text.len())
}

/// Estimated tokens of one history item as a request carries it.
pub fn item_tokens(item: &ModelItem) -> u64 {
    let bytes = match item {
        ModelItem::UserMessage { text }
        | ModelItem::AssistantText { text }
        | ModelItem::SystemMessage { text } => text.len(),
        ModelItem::Reasoning {
            text,
            signature,
            responses,
        } => {
            // The encrypted reasoning goes back with every request, so it weighs like text.
            let carried = responses.as_ref().map_or(0, |r| {
                r.id.len() + r.encrypted_content.as_ref().map_or(0, String::len)
            });
            text.len() + signature.as_ref().map_or(0, String::len) + carried
        }
        ModelItem::ToolCall {
            call_id,
            name,
            arguments,
        } => call_id.as_str().len() + name.len() + arguments.len(),
        // An image's cost depends on its pixels, which the pod does not read; it is left out
        // (the provider's count after the request replaces the estimate). Counting a fixed
        // amount would make a small image look like tokens the server dropped.
        ModelItem::ToolResult {
            call_id, content, ..
        } => call_id.as_str().len() + content.len(),
    };
    tokens_of_len(bytes) + MESSAGE_OVERHEAD
}

pub fn items_tokens(items: &[ModelItem]) -> u64 {
    items.iter().map(item_tokens).sum()
}

/// Estimated tokens of the part of every request that is not history: the system prompt and
/// the tool schemas.
pub fn base_tokens(system_prompt: &str, tools: &[ToolSpec]) -> u64 {
    let schemas: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum();
    tokens(system_prompt) + tokens_of_len(schemas) + MESSAGE_OVERHEAD
}

/// The pod's own estimate of the whole next request, never the server's count: the same
/// measure for every request, so two of them can be compared (`check_truncation`).
pub fn request_tokens(state: &SegmentState) -> u64 {
    prompt_tokens(&state.system_prompt, &state.tools, &state.history)
}

/// Estimated tokens of a request made of this system prompt, these tools and these items: what
/// `request_tokens` counts for a segment, and what a compaction reports as the context after it
/// (counted once the new segment's prompt is rendered, so both say the same number).
pub fn prompt_tokens(system_prompt: &str, tools: &[ToolSpec], items: &[ModelItem]) -> u64 {
    base_tokens(system_prompt, tools) + items_tokens(items)
}

/// The fill of the next request: the provider's count for the last request plus an estimate
/// of what was committed since; or, with no count to start from (a new segment, after a
/// pruning step), an estimate of the whole request.
pub fn fill_tokens(state: &SegmentState) -> u64 {
    match state.usage_mark {
        Some(mark) if mark.history_len <= state.history.len() => {
            mark.input_tokens + items_tokens(&state.history[mark.history_len..])
        }
        Some(_) | None => request_tokens(state),
    }
}

/// The gauge every client shows (the TUI's status line, `seedpod ls`): the one figure, and
/// whether it is the server's count of the last request (nothing committed since) or an
/// estimate of the next.
pub fn fill(state: &SegmentState) -> ContextFill {
    let basis = match state.usage_mark {
        Some(mark) if mark.history_len == state.history.len() => FillBasis::LastRequest,
        Some(_) | None => FillBasis::Estimate,
    };
    ContextFill {
        tokens: fill_tokens(state),
        window: state.window.map(|w| w.tokens),
        source: state.window.map(|w| w.source),
        basis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_up_and_count_overhead() {
        assert_eq!(tokens(""), 0);
        assert_eq!(tokens("abc"), 1);
        assert_eq!(tokens("abcde"), 2);
        let item = ModelItem::UserMessage {
            text: "x".repeat(400),
        };
        assert_eq!(item_tokens(&item), 100 + MESSAGE_OVERHEAD);
    }

    #[test]
    fn multibyte_text_counts_by_bytes() {
        // Four 3-byte characters: 12 bytes, 3 tokens — never fewer than bytes / 4.
        assert_eq!(tokens("日本語だ"), 3);
    }
}
