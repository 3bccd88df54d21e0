//! Keeping the model's context inside its window (DESIGN invariant 7): knowing the window and
//! the fill, pruning old tool results in committed steps, and compacting the conversation into a
//! new segment. The rules and their reasons: docs/agent-loop.md §The window and the fill, and the
//! sections after it.
//!
//! Everything here is a pure function of committed history plus recorded settings; the
//! controller calls it and commits what it decides, so replay never re-decides anything.

pub mod compact;
pub mod estimate;
pub mod flush;
#[cfg(test)]
mod items;
pub mod prune;
mod settings;
pub mod window;
pub mod window_memo;
mod zone;

pub use settings::{
    ContextSettings, DEFAULT_COMPACT_AT, DEFAULT_HARD_CLEAR_AT, DEFAULT_KEEP_LAST_ASSISTANTS,
    DEFAULT_SOFT_TRIM_AT, SMALL_WINDOW_TOKENS,
};
