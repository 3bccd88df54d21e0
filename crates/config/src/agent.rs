//! The settings that govern the agent inside a pod: where its tools may go and how long a
//! command may run (`[scope]`, `[shell]`), the identity it is given (`[system_prompt]`) and how
//! its input is screened (`[input]`) — their sections of the file, layering and validation.
//! Which tools it may use (`[approvals]`) is `approvals.rs`; child pods (`[children]`) have
//! their own module, `children.rs`.
//!
//! All of them are operational: read at every start of a pod, never recorded. Some are part of
//! the stored system prompt and so reach the model only at a new segment, which the pod
//! enforces, not this crate: the tool set (a `deny`ed tool is not offered; the shell tool's
//! description states its timeouts) and the identity file.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::source::{Setting, Source, layer_opt};

/// How long one shell call may run unless it asks for another limit.
pub const DEFAULT_SHELL_TIMEOUT_SECS: u64 = 120;
/// The longest limit a shell call may ask for.
pub const DEFAULT_SHELL_MAX_TIMEOUT_SECS: u64 = 600;
/// Longest input, in characters, that reaches the model whole; longer ones are cut with a note,
/// so one giant paste or notification cannot crowd out the context.
pub const DEFAULT_MAX_MESSAGE_CHARS: usize = 32_000;

pub use crate::approvals::Policy;

/// What the input guard does with text that looks like a prompt injection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardMode {
    /// Do not scan.
    Off,
    /// Record detections in the pod's log file only.
    Log,
    /// Commit the input and raise an alert naming the detections.
    #[default]
    Warn,
    /// Refuse the input, naming the detections; nothing is committed.
    Block,
}

impl GuardMode {
    pub const ALL: [GuardMode; 4] = [
        GuardMode::Off,
        GuardMode::Log,
        GuardMode::Warn,
        GuardMode::Block,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GuardMode::Off => "off",
            GuardMode::Log => "log",
            GuardMode::Warn => "warn",
            GuardMode::Block => "block",
        }
    }

    pub fn parse(text: &str) -> Option<GuardMode> {
        GuardMode::ALL
            .into_iter()
            .find(|g| g.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// `[scope]` as written. Each list replaces a lower layer's list whole.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeFile {
    pub read: Option<Vec<PathBuf>>,
    pub write: Option<Vec<PathBuf>>,
    pub deny: Option<Vec<PathBuf>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellFile {
    pub timeout_secs: Option<u64>,
    pub max_timeout_secs: Option<u64>,
    pub sandbox: Option<SandboxMode>,
    pub network: Option<bool>,
    pub login: Option<bool>,
}

/// `[shell] sandbox`: whether `shell` commands run confined to the pod's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Confined (Landlock) to the scope's write roots and temp dirs, where the kernel can.
    Scope,
    /// Not confined: approvals alone govern `shell`.
    Off,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Scope => "scope",
            SandboxMode::Off => "off",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemPromptFile {
    /// Replaces the built-in identity layer; relative to the file that names it.
    pub identity_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    pub guard: Option<GuardMode>,
    pub max_message_chars: Option<usize>,
}

/// The filesystem scope of the file tools (shell is governed by `[approvals]` instead). Paths
/// are as written with a leading `~` expanded; relative ones stay relative, for the pod to
/// resolve against its working directory.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeSettings {
    /// Extra read-only roots.
    pub read: Setting<Vec<PathBuf>>,
    /// Extra read-write roots (the pod's working directory always is one).
    pub write: Setting<Vec<PathBuf>>,
    /// Never readable or writable, whatever `read` and `write` say.
    pub deny: Setting<Vec<PathBuf>>,
}

impl ScopeSettings {
    pub(crate) fn defaults() -> ScopeSettings {
        ScopeSettings {
            read: Setting::default(Vec::new()),
            write: Setting::default(Vec::new()),
            deny: Setting::default(Vec::new()),
        }
    }

    pub(crate) fn layer(&mut self, file: ScopeFile, source: &Source) {
        self.read.layer(file.read, source);
        self.write.layer(file.write, source);
        self.deny.layer(file.deny, source);
    }

    fn lists_mut(&mut self) -> [(&'static str, &mut Setting<Vec<PathBuf>>); 3] {
        [
            ("scope.read", &mut self.read),
            ("scope.write", &mut self.write),
            ("scope.deny", &mut self.deny),
        ]
    }

    /// Replace a leading `~` with `home`, refuse empty paths and `~user`, which is not expanded.
    pub(crate) fn expand_home(&mut self, home: Option<&Path>) -> Result<(), ConfigError> {
        for (key, list) in self.lists_mut() {
            for path in &mut list.value {
                let bad = |reason: &str| ConfigError::Invalid {
                    key: key.into(),
                    value: format!("{:?}", path.display().to_string()),
                    origin: list.source.clone(),
                    reason: reason.to_owned(),
                };
                if path.as_os_str().is_empty() {
                    return Err(bad("is an empty path; name a file or directory"));
                }
                let mut components = path.components();
                let Some(Component::Normal(first)) = components.next() else {
                    continue;
                };
                if first == "~" {
                    let home = home.ok_or_else(|| bad("starts with ~ but HOME is not set"))?;
                    let rest = components.as_path();
                    *path = if rest.as_os_str().is_empty() {
                        home.to_path_buf()
                    } else {
                        home.join(rest)
                    };
                } else if first.to_string_lossy().starts_with('~') {
                    return Err(bad(
                        "starts with ~user, which is not expanded; write ~/ or a full path",
                    ));
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShellSettings {
    /// How long one shell call may run when it does not ask for a limit.
    pub timeout_secs: Setting<u64>,
    /// The longest limit a call may ask for; at least `timeout_secs`.
    pub max_timeout_secs: Setting<u64>,
    /// Whether commands run confined to the scope (default `scope`).
    pub sandbox: Setting<SandboxMode>,
    /// Whether sandboxed commands may use the network (default true).
    pub network: Setting<bool>,
    /// Whether commands run in a login shell, `bash -lc` (default false: `bash -c`).
    pub login: Setting<bool>,
}

impl ShellSettings {
    pub(crate) fn defaults() -> ShellSettings {
        ShellSettings {
            timeout_secs: Setting::default(DEFAULT_SHELL_TIMEOUT_SECS),
            max_timeout_secs: Setting::default(DEFAULT_SHELL_MAX_TIMEOUT_SECS),
            sandbox: Setting::default(SandboxMode::Scope),
            network: Setting::default(true),
            login: Setting::default(false),
        }
    }

    pub(crate) fn layer(&mut self, file: ShellFile, source: &Source) {
        self.timeout_secs.layer(file.timeout_secs, source);
        self.max_timeout_secs.layer(file.max_timeout_secs, source);
        self.sandbox.layer(file.sandbox, source);
        self.network.layer(file.network, source);
        self.login.layer(file.login, source);
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.timeout_secs.value == 0 {
            return Err(ConfigError::invalid(
                "shell.timeout_secs",
                &self.timeout_secs,
                "must be at least 1",
            ));
        }
        if self.max_timeout_secs.value < self.timeout_secs.value {
            return Err(ConfigError::invalid(
                "shell.max_timeout_secs",
                &self.max_timeout_secs,
                &format!(
                    "must not be below shell.timeout_secs ({})",
                    self.timeout_secs.value
                ),
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SystemPromptSettings {
    /// Replaces the built-in identity layer; already resolved against the naming file's
    /// directory. `None`: the built-in identity.
    pub identity_file: Option<Setting<PathBuf>>,
}

impl SystemPromptSettings {
    /// `dir` is the directory of the file being layered: a path in a file is relative to it,
    /// not to wherever seedpod runs.
    pub(crate) fn layer(&mut self, file: SystemPromptFile, dir: &Path, source: &Source) {
        let identity = file.identity_file.map(|p| dir.join(p));
        layer_opt(&mut self.identity_file, identity, source);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct InputSettings {
    pub guard: Setting<GuardMode>,
    /// Longer inputs are truncated with a note the model sees.
    pub max_message_chars: Setting<usize>,
}

impl InputSettings {
    pub(crate) fn defaults() -> InputSettings {
        InputSettings {
            guard: Setting::default(GuardMode::default()),
            max_message_chars: Setting::default(DEFAULT_MAX_MESSAGE_CHARS),
        }
    }

    pub(crate) fn layer(&mut self, file: InputFile, source: &Source) {
        self.guard.layer(file.guard, source);
        self.max_message_chars.layer(file.max_message_chars, source);
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.max_message_chars.value == 0 {
            return Err(ConfigError::invalid(
                "input.max_message_chars",
                &self.max_message_chars,
                "must be at least 1",
            ));
        }
        Ok(())
    }
}
