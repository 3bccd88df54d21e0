//! Wrapped lines per cell, kept across frames so a frame only lays out what changed.
//!
//! An entry is valid for one (cell id, revision, width): a streaming cell re-lays out when its
//! revision moves, every other cell is laid out once per width. Entries not drawn recently are
//! dropped once the cache holds more than `LINE_BUDGET` lines, so memory follows what is on
//! screen and near it, not the whole rendered history.

use std::collections::HashMap;

use ratatui::text::Line;

use super::cell_lines;
use super::theme::Theme;
use crate::model::Cell;

/// Cached lines kept before entries unused this frame are evicted: many screens, about ten
/// megabytes at worst (a styled line of markdown or code costs around a kilobyte).
pub(crate) const LINE_BUDGET: usize = 8_000;

#[derive(Default)]
pub(crate) struct LineCache {
    entries: HashMap<u64, Entry>,
    /// The theme the entries were drawn with; another theme invalidates them all.
    theme: Option<Theme>,
    /// Lines held by all entries.
    lines: usize,
    /// Bumped per frame; entries remember the last frame that used them.
    frame: u64,
}

struct Entry {
    revision: u64,
    width: u16,
    lines: Vec<Line<'static>>,
    used: u64,
}

impl LineCache {
    pub(crate) fn begin_frame(&mut self, theme: &Theme) {
        if self.theme.as_ref() != Some(theme) {
            self.entries.clear();
            self.lines = 0;
            self.theme = Some(theme.clone());
        }
        self.frame += 1;
    }

    /// The cell's lines at `width`, laid out now if the cache has no valid entry.
    pub(crate) fn lines(&mut self, cell: &Cell, width: u16, theme: &Theme) -> &[Line<'static>] {
        let frame = self.frame;
        let entry = self.entries.entry(cell.id).or_insert_with(|| Entry {
            revision: cell.revision,
            width,
            lines: Vec::new(),
            // Marks the entry as never laid out.
            used: 0,
        });
        if entry.used == 0 || entry.revision != cell.revision || entry.width != width {
            self.lines -= entry.lines.len();
            entry.lines = cell_lines(cell, width, theme);
            entry.revision = cell.revision;
            entry.width = width;
            self.lines += entry.lines.len();
        }
        entry.used = frame;
        &entry.lines
    }

    pub(crate) fn height(&mut self, cell: &Cell, width: u16, theme: &Theme) -> usize {
        self.lines(cell, width, theme).len()
    }

    /// Drop the least recently drawn entries once over budget (never this frame's).
    pub(crate) fn end_frame(&mut self) {
        if self.lines <= LINE_BUDGET {
            return;
        }
        let mut stale: Vec<(u64, u64)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.used < self.frame)
            .map(|(id, e)| (e.used, *id))
            .collect();
        stale.sort_unstable();
        for (_, id) in stale {
            if self.lines <= LINE_BUDGET / 2 {
                break;
            }
            if let Some(entry) = self.entries.remove(&id) {
                self.lines -= entry.lines.len();
            }
        }
    }

    /// Lines currently held (for tests and the bench).
    pub(crate) fn held_lines(&self) -> usize {
        self.lines
    }
}
