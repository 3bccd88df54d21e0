//! Cleaning a model's raw answer before it is committed; the steps, their order and why:
//! docs/agent-loop.md §Cleaning an answer.
//!
//! Local and some hosted models leak artefacts into their text: reasoning in `<think>` tags,
//! tool calls written out as text (`<tool_call>{…}`, `<function=…>`, `[TOOL_CALLS]`), answer
//! wrappers (`<final>`), markers of ours they parrot back (`[notification]`, `[File: …]`), and
//! paragraphs repeated by a stuttering decoder. Committed as is, they are shown to the person and
//! sent back to the model on every later request, which teaches it to do more of the same.
//!
//! The pipeline is a series of small pure steps, each with table tests. Reasoning is moved into
//! a reasoning item, never dropped; the raw text is committed beside the cleaned one (an
//! `assistant_raw` entry), so nothing is lost and replay stays exact. Text inside fenced code
//! blocks is never touched: a model explaining `<tool_call>` syntax keeps its example.

mod fences;
mod repeats;
mod tags;
mod think;
mod tool_text;
mod wrappers;

#[cfg(test)]
mod tests;

/// What the pipeline made of a raw answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cleaned {
    /// What the person sees and the model reads back.
    pub text: String,
    /// Reasoning found in the text (`<think>` and friends), joined; empty when there was none.
    pub reasoning: String,
}

/// Most passes of the pipeline: a step can expose work for an earlier one (a tag removed by
/// step 4 leaves a `[Tool Call: …]` at the start of its line, for step 2), so passes repeat
/// until nothing changes; every pass that changes something shortens the text.
const MAX_PASSES: usize = 4;

/// Run every step in order (docs/agent-loop.md §Cleaning an answer), until the text settles.
pub fn clean(raw: &str) -> Cleaned {
    // NUL is never text: a server that sends one sends garbage.
    let mut text = raw.replace('\u{0}', "");
    let mut reasoning = Vec::new();
    for _ in 0..MAX_PASSES {
        let (next, found) = pass(&text);
        reasoning.extend(found.into_iter().filter(|r| !r.is_empty()));
        if next == text {
            break;
        }
        text = next;
    }
    Cleaned {
        text,
        reasoning: reasoning.join("\n\n"),
    }
}

/// One pass of steps 1–7; the reasoning it found, in order.
fn pass(raw: &str) -> (String, Vec<String>) {
    let (text, leading) = think::split_leading(raw);
    let mut reasoning = vec![leading];
    let text = fences::map_prose(&text, tool_text::strip_garbled_xml);
    let text = fences::map_prose(&text, tool_text::strip_downgraded_calls);
    let text = fences::map_prose(&text, |prose| {
        let (kept, found) = think::extract_blocks(prose);
        reasoning.extend(found);
        kept
    });
    let text = fences::map_prose(&text, wrappers::strip_final_tags);
    let text = fences::map_prose(&text, wrappers::strip_echoed_markers);
    let text = fences::map_prose(&text, repeats::collapse_repeated_paragraphs);
    let text = strip_leading_blank_lines(&text).trim_end().to_string();
    (text, reasoning)
}

/// Step 7: whitespace-only lines at the start go; the first real line keeps its indentation.
fn strip_leading_blank_lines(text: &str) -> &str {
    let mut rest = text;
    while let Some((line, after)) = rest.split_once('\n') {
        if !line.trim().is_empty() {
            break;
        }
        rest = after;
    }
    if rest.trim().is_empty() { "" } else { rest }
}
