//! Steps 1 and 2: tool calls a model wrote out as text instead of calling the tool. They are
//! not an answer to anyone, and committed they would be sent back as if the model had said them.

use super::tags;

/// Paired tags whose whole span is a tool call or its result (Hermes/Qwen `<tool_call>`,
/// Anthropic-style `<function_calls>`/`<invoke>`, Qwen3-Coder `<function=…>`, DeepSeek's
/// full-width markers).
const SPANS: [(&str, &str); 7] = [
    ("<tool_call>", "</tool_call>"),
    ("<tool_calls>", "</tool_calls>"),
    ("<tool_response>", "</tool_response>"),
    ("<function_calls>", "</function_calls>"),
    ("<function=", "</function>"),
    ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"),
    ("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
];

/// Step 1: garbled tool-call XML. Spans go whole; an unclosed one runs to the end of the text;
/// stray single tags go alone.
pub fn strip_garbled_xml(prose: &str) -> String {
    let mut text = prose.to_string();
    for (open, close) in SPANS {
        text = tags::remove_spans(&text, open, close).0;
        text = tags::remove_all(&text, close);
    }
    for open in ["<invoke ", "<invoke>", "<invoke\n"] {
        text = tags::remove_spans(&text, open, "</invoke>").0;
    }
    text = tags::remove_all(&text, "</invoke>");
    for name in ["parameter", "tool_call", "function_calls"] {
        text = tags::remove_open_tags_with_attributes(&text, name);
        text = tags::remove_all(&text, &format!("</{name}>"));
    }
    // Llama 3.x: `<|python_tag|>` then the call as JSON, to the end of its paragraph.
    remove_marker_paragraphs(&text, "<|python_tag|>")
}

/// Step 2: calls in a bracketed text format — Mistral's `[TOOL_CALLS][…]`, and the
/// `[Tool Call: …]`, `[Tool Result …]`, `[Historical context: …]` lines some models imitate
/// from transcripts — with what follows them up to the next blank line (their JSON).
pub fn strip_downgraded_calls(prose: &str) -> String {
    let text = remove_marker_paragraphs(prose, "[TOOL_CALLS]");
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        let start = line.trim_start();
        if ["[Tool Call:", "[Tool Result", "[Historical context:"]
            .iter()
            .any(|m| start.starts_with(m))
        {
            skipping = true;
            continue;
        }
        if skipping && line.trim().is_empty() {
            skipping = false;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// Remove from each `marker` to the end of its paragraph (the next blank line, or the end).
fn remove_marker_paragraphs(text: &str, marker: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = tags::find(text, marker, at) {
        out.push_str(&text[at..start]);
        at = match text[start..].find("\n\n") {
            Some(end) => start + end,
            None => text.len(),
        };
    }
    out.push_str(&text[at..]);
    out
}
