//! The `[context]` settings a pod runs with. Read from the configuration at every start; what
//! they decide is committed (a window, a pruning step, a new segment), so replay never reads
//! them.

/// Compact when the next request would fill this share of the window (docs/agent-loop.md
/// §Compaction).
pub const DEFAULT_COMPACT_AT: f64 = 0.75;
/// Soft-trim old tool results from this share (docs/agent-loop.md §Pruning).
pub const DEFAULT_SOFT_TRIM_AT: f64 = 0.3;
/// Hard-clear old tool results from this share (docs/agent-loop.md §Pruning).
pub const DEFAULT_HARD_CLEAR_AT: f64 = 0.5;
/// Assistant messages at the end of history that pruning never touches: the work in hand
/// (docs/agent-loop.md §Pruning).
pub const DEFAULT_KEEP_LAST_ASSISTANTS: usize = 3;
/// A window this small or smaller gets the compact system prompt and tool notes.
pub const SMALL_WINDOW_TOKENS: u64 = 16_384;

#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    /// `context_window` from the configuration: wins over the table and the server.
    pub window: Option<u64>,
    /// `[context.windows]`: model-name prefixes and their windows, consulted before the
    /// built-in table.
    pub window_table: Vec<(String, u64)>,
    /// Ask the model server for its window when nothing above says (`[context] probe`).
    pub probe: bool,
    pub compact_at: f64,
    pub soft_trim_at: f64,
    pub hard_clear_at: f64,
    pub keep_last_assistants: usize,
    /// The model that writes summaries; the pod's own model when `None`.
    pub summary_model: Option<String>,
    /// Run a silent memory-flush turn before compacting.
    pub memory_flush: bool,
    /// Offer the child-pod tools in the compact prompt too. The compact prompt leaves them out
    /// (five schemas a small model rarely needs) unless the person configured an `[approvals]`
    /// key for one of them, which says they want their pod to have children.
    pub child_tools_in_compact: bool,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            window: None,
            window_table: Vec::new(),
            probe: true,
            compact_at: DEFAULT_COMPACT_AT,
            soft_trim_at: DEFAULT_SOFT_TRIM_AT,
            hard_clear_at: DEFAULT_HARD_CLEAR_AT,
            keep_last_assistants: DEFAULT_KEEP_LAST_ASSISTANTS,
            summary_model: None,
            memory_flush: false,
            child_tools_in_compact: false,
        }
    }
}
