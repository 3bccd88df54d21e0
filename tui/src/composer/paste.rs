//! Paste chips: a big bracketed paste is shown in the composer as one short token
//! (`[Paste #1 · 1,234 chars · 40 lines]`) and sent as a `paste` segment, so a 2,000-line log
//! neither floods the composer nor gets mangled by accidental edits.

use seedpod_transcript::render::thousands;
use serde::{Deserialize, Serialize};

/// A paste longer than this many characters becomes a chip.
pub const PASTE_CHIP_CHARS: usize = 1_000;

/// A paste of at least this many lines ("several") becomes a chip; one or two lines stay
/// inline where they can be edited.
pub const PASTE_CHIP_LINES: usize = 3;

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
pub fn wants_chip(content: &str) -> bool {
    content.chars().count() > PASTE_CHIP_CHARS || content.lines().count() >= PASTE_CHIP_LINES
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
    fn thresholds() {
        assert!(!wants_chip("short"));
        assert!(!wants_chip("two\nlines"));
        assert!(wants_chip("three\nshort\nlines"));
        assert!(!wants_chip(&"x".repeat(PASTE_CHIP_CHARS)));
        assert!(wants_chip(&"x".repeat(PASTE_CHIP_CHARS + 1)));
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
