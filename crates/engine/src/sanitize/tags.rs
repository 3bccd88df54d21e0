//! Finding tags in model text: ASCII case-insensitive, no regex, byte offsets into the text.

/// The first occurrence of `needle` in `hay` at or after `from`, ignoring ASCII case.
pub fn find(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let hay_bytes = hay.as_bytes();
    let needle_bytes = needle.as_bytes();
    let first = *needle_bytes.first()?;
    let last_start = hay_bytes.len().checked_sub(needle_bytes.len())?;
    let matches_at =
        |at: usize| hay_bytes[at..at + needle_bytes.len()].eq_ignore_ascii_case(needle_bytes);
    if first.is_ascii_alphabetic() || !first.is_ascii() {
        return (from..=last_start)
            .find(|&at| matches_at(at))
            .filter(|&at| hay.is_char_boundary(at));
    }
    // Every tag starts with `<`, which a long answer has few of: jump from one to the next with
    // `str::find(char)` (a memchr, fast even in a debug build) instead of comparing the needle
    // at every byte. A byte that is not a letter has no other case to look for.
    let mut at = from;
    while at <= last_start {
        if !hay.is_char_boundary(at) {
            at += 1;
            continue;
        }
        at += hay[at..].find(char::from(first))?;
        if at > last_start {
            return None;
        }
        if matches_at(at) {
            return Some(at);
        }
        at += 1;
    }
    None
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

#[cfg(test)]
mod tests {
    use super::find;

    /// The plain definition `find` must agree with: the first position at or after `from`
    /// where the needle matches ignoring ASCII case.
    fn reference(hay: &str, needle: &str, from: usize) -> Option<usize> {
        (from..=hay.len().checked_sub(needle.len())?).find(|&at| {
            hay.as_bytes()[at..at + needle.len()].eq_ignore_ascii_case(needle.as_bytes())
        })
    }

    #[test]
    fn finds_what_comparing_at_every_byte_finds() {
        let hays = [
            "",
            "<",
            "plain text without tags",
            "a <THINK>x</Think> b <think>",
            "é<think>ü</think>日本<tool_call>",
            "<<<think",
            "ends with <think>",
        ];
        let needles = ["<think>", "</think>", "<tool_call>", "<", "think", "ü"];
        for hay in hays {
            for needle in needles {
                for from in (0..=hay.len()).filter(|&at| hay.is_char_boundary(at)) {
                    assert_eq!(
                        find(hay, needle, from),
                        reference(hay, needle, from),
                        "{needle:?} in {hay:?} from {from}"
                    );
                }
            }
        }
    }
}
