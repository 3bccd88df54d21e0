//! Which cells a person expanded, by the log entry each was made from, so a transcript rebuilt
//! from a snapshot (a reattach, a resync) or a page of earlier entries opens them again. The
//! TUI keeps the set between attaches (`tui/src/view_memory.rs`); this crate only applies it.

use std::collections::HashSet;

use seedpod_protocol::{Entry, EntrySeq};

/// The log entry a committed cell was made from: its seq and time, the same on every attach.
/// (The seq alone repeats in every segment; with the entry's millisecond it does not.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellKey {
    pub seq: EntrySeq,
    pub ts: u64,
}

impl CellKey {
    pub fn of(entry: &Entry) -> CellKey {
        CellKey {
            seq: entry.seq,
            ts: entry.ts,
        }
    }
}

/// The cells to open as they are made.
#[derive(Debug, Clone, Default)]
pub(super) struct Remembered {
    pub(super) expanded: HashSet<CellKey>,
}

impl Remembered {
    pub(super) fn is_expanded(&self, key: Option<CellKey>) -> bool {
        key.is_some_and(|key| self.expanded.contains(&key))
    }
}
