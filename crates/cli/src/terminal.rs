//! Pod-supplied text made safe for a terminal. Names, models, messages, model output and
//! errors come from pods, models and files; an escape sequence in any of them could move the
//! cursor, retitle the window or hide what follows. Every line the CLI prints from them goes
//! through here: control characters are shown escaped (`\u{1b}`), so a person sees that they
//! were there. `--json` output needs none of this (JSON escapes them).

use std::borrow::Cow;

/// Multi-line text: newlines and tabs stay, every other control character is escaped.
pub fn text(s: &str) -> Cow<'_, str> {
    seedpod_protocol::printable_text(s)
}

/// One cell or one line: every control character is escaped, newlines included.
pub fn cell(s: &str) -> Cow<'_, str> {
    seedpod_protocol::printable_line(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_act_on_and_keeps_the_rest() {
        let hostile = "qwen\u{1b}]0;pwned\u{7}\u{9b}2J";
        let shown = cell(hostile);
        assert!(
            !shown.chars().any(seedpod_protocol::printable::is_control),
            "{shown:?}"
        );
        assert!(
            shown.contains("\\u{1b}") && shown.contains("\\u{9b}"),
            "{shown}"
        );
        assert_eq!(text("line one\n\tline two"), "line one\n\tline two");
        assert_eq!(cell("a\nb"), "a\\u{a}b");
        assert!(matches!(text("plain 日本語 👍"), Cow::Borrowed(_)));
        assert_eq!(cell("abc\u{202e}fed"), "abc\\u{202e}fed");
    }
}
