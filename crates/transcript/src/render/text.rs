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
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c != '\n' && c.is_control()) {
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
            c => {
                out.push(c);
                // Approximate (per char, not per grapheme): only tab stops depend on it.
                column += UnicodeWidthStr::width(c.encode_utf8(&mut [0; 4]) as &str);
            }
        }
    }
    Cow::Owned(out)
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
