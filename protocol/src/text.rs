//! Cutting text to a number of characters, never inside one. Shared by every crate that bounds
//! what it shows or sends (tool results, summaries, error quotes, listings), so a cut looks and
//! counts the same everywhere.
//!
//! These bound *sizes* (what a model reads, what a frame carries), so they count characters;
//! cutting to *screen columns* is a different question (wide and joined glyphs) answered once
//! by `seedpod_transcript::render::truncate`, which the TUI uses. The protocol crate stays free
//! of Unicode tables.

/// The first `max` characters of `text`, if it has more than that.
pub fn char_prefix(text: &str, max: usize) -> Option<&str> {
    text.char_indices().nth(max).map(|(end, _)| &text[..end])
}

/// `text` cut to `max` characters with `…` appended when it was longer.
pub fn ellipsize(text: &str, max: usize) -> String {
    match char_prefix(text, max) {
        Some(kept) => format!("{kept}…"),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_count_characters_not_bytes() {
        assert_eq!(char_prefix("héllo", 2), Some("hé"));
        assert_eq!(char_prefix("hé", 2), None, "fits exactly");
        assert_eq!(char_prefix("", 0), None);
        assert_eq!(ellipsize("héllo", 3), "hél…");
        assert_eq!(ellipsize("hé", 3), "hé");
    }
}
