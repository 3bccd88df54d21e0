//! The `[context]` settings a pod runs with: `seedpod-config`'s, as resolved (one struct for
//! the configuration and the pod). Read from the configuration at every start; what they decide
//! is committed (a window, a pruning step, a new segment), so replay never reads them.

pub use seedpod_config::ContextSettings;
pub use seedpod_config::context::{
    DEFAULT_COMPACT_AT, DEFAULT_HARD_CLEAR_AT, DEFAULT_KEEP_LAST_ASSISTANTS, DEFAULT_SOFT_TRIM_AT,
};

/// A window this small or smaller gets the compact system prompt and tool notes.
pub const SMALL_WINDOW_TOKENS: u64 = 16_384;
