use std::path::{Path, PathBuf};

use crate::source::{Setting, Source};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    /// A value that parsed but makes no sense (a negative temperature, a zero retry delay).
    #[error("{key} = {value} (from {origin}) {reason}")]
    Invalid {
        /// The key as written in a file: `retry.max_retries`, `context.windows."qwen3"`.
        key: String,
        value: String,
        origin: Source,
        reason: String,
    },
}

impl ConfigError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        ConfigError::Io {
            path: path.to_path_buf(),
            cause: source,
        }
    }

    /// `setting`'s value, from its layer, is not acceptable for `key` because of `reason`.
    pub fn invalid<T: std::fmt::Display>(
        key: &'static str,
        setting: &Setting<T>,
        reason: &str,
    ) -> Self {
        ConfigError::invalid_entry(key.to_owned(), setting, reason)
    }

    /// Like `invalid`, for a key made at run time (an entry of a table such as
    /// `[context.windows]`).
    pub fn invalid_entry<T: std::fmt::Display>(
        key: String,
        setting: &Setting<T>,
        reason: &str,
    ) -> Self {
        ConfigError::Invalid {
            key,
            value: setting.value.to_string(),
            origin: setting.source.clone(),
            reason: reason.to_owned(),
        }
    }
}
