//! Markdown tables. Columns get their natural width when the table fits; otherwise they shrink
//! (never below `MIN_COLUMN`) and cells wrap inside them; when even that cannot fit, each row
//! is shown as `header: value` lines. A wide table never breaks the layout.

use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::text::width;
use super::theme::{Role, Theme};
use super::wrap::{clip, line_width, wrap};

/// The narrowest a shrunk column gets before the table is stacked instead.
const MIN_COLUMN: usize = 6;
/// Between columns.
const SEPARATOR: &str = " │ ";

/// A table as the markdown parser delivered it.
#[derive(Default)]
pub(crate) struct Table {
    pub(crate) aligns: Vec<Alignment>,
    pub(crate) head: Vec<Vec<Span<'static>>>,
    pub(crate) rows: Vec<Vec<Vec<Span<'static>>>>,
}

pub(crate) fn render(table: &Table, avail: usize, theme: &Theme) -> Vec<Line<'static>> {
    let columns = table
        .rows
        .iter()
        .map(Vec::len)
        .chain([table.head.len()])
        .max()
        .unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let separators = width(SEPARATOR) * (columns - 1);
    let natural: Vec<usize> = (0..columns)
        .map(|c| {
            std::iter::once(&table.head)
                .chain(&table.rows)
                .filter_map(|row| row.get(c))
                .map(|cell| cell.iter().map(|s| width(&s.content)).sum::<usize>())
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let widths = if natural.iter().sum::<usize>() + separators <= avail {
        natural
    } else if columns * MIN_COLUMN + separators <= avail {
        let words: Vec<usize> = (0..columns).map(|c| longest_word(table, c)).collect();
        fit(&natural, &words, avail - separators)
    } else {
        return stacked(table, columns, avail, theme);
    };
    let mut out = Vec::new();
    let bold = theme.style(Role::Heading).add_modifier(Modifier::BOLD);
    if !table.head.is_empty() {
        let head: Vec<Vec<Span<'static>>> = table
            .head
            .iter()
            .map(|cell| cell.iter().map(|s| s.clone().patch_style(bold)).collect())
            .collect();
        out.extend(row_lines(&head, &widths, &table.aligns, theme));
        let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        out.push(Line::from(Span::styled(
            rule.join("─┼─"),
            theme.style(Role::Dim),
        )));
    }
    for row in &table.rows {
        out.extend(row_lines(row, &widths, &table.aligns, theme));
    }
    out
}

/// Shrink columns to fit `avail`. Each column starts wide enough for its longest word when
/// all of them fit that way (so no word is split), else at `MIN_COLUMN`; the spare columns
/// then go one at a time to whichever column is furthest from its natural width.
fn fit(natural: &[usize], words: &[usize], avail: usize) -> Vec<usize> {
    let floors: Vec<usize> = natural
        .iter()
        .zip(words)
        .map(|(n, w)| (*n).min((*w).max(MIN_COLUMN)))
        .collect();
    let mut widths = if floors.iter().sum::<usize>() <= avail {
        floors
    } else {
        natural.iter().map(|n| (*n).min(MIN_COLUMN)).collect()
    };
    let mut spare = avail.saturating_sub(widths.iter().sum());
    while spare > 0 {
        let neediest = (0..widths.len())
            .filter(|c| widths[*c] < natural[*c])
            .max_by_key(|c| natural[*c] - widths[*c]);
        let Some(c) = neediest else { break };
        widths[c] += 1;
        spare -= 1;
    }
    widths
}

/// The widest word in column `c`, header included.
fn longest_word(table: &Table, c: usize) -> usize {
    std::iter::once(&table.head)
        .chain(&table.rows)
        .filter_map(|row| row.get(c))
        .flat_map(|cell| cell.iter())
        .flat_map(|span| span.content.split(' ').map(width).collect::<Vec<_>>())
        .max()
        .unwrap_or(0)
}

fn row_lines(
    row: &[Vec<Span<'static>>],
    widths: &[usize],
    aligns: &[Alignment],
    theme: &Theme,
) -> Vec<Line<'static>> {
    let empty = Vec::new();
    let cells: Vec<Vec<Line<'static>>> = widths
        .iter()
        .enumerate()
        .map(|(c, w)| {
            let spans = row.get(c).unwrap_or(&empty);
            wrap(spans, *w, &[], &[])
                .into_iter()
                .map(|line| clip(line, *w))
                .collect()
        })
        .collect();
    let height = cells.iter().map(Vec::len).max().unwrap_or(1);
    let separator = Span::styled(SEPARATOR, theme.style(Role::Dim));
    (0..height)
        .map(|i| {
            let mut spans = Vec::new();
            for (c, w) in widths.iter().enumerate() {
                if c > 0 {
                    spans.push(separator.clone());
                }
                let line = cells[c].get(i);
                let used = line.map_or(0, line_width);
                let pad = w.saturating_sub(used);
                let (before, after) = match aligns.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    Some(Alignment::Left | Alignment::None) | None => (0, pad),
                };
                // The last column needs no trailing padding.
                let after = if c + 1 == widths.len() { 0 } else { after };
                if before > 0 {
                    spans.push(Span::raw(" ".repeat(before)));
                }
                if let Some(line) = line {
                    spans.extend(line.spans.iter().cloned());
                }
                if after > 0 {
                    spans.push(Span::raw(" ".repeat(after)));
                }
            }
            Line::from(spans)
        })
        .collect()
}

/// Too many columns for the width: one `header: value` line group per row.
fn stacked(table: &Table, columns: usize, avail: usize, theme: &Theme) -> Vec<Line<'static>> {
    let bold = theme.style(Role::Heading).add_modifier(Modifier::BOLD);
    let indent = [Span::raw("  ")];
    let mut out = Vec::new();
    for (n, row) in table.rows.iter().enumerate() {
        if n > 0 {
            out.push(Line::from(Span::styled(
                "─".repeat(avail.min(3)),
                theme.style(Role::Dim),
            )));
        }
        for c in 0..columns {
            let header: String = table
                .head
                .get(c)
                .map(|cell| cell.iter().map(|s| s.content.as_ref()).collect())
                .unwrap_or_else(|| format!("column {}", c + 1));
            let mut spans = vec![Span::styled(format!("{header}: "), bold)];
            if let Some(cell) = row.get(c) {
                spans.extend(cell.iter().cloned());
            }
            out.extend(wrap(&spans, avail, &[], &indent));
        }
    }
    out
}
