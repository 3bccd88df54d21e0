//! Step 3: reasoning written into the text (`<think>…</think>` from Qwen, DeepSeek-R1, QwQ and
//! their kin; `<thinking>`, `<thought>`, `<antThinking>`) is moved out of the answer.

use super::tags;

/// The tag names models use for reasoning.
const NAMES: [&str; 4] = ["think", "thinking", "thought", "antthinking"];

/// Reasoning at the very start of the answer, which is where reasoning models put it:
/// `<think>…</think>answer`; an opening tag never closed (the whole answer is reasoning); or a
/// lone `</think>` (the chat template opened the tag, so only its end is in the text).
pub fn split_leading(raw: &str) -> (String, String) {
    let start = raw.trim_start();
    for name in NAMES {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        if tags::find(start, &open, 0) == Some(0) {
            let inner = &start[open.len()..];
            return match tags::find(inner, &close, 0) {
                Some(end) => (
                    inner[end + close.len()..].to_string(),
                    inner[..end].trim().to_string(),
                ),
                None => (String::new(), inner.trim().to_string()),
            };
        }
    }
    if let Some(end) = tags::find(raw, "</think>", 0)
        && tags::find(&raw[..end], "<think>", 0).is_none()
        && !raw[..end].contains("```")
        && !raw[..end].contains("~~~")
    {
        return (
            raw[end + "</think>".len()..].to_string(),
            raw[..end].trim().to_string(),
        );
    }
    (raw.to_string(), String::new())
}

/// Reasoning blocks anywhere else in prose: removed, their text returned.
pub fn extract_blocks(prose: &str) -> (String, Vec<String>) {
    let mut text = prose.to_string();
    let mut found = Vec::new();
    for name in NAMES {
        let (kept, inner) = tags::remove_spans(&text, &format!("<{name}>"), &format!("</{name}>"));
        text = kept;
        found.extend(
            inner
                .into_iter()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
        );
        // A stray closing tag with nothing open is debris.
        text = tags::remove_all(&text, &format!("</{name}>"));
    }
    (text, found)
}
