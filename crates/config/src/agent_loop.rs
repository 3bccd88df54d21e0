//! `[loop]` and `[tasks]`: how long a run may go on and when it is braked (the iteration cap,
//! the loop brakes), and when a model with open tasks is reminded of them. Their section of the
//! file, layering and validation; the rules: docs/agent-loop.md §Loop brakes and §Reminders.
//!
//! Operational: read at every start of a pod, never recorded. What they decide (a run stopped
//! with `no_progress`, a task reminder) is committed to the log, so replay never reads them.
//! They bound how long the model works, not what it may touch, so a project file's values apply
//! without trust (approvals and scope still govern every call).

use serde::Deserialize;

use crate::context::unsigned;
use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// Model requests allowed in one run unless configured otherwise: enough for real multi-step tool
/// work, small enough that a model stuck in a tool loop stops before burning much. The engine's
/// `RunLimits::default()` uses it too.
pub const DEFAULT_MAX_ITERATIONS: u32 = 20;
/// Above this a run is not an agent turn but an unattended job; say so rather than accept it.
pub const MAX_MAX_ITERATIONS: u64 = 10_000;
/// Failures of one exact call (same tool, same arguments) in a run after which its result
/// carries a note telling the model to stop repeating it.
pub const DEFAULT_SAME_CALL_FAILURES: u32 = 2;
/// Tool calls failing one after another, with no successful call between, that end a run.
pub const DEFAULT_FAILURES_IN_A_ROW: u32 = 5;
/// The same call answered with the same result this many times in a row ends a run.
pub const DEFAULT_REPEAT_LIMIT: u32 = 4;
/// Requests without touching an open task list before the model is reminded of it.
pub const DEFAULT_REMIND_AFTER: u32 = 10;
/// The brakes and the reminder count requests or calls; beyond this they could never fire.
const MAX_COUNT: u64 = 1_000;

/// `[loop]` as written (signed, so `-1` gets this crate's message).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopFile {
    pub max_iterations: Option<i64>,
    pub same_call_failures: Option<i64>,
    pub failures_in_a_row: Option<i64>,
    pub repeat_limit: Option<i64>,
}

/// `[tasks]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksFile {
    pub remind_after: Option<i64>,
}

/// The resolved `[loop]` and `[tasks]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopSettings {
    /// Model requests allowed in one run.
    pub max_iterations: Setting<u64>,
    /// Failures of one exact call in a run before its result tells the model to change
    /// approach; 0: never.
    pub same_call_failures: Setting<u64>,
    /// Failed calls in a row (no success between) that end a run; 0: never.
    pub failures_in_a_row: Setting<u64>,
    /// The same call with the same result this many times in a row ends a run; 0: never.
    pub repeat_limit: Setting<u64>,
    /// `[tasks] remind_after`: requests without touching open tasks before a reminder; 0: never.
    pub remind_after: Setting<u64>,
}

impl LoopSettings {
    pub(crate) fn defaults() -> LoopSettings {
        LoopSettings {
            max_iterations: Setting::default(u64::from(DEFAULT_MAX_ITERATIONS)),
            same_call_failures: Setting::default(u64::from(DEFAULT_SAME_CALL_FAILURES)),
            failures_in_a_row: Setting::default(u64::from(DEFAULT_FAILURES_IN_A_ROW)),
            repeat_limit: Setting::default(u64::from(DEFAULT_REPEAT_LIMIT)),
            remind_after: Setting::default(u64::from(DEFAULT_REMIND_AFTER)),
        }
    }

    pub(crate) fn layer_loop(
        &mut self,
        file: LoopFile,
        source: &Source,
    ) -> Result<(), ConfigError> {
        for (key, slot, value) in [
            (
                "loop.max_iterations",
                &mut self.max_iterations,
                file.max_iterations,
            ),
            (
                "loop.same_call_failures",
                &mut self.same_call_failures,
                file.same_call_failures,
            ),
            (
                "loop.failures_in_a_row",
                &mut self.failures_in_a_row,
                file.failures_in_a_row,
            ),
            (
                "loop.repeat_limit",
                &mut self.repeat_limit,
                file.repeat_limit,
            ),
        ] {
            let value = value.map(|v| unsigned(key.into(), v, source)).transpose()?;
            slot.layer(value, source);
        }
        Ok(())
    }

    pub(crate) fn layer_tasks(
        &mut self,
        file: TasksFile,
        source: &Source,
    ) -> Result<(), ConfigError> {
        let value = file
            .remind_after
            .map(|v| unsigned("tasks.remind_after".into(), v, source))
            .transpose()?;
        self.remind_after.layer(value, source);
        Ok(())
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let iterations = &self.max_iterations;
        if !(1..=MAX_MAX_ITERATIONS).contains(&iterations.value) {
            return Err(ConfigError::invalid(
                "loop.max_iterations",
                iterations,
                "must be between 1 and 10000",
            ));
        }
        for (key, value) in [
            ("loop.same_call_failures", &self.same_call_failures),
            ("loop.failures_in_a_row", &self.failures_in_a_row),
            ("loop.repeat_limit", &self.repeat_limit),
            ("tasks.remind_after", &self.remind_after),
        ] {
            if value.value > MAX_COUNT {
                return Err(ConfigError::invalid(
                    key,
                    value,
                    "is too large (at most 1000; 0 turns it off)",
                ));
            }
        }
        Ok(())
    }

    /// A value as the engine's counters take it (validated to fit).
    pub fn count(setting: &Setting<u64>) -> u32 {
        u32::try_from(setting.value).unwrap_or(u32::MAX)
    }
}
