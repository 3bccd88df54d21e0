//! Paste chips: a big bracketed paste is shown in the composer as one short token
//! (`[Paste #1 · 1,234 chars · 40 lines]`) and sent as a `paste` segment, so a 2,000-line log
//! neither floods the composer nor gets mangled by accidental edits. A small one (within
//! `PasteLimits`, `[tui] inline_paste_lines` and `inline_paste_chars`) goes in as text, to be
//! seen and edited; a chip can be expanded into its text before sending (Ctrl-X on it).

use seedpod_transcript::render::thousands;
use serde::{Deserialize, Serialize};

/// How big a paste may be and still go into the composer as text: one over either limit
/// becomes a chip. The CLI passes `[tui] inline_paste_lines` and `inline_paste_chars`; the
/// default is theirs (`seedpod_config::tui`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasteLimits {
    pub lines: usize,
    pub chars: usize,
}

impl Default for PasteLimits {
    fn default() -> PasteLimits {
        PasteLimits {
            lines: 10,
            chars: 1_000,
        }
    }
}

/// One chipped paste held by the composer until the input is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paste {
    pub id: u32,
    pub content: String,
}

impl Paste {
    pub fn chars(&self) -> usize {
        self.content.chars().count()
    }

    pub fn lines(&self) -> usize {
        self.content.lines().count().max(1)
    }

    /// The token that stands for this paste in the composer's text.
    pub fn label(&self) -> String {
        let lines = self.lines();
        format!(
            "[Paste #{} · {} chars · {} {}]",
            self.id,
            thousands(self.chars() as u64),
            thousands(lines as u64),
            if lines == 1 { "line" } else { "lines" }
        )
    }
}

/// Terminals send pasted line breaks as `\r` or `\r\n`; the model and the chip count `\n`.
pub fn normalise(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Whether a (normalised) paste should become a chip rather than inline text.
pub fn wants_chip(content: &str, limits: PasteLimits) -> bool {
    content.chars().count() > limits.chars || content.lines().count() > limits.lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_counts_chars_and_lines() {
        let content = format!("{}\n", "x".repeat(30)).repeat(40);
        let paste = Paste {
            id: 1,
            content: content.trim_end().to_string(),
        };
        assert_eq!(paste.label(), "[Paste #1 · 1,239 chars · 40 lines]");
        let one = Paste {
            id: 2,
            content: "y".repeat(1_234),
        };
        assert_eq!(one.label(), "[Paste #2 · 1,234 chars · 1 line]");
    }

    #[test]
    fn thresholds_in_lines_and_characters() {
        let limits = PasteLimits::default();
        assert!(!wants_chip("short", limits));
        assert!(!wants_chip("three\nshort\nlines", limits));
        assert!(!wants_chip(&"line\n".repeat(10), limits));
        assert!(wants_chip(&"line\n".repeat(11), limits));
        assert!(!wants_chip(&"x".repeat(1_000), limits));
        assert!(wants_chip(&"x".repeat(1_001), limits));
        let strict = PasteLimits {
            lines: 2,
            chars: 50,
        };
        assert!(wants_chip("three\nshort\nlines", strict));
        assert!(wants_chip(&"x".repeat(51), strict));
    }

    #[test]
    fn separators_and_line_endings() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(normalise("a\r\nb\rc"), "a\nb\nc");
    }
}
