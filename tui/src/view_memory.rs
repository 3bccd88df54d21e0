//! What a person folded and unfolded, kept across detach and reattach: whether the pinned task
//! list is folded (Ctrl-T) and which cells are expanded (a tool call's output, thinking, an
//! attachment), per pod, in `data/pods/<name>/tui-view.json` beside the input history.
//!
//! Why here and not in the pod: it is how one person reads, not what the pod did. Two terminals
//! on one pod may fold differently, nothing of it is ever model-visible, and the pod's log stays
//! the record of what happened (DESIGN §1.3). Like the input history it is a convenience: a
//! file that is missing, unreadable, too large, of another version or not ours is ignored and
//! the TUI starts from the defaults; it is never an error.
//!
//! A cell is named by the log entry it was made from (`CellKey`: the entry's seq and time),
//! which is the same on every attach. The file is bounded: the last `MAX_EXPANDED` cells
//! expanded are kept, older ones are forgotten first.

use std::collections::VecDeque;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use seedpod_protocol::EntrySeq;
use seedpod_transcript::CellKey;
use serde::{Deserialize, Serialize};

/// Expanded cells remembered per pod; the oldest is forgotten first.
pub const MAX_EXPANDED: usize = 256;

/// A file larger than this is not ours to read (ours holds `MAX_EXPANDED` pairs of numbers).
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The file's shape; `version` lets a later TUI change it (an unknown version is ignored).
const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct OnDisk {
    version: u32,
    tasks_folded: bool,
    /// `[seq, ts]` of each expanded cell's entry, oldest first.
    expanded: Vec<(u64, u64)>,
}

/// How a person left one pod's transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewMemory {
    /// Where it is kept; `None` for a pod whose view is not kept (remote, throwaway).
    path: Option<PathBuf>,
    pub tasks_folded: bool,
    /// Oldest first, no duplicates, at most `MAX_EXPANDED`.
    expanded: VecDeque<CellKey>,
}

impl ViewMemory {
    /// Nothing remembered and nothing kept.
    pub fn in_memory() -> ViewMemory {
        ViewMemory::default()
    }

    /// What `path` remembers; the defaults when it holds nothing usable.
    pub fn load(path: &Path) -> ViewMemory {
        let mut memory = ViewMemory {
            path: Some(path.to_path_buf()),
            ..ViewMemory::default()
        };
        if let Some(disk) = read(path) {
            memory.tasks_folded = disk.tasks_folded;
            for (seq, ts) in disk.expanded {
                memory.set_expanded(
                    CellKey {
                        seq: EntrySeq::new(seq),
                        ts,
                    },
                    true,
                );
            }
        }
        memory
    }

    /// The cells to show expanded.
    pub fn expanded(&self) -> impl Iterator<Item = &CellKey> {
        self.expanded.iter()
    }

    /// Remember that the cell of `key` is (or no longer is) expanded.
    pub fn set_expanded(&mut self, key: CellKey, expanded: bool) {
        self.expanded.retain(|k| *k != key);
        if expanded {
            self.expanded.push_back(key);
            while self.expanded.len() > MAX_EXPANDED {
                self.expanded.pop_front();
            }
        }
    }

    /// Where to write and what, when this view is kept.
    pub fn to_save(&self) -> Option<(PathBuf, String)> {
        let path = self.path.clone()?;
        let disk = OnDisk {
            version: VERSION,
            tasks_folded: self.tasks_folded,
            expanded: self.expanded.iter().map(|k| (k.seq.get(), k.ts)).collect(),
        };
        serde_json::to_string(&disk).ok().map(|text| (path, text))
    }
}

/// The file's content when it is a regular file of ours, small, and of this version.
fn read(path: &Path) -> Option<OnDisk> {
    // A link, a pipe or a device is not a file this TUI wrote: never followed, never read
    // (a FIFO would block the open).
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_FILE_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let disk: OnDisk = serde_json::from_str(&text).ok()?;
    (disk.version == VERSION).then_some(disk)
}

/// Replace the file with `text`: written to a new private file beside it, then renamed over it,
/// so a reader never sees half a file and a link planted at `path` is replaced, not followed.
/// Blocking: call it from a blocking task.
pub fn save(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    seedpod_client::private::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(text.as_bytes())?;
    drop(file);
    std::fs::rename(&temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seq: u64) -> CellKey {
        CellKey {
            seq: EntrySeq::new(seq),
            ts: 1_000 + seq,
        }
    }

    #[test]
    fn what_is_saved_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pods/p/tui-view.json");
        let mut memory = ViewMemory::load(&path);
        assert_eq!(memory.expanded().count(), 0, "no file: the defaults");
        memory.tasks_folded = true;
        memory.set_expanded(key(3), true);
        memory.set_expanded(key(5), true);
        memory.set_expanded(key(3), false);
        let (to, text) = memory.to_save().unwrap();
        save(&to, &text).unwrap();
        let again = ViewMemory::load(&path);
        assert!(again.tasks_folded);
        assert_eq!(again.expanded().collect::<Vec<_>>(), vec![&key(5)]);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600, "private to the user");
    }

    #[test]
    fn the_oldest_expansions_are_forgotten_first() {
        let mut memory = ViewMemory::in_memory();
        for seq in 0..(MAX_EXPANDED as u64 + 10) {
            memory.set_expanded(key(seq), true);
        }
        let kept: Vec<u64> = memory.expanded().map(|k| k.seq.get()).collect();
        assert_eq!(kept.len(), MAX_EXPANDED);
        assert_eq!(kept.first(), Some(&10));
        assert!(
            memory.to_save().is_none(),
            "an in-memory view is never written"
        );
    }

    /// A hostile or broken file is ignored, never fatal, never followed.
    #[test]
    fn a_file_that_is_not_ours_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tui-view.json");
        let huge = format!(
            "{{\"version\":1,\"tasks_folded\":true,\"expanded\":[{}[0,0]]}}",
            "[1,2],".repeat(20_000)
        );
        let cases: [&[u8]; 6] = [
            b"not json at all",
            b"{\"version\":2,\"tasks_folded\":true,\"expanded\":[]}",
            b"{\"version\":1,\"tasks_folded\":\"yes\",\"expanded\":[]}",
            b"{\"version\":1,\"tasks_folded\":true,\"expanded\":[[-1,2]]}",
            b"\xff\xfe\x00",
            huge.as_bytes(),
        ];
        for bytes in cases {
            std::fs::write(&path, bytes).unwrap();
            let memory = ViewMemory::load(&path);
            assert!(!memory.tasks_folded, "{:?}", String::from_utf8_lossy(bytes));
            assert_eq!(memory.expanded().count(), 0);
        }

        // A link planted where the file goes is neither read nor written through.
        let target = dir.path().join("elsewhere.json");
        std::fs::write(
            &target,
            "{\"version\":1,\"tasks_folded\":true,\"expanded\":[]}",
        )
        .unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(!ViewMemory::load(&path).tasks_folded, "a link is not read");
        let mut memory = ViewMemory::load(&path);
        memory.set_expanded(key(1), true);
        let (to, text) = memory.to_save().unwrap();
        save(&to, &text).unwrap();
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "{\"version\":1,\"tasks_folded\":true,\"expanded\":[]}",
            "the link's target is untouched"
        );
        assert!(
            std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_file()
        );
    }
}
