//! What can go wrong with a pod's files, phrased for the person who has to fix it.
//!
//! Every variant names the file involved, because the person reading the message needs to know
//! which file to look at; `Corrupt` also says how to get the pod back, because a log that stops a
//! restore must never be silently skipped or rewritten (DESIGN §6).

use std::path::PathBuf;

use seedpod_protocol::EntrySeq;

use crate::fold::FoldError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An operating-system call on `path` failed (a full disk, a permission, a missing directory).
    #[error("could not {op} {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        /// What we were doing, as a verb phrase: "append to", "fsync", "create".
        op: &'static str,
        cause: std::io::Error,
    },

    /// The filesystem holding `path` is full: named, because "no space left on device" does
    /// not say which one to free space on.
    #[error(
        "no space left on {device}: could not {op} {}; free some space there — nothing \
         acknowledged was lost",
        path.display()
    )]
    NoSpace {
        path: PathBuf,
        op: &'static str,
        /// e.g. "tmpfs mounted at /tmp" (`device::describe`).
        device: String,
    },

    /// A segment line that is neither a valid entry nor a torn last line. Restore stops here.
    #[error(
        "{}:{line}: {reason}; the log was not modified — move the segment aside or truncate it \
         before line {line} to restore from the entries before it",
        file.display()
    )]
    Corrupt {
        file: PathBuf,
        /// 1-based line number in `file`.
        line: usize,
        reason: String,
    },

    /// The entries parsed but do not fold into a history (see `FoldError`).
    #[error("the log does not replay: {0}")]
    Fold(FoldError),

    /// The writer was closed (or its thread is gone); nothing more can be appended.
    #[error("the segment writer is closed; nothing was written")]
    Closed,

    /// An earlier write or fsync failed, so the file may end in a partial line; appending more
    /// would put entries on disk after a hole that memory never saw.
    #[error(
        "the log {} cannot be written since an earlier failure ({reason}); nothing was written — \
         restart the pod to restore from its log",
        path.display()
    )]
    Broken { path: PathBuf, reason: String },

    /// The caller asked to append an entry that a restore would refuse (a kind from a newer
    /// seedpod, a second `segment_start`); appending it would make the log unrestorable.
    #[error("refused to append entry {seq}, nothing was written: {reason}")]
    Refused { seq: EntrySeq, reason: String },

    /// An entry could not be serialised (not expected for the protocol's types).
    #[error("could not encode entry {seq} for the log: {cause}")]
    Encode {
        seq: EntrySeq,
        cause: serde_json::Error,
    },

    /// An archived segment that cannot be read back, or a segment that could not be archived.
    #[error("{}: {reason}", path.display())]
    Archive { path: PathBuf, reason: String },

    /// Another process is archiving the same pod's segments.
    #[error(
        "another archiver is working on {} (a `seedpod archive` or the pod's own [storage] \
         rule); nothing was changed — try again when it is done",
        dir.display()
    )]
    ArchiveBusy { dir: PathBuf },

    /// `pod.json` lists a segment id that is not a plain name, so it is not made a path.
    #[error(
        "pod.json lists a segment named {id:?}, which is not a segment id seedpod makes; \
         nothing was archived — fix pod.json"
    )]
    UnsafeSegmentId { id: String },

    /// `pod.json` exists but cannot be understood.
    #[error(
        "{}: {reason}; fix the file or restore it from a backup (the segment logs beside it are \
         untouched)",
        path.display()
    )]
    Meta { path: PathBuf, reason: String },
}

// Each message above already says its cause, so none is exposed again as `source()`: a chain
// printed with `{:#}` shows every cause once (docs/decisions.md, "Errors carry their cause").
impl From<FoldError> for StoreError {
    fn from(err: FoldError) -> Self {
        StoreError::Fold(err)
    }
}

impl StoreError {
    /// Shorthand for the `Io` variant; `NoSpace` when the filesystem is full.
    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Self {
        let path = path.into();
        if crate::device::is_out_of_space(&source) {
            let device = crate::device::describe(&path);
            return StoreError::NoSpace { path, op, device };
        }
        StoreError::Io {
            path,
            op,
            cause: source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_names_the_line_and_the_way_out() {
        let err = StoreError::Corrupt {
            file: PathBuf::from("pods/a/segments/s.jsonl"),
            line: 17,
            reason: "expected value at column 1".into(),
        };
        assert_eq!(
            err.to_string(),
            "pods/a/segments/s.jsonl:17: expected value at column 1; the log was not modified — \
             move the segment aside or truncate it before line 17 to restore from the entries \
             before it"
        );
    }

    #[test]
    fn io_says_which_file_and_what_failed() {
        let err = StoreError::io(
            "/x/seg.jsonl",
            "append to",
            std::io::Error::other("No space left on device"),
        );
        assert_eq!(
            err.to_string(),
            "could not append to /x/seg.jsonl: No space left on device"
        );
    }
}
