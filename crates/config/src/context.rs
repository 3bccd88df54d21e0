//! `[context]`: how a pod keeps its model's context inside the window — when to trim old tool
//! results, when to compact, what writes the summary — and `[context.windows]`, the person's
//! additions to the built-in table of model windows. Its section of the file, layering and
//! validation.
//!
//! Operational, like `[approvals]`: read at every start of a pod, never recorded. What they
//! decide (a window, a pruning step, a compaction) is committed to the log by the pod, so replay
//! never reads them.
//!
//! Integers are read as signed so that `-1` is refused with this crate's message (key, value,
//! file) rather than toml's bare "expected u64".

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// Compact when the next request would fill this share of the window.
pub const DEFAULT_COMPACT_AT: f64 = 0.75;
/// Trim old tool results to their head and tail from this share.
pub const DEFAULT_SOFT_TRIM_AT: f64 = 0.3;
/// Replace old tool results with a placeholder from this share.
pub const DEFAULT_HARD_CLEAR_AT: f64 = 0.5;
/// Assistant messages at the end of history that pruning never touches.
pub const DEFAULT_KEEP_LAST_ASSISTANTS: usize = 3;

/// The smallest window a pod can work in: the compact system prompt and tool schemas take about
/// a quarter of 4,096 tokens, so a window below this leaves no room for a conversation.
pub const MIN_CONTEXT_WINDOW: u64 = 1_024;
/// The largest window accepted. No model comes near it; a number above it is a typo (an extra
/// digit or two), and believing it would disable compaction until the server refuses.
pub const MAX_CONTEXT_WINDOW: u64 = 10_000_000;
/// The most assistant messages pruning may be told to leave alone. More would protect so much
/// that pruning and compaction could never make room.
pub const MAX_KEEP_LAST_ASSISTANTS: usize = 100;

/// `[context]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextFile {
    pub compact_at: Option<f64>,
    pub soft_trim_at: Option<f64>,
    pub hard_clear_at: Option<f64>,
    pub keep_last_assistants: Option<i64>,
    pub summary_model: Option<String>,
    pub memory_flush: Option<bool>,
    pub probe: Option<bool>,
    /// Model-name prefix → window in tokens.
    pub windows: Option<BTreeMap<String, i64>>,
}

/// How a pod keeps its model's context inside the window: `context_window` and `[context]`,
/// resolved from the layers, and what the compact prompt offers. The one description of these
/// settings: the pod runs with exactly this (its `SessionSettings::context`), and `sources`
/// says which layer set each key, for `config show` and errors.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    /// `context_window`: wins over the table and the server.
    pub window: Option<u64>,
    /// `[context.windows]`: model-name prefixes and their windows, consulted before the
    /// built-in table; the longest prefix first (the most specific entry is the one that
    /// applies), then alphabetically. Each prefix is layered on its own, so a project file adds
    /// to the user's table (and may override one entry) instead of replacing it.
    pub window_table: Vec<(String, u64)>,
    /// Ask the model server at `base_url` for its window when nothing above says.
    pub probe: bool,
    /// Compact when the next request would fill this share of the window.
    pub compact_at: f64,
    /// Soft-trim old tool results (keep their head and tail) from this share.
    pub soft_trim_at: f64,
    /// Replace old tool results with a placeholder from this share.
    pub hard_clear_at: f64,
    /// Assistant messages at the end of history (with their tool results) pruning never touches.
    pub keep_last_assistants: usize,
    /// The model that writes summaries; the pod's own model when `None`.
    pub summary_model: Option<String>,
    /// Give the model a silent turn to save durable notes before compacting.
    pub memory_flush: bool,
    /// Offer the child-pod tools in the compact prompt too. The compact prompt leaves out the
    /// tools declared for it only when configured (`InSmallPrompt::WhenConfigured`: five schemas a
    /// small model rarely needs) unless the person set one of their `[approvals]` keys to
    /// `allow` or `ask`, which says they want their pod to have children.
    pub child_tools_in_compact: bool,
    /// Which layer set each key.
    pub sources: ContextSources,
}

/// The layer of each key of [`ContextSettings`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextSources {
    pub window: Source,
    pub probe: Source,
    pub compact_at: Source,
    pub soft_trim_at: Source,
    pub hard_clear_at: Source,
    pub keep_last_assistants: Source,
    pub summary_model: Source,
    pub memory_flush: Source,
    /// Each `[context.windows]` prefix's.
    pub windows: BTreeMap<String, Source>,
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
            sources: ContextSources::default(),
        }
    }
}

/// A value of these settings with the layer that set it, for errors.
fn sourced<T: Clone>(value: &T, source: &Source) -> Setting<T> {
    Setting::new(value.clone(), source.clone())
}

/// Put `value` in `slot` and `source` in `from` when a layer sets it.
fn set<T>(slot: &mut T, from: &mut Source, value: Option<T>, source: &Source) {
    if let Some(value) = value {
        *slot = value;
        *from = source.clone();
    }
}

impl ContextSettings {
    /// `context_window`, a key of the file's top level.
    pub(crate) fn layer_window(
        &mut self,
        window: Option<i64>,
        source: &Source,
    ) -> Result<(), ConfigError> {
        let window = window
            .map(|w| unsigned("context_window".into(), w, source))
            .transpose()?;
        if let Some(window) = window {
            self.window = Some(window);
            self.sources.window = source.clone();
        }
        Ok(())
    }

    pub(crate) fn layer(&mut self, file: ContextFile, source: &Source) -> Result<(), ConfigError> {
        let from = &mut self.sources;
        set(
            &mut self.compact_at,
            &mut from.compact_at,
            file.compact_at,
            source,
        );
        set(
            &mut self.soft_trim_at,
            &mut from.soft_trim_at,
            file.soft_trim_at,
            source,
        );
        set(
            &mut self.hard_clear_at,
            &mut from.hard_clear_at,
            file.hard_clear_at,
            source,
        );
        let keep = file
            .keep_last_assistants
            .map(|n| unsigned("context.keep_last_assistants".into(), n, source))
            .transpose()?
            // Beyond what `usize` holds is beyond MAX_KEEP_LAST_ASSISTANTS too: validation
            // refuses it.
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        set(
            &mut self.keep_last_assistants,
            &mut from.keep_last_assistants,
            keep,
            source,
        );
        if file.summary_model.is_some() {
            set(
                &mut self.summary_model,
                &mut from.summary_model,
                Some(file.summary_model),
                source,
            );
        }
        set(
            &mut self.memory_flush,
            &mut from.memory_flush,
            file.memory_flush,
            source,
        );
        set(&mut self.probe, &mut from.probe, file.probe, source);
        for (prefix, tokens) in file.windows.unwrap_or_default() {
            let tokens = unsigned(window_key(&prefix), tokens, source)?;
            self.window_table.retain(|(known, _)| *known != prefix);
            self.window_table.push((prefix.clone(), tokens));
            from.windows.insert(prefix, source.clone());
        }
        self.window_table
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        Ok(())
    }

    /// `[context.windows]` in the order a person reads a file: by prefix, each with its layer.
    pub fn windows(&self) -> Vec<(&str, Setting<u64>)> {
        let mut windows: Vec<(&str, Setting<u64>)> = self
            .window_table
            .iter()
            .map(|(prefix, tokens)| {
                let source = self
                    .sources
                    .windows
                    .get(prefix)
                    .cloned()
                    .unwrap_or_default();
                (prefix.as_str(), Setting::new(*tokens, source))
            })
            .collect();
        windows.sort_by(|a, b| a.0.cmp(b.0));
        windows
    }

    /// `context_window` with its layer, when set.
    pub fn window_setting(&self) -> Option<Setting<u64>> {
        self.window
            .map(|window| Setting::new(window, self.sources.window.clone()))
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let from = &self.sources;
        let soft = sourced(&self.soft_trim_at, &from.soft_trim_at);
        let hard = sourced(&self.hard_clear_at, &from.hard_clear_at);
        let compact = sourced(&self.compact_at, &from.compact_at);
        for (key, ratio) in [
            ("context.soft_trim_at", &soft),
            ("context.hard_clear_at", &hard),
            ("context.compact_at", &compact),
        ] {
            if !(ratio.value.is_finite() && ratio.value > 0.0 && ratio.value < 1.0) {
                return Err(ConfigError::invalid(
                    key,
                    ratio,
                    "must be a share of the window between 0 and 1 (both excluded), e.g. 0.75",
                ));
            }
        }
        in_order(
            ("context.soft_trim_at", &soft),
            ("context.hard_clear_at", &hard),
        )?;
        in_order(
            ("context.hard_clear_at", &hard),
            ("context.compact_at", &compact),
        )?;
        let keep = sourced(&self.keep_last_assistants, &from.keep_last_assistants);
        if keep.value == 0 {
            return Err(ConfigError::invalid(
                "context.keep_last_assistants",
                &keep,
                "must be at least 1: the model's latest answer is never trimmed",
            ));
        }
        if keep.value > MAX_KEEP_LAST_ASSISTANTS {
            return Err(ConfigError::invalid(
                "context.keep_last_assistants",
                &keep,
                &format!(
                    "is too many (at most {MAX_KEEP_LAST_ASSISTANTS}): so much protected history leaves nothing to trim or compact"
                ),
            ));
        }
        if let Some(model) = &self.summary_model
            && model.trim().is_empty()
        {
            return Err(ConfigError::invalid(
                "context.summary_model",
                &sourced(model, &from.summary_model),
                "must not be empty; leave it out to use the pod's own model",
            ));
        }
        for (prefix, tokens) in self.windows() {
            if prefix.trim().is_empty() {
                return Err(ConfigError::invalid_entry(
                    window_key(prefix),
                    &tokens,
                    "has an empty model-name prefix, which would match every model; use context_window for that",
                ));
            }
            check_window(window_key(prefix), &tokens)?;
        }
        Ok(())
    }
}

/// A window in tokens must be one a pod can work in and one that exists.
pub(crate) fn check_window(key: String, tokens: &Setting<u64>) -> Result<(), ConfigError> {
    if !(MIN_CONTEXT_WINDOW..=MAX_CONTEXT_WINDOW).contains(&tokens.value) {
        return Err(ConfigError::invalid_entry(
            key,
            tokens,
            "must be a window in tokens between 1024 and 10000000 (a model's context length, e.g. 32768)",
        ));
    }
    Ok(())
}

/// `context.windows."PREFIX"`, as a person would find it in the file.
fn window_key(prefix: &str) -> String {
    let quoted = serde_json::to_string(prefix).unwrap_or_else(|_| format!("\"{prefix}\""));
    format!("context.windows.{quoted}")
}

/// A non-negative integer from a file, or an error naming the key, the value and the file.
pub(crate) fn unsigned(key: String, value: i64, source: &Source) -> Result<u64, ConfigError> {
    u64::try_from(value).map_err(|_| ConfigError::Invalid {
        key,
        value: value.to_string(),
        origin: source.clone(),
        reason: "must not be negative".into(),
    })
}

/// `lower` must be below `upper`. The error names the one a person set (both set: the upper one,
/// whose message names the lower with its source).
fn in_order(
    (lower_key, lower): (&'static str, &Setting<f64>),
    (upper_key, upper): (&'static str, &Setting<f64>),
) -> Result<(), ConfigError> {
    if lower.value < upper.value {
        return Ok(());
    }
    if upper.source == Source::Default {
        return Err(ConfigError::invalid(
            lower_key,
            lower,
            &format!(
                "must be below {upper_key} ({}, {})",
                upper.value, upper.source
            ),
        ));
    }
    Err(ConfigError::invalid(
        upper_key,
        upper,
        &format!(
            "must be above {lower_key} ({}, {}): trimming starts at soft_trim_at, clearing at hard_clear_at, and compaction at compact_at",
            lower.value, lower.source
        ),
    ))
}
