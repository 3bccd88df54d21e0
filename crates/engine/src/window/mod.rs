//! Knowing a model's context window: from the well-known families (`table.rs`), from the server
//! that runs the model (`probe.rs`), and from a "too long" error that states it (`overflow.rs`).
//!
//! The pod decides which source wins and records a probed or learned window in its log, so that
//! replay never asks again; this module only answers, and never fails loudly: every question it
//! cannot answer is `None`.
//!
//! Must not own: the fill of the context, pruning or compaction (the pod's `context`), or the
//! classification of errors as transient or permanent (`http/error_body.rs`, which uses
//! `overflow_in` so that an overflow is never retried blindly).

mod cut_memo;
mod overflow;
mod probe;
mod table;

pub(crate) use self::cut_memo::CutMemo;
pub use self::overflow::{Overflow, overflow_of};
pub(crate) use self::overflow::{overflow_in, unstated_overflow};
pub use self::probe::{DEFAULT_PROBE_TIMEOUT, probe_window};
pub use self::table::family_window;
