//! Input history for Up/Down and Ctrl-R, one file per pod
//! (`data/pods/<name>/input-history.jsonl`, one JSON object per line).
//!
//! A convenience, not pod state: the pod's log is the record of what was sent. So a missing or
//! damaged file is an empty history, a bad line is skipped, and a failed append only loses a
//! recall.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::composer::Paste;

/// Entries kept in memory (the newest); older lines stay in the file but are not recalled.
pub const MAX_HISTORY: usize = 1_000;

/// What one sent input looked like in the composer, chips included.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pastes: Vec<Paste>,
}

#[derive(Debug, Default)]
pub struct InputHistory {
    path: Option<PathBuf>,
    /// Oldest first.
    entries: Vec<HistoryEntry>,
    /// Position while walking with Up/Down; `None` when not walking.
    walk: Option<usize>,
    /// What the composer held before the walk started, restored by walking past the newest.
    draft: Option<HistoryEntry>,
}

impl InputHistory {
    /// History kept only in memory (tests, demo).
    pub fn in_memory() -> InputHistory {
        InputHistory::default()
    }

    /// Load from `path`; a missing or unreadable file is an empty history.
    pub fn load(path: &Path) -> InputHistory {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut entries: Vec<HistoryEntry> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if entries.len() > MAX_HISTORY {
            entries.drain(..entries.len() - MAX_HISTORY);
        }
        InputHistory {
            path: Some(path.to_path_buf()),
            entries,
            walk: None,
            draft: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Remember a sent input. Returns the line to append to the file, if it should be written
    /// (the caller writes it off the UI thread with `append_line`).
    pub fn push(&mut self, entry: HistoryEntry) -> Option<(PathBuf, String)> {
        self.walk = None;
        self.draft = None;
        if entry.text.trim().is_empty() || self.entries.last() == Some(&entry) {
            return None;
        }
        let line = serde_json::to_string(&entry).ok()?;
        self.entries.push(entry);
        if self.entries.len() > MAX_HISTORY {
            self.entries.remove(0);
        }
        Some((self.path.clone()?, line))
    }

    /// Up: the previous (older) entry; `current` is saved as the draft when a walk starts.
    pub fn older(&mut self, current: HistoryEntry) -> Option<HistoryEntry> {
        let next = match self.walk {
            None => self.entries.len().checked_sub(1)?,
            Some(0) => return None,
            Some(at) => at - 1,
        };
        if self.walk.is_none() {
            self.draft = Some(current);
        }
        self.walk = Some(next);
        self.entries.get(next).cloned()
    }

    /// Down: the next (newer) entry, or the saved draft after the newest.
    pub fn newer(&mut self) -> Option<HistoryEntry> {
        let at = self.walk?;
        if at + 1 < self.entries.len() {
            self.walk = Some(at + 1);
            return self.entries.get(at + 1).cloned();
        }
        self.walk = None;
        Some(self.draft.take().unwrap_or_default())
    }

    /// Stop walking (the person edited the recalled text).
    pub fn reset_walk(&mut self) {
        self.walk = None;
        self.draft = None;
    }

    /// The newest entry older than `before` (exclusive; `None` = from the newest) containing
    /// `query`, case-insensitively: Ctrl-R, and Ctrl-R again for the next older match.
    pub fn search(&self, query: &str, before: Option<usize>) -> Option<(usize, &HistoryEntry)> {
        let query = query.to_lowercase();
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        self.entries[..end]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, e)| e.text.to_lowercase().contains(&query))
    }
}

/// Append one line to a history file, creating its directory. Blocking: call it from a
/// blocking task.
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        seedpod_client::private::create_dir_all(dir)?;
    }
    let mut file = seedpod_client::private::open_append(path)?;
    // One write per line so two TUIs on one pod never interleave inside a line.
    file.write_all(format!("{line}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> HistoryEntry {
        HistoryEntry {
            text: text.into(),
            pastes: Vec::new(),
        }
    }

    fn history(texts: &[&str]) -> InputHistory {
        let mut h = InputHistory::in_memory();
        for t in texts {
            h.push(entry(t));
        }
        h
    }

    #[test]
    fn walks_back_and_forth_and_restores_the_draft() {
        let mut h = history(&["one", "two", "three"]);
        assert_eq!(h.older(entry("draft")), Some(entry("three")));
        assert_eq!(h.older(entry("ignored")), Some(entry("two")));
        assert_eq!(h.older(entry("")), Some(entry("one")));
        assert_eq!(h.older(entry("")), None, "stays at the oldest");
        assert_eq!(h.newer(), Some(entry("two")));
        assert_eq!(h.newer(), Some(entry("three")));
        assert_eq!(h.newer(), Some(entry("draft")));
        assert_eq!(h.newer(), None, "not walking any more");
    }

    #[test]
    fn skips_blank_and_repeated_inputs() {
        let mut h = history(&["a", "a", "  ", "b"]);
        assert_eq!(h.len(), 2);
        assert_eq!(h.older(entry("")), Some(entry("b")));
        h.reset_walk();
        assert_eq!(h.older(entry("")), Some(entry("b")));
    }

    #[test]
    fn search_finds_newest_first_then_older() {
        let h = history(&["fix the parser", "run tests", "Parser again"]);
        let (at, found) = h.search("parser", None).unwrap();
        assert_eq!(found.text, "Parser again");
        let (_, older) = h.search("parser", Some(at)).unwrap();
        assert_eq!(older.text, "fix the parser");
        assert!(h.search("nothing", None).is_none());
    }

    #[test]
    fn persists_lines_and_skips_damaged_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pods/p/input-history.jsonl");
        let mut h = InputHistory::load(&path);
        assert!(h.is_empty());
        let (file, line) = h.push(entry("hello")).unwrap();
        append_line(&file, &line).unwrap();
        append_line(&file, "{not json").unwrap();
        let (file, line) = h.push(entry("again")).unwrap();
        append_line(&file, &line).unwrap();
        let mut loaded = InputHistory::load(&path);
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded.older(entry("")), Some(entry("again")));
    }
}
