//! `[children]`: how a pod's child pods reach it (`wake`) and how many of them there may be
//! (`max_children`, `max_depth`). Their section of the file, layering and validation.
//!
//! Operational: read at every start of a pod, never recorded. The limits bound what one model
//! answer can start (each child is a process with its own memory), so raising one is a
//! loosening an untrusted project file may not do (`loosen.rs`); lowering one always applies.

use serde::Deserialize;

use crate::context::unsigned;
use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// Live children a pod may have at once unless configured.
pub const DEFAULT_MAX_CHILDREN: u64 = 8;
/// A child's report of a finished or failed turn starts a turn of an idle parent.
pub const DEFAULT_WAKE: bool = true;
/// Levels of pods below a root (a root's children are at depth 1) unless configured.
pub const DEFAULT_MAX_DEPTH: u64 = 3;
/// The most live children a person may allow one pod: each is a process of its own.
pub const MAX_MAX_CHILDREN: u64 = 64;
/// The deepest tree a person may allow; at `MAX_MAX_CHILDREN` per pod even this is a lot.
pub const MAX_MAX_DEPTH: u64 = 8;

/// `[children]` as written (limits signed, so `-1` gets this crate's message).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildrenFile {
    /// Whether a child's report starts a turn of an idle pod.
    pub wake: Option<bool>,
    pub max_children: Option<i64>,
    pub max_depth: Option<i64>,
}

/// The resolved `[children]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildrenSettings {
    /// Whether a report from a child (it finished a turn, failed, shut down) starts a turn of
    /// this pod when it is idle; otherwise the report waits for the next turn.
    pub wake: Setting<bool>,
    /// Children of one pod believed running (or starting) at once; `spawn_pod` beyond it is
    /// refused until one stops. 0: this pod starts none.
    pub max_children: Setting<u64>,
    /// The deepest a pod may be below its root pod (whose children are at depth 1): a pod at
    /// this depth starts no children. 0: no pod starts any.
    pub max_depth: Setting<u64>,
}

impl ChildrenSettings {
    pub(crate) fn defaults() -> ChildrenSettings {
        ChildrenSettings {
            wake: Setting::default(DEFAULT_WAKE),
            max_children: Setting::default(DEFAULT_MAX_CHILDREN),
            max_depth: Setting::default(DEFAULT_MAX_DEPTH),
        }
    }

    pub(crate) fn layer(&mut self, file: ChildrenFile, source: &Source) -> Result<(), ConfigError> {
        self.wake.layer(file.wake, source);
        for (key, slot, value) in [
            (
                "children.max_children",
                &mut self.max_children,
                file.max_children,
            ),
            ("children.max_depth", &mut self.max_depth, file.max_depth),
        ] {
            let value = value.map(|v| unsigned(key.into(), v, source)).transpose()?;
            slot.layer(value, source);
        }
        Ok(())
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        for (key, setting, most) in [
            (
                "children.max_children",
                &self.max_children,
                MAX_MAX_CHILDREN,
            ),
            ("children.max_depth", &self.max_depth, MAX_MAX_DEPTH),
        ] {
            if setting.value > most {
                return Err(ConfigError::invalid(
                    key,
                    setting,
                    &format!("is too large (at most {most})"),
                ));
            }
        }
        Ok(())
    }

    /// A limit as the pod counts (validated to fit).
    pub fn count(setting: &Setting<u64>) -> usize {
        usize::try_from(setting.value).unwrap_or(usize::MAX)
    }
}
