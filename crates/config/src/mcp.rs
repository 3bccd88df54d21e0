//! `[mcp.servers.NAME]`: the MCP servers whose tools a pod offers (docs/configuration.md
//! §MCP servers).
//!
//! A server is a command the pod starts and speaks to on its stdin and stdout (`command`,
//! `args`, `env`, `env_vars`, `cwd`), or a Streamable HTTP endpoint (`url`, `headers`,
//! `bearer_token_env`). Header values and tokens are *named*, never written: the file says
//! which environment variable holds them, so a secret never lands in a config file, `config
//! show`, `pod.json` or the log.
//!
//! Keys layer one by one like the rest of the file (a project file may set
//! `enabled = false` on a user's server), except that a server entry in an untrusted project
//! file that would start or reach anything is left out whole (`loosen.rs`): a server runs code
//! with the person's rights, so only a person adds one.
//!
//! Which tools of a server run without asking is `[approvals]`' business (`mcp__NAME__TOOL`,
//! `mcp__NAME__*`, see `agent.rs`); `trust_read_only` lets the tools the server itself calls
//! read-only through.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::error::ConfigError;
use crate::source::Source;

/// How long a server may take to start and answer `initialize` and `tools/list`. `npx` and
/// `uvx` fetch packages on a first start, which takes a while.
pub const DEFAULT_STARTUP_TIMEOUT_SECS: u64 = 30;
/// How long one tool call may run before it is cancelled with an error result.
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 300;
/// How many idle limits (`tool_timeout_secs`) one call may run in all by default
/// (`tool_max_secs`), however often it reports progress.
pub const DEFAULT_TOOL_MAX_TIMEOUTS: u32 = 10;
/// What of one tool result reaches the model by default (`max_output`), in bytes: the first
/// and last halves, as for `shell`.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 200 * 1024;
/// The bounds of `max_output`: under 1 KiB a result says nothing; over 16 MiB one result
/// would crowd out the conversation (and the frames clients read).
pub const MIN_MAX_OUTPUT_BYTES: u64 = 1024;
pub const MAX_MAX_OUTPUT_BYTES: u64 = 16 * 1024 * 1024;
/// The longest either limit may be set to: a day.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;
/// A server's name is part of every tool name the model sees (`mcp__NAME__TOOL`), and
/// providers allow 64 characters in all.
pub const MAX_SERVER_NAME_CHARS: usize = 24;

/// `[mcp]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpFile {
    pub servers: Option<BTreeMap<String, McpServerFile>>,
    /// Bytes of one tool result the model reads, for every server that sets none.
    pub max_output: Option<u64>,
    /// How long one call may run in all, for every server that sets none.
    pub tool_max_secs: Option<u64>,
}

/// One `[mcp.servers.NAME]` table as written. Every key is optional so a higher layer can set
/// just one (`enabled = false`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerFile {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// Variables set for the server, written out (not secrets: use `env_vars` for those).
    pub env: Option<BTreeMap<String, String>>,
    /// Variables passed through from the pod's environment by name.
    pub env_vars: Option<Vec<String>>,
    /// The server's working directory; relative to the pod's. The pod's by default.
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    /// Header name → the environment variable holding its value.
    pub headers: Option<BTreeMap<String, String>>,
    /// The environment variable holding a bearer token (`Authorization: Bearer …`).
    pub bearer_token_env: Option<String>,
    pub enabled: Option<bool>,
    /// A pod must not run without this server: `seedpod start` fails when it cannot start.
    pub required: Option<bool>,
    pub trust_read_only: Option<bool>,
    pub startup_timeout_secs: Option<u64>,
    pub tool_timeout_secs: Option<u64>,
    /// How long one call may run in all, progress or not (`[mcp] tool_max_secs`, else ten
    /// times `tool_timeout_secs`).
    pub tool_max_secs: Option<u64>,
    /// Bytes of one of its tool results the model reads (`[mcp] max_output` otherwise).
    pub max_output: Option<u64>,
    /// `false`: never log in to this url server with OAuth (a 401 fails it).
    pub oauth: Option<bool>,
    /// An OAuth client id registered with the server's authorization server by hand, for
    /// servers that offer no registration of their own.
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret, if it has one.
    pub client_secret_env: Option<String>,
    /// An https URL of a client ID metadata document to log in as, where the authorization
    /// server takes them.
    pub client_metadata_url: Option<String>,
    /// The OAuth scopes to ask for (otherwise what the server's challenge or metadata names).
    pub scopes: Option<Vec<String>>,
    /// How the pod gets its token: `authorization_code` (a person logs in, the default) or
    /// `client_credentials` (a machine client: no person, no browser).
    pub grant: Option<McpGrant>,
    /// A file holding the client's secret (instead of `client_secret_env`).
    pub client_secret_file: Option<PathBuf>,
    /// A PEM (PKCS#8) private key the client signs its JWT assertions with
    /// (`private_key_jwt`, client credentials only).
    pub client_key_file: Option<PathBuf>,
    /// Cross-app access: the command (program and arguments, no shell) that prints a fresh ID
    /// token from the person's enterprise identity provider.
    pub id_token_command: Option<Vec<String>>,
    /// Cross-app access: the identity provider's token endpoint (the token exchange).
    pub idp_token_endpoint: Option<String>,
    /// Cross-app access: this client's id at the identity provider.
    pub idp_client_id: Option<String>,
    /// Cross-app access: the environment variable holding that client's secret.
    pub idp_client_secret_env: Option<String>,
    /// Cross-app access: a file holding that client's secret.
    pub idp_client_secret_file: Option<PathBuf>,
}

/// How a pod gets an OAuth token for a url server (docs/configuration.md §MCP OAuth).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpGrant {
    /// A person logs in with `seedpod mcp login` (authorization code with PKCE).
    #[default]
    AuthorizationCode,
    /// The pod asks the token endpoint itself, with the client's own credentials.
    ClientCredentials,
    /// Enterprise-managed (SEP-990): an ID token from the person's identity provider,
    /// exchanged there for an ID-JAG, exchanged at the server's authorization server for a
    /// token.
    CrossAppAccess,
}

impl McpGrant {
    /// The name as written in a config file.
    pub fn as_str(self) -> &'static str {
        match self {
            McpGrant::AuthorizationCode => "authorization_code",
            McpGrant::ClientCredentials => "client_credentials",
            McpGrant::CrossAppAccess => "cross_app_access",
        }
    }

    /// Whether the pod gets its token itself, with no person and no login.
    pub fn is_machine(self) -> bool {
        self != McpGrant::AuthorizationCode
    }
}

impl McpServerFile {
    /// Whether this entry would make the pod start a process or reach an endpoint, or let a
    /// server's tools run without asking: what an untrusted project may not do.
    pub(crate) fn loosens(&self) -> bool {
        self.command.is_some()
            || self.args.is_some()
            || self.env.is_some()
            || self.env_vars.is_some()
            || self.cwd.is_some()
            || self.url.is_some()
            || self.headers.is_some()
            || self.bearer_token_env.is_some()
            || self.client_id.is_some()
            || self.client_secret_env.is_some()
            || self.client_metadata_url.is_some()
            || self.scopes.is_some()
            || self.grant.is_some()
            || self.client_secret_file.is_some()
            || self.client_key_file.is_some()
            || self.id_token_command.is_some()
            || self.idp_token_endpoint.is_some()
            || self.idp_client_id.is_some()
            || self.idp_client_secret_env.is_some()
            || self.idp_client_secret_file.is_some()
            || self.oauth == Some(true)
            || self.enabled == Some(true)
            || self.trust_read_only == Some(true)
    }

    fn layer(&mut self, higher: McpServerFile) {
        fn take<T>(slot: &mut Option<T>, value: Option<T>) {
            if value.is_some() {
                *slot = value;
            }
        }
        take(&mut self.command, higher.command);
        take(&mut self.args, higher.args);
        take(&mut self.env, higher.env);
        take(&mut self.env_vars, higher.env_vars);
        take(&mut self.cwd, higher.cwd);
        take(&mut self.url, higher.url);
        take(&mut self.headers, higher.headers);
        take(&mut self.bearer_token_env, higher.bearer_token_env);
        take(&mut self.enabled, higher.enabled);
        take(&mut self.required, higher.required);
        take(&mut self.trust_read_only, higher.trust_read_only);
        take(&mut self.startup_timeout_secs, higher.startup_timeout_secs);
        take(&mut self.tool_timeout_secs, higher.tool_timeout_secs);
        take(&mut self.tool_max_secs, higher.tool_max_secs);
        take(&mut self.max_output, higher.max_output);
        take(&mut self.oauth, higher.oauth);
        take(&mut self.client_id, higher.client_id);
        take(&mut self.client_secret_env, higher.client_secret_env);
        take(&mut self.client_metadata_url, higher.client_metadata_url);
        take(&mut self.scopes, higher.scopes);
        take(&mut self.grant, higher.grant);
        take(&mut self.client_secret_file, higher.client_secret_file);
        take(&mut self.client_key_file, higher.client_key_file);
        take(&mut self.id_token_command, higher.id_token_command);
        take(&mut self.idp_token_endpoint, higher.idp_token_endpoint);
        take(&mut self.idp_client_id, higher.idp_client_id);
        take(
            &mut self.idp_client_secret_env,
            higher.idp_client_secret_env,
        );
        take(
            &mut self.idp_client_secret_file,
            higher.idp_client_secret_file,
        );
    }
}

/// How the pod reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A process the pod starts; MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        env_vars: Vec<String>,
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        url: String,
        /// Header name → environment variable name.
        headers: BTreeMap<String, String>,
        bearer_token_env: Option<String>,
    },
}

impl McpTransport {
    pub fn kind(&self) -> &'static str {
        match self {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Http { .. } => "http",
        }
    }
}

/// One resolved server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    pub name: String,
    pub transport: McpTransport,
    pub enabled: bool,
    /// `seedpod start` fails when this server cannot start.
    pub required: bool,
    pub trust_read_only: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// How long one call may run in all: progress reports start `tool_timeout` again, never
    /// this.
    pub tool_max: Duration,
    /// Bytes of one tool result the model reads; the rest is cut out of the middle.
    pub max_output: usize,
    /// How the pod logs in to a url server with OAuth (docs/configuration.md §MCP OAuth).
    pub oauth: McpOAuth,
    /// The highest layer that set anything of this server.
    pub source: Source,
}

/// A url server's OAuth settings. Tokens themselves are never configuration: `seedpod mcp
/// login` keeps them in the data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOAuth {
    /// Whether a 401 may be answered with a login (`oauth = false` turns it off).
    pub enabled: bool,
    pub client_id: Option<String>,
    pub client_secret_env: Option<String>,
    pub client_metadata_url: Option<String>,
    pub scopes: Vec<String>,
    pub grant: McpGrant,
    pub client_secret_file: Option<PathBuf>,
    pub client_key_file: Option<PathBuf>,
    /// What `grant = "cross_app_access"` needs (set exactly for that grant).
    pub cross_app: Option<CrossAppAccess>,
}

/// The identity-provider side of cross-app access (docs/configuration.md §MCP OAuth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossAppAccess {
    /// Program and arguments; run directly (a shell only if the person wrote one).
    pub id_token_command: Vec<String>,
    pub idp_token_endpoint: String,
    pub idp_client_id: String,
    pub idp_client_secret_env: Option<String>,
    pub idp_client_secret_file: Option<PathBuf>,
}

impl Default for McpOAuth {
    fn default() -> McpOAuth {
        McpOAuth {
            enabled: true,
            client_id: None,
            client_secret_env: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            grant: McpGrant::AuthorizationCode,
            client_secret_file: None,
            client_key_file: None,
            cross_app: None,
        }
    }
}

/// The resolved `[mcp]` settings: servers by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpSettings {
    written: BTreeMap<String, (McpServerFile, Source)>,
    /// `[mcp] max_output` as the highest layer that set it wrote it.
    max_output: Option<(u64, Source)>,
    /// `[mcp] tool_max_secs` as the highest layer that set it wrote it.
    tool_max_secs: Option<(u64, Source)>,
    pub servers: Vec<McpServer>,
}

impl McpSettings {
    pub(crate) fn layer(&mut self, file: McpFile, source: &Source) {
        if let Some(bytes) = file.max_output {
            self.max_output = Some((bytes, source.clone()));
        }
        if let Some(secs) = file.tool_max_secs {
            self.tool_max_secs = Some((secs, source.clone()));
        }
        for (name, server) in file.servers.unwrap_or_default() {
            match self.written.get_mut(&name) {
                Some((below, at)) => {
                    below.layer(server);
                    *at = source.clone();
                }
                None => {
                    self.written.insert(name, (server, source.clone()));
                }
            }
        }
    }

    /// Check each server and resolve it into `servers`, in name order.
    pub(crate) fn resolve(&mut self) -> Result<(), ConfigError> {
        let mut servers = Vec::new();
        let global = match &self.max_output {
            Some((bytes, source)) => Some(output_bytes("mcp.max_output", *bytes, source)?),
            None => None,
        };
        let tool_max = match &self.tool_max_secs {
            Some((secs, source)) => Some(max_seconds("mcp.tool_max_secs", *secs, source)?),
            None => None,
        };
        let defaults = SectionDefaults {
            max_output: global,
            tool_max,
        };
        for (name, (file, source)) in &self.written {
            servers.push(resolve_server(name, file, source, &defaults)?);
        }
        self.servers = servers;
        Ok(())
    }

    /// Whether some layer so far wrote a table for server `name`.
    pub(crate) fn defines(&self, name: &str) -> bool {
        self.written.contains_key(name)
    }

    /// The enabled servers.
    pub fn enabled(&self) -> impl Iterator<Item = &McpServer> {
        self.servers.iter().filter(|s| s.enabled)
    }

    pub fn server(&self, name: &str) -> Option<&McpServer> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// What `[mcp]` itself sets for the servers that set none.
struct SectionDefaults {
    max_output: Option<usize>,
    tool_max: Option<Duration>,
}

/// `secs` if it is a `tool_max_secs` the pod takes.
fn max_seconds(key: &str, secs: u64, source: &Source) -> Result<Duration, ConfigError> {
    if secs == 0 || secs > MAX_TIMEOUT_SECS {
        return Err(ConfigError::Invalid {
            key: key.to_owned(),
            value: secs.to_string(),
            origin: source.clone(),
            reason: format!(
                "must be between 1 and {MAX_TIMEOUT_SECS} seconds (the default is \
                 {DEFAULT_TOOL_MAX_TIMEOUTS} times tool_timeout_secs)"
            ),
        });
    }
    Ok(Duration::from_secs(secs))
}

/// `bytes` if it is a `max_output` the pod takes.
fn output_bytes(key: &str, bytes: u64, source: &Source) -> Result<usize, ConfigError> {
    if !(MIN_MAX_OUTPUT_BYTES..=MAX_MAX_OUTPUT_BYTES).contains(&bytes) {
        return Err(ConfigError::Invalid {
            key: key.to_owned(),
            value: bytes.to_string(),
            origin: source.clone(),
            reason: format!(
                "is in bytes, between {MIN_MAX_OUTPUT_BYTES} and {MAX_MAX_OUTPUT_BYTES} (the \
                 default is {DEFAULT_MAX_OUTPUT_BYTES})"
            ),
        });
    }
    usize::try_from(bytes).map_err(|_| ConfigError::Invalid {
        key: key.to_owned(),
        value: bytes.to_string(),
        origin: source.clone(),
        reason: "is too large for this machine".to_owned(),
    })
}

fn resolve_server(
    name: &str,
    file: &McpServerFile,
    source: &Source,
    defaults: &SectionDefaults,
) -> Result<McpServer, ConfigError> {
    let key = |field: &str| format!("mcp.servers.{name}{field}");
    let bad = |field: &str, value: String, reason: &str| ConfigError::Invalid {
        key: key(field),
        value,
        origin: source.clone(),
        reason: reason.to_owned(),
    };
    if let Some(reason) = server_name_problem(name) {
        return Err(bad("", quote(name), &reason));
    }
    let transport = match (&file.command, &file.url) {
        (Some(_), Some(url)) => {
            return Err(bad(
                ".url",
                quote(url),
                "a server is either a command (stdio) or a url (Streamable HTTP), not both",
            ));
        }
        (None, None) => {
            return Err(bad(
                "",
                "{…}".into(),
                "needs `command` (a program the pod starts) or `url` (a Streamable HTTP endpoint)",
            ));
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err(bad(".command", quote(command), "is empty"));
            }
            for (field, present) in [
                (".headers", file.headers.is_some()),
                (".bearer_token_env", file.bearer_token_env.is_some()),
                (".oauth", file.oauth.is_some()),
                (".client_id", file.client_id.is_some()),
                (".client_secret_env", file.client_secret_env.is_some()),
                (".client_metadata_url", file.client_metadata_url.is_some()),
                (".scopes", file.scopes.is_some()),
                (".grant", file.grant.is_some()),
                (".client_secret_file", file.client_secret_file.is_some()),
                (".client_key_file", file.client_key_file.is_some()),
            ]
            .into_iter()
            .chain(cross_app_keys_set(file))
            {
                if present {
                    return Err(bad(field, "…".into(), "applies to url servers only"));
                }
            }
            let env = file.env.clone().unwrap_or_default();
            let env_vars = file.env_vars.clone().unwrap_or_default();
            for var in env.keys().chain(&env_vars) {
                if !is_variable_name(var) {
                    return Err(bad(
                        ".env",
                        quote(var),
                        "is not an environment variable name",
                    ));
                }
            }
            McpTransport::Stdio {
                command: command.clone(),
                args: file.args.clone().unwrap_or_default(),
                env,
                env_vars,
                cwd: file.cwd.clone(),
            }
        }
        (None, Some(url)) => {
            // A url that starts with `${` is checked when it is expanded, at connect.
            if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${"))
            {
                return Err(bad(
                    ".url",
                    quote(url),
                    "must start with http:// or https://",
                ));
            }
            for (field, present) in [
                (".args", file.args.is_some()),
                (".env", file.env.is_some()),
                (".env_vars", file.env_vars.is_some()),
                (".cwd", file.cwd.is_some()),
            ] {
                if present {
                    return Err(bad(field, "…".into(), "applies to command servers only"));
                }
            }
            let headers = file.headers.clone().unwrap_or_default();
            for (header, var) in &headers {
                if !is_header_name(header) {
                    return Err(bad(".headers", quote(header), "is not an HTTP header name"));
                }
                if !is_variable_name(var) && !crate::expand::is_template(var) {
                    return Err(bad(
                        &format!(".headers.{header}"),
                        quote(var),
                        "must name the environment variable that holds the value, or take it \
                         from one as `${VAR}` (the value itself is never written in a config \
                         file)",
                    ));
                }
            }
            if let Some(var) = &file.bearer_token_env
                && !is_variable_name(var)
            {
                return Err(bad(
                    ".bearer_token_env",
                    quote(var),
                    "must name the environment variable that holds the token",
                ));
            }
            McpTransport::Http {
                url: url.clone(),
                headers,
                bearer_token_env: file.bearer_token_env.clone(),
            }
        }
    };
    let oauth = resolve_oauth(file, &bad)?;
    let seconds = |field: &str, value: Option<u64>, default: u64| {
        let secs = value.unwrap_or(default);
        if secs == 0 || secs > MAX_TIMEOUT_SECS {
            return Err(bad(
                field,
                secs.to_string(),
                "must be between 1 and 86400 seconds",
            ));
        }
        Ok(Duration::from_secs(secs))
    };
    let tool_timeout = seconds(
        ".tool_timeout_secs",
        file.tool_timeout_secs,
        DEFAULT_TOOL_TIMEOUT_SECS,
    )?;
    let tool_max = match file.tool_max_secs {
        Some(secs) => max_seconds(&key(".tool_max_secs"), secs, source)?,
        None => defaults
            .tool_max
            .unwrap_or(tool_timeout * DEFAULT_TOOL_MAX_TIMEOUTS),
    };
    Ok(McpServer {
        name: name.to_owned(),
        transport,
        enabled: file.enabled.unwrap_or(true),
        required: file.required.unwrap_or(false),
        trust_read_only: file.trust_read_only.unwrap_or(false),
        startup_timeout: seconds(
            ".startup_timeout_secs",
            file.startup_timeout_secs,
            DEFAULT_STARTUP_TIMEOUT_SECS,
        )?,
        tool_timeout,
        tool_max,
        max_output: match file.max_output {
            Some(bytes) => output_bytes(&key(".max_output"), bytes, source)?,
            None => defaults
                .max_output
                .unwrap_or(DEFAULT_MAX_OUTPUT_BYTES as usize),
        },
        oauth,
        source: source.clone(),
    })
}

/// A server's OAuth keys, checked.
fn resolve_oauth(
    file: &McpServerFile,
    bad: &dyn Fn(&str, String, &str) -> ConfigError,
) -> Result<McpOAuth, ConfigError> {
    if let Some(var) = &file.client_secret_env
        && !is_variable_name(var)
    {
        return Err(bad(
            ".client_secret_env",
            quote(var),
            "must name the environment variable that holds the client secret",
        ));
    }
    let secrets = [
        file.client_secret_env.is_some(),
        file.client_secret_file.is_some(),
        file.client_key_file.is_some(),
    ];
    if secrets.iter().filter(|set| **set).count() > 1 {
        return Err(bad(
            ".client_secret_env",
            "…".into(),
            "a client proves who it is one way: set one of client_secret_env, \
             client_secret_file and client_key_file",
        ));
    }
    for (field, path) in [
        (".client_secret_file", &file.client_secret_file),
        (".client_key_file", &file.client_key_file),
        (".idp_client_secret_file", &file.idp_client_secret_file),
    ] {
        if let Some(path) = path
            && !path.is_absolute()
        {
            return Err(bad(
                field,
                quote(&path.display().to_string()),
                "must be an absolute path (the file is read when the server connects)",
            ));
        }
    }
    let grant = file.grant.unwrap_or_default();
    if file.client_key_file.is_some() && grant != McpGrant::ClientCredentials {
        return Err(bad(
            ".client_key_file",
            "…".into(),
            "a signing key is for grant = \"client_credentials\"; set that too",
        ));
    }
    if grant == McpGrant::ClientCredentials {
        if file.client_id.is_none() {
            return Err(bad(
                ".grant",
                quote("client_credentials"),
                "needs client_id: the client registered with the authorization server",
            ));
        }
        if !secrets.iter().any(|set| *set) {
            return Err(bad(
                ".grant",
                quote("client_credentials"),
                "needs the client's secret (client_secret_env or client_secret_file) or its \
                 signing key (client_key_file)",
            ));
        }
    }
    if (file.client_secret_env.is_some() || file.client_secret_file.is_some())
        && file.client_id.is_none()
    {
        return Err(bad(
            ".client_secret_env",
            "…".into(),
            "a client secret belongs to a client_id; set client_id too",
        ));
    }
    if let Some(id) = &file.client_id
        && (id.trim().is_empty() || id.chars().any(char::is_control))
    {
        return Err(bad(".client_id", quote(id), "is not a client id"));
    }
    let cross_app = resolve_cross_app(file, grant, bad)?;
    // A metadata document is the client's identity: only https, where its owner is known.
    if let Some(url) = &file.client_metadata_url
        && !url.starts_with("https://")
    {
        return Err(bad(
            ".client_metadata_url",
            quote(url),
            "must be an https:// URL (the client's metadata document)",
        ));
    }
    let scopes = file.scopes.clone().unwrap_or_default();
    if let Some(scope) = scopes
        .iter()
        .find(|s| s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()))
    {
        return Err(bad(
            ".scopes",
            quote(scope),
            "is not an OAuth scope (one word each)",
        ));
    }
    Ok(McpOAuth {
        enabled: file.oauth.unwrap_or(true),
        client_id: file.client_id.clone(),
        client_secret_env: file.client_secret_env.clone(),
        client_metadata_url: file.client_metadata_url.clone(),
        scopes,
        grant,
        client_secret_file: file.client_secret_file.clone(),
        client_key_file: file.client_key_file.clone(),
        cross_app,
    })
}

/// Which of the keys only `grant = "cross_app_access"` takes a server's table sets.
fn cross_app_keys_set(file: &McpServerFile) -> [(&'static str, bool); 5] {
    [
        (".id_token_command", file.id_token_command.is_some()),
        (".idp_token_endpoint", file.idp_token_endpoint.is_some()),
        (".idp_client_id", file.idp_client_id.is_some()),
        (
            ".idp_client_secret_env",
            file.idp_client_secret_env.is_some(),
        ),
        (
            ".idp_client_secret_file",
            file.idp_client_secret_file.is_some(),
        ),
    ]
}

/// The keys of `grant = "cross_app_access"`, checked: all of them or none.
fn resolve_cross_app(
    file: &McpServerFile,
    grant: McpGrant,
    bad: &dyn Fn(&str, String, &str) -> ConfigError,
) -> Result<Option<CrossAppAccess>, ConfigError> {
    let grant_name = quote(McpGrant::CrossAppAccess.as_str());
    if grant != McpGrant::CrossAppAccess {
        for (field, present) in cross_app_keys_set(file) {
            if present {
                return Err(bad(
                    field,
                    "…".into(),
                    "is for grant = \"cross_app_access\"; set that too",
                ));
            }
        }
        return Ok(None);
    }
    let needs = |field: &str, what: &str| {
        bad(
            ".grant",
            grant_name.clone(),
            &format!("needs {field}: {what}"),
        )
    };
    let command = file.id_token_command.clone().ok_or_else(|| {
        needs(
            "id_token_command",
            "the command that prints a fresh ID token from your identity provider, as a list \
             (for example [\"gcloud\", \"auth\", \"print-identity-token\"])",
        )
    })?;
    if command
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err(bad(
            ".id_token_command",
            "[…]".into(),
            "names no program: write the program and its arguments as a list",
        ));
    }
    let endpoint = file.idp_token_endpoint.clone().ok_or_else(|| {
        needs(
            "idp_token_endpoint",
            "your identity provider's token endpoint, where the ID token is exchanged",
        )
    })?;
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return Err(bad(
            ".idp_token_endpoint",
            quote(&endpoint),
            "must be an https:// URL (plain http only on this machine)",
        ));
    }
    let idp_client_id = file.idp_client_id.clone().ok_or_else(|| {
        needs(
            "idp_client_id",
            "this client's id at your identity provider",
        )
    })?;
    if idp_client_id.trim().is_empty() || idp_client_id.chars().any(char::is_control) {
        return Err(bad(
            ".idp_client_id",
            quote(&idp_client_id),
            "is not a client id",
        ));
    }
    if file.client_id.is_none() {
        return Err(needs(
            "client_id",
            "the client registered with the MCP server's authorization server",
        ));
    }
    if let Some(var) = &file.idp_client_secret_env
        && !is_variable_name(var)
    {
        return Err(bad(
            ".idp_client_secret_env",
            quote(var),
            "must name the environment variable that holds the identity provider client's \
             secret",
        ));
    }
    if file.idp_client_secret_env.is_some() && file.idp_client_secret_file.is_some() {
        return Err(bad(
            ".idp_client_secret_env",
            "…".into(),
            "set one of idp_client_secret_env and idp_client_secret_file",
        ));
    }
    Ok(Some(CrossAppAccess {
        id_token_command: command,
        idp_token_endpoint: endpoint,
        idp_client_id,
        idp_client_secret_env: file.idp_client_secret_env.clone(),
        idp_client_secret_file: file.idp_client_secret_file.clone(),
    }))
}

/// Why `name` cannot name a server, if it cannot. The name goes into tool names between
/// `mcp__` and `__`, so it is short, uses only what provider function names allow, and holds
/// no `__` (which would make `mcp__a__b__c` ambiguous).
pub fn server_name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.chars().count() > MAX_SERVER_NAME_CHARS {
        return Some(format!(
            "a server name is 1 to {MAX_SERVER_NAME_CHARS} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Some("a server name uses only letters, digits, `_` and `-`".into());
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Some(
            "a server name may not contain `__` or start or end with `_` (tool names are \
             mcp__SERVER__TOOL)"
                .into(),
        );
    }
    None
}

pub(crate) fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// RFC 9110 token characters.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{}\"", text.escape_default()))
}

/// The approval key shapes `[approvals]` accepts for MCP tools: `mcp__SERVER__TOOL` or
/// `mcp__SERVER__*`. Returns the server part.
pub fn approval_key_server(key: &str) -> Result<&str, String> {
    let rest = key
        .strip_prefix("mcp__")
        .ok_or_else(|| format!("{key:?} is not an MCP tool key"))?;
    let (server, tool) = rest.split_once("__").ok_or_else(|| {
        format!("{key:?}: write mcp__SERVER__TOOL, or mcp__SERVER__* for every tool of a server")
    })?;
    if let Some(problem) = server_name_problem(server) {
        return Err(format!("{key:?}: {problem}"));
    }
    let tool_ok = tool == "*"
        || (!tool.is_empty()
            && tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    if !tool_ok {
        return Err(format!(
            "{key:?}: the tool part is a tool name as `seedpod mcp ls` shows it, or *"
        ));
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> Result<McpSettings, String> {
        let file: McpFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut settings = McpSettings::default();
        settings.layer(file, &Source::Default);
        settings.resolve().map_err(|e| e.to_string())?;
        Ok(settings)
    }

    #[test]
    fn a_stdio_and_an_http_server_resolve() {
        let settings = parse(
            "[servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"server\"]\nenv = { A = \"1\" }\n\
             env_vars = [\"TOKEN\"]\n[servers.web]\nurl = \"http://127.0.0.1:9/mcp\"\n\
             headers = { \"X-Api-Key\" = \"WEB_KEY\" }\nbearer_token_env = \"WEB_TOKEN\"\n\
             trust_read_only = true\ntool_timeout_secs = 5\n",
        )
        .unwrap();
        let fs = settings.server("fs").unwrap();
        assert_eq!(fs.transport.kind(), "stdio");
        assert!(fs.enabled && !fs.trust_read_only);
        assert_eq!(fs.startup_timeout, Duration::from_secs(30));
        let web = settings.server("web").unwrap();
        assert!(web.trust_read_only);
        assert_eq!(web.tool_timeout, Duration::from_secs(5));
        match &web.transport {
            McpTransport::Http {
                headers,
                bearer_token_env,
                ..
            } => {
                assert_eq!(headers["X-Api-Key"], "WEB_KEY");
                assert_eq!(bearer_token_env.as_deref(), Some("WEB_TOKEN"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn required_and_templates_resolve_and_a_header_value_is_still_refused() {
        let settings = parse(
            "[servers.a]\ncommand = \"x\"\nrequired = true\n[servers.w]\n\
             url = \"${BASE:-http://127.0.0.1:9}/mcp\"\n\
             headers = { Authorization = \"Bearer ${TOKEN}\" }\n",
        )
        .unwrap();
        assert!(settings.server("a").unwrap().required);
        assert!(!settings.server("w").unwrap().required);
        let literal =
            parse("[servers.w]\nurl = \"http://h\"\nheaders = { Authorization = \"Bearer x\" }\n")
                .unwrap_err();
        assert!(literal.contains("never written"), "{literal}");
    }

    #[test]
    fn cross_app_access_needs_its_command_idp_and_clients_and_nothing_else_takes_its_keys() {
        let base = "[servers.w]\nurl = \"https://h/mcp\"\n";
        let full = "grant = \"cross_app_access\"\nclient_id = \"app\"\n\
                    id_token_command = [\"okta\", \"print-id-token\"]\n\
                    idp_token_endpoint = \"https://idp.example/token\"\n\
                    idp_client_id = \"idp-app\"\nidp_client_secret_env = \"IDP_SECRET\"\n";
        let settings = parse(&format!("{base}{full}")).unwrap();
        let oauth = &settings.server("w").unwrap().oauth;
        assert_eq!(oauth.grant, McpGrant::CrossAppAccess);
        let cross = oauth.cross_app.as_ref().unwrap();
        assert_eq!(cross.id_token_command, ["okta", "print-id-token"]);
        assert_eq!(cross.idp_client_id, "idp-app");
        assert_eq!(cross.idp_client_secret_env.as_deref(), Some("IDP_SECRET"));
        for (drop, says) in [
            ("id_token_command", "needs id_token_command"),
            ("idp_token_endpoint", "needs idp_token_endpoint"),
            ("idp_client_id =", "needs idp_client_id"),
            ("client_id = \"app\"", "needs client_id"),
        ] {
            let text: String = full
                .lines()
                .filter(|line| !line.starts_with(drop))
                .map(|line| format!("{line}\n"))
                .collect();
            let err = parse(&format!("{base}{text}")).unwrap_err();
            assert!(err.contains(says), "without {drop}: {err}");
        }
        for (extra, says) in [
            ("id_token_command = []\n", "names no program"),
            ("id_token_command = \"okta\"\n", "invalid type"),
            ("idp_token_endpoint = \"file:///etc/passwd\"\n", "https://"),
            ("idp_client_secret_env = \"A B\"\n", "environment variable"),
            ("idp_client_secret_file = \"rel/secret\"\n", "absolute path"),
        ] {
            let key = extra.split(' ').next().unwrap();
            let text: String = full
                .lines()
                .filter(|line| !line.starts_with(key))
                .map(|line| format!("{line}\n"))
                .collect();
            let err = parse(&format!("{base}{text}{extra}")).unwrap_err();
            assert!(err.contains(says), "{extra}: {err}");
        }
        // Its keys mean nothing under another grant, and never on a command server.
        let err = parse(&format!("{base}id_token_command = [\"x\"]\n")).unwrap_err();
        assert!(err.contains("cross_app_access"), "{err}");
        let err = parse("[servers.c]\ncommand = \"x\"\nid_token_command = [\"y\"]\n").unwrap_err();
        assert!(err.contains("url servers only"), "{err}");
    }

    #[test]
    fn max_output_is_the_servers_else_the_sections_else_200_kib_within_bounds() {
        let settings = parse(
            "max_output = 4096\n[servers.a]\ncommand = \"x\"\n[servers.b]\ncommand = \"x\"\n\
             max_output = 2048\n",
        )
        .unwrap();
        assert_eq!(settings.server("a").unwrap().max_output, 4096);
        assert_eq!(settings.server("b").unwrap().max_output, 2048);
        let plain = parse("[servers.a]\ncommand = \"x\"\n").unwrap();
        assert_eq!(plain.server("a").unwrap().max_output, 200 * 1024);
        let low = parse("[servers.a]\ncommand = \"x\"\nmax_output = 10\n").unwrap_err();
        assert!(
            low.contains("mcp.servers.a.max_output") && low.contains("in bytes"),
            "{low}"
        );
        let high = parse("max_output = 999999999999\n[servers.a]\ncommand = \"x\"\n").unwrap_err();
        assert!(high.contains("mcp.max_output"), "{high}");
    }

    #[test]
    fn tool_max_is_the_servers_else_the_sections_else_ten_idle_limits_within_bounds() {
        let settings = parse(
            "tool_max_secs = 600\n[servers.a]\ncommand = \"x\"\n[servers.b]\ncommand = \"x\"\n\
             tool_max_secs = 30\n",
        )
        .unwrap();
        assert_eq!(
            settings.server("a").unwrap().tool_max,
            Duration::from_secs(600)
        );
        assert_eq!(
            settings.server("b").unwrap().tool_max,
            Duration::from_secs(30)
        );
        let plain = parse(
            "[servers.a]\ncommand = \"x\"\n[servers.b]\ncommand = \"x\"\ntool_timeout_secs = 7\n",
        )
        .unwrap();
        assert_eq!(
            plain.server("a").unwrap().tool_max,
            Duration::from_secs(3000)
        );
        assert_eq!(plain.server("b").unwrap().tool_max, Duration::from_secs(70));
        let zero = parse("[servers.a]\ncommand = \"x\"\ntool_max_secs = 0\n").unwrap_err();
        assert!(
            zero.contains("mcp.servers.a.tool_max_secs") && zero.contains("between 1 and 86400"),
            "{zero}"
        );
        let long = parse("tool_max_secs = 86401\n[servers.a]\ncommand = \"x\"\n").unwrap_err();
        assert!(long.contains("mcp.tool_max_secs"), "{long}");
        let word = parse("tool_max_secs = \"forever\"\n").unwrap_err();
        assert!(word.contains("tool_max_secs"), "{word}");
    }

    #[test]
    fn bad_servers_are_refused_with_the_key_and_why() {
        let cases = [
            ("[servers.a]\nargs = []\n", "needs `command`"),
            (
                "[servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n",
                "not both",
            ),
            ("[servers.a]\nurl = \"ftp://h\"\n", "http://"),
            (
                "[servers.a]\nurl = \"http://h\"\nargs = [\"x\"]\n",
                "command servers only",
            ),
            (
                "[servers.a]\ncommand = \"x\"\nheaders = { A = \"B\" }\n",
                "url servers only",
            ),
            (
                "[servers.a]\nurl = \"http://h\"\nheaders = { Authorization = \"Bearer sk-123\" }\n",
                "never written",
            ),
            ("[servers.\"a__b\"]\ncommand = \"x\"\n", "`__`"),
            ("[servers.\"a.b\"]\ncommand = \"x\"\n", "letters, digits"),
            (
                "[servers.aaaaaaaaaaaaaaaaaaaaaaaaa]\ncommand = \"x\"\n",
                "1 to 24",
            ),
            (
                "[servers.a]\ncommand = \"x\"\ntool_timeout_secs = 0\n",
                "between 1",
            ),
            (
                "[servers.a]\ncommand = \"x\"\nenv = { \"A B\" = \"1\" }\n",
                "variable name",
            ),
            (
                "[servers.a]\ncommand = \"x\"\npassword = \"1\"\n",
                "unknown field",
            ),
            (
                "[servers.a]\ncommand = \"x\"\nclient_id = \"c\"\n",
                "url servers only",
            ),
            (
                "[servers.a]\nurl = \"http://h\"\nclient_secret_env = \"S\"\n",
                "set client_id too",
            ),
            (
                "[servers.a]\nurl = \"http://h\"\nclient_id = \"c\"\nclient_secret_env = \"s-1\"\n",
                "client secret",
            ),
            (
                "[servers.a]\nurl = \"http://h\"\nclient_metadata_url = \"http://x/c.json\"\n",
                "https://",
            ),
            (
                "[servers.a]\nurl = \"http://h\"\nscopes = [\"a b\"]\n",
                "one word each",
            ),
            (
                "[servers.a]\nurl = \"http://h\"\nclient_id = \"\"\n",
                "not a client id",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn oauth_keys_resolve_and_oauth_is_on_by_default() {
        let settings = parse(
            "[servers.gh]\nurl = \"https://h/mcp\"\nclient_id = \"app\"\n\
             client_secret_env = \"GH_SECRET\"\nscopes = [\"repo\", \"read:org\"]\n\
             [servers.plain]\nurl = \"https://p/mcp\"\n[servers.off]\nurl = \"https://o/mcp\"\n\
             oauth = false\n",
        )
        .unwrap();
        let gh = &settings.server("gh").unwrap().oauth;
        assert_eq!(gh.client_id.as_deref(), Some("app"));
        assert_eq!(gh.client_secret_env.as_deref(), Some("GH_SECRET"));
        assert_eq!(gh.scopes, ["repo", "read:org"]);
        assert!(gh.enabled);
        assert_eq!(settings.server("plain").unwrap().oauth, McpOAuth::default());
        assert!(!settings.server("off").unwrap().oauth.enabled);
    }

    #[test]
    fn a_machine_client_resolves_with_one_way_to_prove_itself() {
        let settings = parse(
            "[servers.svc]\nurl = \"https://h/mcp\"\ngrant = \"client_credentials\"\n\
             client_id = \"robot\"\nclient_key_file = \"/keys/robot.pem\"\n",
        )
        .unwrap();
        let svc = &settings.server("svc").unwrap().oauth;
        assert_eq!(svc.grant, McpGrant::ClientCredentials);
        assert_eq!(
            svc.client_key_file.as_deref(),
            Some(Path::new("/keys/robot.pem"))
        );
        let cases = [
            // No client: the token endpoint would not know who asks.
            (
                "grant = \"client_credentials\"\nclient_secret_env = \"S\"\n",
                "needs client_id",
            ),
            // Nothing to prove it with.
            (
                "grant = \"client_credentials\"\nclient_id = \"r\"\n",
                "needs the client's secret",
            ),
            // Two ways at once: which one is meant is a guess.
            (
                "grant = \"client_credentials\"\nclient_id = \"r\"\nclient_secret_env = \"S\"\n\
                 client_key_file = \"/k.pem\"\n",
                "one way",
            ),
            // A relative path would be read from wherever the pod happens to run.
            (
                "grant = \"client_credentials\"\nclient_id = \"r\"\n\
                 client_secret_file = \"secret.txt\"\n",
                "absolute path",
            ),
            // A key without the grant that uses it would be silently ignored.
            ("client_id = \"r\"\nclient_key_file = \"/k.pem\"\n", "grant"),
            ("grant = \"password\"\n", "unknown variant"),
        ];
        for (keys, want) in cases {
            let text = format!("[servers.svc]\nurl = \"https://h/mcp\"\n{keys}");
            let err = parse(&text).unwrap_err();
            assert!(err.contains(want), "{keys}: {err}");
        }
        let err =
            parse("[servers.cmd]\ncommand = \"x\"\ngrant = \"client_credentials\"\n").unwrap_err();
        assert!(err.contains("url servers only"), "{err}");
    }

    #[test]
    fn a_higher_layer_sets_single_keys_of_a_lower_server() {
        let mut settings = McpSettings::default();
        let user: McpFile = toml::from_str("[servers.a]\ncommand = \"x\"\n").unwrap();
        let project: McpFile = toml::from_str("[servers.a]\nenabled = false\n").unwrap();
        settings.layer(user, &Source::Default);
        settings.layer(project, &Source::Flag("test"));
        settings.resolve().unwrap();
        let a = settings.server("a").unwrap();
        assert!(!a.enabled);
        assert_eq!(a.source, Source::Flag("test"));
        assert_eq!(settings.enabled().count(), 0);
    }

    #[test]
    fn a_tool_key_beats_its_servers_star_and_nothing_covers_other_servers() {
        let file: crate::approvals::ApprovalsFile =
            toml::from_str("shell = \"ask\"\n\"mcp__t__*\" = \"allow\"\nmcp__t__rm = \"deny\"\n")
                .unwrap();
        let mut approvals = crate::Approvals::defaults(&crate::tests::tools::TOOLS);
        approvals.layer(file, &Source::Default).unwrap();
        let policy = |tool: &str| approvals.mcp_policy(tool).map(|s| s.value);
        assert_eq!(policy("mcp__t__rm"), Some(crate::Policy::Deny));
        assert_eq!(policy("mcp__t__ls"), Some(crate::Policy::Allow));
        assert_eq!(policy("mcp__u__ls"), None);
        assert_eq!(policy("mcp__t"), None);
        let sandboxed: Result<crate::approvals::ApprovalsFile, _> =
            toml::from_str("mcp__t__ls = \"sandboxed\"\n");
        assert!(sandboxed.unwrap_err().to_string().contains("shell only"));
    }

    #[test]
    fn config_show_names_header_variables_and_hides_url_credentials() {
        let mut eff = crate::Effective::defaults(&crate::tests::tools::TOOLS);
        let file: crate::ConfigFile = toml::from_str(
            "[mcp.servers.web]\nurl = \"https://me:pw@mcp.example/mcp\"\n\
             headers = { \"X-Api-Key\" = \"WEB_KEY\" }\n",
        )
        .unwrap();
        eff.apply_file(file, &Source::Default).unwrap();
        eff.mcp.resolve().unwrap();
        let shown = crate::show::render(&eff, "test", &|_: &str| None);
        assert!(shown.contains("[mcp.servers.web]"), "{shown}");
        assert!(shown.contains("X-Api-Key from $WEB_KEY"), "{shown}");
        assert!(!shown.contains("pw@"), "{shown}");
    }

    #[test]
    fn config_show_lists_oauth_keys_by_name_only() {
        let mut eff = crate::Effective::defaults(&crate::tests::tools::TOOLS);
        let file: crate::ConfigFile = toml::from_str(
            "[mcp.servers.svc]\nurl = \"https://h/mcp\"\ngrant = \"client_credentials\"\n\
             client_id = \"robot\"\nclient_secret_env = \"ROBOT_SECRET\"\nscopes = [\"a\"]\n\
             [mcp.servers.off]\nurl = \"https://o/mcp\"\noauth = false\n",
        )
        .unwrap();
        eff.apply_file(file, &Source::Default).unwrap();
        eff.mcp.resolve().unwrap();
        let shown = crate::show::render(&eff, "test", &|var: &str| {
            (var == "ROBOT_SECRET").then(|| "s3cret-value".to_owned())
        });
        for want in [
            "grant = \"client_credentials\"",
            "client_id = \"robot\"",
            "client_secret_env = \"ROBOT_SECRET\"",
            "scopes = [\"a\"]",
            "seedpod mcp get svc",
            "oauth = false",
        ] {
            assert!(shown.contains(want), "{want}: {shown}");
        }
        assert!(!shown.contains("s3cret-value"), "{shown}");
    }

    #[test]
    fn approval_keys_name_a_server_and_a_tool_or_star() {
        assert_eq!(approval_key_server("mcp__t__echo"), Ok("t"));
        assert_eq!(approval_key_server("mcp__git-2__*"), Ok("git-2"));
        for bad in [
            "mcp__t",
            "mcp____x",
            "mcp__t__",
            "mcp__t__a.b",
            "mcp__t__ *",
            "shell",
        ] {
            assert!(approval_key_server(bad).is_err(), "{bad}");
        }
    }
}
