//! Text from outside (model servers, pods, files) made printable: control characters shown
//! escaped (`\u{1b}`), so whatever prints or stores the text can neither be steered by an
//! escape sequence nor lose sight of one. Used by every CLI line that shows such text and by
//! the providers before a server's words become an error message that is logged and stored.

use std::borrow::Cow;

/// Multi-line text: newlines and tabs stay, every other control character is escaped.
pub fn printable_text(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

/// One line or one cell: every control character is escaped, newlines included.
pub fn printable_line(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_control(c) && !keep(c);
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// C0, DEL and C1 controls (C1 includes the 8-bit CSI a terminal may honour), and the
/// bidirectional overrides that reorder what follows on screen.
pub fn is_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_act_on_and_keeps_the_rest() {
        let hostile = "qwen\u{1b}]0;pwned\u{7}\u{9b}2J\u{0}";
        let shown = printable_line(hostile);
        assert!(!shown.chars().any(is_control), "{shown:?}");
        assert!(
            shown.contains("\\u{1b}") && shown.contains("\\u{9b}") && shown.contains("\\u{0}"),
            "{shown}"
        );
        assert_eq!(
            printable_text("line one\n\tline two"),
            "line one\n\tline two"
        );
        assert_eq!(printable_line("a\nb"), "a\\u{a}b");
        assert!(matches!(
            printable_text("plain 日本語 👍"),
            Cow::Borrowed(_)
        ));
        assert_eq!(printable_line("abc\u{202e}fed"), "abc\\u{202e}fed");
    }
}
