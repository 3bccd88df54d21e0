//! seedpod's durable state on disk: the segment log and `pod.json`.
//!
//! Owns:
//! - the segment file mechanics (DESIGN §6): one JSON entry per line, appended by a single writer
//!   thread per file with group commit and fsync on request (`writer`);
//! - reading a segment back, with torn-tail recovery and `file:line` errors for real corruption
//!   (`read`, `torn`), under position rules the writer also enforces (`validate`);
//! - the fold that gives entries their meaning — the *same* function for the live pod and for
//!   restore, so the two can never disagree (`fold`);
//! - `pod.json`, the pod's atomically replaced pointer to its active segment (`meta`);
//! - archiving earlier segments (gzip beside them, read back transparently: `archive`).
//!
//! Must not own: sockets and clients, the controller and its state machine, model calls, prompt
//! rendering. The entry types themselves live in `seedpod-protocol`, because they are also what
//! clients receive.
//!
//! Start reading at `fold.rs` (what a log means), then `writer.rs` (how it is written) and
//! `read.rs` (how it is read back).

pub mod archive;
pub mod branch;
pub mod checkpoint_refs;
pub mod device;
mod durable;
pub mod error;
pub mod fold;
pub mod lineage;
pub mod meta;
pub mod read;
mod torn;
mod validate;
pub mod writer;

pub use archive::{ArchiveReport, ArchiveRule, archive_segments, archived_path, open_segment};
pub use error::StoreError;
pub use fold::{
    ApprovalState, FoldError, PendingReport, Report, SegmentState, UsageMark, report_id,
};
pub use meta::{
    CHECKPOINTS_DIR, ChildRecord, ForkRecord, META_FILE, OutputCursor, PodConfig, PodMeta,
    SEGMENTS_DIR, ScopeGrant, StagedMeta, load_meta, new_segment_id, save_meta, segment_path,
    stage_meta,
};
pub use read::{ReadSegment, TornTail, read_segment, read_segment_entries, read_segment_tail};
pub use torn::torn_side_file;
pub use writer::{
    Durability, Durable, SegmentWriter, UnsyncedSegment, WRITER_CHANNEL_CAPACITY, entry_line,
    unix_ms,
};
