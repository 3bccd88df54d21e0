//! Text measuring and cleaning. Every width in this crate comes from here: `unicode-width` per
//! grapheme cluster, the same measure ratatui's buffer uses when it draws, so what we wrap is
//! what the terminal gets.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Columns between tab stops when tabs are expanded (terminals differ; four keeps code compact).
pub(crate) const TAB_WIDTH: usize = 4;

/// The display width of one grapheme cluster, as ratatui's buffer counts it.
pub(crate) fn grapheme_width(g: &str) -> usize {
    if g.len() == 1 {
        // A single byte is ASCII; controls were removed by `sanitize`.
        return 1;
    }
    // ratatui adds a cell for each halfwidth (han)dakuten, which terminals draw on their own.
    let marks = g
        .chars()
        .filter(|c| matches!(c, '\u{FF9E}' | '\u{FF9F}'))
        .count();
    g.width() + marks
}

/// The display width of a string, in terminal columns: grapheme by grapheme, so a combining
/// mark or a joined emoji counts as the one glyph a terminal draws.
pub fn width(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.graphemes(true).map(grapheme_width).sum()
}

/// Cut `s` to at most `max` columns, ending with `…` when something was cut. Never splits a
/// grapheme: this is the one width cut of the transcript and the TUI.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = grapheme_width(g);
        if used + w > max - 1 {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push('…');
    out
}

/// Spans cut to at most `max` columns in all, the last one kept ending with `…` when
/// something was cut; styles are kept.
pub(crate) fn truncate_spans(
    spans: &[ratatui::text::Span<'static>],
    max: usize,
) -> Vec<ratatui::text::Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let left = max.saturating_sub(used);
        if left == 0 {
            break;
        }
        let text = truncate(&span.content, left);
        used += width(&text);
        let cut = text.ends_with('…') && !span.content.ends_with('…');
        out.push(ratatui::text::Span::styled(text, span.style));
        if cut {
            break;
        }
    }
    out
}

/// The last graphemes of `s` that fit in `max` columns.
pub fn tail(s: &str, max: usize) -> String {
    let mut used = 0;
    let mut kept: Vec<&str> = Vec::new();
    for g in s.graphemes(true).rev() {
        let w = grapheme_width(g);
        if used + w > max {
            break;
        }
        used += w;
        kept.push(g);
    }
    kept.into_iter().rev().collect()
}

/// `s` broken into rows of at most `width` columns at any grapheme (spaces kept), each newline
/// starting a row; a grapheme wider than a row gets a row of its own.
pub fn wrap_columns(s: &str, width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    for line in s.split('\n') {
        let mut row = String::new();
        let mut used = 0;
        for g in line.graphemes(true) {
            let w = grapheme_width(g);
            if used + w > width && !row.is_empty() {
                rows.push(std::mem::take(&mut row));
                used = 0;
            }
            row.push_str(g);
            used += w;
        }
        rows.push(row);
    }
    rows
}

/// Make outside text safe to draw: expand tabs, drop terminal escape sequences and other
/// control characters (they would move the cursor or change colours behind ratatui's back).
/// Newlines are kept; callers split on them.
///
/// Emoji sequences that terminals draw differently are split into the emoji they are made of:
/// a skin-tone modifier and the parts of a ZWJ sequence (👍🏽, 👨‍👩‍👧) are one 2-column cell to
/// ratatui but two or three glyphs to tmux, xterm and most terminals, so the next cell was
/// drawn over the modifier (the skin tone vanished) or the line drifted. Split by a zero-width
/// space (which ratatui gives no cell), each part gets the cell the terminal draws it in:
/// every glyph stays, in its place, in every terminal. The log keeps the text as written.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| (c != '\n' && c.is_control()) || is_emoji_joiner(c))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut column = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                out.push('\n');
                column = 0;
            }
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            '\u{1b}' => skip_escape(&mut chars),
            c if c.is_control() => {}
            ZWJ if out.chars().next_back().is_some_and(is_emoji_part) => out.push(SPLIT),
            c if is_skin_tone(c) => {
                out.push(SPLIT);
                out.push(c);
                column += 2;
            }
            c => {
                out.push(c);
                // Approximate (per char, not per grapheme): only tab stops depend on it.
                column += UnicodeWidthStr::width(c.encode_utf8(&mut [0; 4]) as &str);
            }
        }
    }
    Cow::Owned(out)
}

/// The emoji split `sanitize` makes, alone: for text a person edits (the composer), which
/// must draw as the transcript does and turn back into what was typed (`join_emoji`).
pub fn split_emoji(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_emoji_joiner) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            ZWJ if out.chars().next_back().is_some_and(is_emoji_part) => out.push(SPLIT),
            c if is_skin_tone(c) => {
                out.push(SPLIT);
                out.push(c);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Undo `split_emoji`: the text as it was typed (a split before a skin tone goes, any other
/// is the joiner it stood for).
pub fn join_emoji(s: &str) -> Cow<'_, str> {
    if !s.contains(SPLIT) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != SPLIT {
            out.push(c);
        } else if !chars.peek().is_some_and(|next| is_skin_tone(*next)) {
            out.push(ZWJ);
        }
    }
    Cow::Owned(out)
}

/// Between the parts of an emoji sequence: no cell of its own in ratatui, nothing drawn by a
/// terminal.
const SPLIT: char = '\u{200B}';
const ZWJ: char = '\u{200D}';

fn is_skin_tone(c: char) -> bool {
    ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
}

/// A character that joins or modifies an emoji into a sequence terminals disagree on.
fn is_emoji_joiner(c: char) -> bool {
    c == ZWJ || is_skin_tone(c)
}

/// Part of an emoji (what a ZWJ after it joins): pictographs, symbols, and the variation
/// selector and modifiers that follow them. A ZWJ elsewhere (Indic scripts) is left alone.
fn is_emoji_part(c: char) -> bool {
    matches!(c, '\u{1F000}'..='\u{1FAFF}' | '\u{2600}'..='\u{27BF}' | '\u{FE0F}')
}

/// Skip the rest of an escape sequence whose ESC was just read: CSI (`ESC [ … final`), OSC
/// (`ESC ] … BEL` or `ESC ] … ESC \`), or a two-character escape.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next_if_eq(&'\\');
                    break;
                }
            }
        }
        Some(_) | None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_emoji_is_what_sanitize_draws_and_join_undoes_it() {
        for text in ["A 👍🏽 B", "👨\u{200D}👩\u{200D}👧", "plain", "क्\u{200D}ष"] {
            assert_eq!(split_emoji(text), sanitize(text), "{text}");
            assert_eq!(join_emoji(&split_emoji(text)), text, "{text}");
        }
    }

    #[test]
    fn emoji_sequences_are_split_into_what_terminals_draw() {
        // Each part gets its own cell: 👍 and 🏽 two columns each, as terminals draw them.
        assert_eq!(sanitize("A 👍🏽 B"), "A 👍\u{200B}🏽 B");
        assert_eq!(width(&sanitize("👍🏽")), 4);
        assert_eq!(sanitize("👨\u{200D}👩\u{200D}👧"), "👨\u{200B}👩\u{200B}👧");
        assert_eq!(width(&sanitize("👨\u{200D}👩\u{200D}👧")), 6);
        // Flags, combining marks and wide CJK already match what terminals draw.
        for same in ["🇫🇷🇯🇵", "e\u{301}", "日本語", "plain"] {
            assert_eq!(sanitize(same), same);
        }
        // A ZWJ in a script that shapes with it is not an emoji's.
        let devanagari = "क्\u{200D}ष";
        assert_eq!(sanitize(devanagari), devanagari);
    }

    #[test]
    fn widths_follow_unicode_width() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(width("👍"), 2);
    }

    /// Combining marks and joined emoji stay whole whichever way text is cut or wrapped, and
    /// nothing is ever wider than asked.
    #[test]
    fn cuts_and_wraps_never_split_a_grapheme() {
        let family = "👩\u{200d}👩\u{200d}👧";
        let text = format!("ae\u{301}{family}日本x");
        for max in 0..=10 {
            let cut = truncate(&text, max);
            assert!(width(&cut) <= max, "{max}: {cut:?}");
            let kept = cut.trim_end_matches('…');
            assert!(text.starts_with(kept), "{max}: {cut:?} splits a grapheme");
            let end = tail(&text, max);
            assert!(width(&end) <= max && text.ends_with(&end), "{max}: {end:?}");
        }
        assert_eq!(truncate(&text, 3), "ae\u{301}…");
        assert_eq!(tail(&text, 5), "日本x");
        let rows = wrap_columns(&text, 2);
        assert_eq!(rows.concat(), text);
        assert!(rows.contains(&family.to_string()), "{rows:?}");
        assert!(rows.iter().all(|r| width(r) <= 2), "{rows:?}");
    }

    #[test]
    fn truncate_respects_wide_chars() {
        assert_eq!(truncate("日本語テキスト", 5), "日本…");
        assert_eq!(truncate("short", 10), "short");
        assert!(width(&truncate("日本語テキスト", 4)) <= 4);
    }

    #[test]
    fn sanitize_strips_escapes_and_expands_tabs() {
        assert_eq!(sanitize("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(sanitize("a\tb"), "a   b");
        assert_eq!(sanitize("x\r\ny"), "x\ny");
        assert_eq!(sanitize("\u{1b}]0;title\u{7}ok"), "ok");
        assert!(matches!(sanitize("plain"), Cow::Borrowed(_)));
    }
}
