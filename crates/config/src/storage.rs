//! `[storage]`: when a pod archives its earlier segments by itself (docs/storage.md, "Archived
//! segments"). Archiving is lossless — an archived segment reads the same everywhere — so these
//! keys only trade disk for the time it takes to read old history back.

use serde::Deserialize;

use crate::context::unsigned;
use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// Earlier segments last written this many days ago are archived by default.
pub const DEFAULT_ARCHIVE_AFTER_DAYS: u64 = 30;

/// A pod's file checkpoints may take this many MB by default.
pub const DEFAULT_CHECKPOINT_BUDGET_MB: u64 = 256;

/// Above this, a value is a mistake rather than a wish (about 270 years, or 16 TB).
const MAX_DAYS: u64 = 100_000;
const MAX_MB: u64 = 16_000_000;

/// `[storage]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageFile {
    pub archive_after_days: Option<i64>,
    pub archive_over_mb: Option<i64>,
    pub checkpoint_budget_mb: Option<i64>,
}

/// The resolved `[storage]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageSettings {
    /// Earlier segments last written at least this many days ago are archived; 0: never by age.
    pub archive_after_days: Setting<u64>,
    /// When the plain earlier segments add up to more than this many MB, the oldest are
    /// archived until they fit; 0: never by size.
    pub archive_over_mb: Setting<u64>,
    /// The most a pod's file checkpoints (files kept before a file tool changed them, for
    /// rewinding) may take, in MB; the oldest go first. 0: no checkpoints are kept.
    pub checkpoint_budget_mb: Setting<u64>,
}

impl StorageSettings {
    pub(crate) fn defaults() -> StorageSettings {
        StorageSettings {
            archive_after_days: Setting::default(DEFAULT_ARCHIVE_AFTER_DAYS),
            archive_over_mb: Setting::default(0),
            checkpoint_budget_mb: Setting::default(DEFAULT_CHECKPOINT_BUDGET_MB),
        }
    }

    pub(crate) fn layer(&mut self, file: StorageFile, source: &Source) -> Result<(), ConfigError> {
        for (key, slot, value) in [
            (
                "storage.archive_after_days",
                &mut self.archive_after_days,
                file.archive_after_days,
            ),
            (
                "storage.archive_over_mb",
                &mut self.archive_over_mb,
                file.archive_over_mb,
            ),
            (
                "storage.checkpoint_budget_mb",
                &mut self.checkpoint_budget_mb,
                file.checkpoint_budget_mb,
            ),
        ] {
            let value = value.map(|v| unsigned(key.into(), v, source)).transpose()?;
            slot.layer(value, source);
        }
        Ok(())
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.archive_after_days.value > MAX_DAYS {
            return Err(ConfigError::invalid(
                "storage.archive_after_days",
                &self.archive_after_days,
                "is too large (at most 100000; 0 turns it off)",
            ));
        }
        if self.archive_over_mb.value > MAX_MB {
            return Err(ConfigError::invalid(
                "storage.archive_over_mb",
                &self.archive_over_mb,
                "is too large (at most 16000000; 0 turns it off)",
            ));
        }
        if self.checkpoint_budget_mb.value > MAX_MB {
            return Err(ConfigError::invalid(
                "storage.checkpoint_budget_mb",
                &self.checkpoint_budget_mb,
                "is too large (at most 16000000; 0 turns checkpoints off)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_and_huge_values_are_refused_with_the_key() {
        let mut settings = StorageSettings::defaults();
        let source = Source::Default;
        let err = settings
            .layer(
                StorageFile {
                    archive_after_days: Some(-1),
                    archive_over_mb: None,
                    checkpoint_budget_mb: None,
                },
                &source,
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("storage.archive_after_days"), "{err}");
        settings
            .layer(
                StorageFile {
                    archive_after_days: None,
                    archive_over_mb: Some(MAX_MB as i64 + 1),
                    checkpoint_budget_mb: None,
                },
                &source,
            )
            .unwrap();
        let err = settings.validate().unwrap_err().to_string();
        assert!(err.contains("storage.archive_over_mb"), "{err}");
        assert!(StorageSettings::defaults().validate().is_ok());
    }
}
