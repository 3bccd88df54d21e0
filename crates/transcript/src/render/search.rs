//! A search's marks on screen: every occurrence of the text in the lines drawn is highlighted,
//! the current one more strongly, and the view scrolls to the line that holds the current one.
//!
//! Occurrences are found in what a line shows, grapheme by grapheme and ignoring case, so a
//! mark covers exactly the columns of the text. The model counts occurrences in a cell's text
//! (`model/find.rs`); a cell can show fewer (a folded tool output, a match cut by a wrap), so
//! the nth occurrence of a cell is the last one it shows when it shows fewer, or its header
//! when it shows none.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use unicode_segmentation::UnicodeSegmentation;

use super::text::grapheme_width;
use crate::model::Occurrence;

/// What the view marks: the text searched for and the occurrence being looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Marks {
    /// The query, lowercased, one grapheme per element.
    query: Vec<String>,
    pub(crate) current: Option<Occurrence>,
}

impl Marks {
    /// `None` for a query with nothing to mark.
    pub(crate) fn new(query: &str, current: Option<Occurrence>) -> Option<Marks> {
        let query: Vec<String> = query
            .trim()
            .graphemes(true)
            .map(str::to_lowercase)
            .collect();
        (!query.is_empty()).then_some(Marks { query, current })
    }

    /// The columns of each occurrence in `line`, left to right, not overlapping.
    pub(crate) fn columns(&self, line: &Line<'_>) -> Vec<Range<u16>> {
        let mut graphemes: Vec<(String, usize)> = Vec::new();
        for span in &line.spans {
            for g in span.content.graphemes(true) {
                graphemes.push((g.to_lowercase(), grapheme_width(g)));
            }
        }
        let n = self.query.len();
        let mut found = Vec::new();
        let (mut at, mut column) = (0, 0usize);
        while at + n <= graphemes.len() {
            let hit = graphemes[at..at + n]
                .iter()
                .zip(&self.query)
                .all(|((g, _), q)| g == q);
            if hit {
                let width: usize = graphemes[at..at + n].iter().map(|(_, w)| w).sum();
                found.push(to_u16(column)..to_u16(column + width));
                column += width;
                at += n;
            } else {
                column += graphemes[at].1;
                at += 1;
            }
        }
        found
    }

    /// Where the current occurrence of cell `lines` is shown: (line index, occurrence on that
    /// line). `None` when the cell shows the text nowhere.
    pub(crate) fn locate(&self, lines: &[Line<'_>], nth: usize) -> Option<(usize, usize)> {
        let mut seen = 0;
        let mut last = None;
        for (index, line) in lines.iter().enumerate() {
            let count = self.columns(line).len();
            for k in 0..count {
                last = Some((index, k));
                if seen == nth {
                    return last;
                }
                seen += 1;
            }
        }
        last
    }

    /// Paint the occurrences of one drawn line; `current` is the occurrence on it (if any)
    /// that is being looked at.
    pub(crate) fn paint(
        &self,
        line: &Line<'_>,
        x: u16,
        y: u16,
        width: u16,
        current: Option<usize>,
        buf: &mut Buffer,
    ) {
        for (k, columns) in self.columns(line).into_iter().enumerate() {
            if columns.start >= width {
                break;
            }
            let end = columns.end.min(width);
            let area = Rect {
                x: x + columns.start,
                y,
                width: end - columns.start,
                height: 1,
            };
            let style = if current == Some(k) {
                current_style()
            } else {
                other_style()
            };
            buf.set_style(area, style);
        }
    }
}

/// Every occurrence: reversed, readable with or without colour.
fn other_style() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

/// The occurrence being looked at: reversed, bold and underlined, so it stands out among the
/// others under `NO_COLOR` too.
fn current_style() -> Style {
    Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED)
}

fn to_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_every_occurrence_in_any_case_by_grapheme() {
        let marks = Marks::new("end4", None).unwrap();
        let line = Line::from("END47 end48 日本END4");
        assert_eq!(marks.columns(&line), vec![0..4, 6..10, 16..20]);
    }

    #[test]
    fn locate_clamps_to_the_last_occurrence_shown() {
        let marks = Marks::new("x", None).unwrap();
        let lines = [Line::from("a"), Line::from("x x"), Line::from("b x")];
        assert_eq!(marks.locate(&lines, 0), Some((1, 0)));
        assert_eq!(marks.locate(&lines, 2), Some((2, 0)));
        assert_eq!(marks.locate(&lines, 9), Some((2, 0)));
        assert_eq!(marks.locate(&lines[..1], 0), None);
    }
}
