//! Finding tags in model text: ASCII case-insensitive, no regex, byte offsets into the text.

/// The first occurrence of `needle` in `hay` at or after `from`, ignoring ASCII case.
pub fn find(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let hay_bytes = hay.as_bytes();
    let needle = needle.as_bytes();
    if needle.is_empty() || needle.len() > hay_bytes.len() {
        return None;
    }
    (from..=hay_bytes.len() - needle.len())
        .find(|&at| hay_bytes[at..at + needle.len()].eq_ignore_ascii_case(needle))
        .filter(|&at| hay.is_char_boundary(at))
}

/// Remove every `open … close` span (tags included). An `open` with no `close` runs to the end
/// of the text: a call cut off at the end of an answer is still not prose. Returns the kept
/// text and the inner texts removed.
pub fn remove_spans(text: &str, open: &str, close: &str) -> (String, Vec<String>) {
    let mut kept = String::with_capacity(text.len());
    let mut removed = Vec::new();
    let mut at = 0;
    while let Some(start) = find(text, open, at) {
        kept.push_str(&text[at..start]);
        let inner_start = start + open.len();
        match find(text, close, inner_start) {
            Some(end) => {
                removed.push(text[inner_start..end].to_string());
                at = end + close.len();
            }
            None => {
                removed.push(text[inner_start..].to_string());
                at = text.len();
            }
        }
    }
    kept.push_str(&text[at..]);
    (kept, removed)
}

/// Remove every occurrence of `tag` itself, keeping what surrounds it.
pub fn remove_all(text: &str, tag: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = find(text, tag, at) {
        kept.push_str(&text[at..start]);
        at = start + tag.len();
    }
    kept.push_str(&text[at..]);
    kept
}

/// Remove `<name …>` opening tags with attributes (`<invoke name="x">`), keeping the rest.
pub fn remove_open_tags_with_attributes(text: &str, name: &str) -> String {
    let open = format!("<{name}");
    let mut kept = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = find(text, &open, at) {
        let after = start + open.len();
        let next = text[after..].chars().next();
        // `<invoker>` is another word, not this tag.
        if !matches!(next, Some(' ' | '>' | '=' | '\n' | '\t')) {
            kept.push_str(&text[at..after]);
            at = after;
            continue;
        }
        kept.push_str(&text[at..start]);
        at = match text[after..].find('>') {
            Some(close) => after + close + 1,
            None => text.len(),
        };
    }
    kept.push_str(&text[at..]);
    kept
}
