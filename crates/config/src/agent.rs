//! The settings that govern the agent inside a pod: which built-in tools it may use and how
//! (`[approvals]`, `[scope]`, `[shell]`), the identity it is given (`[system_prompt]`) and how
//! its input is screened (`[input]`) — their sections of the file, layering and validation.
//! Child pods (`[children]`) have their own module, `children.rs`.
//!
//! All of them are operational: read at every start of a pod, never recorded. Some are part of
//! the stored system prompt and so reach the model only at a new segment, which the pod
//! enforces, not this crate: the tool set (a `deny`ed tool is not offered; the shell tool's
//! description states its timeouts) and the identity file.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::source::{Setting, Source, layer_opt};

/// How long one shell call may run unless it asks for another limit.
pub const DEFAULT_SHELL_TIMEOUT_SECS: u64 = 120;
/// The longest limit a shell call may ask for.
pub const DEFAULT_SHELL_MAX_TIMEOUT_SECS: u64 = 600;
/// Longest input, in characters, that reaches the model whole; longer ones are cut with a note,
/// so one giant paste cannot crowd out the context.
pub const DEFAULT_MAX_MESSAGE_CHARS: usize = 32_000;

/// What happens when the model calls a tool (declared beside the tool declarations, whose
/// defaults are policies).
pub use seedpod_protocol::Policy;

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

/// `[approvals]` as written: one field per built-in tool (the file tools, shell, and the
/// child-pod tools), so a misspelt tool name is an unknown field (with its line and the valid
/// names) rather than a setting that silently does nothing; and MCP tool keys
/// (`mcp__SERVER__TOOL`, `mcp__SERVER__*`), checked for their shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApprovalsFile {
    pub read_file: Option<Policy>,
    pub write_file: Option<Policy>,
    pub edit_file: Option<Policy>,
    pub list_dir: Option<Policy>,
    pub glob: Option<Policy>,
    pub grep: Option<Policy>,
    pub shell: Option<Policy>,
    pub update_tasks: Option<Policy>,
    pub git_commit: Option<Policy>,
    pub read_paste: Option<Policy>,
    pub spawn_pod: Option<Policy>,
    pub send_to_pod: Option<Policy>,
    pub read_pod_output: Option<Policy>,
    pub list_pods: Option<Policy>,
    pub stop_pod: Option<Policy>,
    /// MCP tool keys, by key as written.
    pub mcp: BTreeMap<String, Policy>,
}

/// One key of `[approvals]`, checked as it is read so an error points at its line.
enum ApprovalKey {
    Builtin(&'static str),
    Mcp(String),
}

impl<'de> Deserialize<'de> for ApprovalKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = ApprovalKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tool name")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<ApprovalKey, E> {
                if key.starts_with("mcp__") {
                    crate::mcp::approval_key_server(key).map_err(E::custom)?;
                    return Ok(ApprovalKey::Mcp(key.to_owned()));
                }
                // The built-in tools' names, from the one list of them (`slots_mut`).
                let mut file = ApprovalsFile::default();
                let builtin: Vec<&'static str> =
                    file.slots_mut().into_iter().map(|(name, _)| name).collect();
                if let Some(name) = builtin.iter().find(|name| **name == key) {
                    return Ok(ApprovalKey::Builtin(name));
                }
                let names: Vec<String> = builtin.iter().map(|n| format!("`{n}`")).collect();
                Err(E::custom(format!(
                    "unknown field `{key}`, expected one of {}, or an MCP tool key \
                     (`mcp__SERVER__TOOL`, `mcp__SERVER__*`)",
                    names.join(", ")
                )))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for ApprovalsFile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FileVisitor;
        impl<'de> serde::de::Visitor<'de> for FileVisitor {
            type Value = ApprovalsFile;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of tool = policy")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ApprovalsFile, A::Error> {
                let mut file = ApprovalsFile::default();
                while let Some(key) = map.next_key::<ApprovalKey>()? {
                    let policy: Policy = map.next_value()?;
                    match key {
                        ApprovalKey::Mcp(key) => {
                            if policy == Policy::Sandboxed {
                                return Err(serde::de::Error::custom(format!(
                                    "{key:?}: \"sandboxed\" applies to shell only; use allow, \
                                     ask or deny"
                                )));
                            }
                            file.mcp.insert(key, policy);
                        }
                        ApprovalKey::Builtin(name) => {
                            for (slot_name, slot) in file.slots_mut() {
                                if slot_name == name {
                                    *slot = Some(policy);
                                }
                            }
                        }
                    }
                }
                Ok(file)
            }
        }
        deserializer.deserialize_map(FileVisitor)
    }
}

impl ApprovalsFile {
    /// Each tool's written policy by name, in `Approvals::all` order.
    pub(crate) fn slots_mut(&mut self) -> [(&'static str, &mut Option<Policy>); 15] {
        [
            ("read_file", &mut self.read_file),
            ("write_file", &mut self.write_file),
            ("edit_file", &mut self.edit_file),
            ("list_dir", &mut self.list_dir),
            ("glob", &mut self.glob),
            ("grep", &mut self.grep),
            ("shell", &mut self.shell),
            ("update_tasks", &mut self.update_tasks),
            ("git_commit", &mut self.git_commit),
            ("read_paste", &mut self.read_paste),
            ("spawn_pod", &mut self.spawn_pod),
            ("send_to_pod", &mut self.send_to_pod),
            ("read_pod_output", &mut self.read_pod_output),
            ("list_pods", &mut self.list_pods),
            ("stop_pod", &mut self.stop_pod),
        ]
    }
}

fn quote_policy(policy: Policy) -> String {
    format!("\"{}\"", policy.as_str())
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

/// The policy of each built-in tool. Reading is by name (`policy`, `all`), so the list of
/// tools lives in one place (`slots`).
#[derive(Debug, Clone, PartialEq)]
pub struct Approvals {
    read_file: Setting<Policy>,
    write_file: Setting<Policy>,
    edit_file: Setting<Policy>,
    list_dir: Setting<Policy>,
    glob: Setting<Policy>,
    grep: Setting<Policy>,
    shell: Setting<Policy>,
    update_tasks: Setting<Policy>,
    git_commit: Setting<Policy>,
    read_paste: Setting<Policy>,
    spawn_pod: Setting<Policy>,
    send_to_pod: Setting<Policy>,
    read_pod_output: Setting<Policy>,
    list_pods: Setting<Policy>,
    stop_pod: Setting<Policy>,
    /// `mcp__SERVER__TOOL` and `mcp__SERVER__*` keys. An MCP tool no key covers asks.
    mcp: BTreeMap<String, Setting<Policy>>,
}

impl Approvals {
    /// The file tools are allowed (they are confined to the scope); shell is not confined, so a
    /// person approves each call. `update_tasks` only writes the model's plan to the log; `git_commit` runs
    /// git with the person's identity and hooks, so it asks. The
    /// child-pod tools are allowed: a child gets only scope its
    /// parent holds, so it can do nothing the parent could not.
    pub(crate) fn defaults() -> Approvals {
        let allow = || Setting::default(Policy::Allow);
        Approvals {
            read_file: allow(),
            write_file: allow(),
            edit_file: allow(),
            list_dir: allow(),
            glob: allow(),
            grep: allow(),
            shell: Setting::default(Policy::Ask),
            update_tasks: allow(),
            git_commit: Setting::default(Policy::Ask),
            read_paste: allow(),
            spawn_pod: allow(),
            send_to_pod: allow(),
            read_pod_output: allow(),
            list_pods: allow(),
            stop_pod: allow(),
            mcp: BTreeMap::new(),
        }
    }

    pub(crate) fn layer(&mut self, file: ApprovalsFile, source: &Source) {
        self.read_file.layer(file.read_file, source);
        self.write_file.layer(file.write_file, source);
        self.edit_file.layer(file.edit_file, source);
        self.list_dir.layer(file.list_dir, source);
        self.glob.layer(file.glob, source);
        self.grep.layer(file.grep, source);
        self.shell.layer(file.shell, source);
        self.update_tasks.layer(file.update_tasks, source);
        self.git_commit.layer(file.git_commit, source);
        self.read_paste.layer(file.read_paste, source);
        self.spawn_pod.layer(file.spawn_pod, source);
        self.send_to_pod.layer(file.send_to_pod, source);
        self.read_pod_output.layer(file.read_pod_output, source);
        self.list_pods.layer(file.list_pods, source);
        self.stop_pod.layer(file.stop_pod, source);
        for (key, policy) in file.mcp {
            self.mcp.insert(key, Setting::new(policy, source.clone()));
        }
    }

    /// The policy of MCP tool `tool` (`mcp__SERVER__TOOL` as the model sees it): its own key,
    /// else its server's `mcp__SERVER__*`, else `None` (the pod then asks, unless the server
    /// is trusted for read-only tools and this one says it is).
    pub fn mcp_policy(&self, tool: &str) -> Option<Setting<Policy>> {
        if let Some(setting) = self.mcp.get(tool) {
            return Some(setting.clone());
        }
        let server = tool.strip_prefix("mcp__")?.split_once("__")?.0;
        self.mcp.get(&format!("mcp__{server}__*")).cloned()
    }

    /// The MCP keys as configured, for `config show` and the pod's policies.
    pub fn mcp_keys(&self) -> &BTreeMap<String, Setting<Policy>> {
        &self.mcp
    }

    fn slots(&self) -> [(&'static str, &Setting<Policy>); 15] {
        [
            ("read_file", &self.read_file),
            ("write_file", &self.write_file),
            ("edit_file", &self.edit_file),
            ("list_dir", &self.list_dir),
            ("glob", &self.glob),
            ("grep", &self.grep),
            ("shell", &self.shell),
            ("update_tasks", &self.update_tasks),
            ("git_commit", &self.git_commit),
            ("read_paste", &self.read_paste),
            ("spawn_pod", &self.spawn_pod),
            ("send_to_pod", &self.send_to_pod),
            ("read_pod_output", &self.read_pod_output),
            ("list_pods", &self.list_pods),
            ("stop_pod", &self.stop_pod),
        ]
    }

    /// The policy of the built-in tool `tool`; `None` for a name that is not a built-in tool.
    pub fn policy(&self, tool: &str) -> Option<Setting<Policy>> {
        self.slots()
            .into_iter()
            .find(|(name, _)| *name == tool)
            .map(|(_, setting)| setting.clone())
    }

    /// `sandboxed` is a way to run commands: only `shell` can have it.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        for (tool, setting) in self.slots() {
            if tool != "shell" && setting.value == Policy::Sandboxed {
                return Err(ConfigError::Invalid {
                    key: format!("approvals.{tool}"),
                    value: quote_policy(setting.value),
                    origin: setting.source.clone(),
                    reason: "\"sandboxed\" applies to shell only; use allow, ask or deny".into(),
                });
            }
        }
        Ok(())
    }

    /// Every built-in tool and its policy: read_file, write_file, edit_file, list_dir, glob,
    /// grep, shell, update_tasks, git_commit, read_paste, then the child-pod tools spawn_pod, send_to_pod, read_pod_output,
    /// list_pods, stop_pod.
    pub fn all(&self) -> Vec<(&'static str, Setting<Policy>)> {
        self.slots()
            .into_iter()
            .map(|(name, setting)| (name, setting.clone()))
            .collect()
    }
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
}

impl ShellSettings {
    pub(crate) fn defaults() -> ShellSettings {
        ShellSettings {
            timeout_secs: Setting::default(DEFAULT_SHELL_TIMEOUT_SECS),
            max_timeout_secs: Setting::default(DEFAULT_SHELL_MAX_TIMEOUT_SECS),
            sandbox: Setting::default(SandboxMode::Scope),
            network: Setting::default(true),
        }
    }

    pub(crate) fn layer(&mut self, file: ShellFile, source: &Source) {
        self.timeout_secs.layer(file.timeout_secs, source);
        self.max_timeout_secs.layer(file.max_timeout_secs, source);
        self.sandbox.layer(file.sandbox, source);
        self.network.layer(file.network, source);
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
            guard: Setting::default(GuardMode::Warn),
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
