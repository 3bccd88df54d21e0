//! What an entry must be to stand at a given position in a segment.
//!
//! The reader and the writer share these rules: the reader stops a restore on an entry that
//! breaks them, so the writer refuses to append one — otherwise a single bad append would leave
//! a log that can never be restored.

use seedpod_protocol::{ENTRY_VERSION, Entry, EntryKind, EntrySeq, SystemItem};

/// Why an entry cannot stand where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Misplaced {
    /// `v` is from a newer entry format.
    NewerFormat { v: u32 },
    /// An entry kind this binary does not know.
    UnknownKind,
    /// A `system_item` whose item kind this binary does not know.
    UnknownSystemItem,
    /// The `seq` is not the next one.
    Seq { expected: EntrySeq, found: EntrySeq },
    /// The first entry is not `segment_start`.
    NotAStart { kind: &'static str },
    /// A `segment_start` after the first entry.
    SecondStart,
}

impl Misplaced {
    /// The reason as the reader reports it; `tag` names an unknown kind when it is known.
    pub(crate) fn describe(&self, tag: Option<&str>) -> String {
        let tag = tag.unwrap_or("?");
        match self {
            Misplaced::NewerFormat { v } => format!(
                "entry format v{v} was written by a newer seedpod (this one reads up to \
                 v{ENTRY_VERSION}); upgrade seedpod"
            ),
            Misplaced::UnknownKind => {
                format!("entry kind \"{tag}\" was written by a newer seedpod; upgrade seedpod")
            }
            Misplaced::UnknownSystemItem => format!(
                "system item kind \"{tag}\" was written by a newer seedpod; upgrade seedpod"
            ),
            Misplaced::Seq { expected, found } => format!(
                "expected seq {expected}, found seq {found}: entries are missing or repeated"
            ),
            Misplaced::NotAStart { kind } => {
                format!("the first entry must be segment_start, found {kind}")
            }
            Misplaced::SecondStart => {
                "segment_start may only be the first entry of a segment".to_owned()
            }
        }
    }
}

impl std::fmt::Display for Misplaced {
    /// The neutral wording, for the writer refusing a caller's entry (the reader uses `describe`,
    /// which knows the entry came from disk).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Misplaced::NewerFormat { v } => {
                write!(
                    f,
                    "entry format v{v} is newer than this seedpod's v{ENTRY_VERSION}"
                )
            }
            Misplaced::UnknownKind => f.write_str("its entry kind is unknown"),
            Misplaced::UnknownSystemItem => f.write_str("its system item kind is unknown"),
            Misplaced::Seq { .. } | Misplaced::NotAStart { .. } | Misplaced::SecondStart => {
                f.write_str(&self.describe(None))
            }
        }
    }
}

/// Check that `entry` may be the entry at position `expected_seq` of a segment.
pub(crate) fn check_position(entry: &Entry, expected_seq: EntrySeq) -> Result<(), Misplaced> {
    if entry.v > ENTRY_VERSION {
        return Err(Misplaced::NewerFormat { v: entry.v });
    }
    if entry.seq != expected_seq {
        return Err(Misplaced::Seq {
            expected: expected_seq,
            found: entry.seq,
        });
    }
    if let EntryKind::Unknown = entry.kind {
        return Err(Misplaced::UnknownKind);
    }
    if let EntryKind::SystemItem {
        item: SystemItem::Unknown,
        ..
    } = entry.kind
    {
        return Err(Misplaced::UnknownSystemItem);
    }
    let is_start = matches!(entry.kind, EntryKind::SegmentStart(_));
    if expected_seq == EntrySeq::FIRST && !is_start {
        return Err(Misplaced::NotAStart {
            kind: entry.kind.name(),
        });
    }
    if expected_seq > EntrySeq::FIRST && is_start {
        return Err(Misplaced::SecondStart);
    }
    Ok(())
}
