//! The `config.toml` format: what a person may write, and reading it with errors that name the
//! file, the line and the key.
//!
//! Unknown keys are errors rather than silently ignored: a typo (`modle = ...`) that quietly
//! did nothing would leave someone debugging the wrong thing for an hour.

use std::io::{ErrorKind, Read as _};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::agent::{InputFile, ScopeFile, ShellFile, SystemPromptFile};
use crate::agent_loop::{LoopFile, TasksFile};
use crate::approvals::ApprovalsFile;
use crate::children::ChildrenFile;
use crate::context::ContextFile;
use crate::error::ConfigError;

/// The file name in the config dir and in a project's `.seedpod/` directory.
pub const CONFIG_FILE: &str = "config.toml";

/// The directory in a pod's working directory that holds project settings.
pub const PROJECT_DIR: &str = ".seedpod";

/// Config files larger than this are not configuration; refuse rather than parse megabytes.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Which model family a pod talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderChoice {
    Anthropic,
    Openai,
    /// OpenAI's Responses API: reasoning models keep their (encrypted) reasoning across turns.
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    /// The deterministic test and demo double that plays a JSON-lines script.
    Scripted,
}

impl ProviderChoice {
    pub const ALL: [ProviderChoice; 4] = [
        ProviderChoice::Anthropic,
        ProviderChoice::Openai,
        ProviderChoice::OpenaiResponses,
        ProviderChoice::Scripted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderChoice::Anthropic => "anthropic",
            ProviderChoice::Openai => "openai",
            ProviderChoice::OpenaiResponses => "openai-responses",
            ProviderChoice::Scripted => "scripted",
        }
    }

    pub fn parse(text: &str) -> Option<ProviderChoice> {
        ProviderChoice::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text.trim()))
    }

    pub fn kind(self) -> seedpod_protocol::ProviderKind {
        match self {
            ProviderChoice::Anthropic => seedpod_protocol::ProviderKind::Anthropic,
            ProviderChoice::Openai => seedpod_protocol::ProviderKind::Openai,
            ProviderChoice::OpenaiResponses => seedpod_protocol::ProviderKind::OpenaiResponses,
            ProviderChoice::Scripted => seedpod_protocol::ProviderKind::Scripted,
        }
    }
}

/// The verbosity of the pod log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub const ALL: [LogLevel; 5] = [
        LogLevel::Error,
        LogLevel::Warn,
        LogLevel::Info,
        LogLevel::Debug,
        LogLevel::Trace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }

    pub fn parse(text: &str) -> Option<LogLevel> {
        LogLevel::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// When the pod log starts a new file (besides the size limit, which always applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rotation {
    /// A new file at each UTC midnight.
    Daily,
    /// Only at the size limit.
    Size,
}

impl Rotation {
    pub fn as_str(self) -> &'static str {
        match self {
            Rotation::Daily => "daily",
            Rotation::Size => "size",
        }
    }
}

/// One config file as written. Every key is optional: a layer sets only what it cares about.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub provider: Option<ProviderChoice>,
    /// `api = "chat" | "responses"`: folded into `provider` when the file is applied (`api.rs`).
    pub api: Option<crate::api::OpenaiApi>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The name of the environment variable that holds the API key (never the key itself).
    pub api_key_env: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens (signed, so `-1` gets this crate's message).
    pub context_window: Option<i64>,
    /// The scripted provider's script; relative paths are relative to the file's directory.
    pub script: Option<PathBuf>,
    pub timeouts: Option<TimeoutsFile>,
    pub retry: Option<RetryFile>,
    pub logging: Option<LoggingFile>,
    pub approvals: Option<ApprovalsFile>,
    pub scope: Option<ScopeFile>,
    pub shell: Option<ShellFile>,
    pub system_prompt: Option<SystemPromptFile>,
    pub input: Option<InputFile>,
    pub children: Option<ChildrenFile>,
    pub context: Option<ContextFile>,
    /// `[loop]`: `loop` is a Rust keyword, so the field has another name.
    #[serde(rename = "loop")]
    pub agent_loop: Option<LoopFile>,
    pub tasks: Option<TasksFile>,
    pub notify: Option<crate::notify::NotifyFile>,
    pub tui: Option<crate::tui::TuiFile>,
    pub mcp: Option<crate::mcp::McpFile>,
    pub remote: Option<crate::remote::RemoteFile>,
    pub storage: Option<crate::storage::StorageFile>,
    pub tool_search: Option<crate::tool_search::ToolSearchFile>,
    /// `[responses]`: the `openai-responses` provider's request options.
    pub responses: Option<crate::responses::ResponsesFile>,
    /// `[mcp_serve]`: read from the user's file only (`mcp_serve.rs`).
    pub mcp_serve: Option<crate::mcp_serve::McpServeFile>,
    pub hooks: Option<crate::hooks::HooksFile>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsFile {
    pub connect_ms: Option<u64>,
    /// A response silent this long is a (retryable) timeout, not a hang.
    pub idle_read_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    pub max_retries: Option<u32>,
    pub base_delay_ms: Option<u64>,
    pub max_delay_ms: Option<u64>,
    pub retryable_statuses: Option<Vec<u16>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggingFile {
    pub level: Option<LogLevel>,
    /// The active log file; relative paths are relative to the logs directory, and `{name}`
    /// becomes the pod's name (without it, every pod using this file shares one log).
    pub file: Option<PathBuf>,
    pub rotation: Option<Rotation>,
    pub max_size_mb: Option<u64>,
    pub keep_days: Option<u32>,
    pub stdout: Option<bool>,
}

/// Read and parse a config file; `Ok(None)` when it does not exist (every layer is optional).
pub fn load(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    Ok(load_bytes(path)?.map(|(_, file)| file))
}

/// Like `load`, with the exact bytes that were parsed (what a trusted hash is compared with,
/// so the content checked is the content applied).
pub fn load_bytes(path: &Path) -> Result<Option<(Vec<u8>, ConfigFile)>, ConfigError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(ConfigError::io(path, err)),
    };
    let mut bytes = Vec::new();
    // One byte past the limit tells a file that is too large from one exactly at it.
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ConfigError::io(path, e))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::Parse {
            path: path.to_path_buf(),
            message: format!(
                "the file is larger than {MAX_CONFIG_BYTES} bytes, the most a config file may be"
            ),
        });
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: format!("is not UTF-8 text: {e}"),
    })?;
    let parsed = parse(path, text)?;
    Ok(Some((bytes, parsed)))
}

/// Refuse a user config that another user could have written: the file or its directory
/// owned by someone else (other than root), or writable by the group or others. Missing is
/// fine (the layer is optional).
pub fn check_owned(path: &Path) -> Result<(), ConfigError> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid cannot fail and touches no memory.
    let me = unsafe { libc::getuid() };
    let dir = path.parent().unwrap_or(path);
    for checked in [dir, path] {
        let Ok(meta) = std::fs::symlink_metadata(checked) else {
            continue;
        };
        let owner = meta.uid();
        let problem = if owner != me && owner != 0 {
            Some(format!("belongs to another user (uid {owner})"))
        } else if meta.mode() & 0o022 != 0 && !meta.file_type().is_symlink() {
            Some(format!(
                "can be written by {} (mode {:o})",
                if meta.mode() & 0o002 != 0 {
                    "anyone"
                } else {
                    "its group"
                },
                meta.mode() & 0o777
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(ConfigError::Parse {
                path: checked.to_path_buf(),
                message: format!(
                    "{problem}, so someone else could decide what your pods may do; seedpod \
                     does not read it. Fix it with `chmod go-w {}`{}",
                    checked.display(),
                    if owner != me && owner != 0 {
                        format!(" and `chown {me} {}`", checked.display())
                    } else {
                        String::new()
                    }
                ),
            });
        }
    }
    Ok(())
}

/// Parse config text; `path` is only used in errors.
pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    let mut file: ConfigFile = toml::from_str(text).map_err(|err| ConfigError::Parse {
        path: path.to_path_buf(),
        message: explain(&err, text),
    })?;
    if let Some(approvals) = &mut file.approvals {
        approvals.locate(text);
    }
    Ok(file)
}

/// toml's message plus the line number, and a pointed hint for the one mistake people make
/// most: putting the key itself in the file.
fn explain(err: &toml::de::Error, text: &str) -> String {
    let mut message = err.message().trim_end().to_owned();
    if let Some(span) = err.span() {
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        message = format!("line {line}: {message}");
    }
    if message.contains("unknown field `api_key`") {
        message.push_str(
            "; API keys are never read from config files: set api_key_env to the name of the environment variable that holds the key",
        );
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{GuardMode, Policy};

    fn parse_str(text: &str) -> Result<ConfigFile, ConfigError> {
        parse(Path::new("/x/config.toml"), text)
    }

    #[test]
    fn every_key_parses() {
        let file = parse_str(
            r#"
provider = "openai"
model = "qwen3:8b"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "MY_KEY"
temperature = 0.2
max_tokens = 4096
context_window = 32768
script = "demo.jsonl"

[timeouts]
connect_ms = 5000
idle_read_ms = 90000

[retry]
max_retries = 5
base_delay_ms = 500
max_delay_ms = 10000

[logging]
level = "debug"
file = "custom.log"
rotation = "size"
max_size_mb = 20
keep_days = 3

[approvals]
read_file = "allow"
write_file = "ask"
edit_file = "ask"
list_dir = "allow"
glob = "allow"
grep = "allow"
shell = "deny"
spawn_pod = "ask"
send_to_pod = "allow"
read_pod_output = "allow"
list_pods = "allow"
stop_pod = "deny"

[scope]
read = ["~/notes"]
write = []
deny = [".env", "secrets"]

[shell]
timeout_secs = 120
max_timeout_secs = 600

[system_prompt]
identity_file = "identity.md"

[input]
guard = "block"
max_message_chars = 32000

[children]
wake = false

[context]
compact_at = 0.8
soft_trim_at = 0.25
hard_clear_at = 0.5
keep_last_assistants = 4
summary_model = "small-model"
memory_flush = true
probe = false

[context.windows]
"qwen3" = 40960
"my-finetune" = 8192
"#,
        )
        .unwrap();
        assert_eq!(file.provider, Some(ProviderChoice::Openai));
        assert_eq!(file.temperature, Some(0.2));
        assert_eq!(file.retry.unwrap().max_retries, Some(5));
        let logging = file.logging.unwrap();
        assert_eq!(logging.level, Some(LogLevel::Debug));
        assert_eq!(logging.rotation, Some(Rotation::Size));
        assert_eq!(file.timeouts.unwrap().idle_read_ms, Some(90_000));
        let approvals = file.approvals.unwrap();
        assert_eq!(approvals.get("write_file"), Some(Policy::Ask));
        assert_eq!(approvals.get("shell"), Some(Policy::Deny));
        assert_eq!(approvals.get("spawn_pod"), Some(Policy::Ask));
        assert_eq!(approvals.get("stop_pod"), Some(Policy::Deny));
        let shell = approvals.tools.iter().find(|k| k.tool == "shell").unwrap();
        assert_eq!(shell.line, 34, "each key knows its line, for errors");
        let scope = file.scope.unwrap();
        assert_eq!(scope.write, Some(Vec::new()));
        assert_eq!(scope.deny.unwrap().len(), 2);
        assert_eq!(file.shell.unwrap().max_timeout_secs, Some(600));
        let identity = file.system_prompt.unwrap().identity_file;
        assert_eq!(identity.as_deref(), Some(Path::new("identity.md")));
        assert_eq!(file.input.unwrap().guard, Some(GuardMode::Block));
        assert_eq!(file.children.unwrap().wake, Some(false));
        assert_eq!(file.context_window, Some(32_768));
        let context = file.context.unwrap();
        assert_eq!(context.compact_at, Some(0.8));
        assert_eq!(context.keep_last_assistants, Some(4));
        assert_eq!(context.summary_model.as_deref(), Some("small-model"));
        assert_eq!(context.probe, Some(false));
        let windows = context.windows.unwrap();
        assert_eq!(windows.get("qwen3"), Some(&40_960));
        assert_eq!(windows.len(), 2);
    }

    #[test]
    fn unknown_key_names_the_key_and_line() {
        let err = parse_str("provider = \"openai\"\nmodle = \"x\"\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/x/config.toml"), "{text}");
        assert!(text.contains("line 2"), "{text}");
        assert!(text.contains("modle"), "{text}");
        assert!(
            !text.contains("API keys"),
            "the key hint is only for `api_key`: {text}"
        );
    }

    #[test]
    fn an_api_key_in_the_file_is_refused_with_the_way_out() {
        let err = parse_str("api_key = \"sk-secret\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("api_key_env"), "{err}");
        assert!(!err.contains("sk-secret"), "the key is not echoed: {err}");
    }

    #[test]
    fn bad_enum_value_is_an_error() {
        let err = parse_str("provider = \"gemini\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("gemini") || err.contains("unknown variant"),
            "{err}"
        );
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn missing_file_is_no_layer() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(&dir.path().join("config.toml")).unwrap(), None);
    }

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(
            ProviderChoice::parse("OpenAI"),
            Some(ProviderChoice::Openai)
        );
        assert_eq!(LogLevel::parse(" debug "), Some(LogLevel::Debug));
        assert_eq!(ProviderChoice::parse("gemini"), None);
    }
}

#[cfg(test)]
mod ownership_tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_config_someone_else_can_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir(&config).unwrap();
        let path = config.join(CONFIG_FILE);
        assert!(check_owned(&path).is_ok(), "a missing file is fine");
        std::fs::write(&path, "[approvals]\nshell = \"allow\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(check_owned(&path).is_ok());

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = check_owned(&path).unwrap_err().to_string();
        assert!(
            err.contains("can be written by anyone") && err.contains("chmod go-w"),
            "{err}"
        );

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o775)).unwrap();
        let err = check_owned(&path).unwrap_err().to_string();
        assert!(err.contains("its group"), "{err}");
    }
}
