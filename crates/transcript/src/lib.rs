//! The TUI's transcript: a pure projection of pod frames into a view model, and the per-kind
//! renderers that turn that model into ratatui lines.
//!
//! Owns:
//! - `model`: [`model::Transcript`] folds every [`seedpod_protocol::ServerMsg`] (snapshot, committed
//!   entries, provisional deltas, state, queue, alerts) into an ordered list of [`model::Cell`]s plus
//!   a [`model::PodView`] for the status line, with the oldest approval request nobody has answered
//!   yet (the app asks the person about it). One code path for live and reattached clients
//!   (DESIGN §4): a snapshot resets it, committed entries become cells, deltas only paint the
//!   in-flight block until their entry commits. Pages of older entries (paging back across
//!   segments after a compaction or `/clear`) are folded apart and inserted above, never
//!   through the live fold. No ratatui types live there.
//! - `render`: one renderer per cell kind (`cell_lines`, a pure function of cell and width), the
//!   status line, the colour [`render::Theme`], and [`render::TranscriptView`], a stateful widget
//!   whose [`render::ViewState`] caches wrapped lines per cell so a frame costs O(visible).
//!
//! Must not own: terminal I/O, sockets, key handling, the composer, or any durable state. The
//! terminal app (`seedpod-tui`) feeds frames in, maps keys to `ViewState` calls and draws.
//!
//! Start reading at `model/apply.rs` (how frames change the model), then `render/mod.rs`.

pub mod model;
pub mod render;

pub use model::{
    ApprovalStatus, Cell, CellKey, CellKind, ConnectionState, EARLIER_ENTRIES_CAP, LogHead, Notice,
    Occurrence, PodView, SegmentOrigin, ToolStatus, Transcript,
};
pub use render::{Role, Theme, TranscriptView, ViewState, cell_lines, status_line};
