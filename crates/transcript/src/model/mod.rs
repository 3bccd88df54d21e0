//! The view model: what the transcript shows, folded from pod frames, free of any rendering type.
//!
//! `cells.rs` defines the cells, `status.rs` the status-line model, `transcript.rs` the container
//! and its queries; `apply.rs` dispatches frames, `entries.rs` turns committed log entries into
//! cells, `approvals.rs` pairs approval requests with their answers, `live.rs` keeps the
//! provisional in-flight block, `progress.rs` the progress a running tool call reports,
//! `remembered.rs` the cells a person expanded (kept across
//! attaches by the app), and `earlier.rs` inserts pages of older entries (paging back
//! through the log) above the rest without touching live state.

mod apply;
mod approvals;
mod cells;
mod earlier;
mod entries;
mod find;
mod live;
mod progress;
mod remembered;
mod status;
mod transcript;

pub use cells::{ApprovalStatus, Cell, CellKind, LogHead, SegmentOrigin, ToolStatus};
pub use earlier::EARLIER_ENTRIES_CAP;
pub use find::{Occurrence, last_code_block};
pub use remembered::CellKey;
pub use seedpod_protocol::{AlertLevel, PodState, QueueEntry};
pub use status::{ConnectionState, Notice, PodView};
pub use transcript::Transcript;
