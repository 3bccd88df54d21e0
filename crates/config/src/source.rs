//! Where a setting's value came from, so `seedpod config show` can answer "why is it this?".

use std::fmt;
use std::path::PathBuf;

/// The layer that decided a setting. Later layers win: default < user file < project file <
/// environment < flag. `Recorded` is what an existing pod keeps from its creation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Source {
    #[default]
    Default,
    /// `config.toml` in the config directory.
    UserFile(PathBuf),
    /// `.seedpod/config.toml` in the pod's working directory.
    ProjectFile(PathBuf),
    Env(&'static str),
    Flag(&'static str),
    /// Found by probing for a local OpenAI-compatible server.
    Detected(String),
    /// Kept from the pod's creation (its `pod.json` and log), so it restores exactly.
    Recorded,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::UserFile(path) | Source::ProjectFile(path) => {
                write!(f, "{}", path.display())
            }
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(flag) => write!(f, "flag --{flag}"),
            Source::Detected(what) => write!(f, "detected {what}"),
            Source::Recorded => f.write_str("recorded when the pod was created"),
        }
    }
}

/// A value and the layer that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Setting<T> {
    pub fn new(value: T, source: Source) -> Self {
        Setting { value, source }
    }

    pub fn default(value: T) -> Self {
        Setting::new(value, Source::Default)
    }

    /// Replace the value when a higher layer sets one.
    pub fn layer(&mut self, value: Option<T>, source: &Source) {
        if let Some(value) = value {
            *self = Setting::new(value, source.clone());
        }
    }
}

/// Layer an optional setting: absent until some layer sets it.
pub fn layer_opt<T>(slot: &mut Option<Setting<T>>, value: Option<T>, source: &Source) {
    if let Some(value) = value {
        *slot = Some(Setting::new(value, source.clone()));
    }
}
