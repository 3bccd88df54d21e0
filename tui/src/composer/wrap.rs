//! How many screen rows a composer line takes, counted the way the text area wraps it.
//!
//! The composer's height is decided before the text area draws, so it must count rows by the
//! same rule the area uses (`WrapMode::WordOrGlyph`): rows fill greedily with the pieces between
//! Unicode word boundaries; a piece that does not fit starts the next row; a piece wider than a
//! whole row is cut at grapheme boundaries and its last cut ends its row. Counting by characters
//! instead under-counts a row whenever a word is carried over, and the text area then scrolls
//! the composer's first row out of sight.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Spaces a tab advances to (the text area's default tab length).
const TAB: usize = 4;

/// How a line lays out at a width: its rows and the width of its last row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub rows: usize,
    pub last_row: usize,
}

/// Lay `line` out at `width` columns.
pub fn layout(line: &str, width: usize) -> Layout {
    let width = width.max(1);
    // Rows already closed; the open row's width and whether anything is on it (a zero-width
    // piece counts, as it does for the text area).
    let mut closed = 0usize;
    let mut open = 0usize;
    let mut open_used = false;
    let mut last_row = 0usize;
    for piece in line.split_word_bounds() {
        let piece_width = advance(piece, open) - open;
        if open + piece_width <= width {
            open += piece_width;
            open_used = true;
            last_row = open;
            continue;
        }
        if open_used {
            // The piece moves to a fresh row, measured again from column 0 (tabs move).
            closed += 1;
            open = 0;
            open_used = false;
            let piece_width = advance(piece, 0);
            if piece_width <= width {
                open = piece_width;
                open_used = true;
                last_row = open;
                continue;
            }
        }
        // Wider than a row: cut at graphemes; every cut is a row of its own.
        let cuts = grapheme_rows(piece, width);
        closed += cuts.len();
        last_row = cuts.last().copied().unwrap_or(0);
    }
    let rows = closed + usize::from(open_used);
    Layout {
        rows: rows.max(1),
        last_row,
    }
}

/// The widths of the rows `piece` is cut into at grapheme boundaries.
fn grapheme_rows(piece: &str, width: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut current = 0usize;
    for grapheme in piece.graphemes(true) {
        let w = advance(grapheme, current) - current;
        if current > 0 && current + w > width {
            cuts.push(current);
            current = 0;
        }
        current = advance(grapheme, current);
    }
    if current > 0 || cuts.is_empty() {
        cuts.push(current);
    }
    cuts
}

/// The column after drawing `text` from column `from`: tabs advance to the next stop, control
/// characters take no cell.
fn advance(text: &str, from: usize) -> usize {
    let mut column = from;
    for c in text.chars() {
        if c == '\t' {
            column += TAB - column % TAB;
        } else if !c.is_control() {
            let mut buffer = [0u8; 4];
            column += c.encode_utf8(&mut buffer).width();
        }
    }
    column
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::widgets::Widget;
    use ratatui_textarea::{TextArea, WrapMode};

    use super::*;

    /// Rows the text area itself draws `line` in at `width` (to its last non-blank row), in a
    /// buffer `height` rows tall.
    fn drawn_rows_within(line: &str, width: u16, height: u16) -> usize {
        let mut area = TextArea::new(vec![line.to_string()]);
        area.set_wrap_mode(WrapMode::WordOrGlyph);
        let rect = Rect::new(0, 0, width, height);
        let mut buffer = Buffer::empty(rect);
        (&area).render(rect, &mut buffer);
        (0..rect.height)
            .filter(|&y| (0..width).any(|x| buffer[(x, y)].symbol().trim() != ""))
            .map(|y| usize::from(y) + 1)
            .max()
            .unwrap_or(1)
    }

    fn drawn_rows(line: &str, width: u16) -> usize {
        drawn_rows_within(line, width, 400)
    }

    /// Rows the text area draws `line` in, in a buffer two rows taller than `layout` says it
    /// needs: drawing is what this test spends its time in, and a layout that counts too few
    /// rows still shows (the drawing overflows into the spare rows), as does one that counts
    /// too many.
    fn drawn_rows_near_layout(line: &str, width: u16) -> usize {
        let height = layout(line, usize::from(width)).rows + 2;
        drawn_rows_within(line, width, u16::try_from(height).unwrap_or(u16::MAX))
    }

    /// A small deterministic generator, so a failure names its line.
    struct Lines(u64);

    impl Lines {
        fn next(&mut self, below: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) as usize) % below
        }

        fn line(&mut self) -> String {
            const PIECES: [&str; 9] = [" ", "  ", "\t", "-", "漢字", "e\u{301}", "🙂", ",", "x"];
            let mut line = String::new();
            for _ in 0..1 + self.next(30) {
                if self.next(3) == 0 {
                    line.push_str(PIECES[self.next(PIECES.len())]);
                } else {
                    let letter = char::from(b'a' + self.next(26) as u8);
                    line.extend(std::iter::repeat_n(letter, 1 + self.next(40)));
                }
            }
            // A last row of blanks cannot be seen in the drawing, so the line ends visibly.
            line.push('z');
            line
        }
    }

    #[test]
    fn counts_the_rows_the_text_area_draws() {
        let mut lines = Lines(7);
        for _ in 0..400 {
            let line = lines.line();
            for width in [3u16, 5, 8, 13, 21, 40, 98] {
                assert_eq!(
                    layout(&line, usize::from(width)).rows,
                    drawn_rows_near_layout(&line, width),
                    "{line:?} at {width} columns"
                );
            }
        }
    }

    #[test]
    fn a_word_carried_to_the_next_row_is_counted() {
        // The failure this file exists for: "ya " and a 192-letter word at 98 columns is 3 rows
        // (the word does not fit after "ya "), though 196 characters fill only 2.
        let line = format!("ya {}", "ay".repeat(96));
        assert_eq!(layout(&line, 98).rows, 3);
        assert_eq!(drawn_rows(&line, 98), 3);
    }

    #[test]
    fn the_last_row_width_is_where_the_cursor_would_sit() {
        assert_eq!(
            layout("", 10),
            Layout {
                rows: 1,
                last_row: 0
            }
        );
        assert_eq!(
            layout("abcd efgh", 4),
            Layout {
                rows: 3,
                last_row: 4
            }
        );
        assert_eq!(
            layout(&"x".repeat(25), 10),
            Layout {
                rows: 3,
                last_row: 5
            }
        );
    }
}
