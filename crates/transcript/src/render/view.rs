//! The scrolling transcript widget. It follows the tail unless the person scrolled up, shows
//! an "N new below" marker while they read, and draws only the cells on screen.
//!
//! Scrolling is kept as an anchor (a cell and a line inside it) rather than an absolute line
//! offset, so neither a frame nor a scroll step needs the height of the whole transcript: a
//! frame lays out the cells it shows (cached), a scroll of N lines lays out the cells it
//! passes. Key handlers only record what was asked; the widget resolves it while drawing,
//! where widths and heights are known. Cells inserted above (earlier pages of the log, counted
//! by `Transcript::prepended`) move the anchor by as many, so what the person reads stays put;
//! `at_top` tells the app the first line is on screen, where paging back starts.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::StatefulWidget;

use super::cache::LineCache;
use super::search::Marks;
use super::theme::{Role, Theme};
use super::wrap::line_width;
use crate::model::{Cell, Occurrence, Transcript};

/// Draws a [`Transcript`]; its scroll position and line cache live in [`ViewState`].
pub struct TranscriptView<'a> {
    pub transcript: &'a Transcript,
    pub theme: &'a Theme,
}

/// A position in the transcript: a cell, and a line within it (line 0 of every cell but the
/// first is the blank line that separates it from the one before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Spot {
    cell: usize,
    line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// Keep the last line at the bottom as cells arrive.
    Tail,
    /// Keep this spot at the top.
    Anchor(Spot),
}

/// Scroll position, focus and the line cache of one transcript view.
pub struct ViewState {
    cache: LineCache,
    position: Position,
    /// Lines asked for since the last frame (negative is up), applied when drawing.
    pending: isize,
    /// Rows of the last frame, for paging.
    viewport: usize,
    /// Cells drawn in the last frame and whether it was following, to know what is new.
    last_cells: usize,
    last_following: bool,
    /// Cell count when the view left the tail: cells after it are new to the reader.
    seen: usize,
    focus: Option<usize>,
    /// Scroll the focused cell into view on the next frame.
    reveal: bool,
    /// The search whose occurrences are highlighted, if one is open.
    marks: Option<Marks>,
    /// Scroll the line of the current occurrence into view on the next frame.
    reveal_match: bool,
    visible: Range<usize>,
    new_below: usize,
    /// The last frame showed the transcript's first line.
    at_top: bool,
    /// Rows of cell 0 in the last frame (the head, when earlier pages can arrive under it).
    first_rows: usize,
    /// The transcript's generation and `prepended()` count as of the last frame: cells
    /// inserted above since then move the anchor down by as many.
    generation: u64,
    prepended: u64,
}

impl Default for ViewState {
    fn default() -> ViewState {
        ViewState::new()
    }
}

impl ViewState {
    pub fn new() -> Self {
        ViewState {
            cache: LineCache::default(),
            position: Position::Tail,
            pending: 0,
            viewport: 0,
            last_cells: 0,
            last_following: true,
            seen: 0,
            focus: None,
            reveal: false,
            marks: None,
            reveal_match: false,
            visible: 0..0,
            new_below: 0,
            at_top: false,
            first_rows: 0,
            generation: 0,
            prepended: 0,
        }
    }

    pub fn scroll_up(&mut self, lines: usize) {
        self.pending = self.pending.saturating_sub_unsigned(lines);
    }

    pub fn scroll_down(&mut self, lines: usize) {
        self.pending = self.pending.saturating_add_unsigned(lines);
        if self.position == Position::Tail {
            // Below the tail there is nothing; only undo an upward scroll not yet drawn.
            self.pending = self.pending.min(0);
        }
    }

    /// Up by a screen, keeping two lines of context.
    pub fn page_up(&mut self) {
        self.scroll_up(self.page());
    }

    pub fn page_down(&mut self) {
        self.scroll_down(self.page());
    }

    pub fn home(&mut self) {
        self.position = Position::Anchor(Spot { cell: 0, line: 0 });
        self.pending = 0;
    }

    /// Back to the tail, following new output again.
    pub fn end(&mut self) {
        self.position = Position::Tail;
        self.pending = 0;
    }

    pub fn is_following(&self) -> bool {
        self.position == Position::Tail && self.pending >= 0
    }

    /// Cells that arrived below the screen since the view left the tail (as of the last frame).
    pub fn new_below(&self) -> usize {
        self.new_below
    }

    /// Put the cell at `index` at the top of the screen (or as high as the tail allows).
    pub fn jump_to_cell(&mut self, index: usize) {
        // Line 0 of every cell after the first is its separator; start at its content.
        self.position = Position::Anchor(Spot {
            cell: index,
            line: usize::from(index > 0),
        });
        self.pending = 0;
    }

    pub fn focused(&self) -> Option<usize> {
        self.focus
    }

    /// Focus a cell (highlighting its header) and scroll it into view on the next frame.
    pub fn set_focus(&mut self, index: Option<usize>) {
        self.focus = index;
        self.reveal = index.is_some();
    }

    /// Highlight every occurrence of `query` on screen; with `current`, focus its cell and
    /// scroll the line that shows it into view on the next frame.
    pub fn set_search(&mut self, query: &str, current: Option<Occurrence>) {
        self.marks = Marks::new(query, current);
        if let Some(at) = current {
            self.focus = Some(at.cell);
            self.reveal = false;
            self.reveal_match = true;
        }
    }

    /// Stop highlighting a search.
    pub fn clear_search(&mut self) {
        self.marks = None;
        self.reveal_match = false;
    }

    /// Whether the last frame showed the first line of the transcript: scrolling up further
    /// would need what the pod's log holds before it.
    pub fn at_top(&self) -> bool {
        self.at_top
    }

    /// Indices of the cells on screen in the last frame.
    pub fn visible_cells(&self) -> std::ops::Range<usize> {
        self.visible.clone()
    }

    /// Lines the cache holds now (memory diagnostics).
    pub fn cached_lines(&self) -> usize {
        self.cache.held_lines()
    }

    fn page(&self) -> usize {
        self.viewport.saturating_sub(2).max(1)
    }
}

/// Heights of cells at one width, through the cache.
struct Layout<'a> {
    cells: &'a [Cell],
    cache: &'a mut LineCache,
    width: u16,
    theme: &'a Theme,
}

impl Layout<'_> {
    /// Rows of cell `index`, counting the blank separator line above every cell but the first.
    fn height(&mut self, index: usize) -> usize {
        let separator = usize::from(index > 0);
        self.cache
            .height(&self.cells[index], self.width, self.theme)
            + separator
    }

    /// The spot that puts the last line on the bottom row (or the start, if all fits).
    fn tail_top(&mut self, rows: usize) -> Spot {
        let mut remaining = rows;
        for index in (0..self.cells.len()).rev() {
            let height = self.height(index);
            if height >= remaining {
                return Spot {
                    cell: index,
                    line: height - remaining,
                };
            }
            remaining -= height;
        }
        Spot { cell: 0, line: 0 }
    }

    fn up(&mut self, mut spot: Spot, mut lines: usize) -> Spot {
        loop {
            if spot.line >= lines {
                spot.line -= lines;
                return spot;
            }
            lines -= spot.line;
            if spot.cell == 0 {
                return Spot { cell: 0, line: 0 };
            }
            spot.cell -= 1;
            spot.line = self.height(spot.cell);
        }
    }

    /// `None` when moving down runs past the end.
    fn down(&mut self, mut spot: Spot, lines: usize) -> Option<Spot> {
        spot.line += lines;
        while spot.line >= self.height(spot.cell) {
            spot.line -= self.height(spot.cell);
            spot.cell += 1;
            if spot.cell >= self.cells.len() {
                return None;
            }
        }
        Some(spot)
    }

    /// Whether a screen starting at `spot` reaches the last line: then the view is at the tail.
    fn reaches_end(&mut self, spot: Spot, rows: usize) -> bool {
        let mut shown = self.height(spot.cell).saturating_sub(spot.line);
        let mut index = spot.cell + 1;
        while shown <= rows && index < self.cells.len() {
            shown += self.height(index);
            index += 1;
        }
        shown <= rows
    }

    /// Move `top` so line `line` of cell `index` is on screen (a third of the way down when it
    /// was not, so what comes before it shows too); `rows` are the rows the content may use.
    fn reveal_line(&mut self, top: Spot, target: Spot, rows: usize) -> Spot {
        let bottom = self.down(top, rows.saturating_sub(1));
        let above = (target.cell, target.line) < (top.cell, top.line);
        let below = bottom.is_some_and(|b| (target.cell, target.line) > (b.cell, b.line));
        if above || below {
            self.up(target, rows / 3)
        } else {
            top
        }
    }

    /// Move `top` so cell `index`'s first line is on screen.
    fn reveal(&mut self, top: Spot, index: usize, rows: usize) -> Spot {
        let header = Spot {
            cell: index,
            line: usize::from(index > 0),
        };
        if (header.cell, header.line) < (top.cell, top.line) {
            return header;
        }
        match self.down(top, rows.saturating_sub(1)) {
            Some(bottom) if (header.cell, header.line) > (bottom.cell, bottom.line) => {
                self.up(header, rows.saturating_sub(1))
            }
            Some(_) | None => top,
        }
    }
}

impl StatefulWidget for TranscriptView<'_> {
    type State = ViewState;

    fn render(self, area: Rect, buf: &mut Buffer, state: &mut ViewState) {
        // Never index outside the buffer, whatever area the caller passes.
        let area = area.intersection(buf.area);
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                buf[(x, y)].reset();
            }
        }
        let cells = self.transcript.cells();
        let rows = usize::from(area.height);
        state.viewport = rows;
        if rows == 0 || area.width == 0 {
            return;
        }
        // The cache is taken out for the frame so the layout can borrow it beside the state.
        let mut cache = std::mem::take(&mut state.cache);
        cache.begin_frame(self.theme);
        if state.focus.is_some_and(|f| f >= cells.len()) {
            state.focus = None;
        }
        let mut layout = Layout {
            cells,
            cache: &mut cache,
            width: area.width,
            theme: self.theme,
        };
        follow_prepend(&mut layout, state, self.transcript);
        let top = resolve(&mut layout, state, rows);
        state.at_top = !cells.is_empty() && top == (Spot { cell: 0, line: 0 });
        state.first_rows = if cells.is_empty() {
            0
        } else {
            layout.height(0)
        };
        let following = state.position == Position::Tail;
        if !following && state.last_following {
            state.seen = state.last_cells;
        }
        state.seen = state.seen.min(cells.len());
        // While reading back, the bottom row is the marker's, so no line hides under it.
        let content = if following || area.height < 2 {
            area
        } else {
            Rect {
                height: area.height - 1,
                ..area
            }
        };
        let marks = state.marks.as_ref();
        let last_visible = draw(
            &mut layout,
            top,
            content,
            buf,
            state.focus,
            marks,
            self.theme,
        );
        state.visible = if cells.is_empty() {
            0..0
        } else {
            top.cell..last_visible + 1
        };
        state.new_below = if following {
            0
        } else {
            cells.len().saturating_sub(state.seen.max(last_visible + 1))
        };
        if !following {
            marker(state.new_below, area, buf, self.theme);
        }
        state.last_cells = cells.len();
        state.last_following = following;
        cache.end_frame();
        state.cache = cache;
    }
}

/// Cells inserted above since the last frame (a page of earlier entries under the head): move
/// the anchor, focus and "new below" count by as many, so the screen shows what it showed. On
/// the head itself, the cell that was under it stays on the same row.
fn follow_prepend(layout: &mut Layout<'_>, state: &mut ViewState, transcript: &Transcript) {
    let (generation, prepended) = (transcript.generation(), transcript.prepended());
    if generation != state.generation {
        // A snapshot replaced the cells: nothing to follow.
        state.generation = generation;
        state.prepended = prepended;
        return;
    }
    let inserted = usize::try_from(prepended.saturating_sub(state.prepended)).unwrap_or(0);
    state.prepended = prepended;
    if inserted == 0 {
        return;
    }
    if let Position::Anchor(spot) = state.position {
        let moved = if spot.cell == 0 {
            let above = state.first_rows.saturating_sub(spot.line);
            let under_head = Spot {
                cell: inserted + 1,
                line: 0,
            };
            if under_head.cell < layout.cells.len() {
                layout.up(under_head, above)
            } else {
                spot
            }
        } else {
            Spot {
                cell: spot.cell + inserted,
                line: spot.line,
            }
        };
        state.position = Position::Anchor(moved);
    }
    if let Some(focus) = state.focus.as_mut()
        && *focus > 0
    {
        *focus += inserted;
    }
    state.seen += inserted;
    state.last_cells += inserted;
}

/// Apply what was asked since the last frame and settle on the top spot to draw from.
fn resolve(layout: &mut Layout<'_>, state: &mut ViewState, rows: usize) -> Spot {
    if layout.cells.is_empty() {
        state.position = Position::Tail;
        state.pending = 0;
        return Spot { cell: 0, line: 0 };
    }
    let mut top = match state.position {
        Position::Tail => layout.tail_top(rows),
        Position::Anchor(spot) if spot.cell < layout.cells.len() => Spot {
            cell: spot.cell,
            line: spot.line.min(layout.height(spot.cell).saturating_sub(1)),
        },
        Position::Anchor(_) => layout.tail_top(rows),
    };
    let pending = std::mem::take(&mut state.pending);
    if pending < 0 {
        top = layout.up(top, pending.unsigned_abs());
    } else if pending > 0 {
        top = match layout.down(top, pending.unsigned_abs()) {
            Some(spot) => spot,
            None => layout.tail_top(rows),
        };
    }
    if state.reveal {
        state.reveal = false;
        if let Some(focus) = state.focus {
            top = layout.reveal(top, focus, rows);
        }
    }
    if std::mem::take(&mut state.reveal_match)
        && let Some(marks) = &state.marks
        && let Some(current) = marks.current
        && current.cell < layout.cells.len()
    {
        let separator = usize::from(current.cell > 0);
        let lines = layout
            .cache
            .lines(&layout.cells[current.cell], layout.width, layout.theme);
        let line = marks.locate(lines, current.nth).map_or(0, |(line, _)| line);
        let target = Spot {
            cell: current.cell,
            line: separator + line,
        };
        // The bottom row is the "more below" marker's once the view leaves the tail.
        top = layout.reveal_line(top, target, rows.saturating_sub(1));
    }
    if layout.reaches_end(top, rows) {
        state.position = Position::Tail;
        layout.tail_top(rows)
    } else {
        state.position = Position::Anchor(top);
        top
    }
}

/// Draw rows from `top`; returns the index of the last cell drawn.
fn draw(
    layout: &mut Layout<'_>,
    top: Spot,
    area: Rect,
    buf: &mut Buffer,
    focus: Option<usize>,
    marks: Option<&Marks>,
    theme: &Theme,
) -> usize {
    let rows = usize::from(area.height);
    let mut y = 0;
    let mut index = top.cell;
    let mut skip = top.line;
    let mut last = top.cell;
    while y < rows && index < layout.cells.len() {
        let separator = usize::from(index > 0);
        let lines = layout
            .cache
            .lines(&layout.cells[index], layout.width, layout.theme);
        let total = lines.len() + separator;
        let current = marks
            .and_then(|m| m.current.filter(|c| c.cell == index).map(|c| (m, c.nth)))
            .and_then(|(m, nth)| m.locate(lines, nth));
        for row in skip..total {
            if y >= rows {
                break;
            }
            if row >= separator {
                let line = &lines[row - separator];
                let screen_y = area.y + y as u16;
                buf.set_line(area.x, screen_y, line, area.width);
                if focus == Some(index) && row == separator {
                    let highlight = Rect {
                        x: area.x,
                        y: screen_y,
                        width: (line_width(line) as u16).clamp(1, area.width),
                        height: 1,
                    };
                    buf.set_style(highlight, theme.style(Role::Focus));
                }
                if let Some(marks) = marks {
                    let here = current
                        .filter(|(line, _)| *line == row - separator)
                        .map(|(_, k)| k);
                    marks.paint(line, area.x, screen_y, area.width, here, buf);
                }
            }
            y += 1;
        }
        last = index;
        skip = 0;
        index += 1;
    }
    last
}

/// The bottom-right marker shown while scrolled away from the tail.
fn marker(new_below: usize, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let text = match new_below {
        0 => " ↓ more below ".to_string(),
        1 => " ↓ 1 new below ".to_string(),
        n => format!(" ↓ {n} new below "),
    };
    let width = (super::text::width(&text) as u16).min(area.width);
    let y = area.bottom() - 1;
    for x in area.left()..area.right() {
        buf[(x, y)].reset();
    }
    let x = area.right() - width;
    let line = Line::from(Span::styled(text, theme.style(Role::Focus)));
    buf.set_line(x, y, &line, width);
}
