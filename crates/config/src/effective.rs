//! Resolving the layers into one effective configuration, each value with its source.
//!
//! Order, lowest first: built-in defaults, `config.toml` in the config directory,
//! `.seedpod/config.toml` in the pod's working directory, environment variables, flags. Each
//! key is layered on its own, so a project file that sets only `model` keeps the user's
//! `provider`.

use std::path::{Path, PathBuf};

use seedpod_protocol::ToolDecl;

use crate::agent::{GuardMode, InputSettings, ScopeSettings, ShellSettings, SystemPromptSettings};
use crate::agent_loop::LoopSettings;
use crate::approvals::Approvals;
use crate::children::ChildrenSettings;
use crate::context::{ContextSettings, check_window};
use crate::error::ConfigError;
use crate::file::{self, CONFIG_FILE, ConfigFile, LogLevel, PROJECT_DIR, ProviderChoice, Rotation};
use crate::loosen::{self, Ignored};
use crate::mcp::McpSettings;
use crate::notify::NotifySettings;
use crate::source::{Setting, Source, layer_opt};
use crate::trust::{self, ProjectTrust, TrustStore};
use crate::tui::TuiSettings;

pub const PROVIDER_ENV: &str = "SEEDPOD_PROVIDER";
pub const MODEL_ENV: &str = "SEEDPOD_MODEL";
/// The OpenAI provider's endpoint when nothing more specific sets `base_url`.
pub const OPENAI_BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// The pod log's level (overrides `[logging] level`).
pub const LOG_ENV: &str = "SEEDPOD_LOG";
/// The input guard's mode (overrides `[input] guard`).
pub const INPUT_GUARD_ENV: &str = "SEEDPOD_INPUT_GUARD";
/// The home directory, for a leading `~` in `[scope]` paths.
pub const HOME_ENV: &str = "HOME";
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";

// The defaults below are the only ones: the engine's `Default`s (its HTTP client, retry policy)
// use them too.

/// How long to wait for a TCP (and TLS) connection unless configured otherwise. Generous for a
/// slow network, short enough that a dead address is reported quickly.
pub const DEFAULT_CONNECT_MS: u64 = 10_000;
/// How long a response may go without a single byte unless configured otherwise. Hosted APIs
/// send keep-alives far more often than this; reasoning models can think silently, and a local
/// server reading a long prompt on a CPU may be silent, for minutes before the first byte, so
/// this errs long. A hung stream still ends.
pub const DEFAULT_IDLE_READ_MS: u64 = 300_000;
/// Retries after the first attempt unless configured otherwise.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Retried when the configuration does not say: timeouts, rate limits, overload and the
/// gateway faults of proxies in front of a model server (Cloudflare's 520–524), plus
/// Anthropic's 529 "overloaded". 501 and 505 are missing on purpose: no wait fixes them.
pub const DEFAULT_RETRYABLE_STATUSES: [u16; 12] =
    [408, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529];
/// The first retry's wait before jitter, unless configured otherwise.
pub const DEFAULT_BASE_DELAY_MS: u64 = 1_000;
/// The longest backoff wait, unless configured otherwise.
pub const DEFAULT_MAX_DELAY_MS: u64 = 30_000;
pub const DEFAULT_LOG_MAX_SIZE_MB: u64 = 50;
pub const DEFAULT_LOG_KEEP_DAYS: u32 = 7;

/// More retries than this is a stall, not resilience.
pub const MAX_RETRIES_LIMIT: u32 = 10;
/// Providers accept temperatures in [0, 2] (Anthropic: [0, 1]).
pub const MAX_TEMPERATURE: f64 = 2.0;

/// What the command line says, the highest layer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub provider: Option<ProviderChoice>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// Already absolute (the CLI resolves it against the directory it runs in).
    pub script: Option<PathBuf>,
}

/// Where to look, how to read the environment (a function, so tests need no process env), and
/// which tools there are.
pub struct Inputs<'a> {
    pub config_dir: &'a Path,
    pub cwd: &'a Path,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub flags: Overrides,
    /// The tools a pod can be given (the pod's catalogue): their names are the `[approvals]`
    /// keys, their declarations the defaults.
    pub tools: &'a [&'static ToolDecl],
}

/// Read the environment of this process; empty values count as unset.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

#[derive(Debug, Clone, PartialEq)]
pub struct Timeouts {
    pub connect_ms: Setting<u64>,
    pub idle_read_ms: Setting<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    pub max_retries: Setting<u32>,
    pub base_delay_ms: Setting<u64>,
    pub max_delay_ms: Setting<u64>,
    /// Each an error status, 400–599; empty: never retry a status.
    pub retryable_statuses: Setting<Vec<u16>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Logging {
    pub level: Setting<LogLevel>,
    /// `None`: `state/logs/<name>.log`.
    pub file: Option<Setting<PathBuf>>,
    pub rotation: Setting<Rotation>,
    pub max_size_mb: Setting<u64>,
    pub keep_days: Setting<u32>,
    /// Also write the log lines to stdout (a pod run in the foreground: systemd, a container).
    pub stdout: Setting<bool>,
}

/// A config file that was looked for, and whether it was there.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub path: PathBuf,
    pub found: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    pub provider: Option<Setting<ProviderChoice>>,
    model: Option<Setting<String>>,
    pub base_url: Option<Setting<String>>,
    api_key_env: Option<Setting<String>>,
    pub temperature: Option<Setting<f64>>,
    pub max_tokens: Option<Setting<u32>>,
    pub script: Option<Setting<PathBuf>>,
    pub timeouts: Timeouts,
    pub retry: Retry,
    pub logging: Logging,
    pub approvals: Approvals,
    pub scope: ScopeSettings,
    pub shell: ShellSettings,
    pub system_prompt: SystemPromptSettings,
    pub input: InputSettings,
    pub children: ChildrenSettings,
    pub context: ContextSettings,
    /// `[loop]` and `[tasks]`.
    pub agent_loop: LoopSettings,
    /// `[notify]`: how a notification is put before the model.
    pub notify: NotifySettings,
    /// `[tui]`: the terminal app's own preferences.
    pub tui: TuiSettings,
    /// `[mcp.servers.NAME]`: the MCP servers a pod starts.
    pub mcp: McpSettings,
    /// `[remote]`: how pods on other machines are reached.
    pub remote: crate::remote::RemoteSettings,
    /// `[storage]`: when a pod archives its earlier segments.
    pub storage: crate::storage::StorageSettings,
    /// `[tool_search]`: when MCP tools wait behind `tool_search`.
    pub tool_search: crate::tool_search::ToolSearchSettings,
    /// `[responses]`: what the `openai-responses` provider asks beyond the history.
    pub responses: crate::responses::ResponsesSettings,
    /// `[hooks]`: the person's commands run at points of a pod's life (`hooks.rs`).
    pub hooks: crate::hooks::HooksSettings,
    /// The user file, then the project file.
    pub layers: Vec<Layer>,
    /// Whether the project file may loosen policy (`loosen.rs`, `trust.rs`).
    pub project_trust: ProjectTrust,
    /// The project file's loosening keys left out because nobody trusted it.
    pub ignored: Vec<Ignored>,
}

/// Whether and where the pod needs an API key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRequirement {
    pub var: Setting<String>,
    /// Anthropic always needs one; OpenAI-compatible local servers need none unless the
    /// configuration names a variable explicitly.
    pub required: bool,
}

impl Effective {
    /// Resolve every layer. Errors name the file and line, or the variable, and the key.
    pub fn resolve(inputs: &Inputs<'_>) -> Result<Effective, ConfigError> {
        let user_path = inputs.config_dir.join(CONFIG_FILE);
        let project_path = inputs.cwd.join(PROJECT_DIR).join(CONFIG_FILE);
        // The person's own file decides what every pod may do: someone else must not be able
        // to write it (the project's file is untrusted data anyway).
        file::check_owned(&user_path)?;
        let user = file::load(&user_path)?;
        let project = file::load_bytes(&project_path)?;
        let mut eff = Effective::defaults(inputs.tools);
        eff.layers = vec![
            Layer {
                path: user_path.clone(),
                found: user.is_some(),
            },
            Layer {
                path: project_path.clone(),
                found: project.is_some(),
            },
        ];
        if let Some(file) = user {
            eff.apply_file(file, &Source::UserFile(user_path))?;
        }
        if let Some((bytes, mut file)) = project {
            // `api` is folded into `provider` first, so the trust check sees the provider it picks.
            let source = Source::ProjectFile(project_path.clone());
            crate::api::fold(&mut file, eff.provider.as_ref().map(|p| p.value), &source)?;
            let file = eff.restrain_project(inputs, &bytes, file)?;
            eff.apply_file(file, &Source::ProjectFile(project_path))?;
        }
        eff.apply_env(inputs.env, inputs.flags.provider)?;
        eff.apply_flags(inputs.flags.clone());
        let home = (inputs.env)(HOME_ENV).map(PathBuf::from);
        eff.scope.expand_home(home.as_deref())?;
        eff.mcp.resolve()?;
        eff.validate()?;
        eff.context.child_tools_in_compact = eff.approvals.asked_for_in_small_prompt(inputs.tools);
        Ok(eff)
    }

    /// The project file as it may apply: whole when it loosens nothing or a person trusted
    /// these exact bytes; otherwise without its loosening keys, which are recorded in
    /// `ignored`. The trust store is read only when it matters.
    fn restrain_project(
        &mut self,
        inputs: &Inputs<'_>,
        bytes: &[u8],
        file: ConfigFile,
    ) -> Result<ConfigFile, ConfigError> {
        let mut restrained = file.clone();
        let ignored = loosen::restrain(&mut restrained, self, inputs.cwd);
        if ignored.is_empty() {
            self.project_trust = ProjectTrust::NotNeeded;
            return Ok(file);
        }
        let store = TrustStore::load(inputs.config_dir)?;
        if store.trusts(&trust::project_key(inputs.cwd)?, bytes) {
            self.project_trust = ProjectTrust::Trusted;
            return Ok(file);
        }
        let dir = inputs
            .cwd
            .canonicalize()
            .unwrap_or_else(|_| inputs.cwd.to_path_buf());
        self.project_trust = ProjectTrust::Untrusted { dir };
        self.ignored = ignored;
        Ok(restrained)
    }

    /// The built-in defaults, with `tools` at their declared policies.
    pub(crate) fn defaults(tools: &[&'static ToolDecl]) -> Effective {
        Effective {
            provider: None,
            model: None,
            base_url: None,
            api_key_env: None,
            temperature: None,
            max_tokens: None,
            script: None,
            timeouts: Timeouts {
                connect_ms: Setting::default(DEFAULT_CONNECT_MS),
                idle_read_ms: Setting::default(DEFAULT_IDLE_READ_MS),
            },
            retry: Retry {
                max_retries: Setting::default(DEFAULT_MAX_RETRIES),
                base_delay_ms: Setting::default(DEFAULT_BASE_DELAY_MS),
                max_delay_ms: Setting::default(DEFAULT_MAX_DELAY_MS),
                retryable_statuses: Setting::default(DEFAULT_RETRYABLE_STATUSES.to_vec()),
            },
            logging: Logging {
                level: Setting::default(LogLevel::Info),
                file: None,
                rotation: Setting::default(Rotation::Daily),
                max_size_mb: Setting::default(DEFAULT_LOG_MAX_SIZE_MB),
                keep_days: Setting::default(DEFAULT_LOG_KEEP_DAYS),
                stdout: Setting::default(false),
            },
            approvals: Approvals::defaults(tools),
            scope: ScopeSettings::defaults(),
            shell: ShellSettings::defaults(),
            system_prompt: SystemPromptSettings {
                identity_file: None,
            },
            input: InputSettings::defaults(),
            children: ChildrenSettings::defaults(),
            context: ContextSettings::default(),
            agent_loop: LoopSettings::defaults(),
            tool_search: crate::tool_search::ToolSearchSettings::defaults(),
            responses: crate::responses::ResponsesSettings::defaults(),
            hooks: crate::hooks::HooksSettings::default(),
            notify: NotifySettings::defaults(),
            tui: TuiSettings::defaults(),
            mcp: McpSettings::default(),
            remote: crate::remote::RemoteSettings::defaults(),
            storage: crate::storage::StorageSettings::defaults(),
            layers: Vec::new(),
            project_trust: ProjectTrust::NoFile,
            ignored: Vec::new(),
        }
    }

    pub(crate) fn apply_file(
        &mut self,
        mut file: ConfigFile,
        source: &Source,
    ) -> Result<(), ConfigError> {
        crate::api::fold(&mut file, self.provider.as_ref().map(|p| p.value), source)?;
        let dir = match source {
            Source::UserFile(path) | Source::ProjectFile(path) => {
                path.parent().map(Path::to_path_buf).unwrap_or_default()
            }
            Source::Default
            | Source::Env(_)
            | Source::Flag(_)
            | Source::Detected(_)
            | Source::Recorded => PathBuf::new(),
        };
        layer_opt(&mut self.provider, file.provider, source);
        layer_opt(&mut self.model, file.model, source);
        layer_opt(&mut self.base_url, file.base_url, source);
        layer_opt(&mut self.api_key_env, file.api_key_env, source);
        layer_opt(&mut self.temperature, file.temperature, source);
        layer_opt(&mut self.max_tokens, file.max_tokens, source);
        self.context.layer_window(file.context_window, source)?;
        // A script named in a file is relative to that file, not to wherever seedpod runs.
        layer_opt(&mut self.script, file.script.map(|s| dir.join(s)), source);
        if let Some(t) = file.timeouts {
            self.timeouts.connect_ms.layer(t.connect_ms, source);
            self.timeouts.idle_read_ms.layer(t.idle_read_ms, source);
        }
        if let Some(r) = file.retry {
            self.retry.max_retries.layer(r.max_retries, source);
            self.retry.base_delay_ms.layer(r.base_delay_ms, source);
            self.retry.max_delay_ms.layer(r.max_delay_ms, source);
            self.retry
                .retryable_statuses
                .layer(r.retryable_statuses, source);
        }
        if let Some(l) = file.logging {
            self.logging.level.layer(l.level, source);
            layer_opt(&mut self.logging.file, l.file, source);
            self.logging.rotation.layer(l.rotation, source);
            self.logging.max_size_mb.layer(l.max_size_mb, source);
            self.logging.keep_days.layer(l.keep_days, source);
            self.logging.stdout.layer(l.stdout, source);
        }
        if let Some(a) = file.approvals {
            self.approvals.layer(a, source)?;
        }
        if let Some(s) = file.scope {
            self.scope.layer(s, source);
        }
        if let Some(s) = file.shell {
            self.shell.layer(s, source);
        }
        if let Some(p) = file.system_prompt {
            self.system_prompt.layer(p, &dir, source);
        }
        if let Some(i) = file.input {
            self.input.layer(i, source);
        }
        if let Some(l) = file.agent_loop {
            self.agent_loop.layer_loop(l, source)?;
        }
        if let Some(t) = file.tasks {
            self.agent_loop.layer_tasks(t, source)?;
        }
        if let Some(t) = file.tool_search {
            self.tool_search.layer(t, source)?;
        }
        if let Some(n) = file.notify {
            self.notify.layer(n, source);
        }
        if let Some(s) = file.storage {
            self.storage.layer(s, source)?;
        }
        if let Some(t) = file.tui {
            self.tui.layer(t, source);
        }
        if let Some(m) = file.mcp {
            self.mcp.layer(m, source);
        }
        if let Some(r) = file.remote {
            self.remote.layer(r, source)?;
        }
        if let Some(c) = file.children {
            self.children.layer(c, source)?;
        }
        if let Some(c) = file.context {
            self.context.layer(c, source)?;
        }
        if let Some(r) = file.responses {
            self.responses.layer(r, source);
        }
        if let Some(h) = file.hooks {
            self.hooks.layer(h, source)?;
        }
        Ok(())
    }

    /// `flag_provider` decides whether `OPENAI_BASE_URL` applies, before the flags are layered.
    fn apply_env(
        &mut self,
        env: &dyn Fn(&str) -> Option<String>,
        flag_provider: Option<ProviderChoice>,
    ) -> Result<(), ConfigError> {
        if let Some(value) = env(PROVIDER_ENV) {
            let provider = ProviderChoice::parse(&value).ok_or_else(|| ConfigError::Invalid {
                key: "provider".into(),
                value: value.clone(),
                origin: Source::Env(PROVIDER_ENV),
                reason: "is not a provider; use anthropic, openai, openai-responses or scripted"
                    .into(),
            })?;
            self.provider = Some(Setting::new(provider, Source::Env(PROVIDER_ENV)));
        }
        layer_opt(&mut self.model, env(MODEL_ENV), &Source::Env(MODEL_ENV));
        if let Some(value) = env(LOG_ENV) {
            let level = LogLevel::parse(&value).ok_or_else(|| ConfigError::Invalid {
                key: "logging.level".into(),
                value: value.clone(),
                origin: Source::Env(LOG_ENV),
                reason: "is not a level; use error, warn, info, debug or trace".into(),
            })?;
            self.logging.level = Setting::new(level, Source::Env(LOG_ENV));
        }
        if let Some(value) = env(INPUT_GUARD_ENV) {
            let guard = GuardMode::parse(&value).ok_or_else(|| ConfigError::Invalid {
                key: "input.guard".into(),
                value: value.clone(),
                origin: Source::Env(INPUT_GUARD_ENV),
                reason: "is not a guard mode; use off, log, warn or block".into(),
            })?;
            self.input.guard = Setting::new(guard, Source::Env(INPUT_GUARD_ENV));
        }
        // OPENAI_BASE_URL is the OpenAI SDKs' convention; it only means something for that provider.
        let provider = flag_provider.or(self.provider.as_ref().map(|p| p.value));
        if matches!(
            provider,
            Some(ProviderChoice::Openai | ProviderChoice::OpenaiResponses)
        ) {
            layer_opt(
                &mut self.base_url,
                env(OPENAI_BASE_URL_ENV),
                &Source::Env(OPENAI_BASE_URL_ENV),
            );
        }
        Ok(())
    }

    fn apply_flags(&mut self, flags: Overrides) {
        layer_opt(
            &mut self.provider,
            flags.provider,
            &Source::Flag("provider"),
        );
        layer_opt(&mut self.model, flags.model, &Source::Flag("model"));
        layer_opt(
            &mut self.base_url,
            flags.base_url,
            &Source::Flag("base-url"),
        );
        layer_opt(
            &mut self.temperature,
            flags.temperature,
            &Source::Flag("temperature"),
        );
        layer_opt(
            &mut self.max_tokens,
            flags.max_tokens,
            &Source::Flag("max-tokens"),
        );
        layer_opt(&mut self.script, flags.script, &Source::Flag("script"));
    }

    pub(crate) fn api_key_env(&self) -> Option<&Setting<String>> {
        self.api_key_env.as_ref()
    }

    /// The warning a person must see when an untrusted project file was partly ignored: which
    /// keys, and the command that applies them. `None` when nothing was ignored.
    pub fn untrusted_warning(&self) -> Option<String> {
        let ProjectTrust::Untrusted { dir } = &self.project_trust else {
            return None;
        };
        if self.ignored.is_empty() {
            return None;
        }
        let keys: Vec<&str> = self.ignored.iter().map(|i| i.key.as_str()).collect();
        Some(format!(
            "{} loosens policy ({}) and is not trusted, so those keys are ignored; if you wrote it, `seedpod trust {}` applies it",
            dir.join(PROJECT_DIR).join(CONFIG_FILE).display(),
            keys.join(", "),
            dir.display()
        ))
    }

    /// The model to use: configured, or the provider's default.
    pub fn model(&self) -> Option<Setting<String>> {
        if let Some(model) = &self.model {
            return Some(model.clone());
        }
        let provider = self.provider.as_ref()?.value;
        Some(Setting::default(default_model(provider).to_owned()))
    }

    /// The variable holding the API key, and whether the pod cannot work without it.
    pub fn key_requirement(&self) -> Option<KeyRequirement> {
        let provider = self.provider.as_ref()?.value;
        if let Some(var) = &self.api_key_env {
            return Some(KeyRequirement {
                var: var.clone(),
                required: true,
            });
        }
        let var = match provider {
            ProviderChoice::Anthropic => ANTHROPIC_KEY_ENV,
            ProviderChoice::Openai | ProviderChoice::OpenaiResponses => OPENAI_KEY_ENV,
            ProviderChoice::Scripted => return None,
        };
        // The Responses API is OpenAI's own: without a base URL the requests go to OpenAI,
        // which answers nothing without a key. With one, it may be a local server that wants none.
        let required = match provider {
            ProviderChoice::Anthropic => true,
            ProviderChoice::OpenaiResponses => self.base_url.is_none(),
            ProviderChoice::Openai | ProviderChoice::Scripted => false,
        };
        Some(KeyRequirement {
            var: Setting::default(var.to_owned()),
            required,
        })
    }

    /// Record that the provider, endpoint and model were found by probing for a local server.
    pub fn use_detected(&mut self, what: &str, base_url: String, model: Option<String>) {
        let source = Source::Detected(what.to_owned());
        self.provider = Some(Setting::new(ProviderChoice::Openai, source.clone()));
        self.base_url = Some(Setting::new(base_url, source.clone()));
        if self.model.is_none() {
            layer_opt(&mut self.model, model, &source);
        }
    }

    /// An existing pod keeps what it was created with: the request-shaping settings (they are
    /// in its log, so a restore is byte-identical) and its endpoint and script — unless a flag
    /// names a new endpoint or script (the server moved). Files and the environment still set
    /// the operational keys: key variable, timeouts, retry, logging, the agent's settings
    /// (approvals, scope, shell, system prompt, input, children) and `[context]` with
    /// `context_window` (what the pod decides from them is in its log).
    pub fn keep_recorded(&mut self, recorded: Recorded) {
        let source = Source::Recorded;
        let setting = |value| Setting::new(value, source.clone());
        self.provider = Some(Setting::new(recorded.provider, source.clone()));
        self.model = Some(Setting::new(recorded.model, source.clone()));
        self.temperature = recorded.temperature.map(setting);
        self.max_tokens = recorded.max_tokens.map(|v| Setting::new(v, source.clone()));
        if !is_flag(&self.base_url) {
            self.base_url = recorded.base_url.map(|v| Setting::new(v, source.clone()));
        }
        if !is_flag(&self.script) {
            self.script = recorded.script.map(|v| Setting::new(v, source.clone()));
        }
    }

    /// An existing pod keeps the `[responses]` options it was created with (`pod.json`), as
    /// `keep_recorded` keeps its model: they shape every request body.
    pub fn keep_recorded_responses(
        &mut self,
        recorded: Option<seedpod_protocol::ResponsesOptions>,
    ) {
        self.responses.keep_recorded(recorded);
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(t) = &self.temperature
            && !(t.value.is_finite() && (0.0..=MAX_TEMPERATURE).contains(&t.value))
        {
            return Err(ConfigError::invalid(
                "temperature",
                t,
                "must be between 0 and 2",
            ));
        }
        if let Some(v) = &self.max_tokens
            && v.value == 0
        {
            return Err(ConfigError::invalid("max_tokens", v, "must be at least 1"));
        }
        if let Some(window) = self.context.window_setting() {
            check_window("context_window".into(), &window)?;
        }
        if let Some(m) = &self.model
            && m.value.trim().is_empty()
        {
            return Err(ConfigError::invalid("model", m, "must not be empty"));
        }
        if let Some(url) = &self.base_url
            && !(url.value.starts_with("http://") || url.value.starts_with("https://"))
        {
            return Err(ConfigError::invalid(
                "base_url",
                url,
                "must start with http:// or https://",
            ));
        }
        if let Some(var) = &self.api_key_env
            && !is_env_var_name(&var.value)
        {
            return Err(ConfigError::invalid(
                "api_key_env",
                var,
                "must be the NAME of an environment variable (letters, digits, _), not the key itself",
            ));
        }
        for (key, value) in [
            ("timeouts.connect_ms", &self.timeouts.connect_ms),
            ("timeouts.idle_read_ms", &self.timeouts.idle_read_ms),
            ("retry.base_delay_ms", &self.retry.base_delay_ms),
            ("logging.max_size_mb", &self.logging.max_size_mb),
        ] {
            if value.value == 0 {
                return Err(ConfigError::invalid(key, value, "must be at least 1"));
            }
        }
        if self.retry.max_delay_ms.value < self.retry.base_delay_ms.value {
            return Err(ConfigError::invalid(
                "retry.max_delay_ms",
                &self.retry.max_delay_ms,
                "must not be below retry.base_delay_ms",
            ));
        }
        if self.retry.max_retries.value > MAX_RETRIES_LIMIT {
            return Err(ConfigError::invalid(
                "retry.max_retries",
                &self.retry.max_retries,
                "is too many (at most 10): a provider that needs more is down",
            ));
        }
        let statuses = &self.retry.retryable_statuses;
        if let Some(bad) = statuses.value.iter().find(|s| !(400..=599).contains(*s)) {
            let listed: Vec<String> = statuses.value.iter().map(u16::to_string).collect();
            return Err(ConfigError::Invalid {
                key: "retry.retryable_statuses".into(),
                value: format!("[{}]", listed.join(", ")),
                origin: statuses.source.clone(),
                reason: format!("{bad} is not an error status; list HTTP statuses from 400 to 599"),
            });
        }
        if self.logging.keep_days.value == 0 {
            return Err(ConfigError::invalid(
                "logging.keep_days",
                &self.logging.keep_days,
                "must be at least 1",
            ));
        }
        self.shell.validate()?;
        self.approvals.validate()?;
        self.input.validate()?;
        self.agent_loop.validate()?;
        self.tool_search.validate()?;
        self.notify.validate()?;
        self.storage.validate()?;
        self.children.validate()?;
        self.context.validate()
    }
}

/// What an existing pod was created with (from its `pod.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub provider: ProviderChoice,
    pub model: String,
    pub base_url: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub script: Option<PathBuf>,
}

fn is_flag<T>(setting: &Option<Setting<T>>) -> bool {
    matches!(
        setting,
        Some(Setting {
            source: Source::Flag(_),
            ..
        })
    )
}

/// The model a provider uses when none is configured.
pub fn default_model(provider: ProviderChoice) -> &'static str {
    match provider {
        ProviderChoice::Anthropic => "claude-sonnet-4-5",
        ProviderChoice::Openai => "gpt-4o",
        ProviderChoice::OpenaiResponses => "gpt-5",
        ProviderChoice::Scripted => "script",
    }
}

fn is_env_var_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
