//! One MCP server's life, owned by one task: start it (a process in the pod's directory and
//! its own process group, or a Streamable HTTP session), initialise it and list its tools
//! within the startup timeout, publish what it offers, notice when it dies, and start it
//! again with backoff. Everyone else reads the published `ServerView`; nobody else touches
//! the process. How a process is stopped and watched is `process.rs`; what a server says
//! outside answers, `handler.rs`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::Tool as RmcpTool;
use rmcp::service::{Peer, RoleClient, RunningService, serve_client};
use seedpod_config::{McpServer, McpTransport};
use seedpod_protocol::{AlertLevel, McpAction, McpState};
use tokio::process::Child;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::handler::Handler;
use super::http::{Gone, Lost};
use super::process::{STOP_GRACE, describe_exit, log_stderr, stop_group, wait_child};
use super::{names, tree};

/// Tries in a row before the pod stops trying (a server that lived a minute or more starts
/// the count again).
const MAX_TRIES: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A server that ran this long before dying was working; its next death starts a fresh count.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);
/// More tools than this from one server would crowd out the conversation.
pub const MAX_TOOLS_PER_SERVER: usize = 128;
/// A tool description longer than this (characters) is cut at a word boundary with a marker:
/// it goes with every request, and a server decides its length.
const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// How often an HTTP server is pinged, to notice it died or forgot its session while no call
/// is being made.
const HEALTH_INTERVAL: Duration = Duration::from_secs(15);
/// How long a health ping may take before it is left to itself.
const PING_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a server waiting for a login looks at its login file.
const LOGIN_POLL: Duration = Duration::from_secs(1);

/// Variables a stdio server gets from the pod's environment without asking (`env_vars` adds
/// more): enough to find programs, a home, a locale and a temp dir, and no API key.
const BASE_ENV: [&str; 14] = [
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// One tool as the pod knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// `mcp__SERVER__TOOL`, what the model calls.
    pub exposed: String,
    /// The server's own name, what `tools/call` names.
    pub original: String,
    pub description: String,
    pub schema: serde_json::Value,
    /// The server says the tool changes nothing (`readOnlyHint`).
    pub read_only: bool,
}

impl McpToolInfo {
    /// The tool as the pod offers it; `Err` (its exposed name, and why) when no provider would
    /// take its schema (`schema.rs`).
    fn from_rmcp(server: &str, tool: RmcpTool) -> Result<McpToolInfo, (String, String)> {
        let exposed = names::exposed_name(server, &tool.name);
        let description = tool
            .description
            .map(|d| d.into_owned())
            .or(tool.title)
            .unwrap_or_default();
        let description = description.trim();
        let description = cut_description(description, MAX_DESCRIPTION_CHARS);
        let (schema, changes) = match super::schema::normalise((*tool.input_schema).clone()) {
            Ok(normalised) => normalised,
            Err(why) => return Err((exposed, why)),
        };
        if !changes.is_empty() {
            tracing::debug!(event = "mcp_schema_normalised", server, tool = %exposed, changes = ?changes);
        }
        Ok(McpToolInfo {
            exposed,
            original: tool.name.into_owned(),
            description,
            schema: serde_json::Value::Object(schema),
            read_only: tool
                .annotations
                .and_then(|a| a.read_only_hint)
                .unwrap_or(false),
        })
    }

    pub fn spec(&self) -> seedpod_protocol::ToolSpec {
        seedpod_protocol::ToolSpec {
            name: self.exposed.clone(),
            description: self.description.clone(),
            parameters: self.schema.clone(),
        }
    }
}

/// What one server is doing, as its task last published it.
#[derive(Debug, Clone)]
pub struct ServerView {
    pub state: McpState,
    /// The tools it offers, or offered before it died (kept so a new segment started while it
    /// restarts still offers them).
    pub tools: Arc<Vec<McpToolInfo>>,
    pub peer: Option<Peer<RoleClient>>,
    /// Where `peer`'s progress reports go, by request (`progress.rs`).
    pub(crate) progress: Option<super::progress::ProgressRoutes>,
    pub last_error: Option<String>,
    pub restarts: u32,
    pub pid: Option<u32>,
    /// Its first start ended, one way or the other.
    pub settled: bool,
    /// How many times it became ready: a call made on one start ends when that start does.
    pub started: u64,
    /// Its prompts and resources, as it last listed them (`catalogue.rs`).
    pub catalogue: Arc<super::catalogue::Catalogue>,
}

impl ServerView {
    pub fn new(state: McpState) -> ServerView {
        ServerView {
            state,
            tools: Arc::new(Vec::new()),
            peer: None,
            progress: None,
            last_error: None,
            restarts: 0,
            pid: None,
            settled: false,
            started: 0,
            catalogue: super::catalogue::empty(),
        }
    }
}

/// A started, initialised server.
struct Live {
    running: RunningService<RoleClient, Handler>,
    child: Option<Child>,
    /// What marks a stdio server's processes (`tree.rs`).
    tag: String,
    /// An HTTP server's connection says here when it is gone (`http.rs`).
    lost: Option<Arc<Lost>>,
    tools: Vec<McpToolInfo>,
    catalogue: super::catalogue::Catalogue,
    note: Option<String>,
}

/// Why a start failed, and whether trying again could help.
pub(super) struct StartError {
    message: String,
    permanent: bool,
    /// A login would mend it (`seedpod mcp login`): the pod waits for one.
    login: bool,
    /// A login might mend it (a server without OAuth metadata that asked for a bearer token):
    /// the pod gives up, and a probe says a login is worth trying.
    may_login: bool,
}

impl StartError {
    /// A failure trying again cannot mend (a person must change something first).
    pub(super) fn permanent(message: String) -> StartError {
        StartError {
            message,
            permanent: true,
            login: false,
            may_login: false,
        }
    }

    /// A failure a person must act on, where a login may be what helps.
    pub(super) fn login_may_help(message: String) -> StartError {
        StartError {
            may_login: true,
            ..StartError::permanent(message)
        }
    }

    pub(super) fn retry(message: impl Into<String>) -> StartError {
        StartError {
            message: message.into(),
            permanent: false,
            login: false,
            may_login: false,
        }
    }

    /// The server wants a login; trying again before one is done cannot help.
    pub(super) fn login(message: String) -> StartError {
        StartError {
            message,
            permanent: true,
            login: true,
            may_login: false,
        }
    }
}

enum Ended {
    Shutdown,
    Died(String),
    /// It refused the login mid-session, after a refresh (`oauth/watch.rs`).
    NeedsLogin(String),
    /// A person asked for it to stop (`/mcp`): to start again at once, or to stay stopped.
    Asked(Next),
}

/// What a person's `/mcp` action means for the supervisor's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Start it again now, with a fresh count of tries.
    Start,
    /// Stop it and wait to be enabled.
    Disable,
    /// Nothing to do (enable a running server, or an action this pod does not know).
    Stay,
}

impl Next {
    fn of(action: McpAction) -> Next {
        match action {
            McpAction::Reconnect => Next::Start,
            McpAction::Disable => Next::Disable,
            McpAction::Enable | McpAction::Unknown => Next::Stay,
        }
    }

    /// The same, for a server that is not running: enabling it starts it.
    fn when_down(action: McpAction) -> Next {
        match action {
            McpAction::Reconnect | McpAction::Enable => Next::Start,
            McpAction::Disable => Next::Disable,
            McpAction::Unknown => Next::Stay,
        }
    }
}

/// Why a server is disabled, as `mcp ls` and a call of one of its tools say.
const DISABLED_BY_CONFIG: &str = "enabled = false";
const DISABLED_BY_PERSON: &str =
    "disabled in this pod from /mcp; `/mcp enable SERVER` or the /mcp popup starts it again";

pub struct Supervisor {
    pub config: McpServer,
    pub cwd: PathBuf,
    pub view: watch::Sender<ServerView>,
    pub events: mpsc::Sender<super::McpEvent>,
    pub shutdown: CancellationToken,
    /// Whether it starts at once; a server with `enabled = false` waits to be enabled.
    pub enabled: bool,
}

impl Supervisor {
    /// Run the server until the pod stops, doing what `control` asks (`McpHub::control`).
    pub async fn run(self, mut control: mpsc::Receiver<McpAction>) {
        let name = self.config.name.clone();
        let mut failures: u32 = 0;
        let mut enabled = self.enabled;
        let mut disabled_why = DISABLED_BY_CONFIG;
        // A person asked for it to start (again): say so when it is up.
        let mut asked = false;
        'life: loop {
            if !enabled {
                self.disabled(disabled_why).await;
                loop {
                    let action = tokio::select! {
                        _ = self.shutdown.cancelled() => break 'life,
                        action = control.recv() => action,
                    };
                    match action.map(Next::when_down) {
                        None => break 'life,
                        Some(Next::Start) => break,
                        Some(Next::Disable | Next::Stay) => {}
                    }
                }
                enabled = true;
                failures = 0;
                asked = true;
                self.view.send_modify(|v| {
                    v.state = McpState::Starting;
                    v.last_error = None;
                });
            }
            let tools_changed = Arc::new(Notify::new());
            let catalogue_changed = Arc::new(Notify::new());
            let handler = Handler::new(&name, tools_changed.clone())
                .with_catalogue(catalogue_changed.clone());
            let starting = tokio::time::timeout(
                self.config.startup_timeout,
                start(&self.config, &self.cwd, handler),
            );
            tokio::pin!(starting);
            // Dropping a start stops what it started (`kill_on_drop`).
            let started = loop {
                tokio::select! {
                    _ = self.shutdown.cancelled() => break 'life,
                    started = &mut starting => break started,
                    action = control.recv() => match action.map(Next::of) {
                        None => break 'life,
                        Some(Next::Stay) => {}
                        Some(Next::Start) => {
                            failures = 0;
                            continue 'life;
                        }
                        Some(Next::Disable) => {
                            enabled = false;
                            disabled_why = DISABLED_BY_PERSON;
                            continue 'life;
                        }
                    },
                }
            };
            let mut announced = false;
            let failure = match started {
                Ok(Ok(live)) => {
                    let came_back = asked || failures > 0 || self.view.borrow().restarts > 0;
                    asked = false;
                    let since = Instant::now();
                    match self
                        .serve(
                            live,
                            (&tools_changed, &catalogue_changed),
                            came_back,
                            &mut control,
                        )
                        .await
                    {
                        Ended::Shutdown => break,
                        Ended::Asked(next) => {
                            failures = 0;
                            asked = true;
                            if next == Next::Disable {
                                enabled = false;
                                disabled_why = DISABLED_BY_PERSON;
                            }
                            continue;
                        }
                        Ended::NeedsLogin(why) => {
                            StartError::login(super::oauth::needs_login_message(&name, &why))
                        }
                        Ended::Died(why) => {
                            if since.elapsed() >= HEALTHY_AFTER {
                                failures = 0;
                            }
                            self.view.send_modify(|v| v.restarts += 1);
                            announced = true;
                            StartError::retry(why)
                        }
                    }
                }
                Ok(Err(err)) => err,
                Err(_) => StartError::retry(format!(
                    "it did not finish starting within {}s (startup_timeout_secs)",
                    self.config.startup_timeout.as_secs()
                )),
            };
            if failure.login {
                if self.wait_for_login(&failure.message).await {
                    failures = 0;
                    continue;
                }
                break;
            }
            failures += 1;
            tracing::warn!(event = "mcp_server_down", server = %name, error = %failure.message, tries = failures);
            // An HTTP server that cannot be reached is often being deployed or restarted: the
            // pod keeps trying (every MAX_BACKOFF once the count is spent) rather than give up
            // on it for the pod's life; a stdio server that keeps dying stops being started.
            let http = matches!(self.config.transport, McpTransport::Http { .. });
            let give_up = failure.permanent || (failures >= MAX_TRIES && !http);
            self.view.send_modify(|v| {
                v.state = if give_up {
                    McpState::Failed
                } else {
                    McpState::Restarting
                };
                v.last_error = Some(failure.message.clone());
                v.peer = None;
                v.pid = None;
                v.settled = true;
            });
            let delay = if give_up {
                let tries = if failure.permanent {
                    String::new()
                } else {
                    format!(" after {failures} tries")
                };
                self.alert(
                    AlertLevel::Error,
                    format!(
                        "MCP server {name} failed{tries}: {}. Its tools are missing; `seedpod mcp \
                         ls` shows its state, and `/mcp reconnect {name}` (or the /mcp popup) \
                         tries again.",
                        failure.message
                    ),
                )
                .await;
                None
            } else {
                let delay = backoff(failures);
                if !announced && failures <= MAX_TRIES {
                    self.alert(
                        AlertLevel::Warn,
                        format!(
                            "MCP server {name} is down: {}. Trying again in {}s.",
                            failure.message,
                            delay.as_secs()
                        ),
                    )
                    .await;
                }
                Some(delay)
            };
            // Wait out the backoff (or, having given up, for a person), doing what is asked.
            let pause = async {
                match delay {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.shutdown.cancelled() => break,
                () = pause => {}
                action = control.recv() => match action.map(Next::when_down) {
                    None => break,
                    Some(Next::Start) => {
                        failures = 0;
                        asked = true;
                    }
                    Some(Next::Disable) => {
                        enabled = false;
                        disabled_why = DISABLED_BY_PERSON;
                    }
                    // Not reachable from `when_down` but for an unknown action: wait again
                    // the short way round (a backoff at most).
                    Some(Next::Stay) => {}
                },
            }
        }
        self.view.send_modify(|v| {
            v.state = McpState::Stopped;
            v.peer = None;
            v.pid = None;
        });
    }

    /// Say the server needs a login and wait until its login file changes (`seedpod mcp
    /// login` wrote it: start again, true) or the pod stops (false). The file is looked at
    /// every `LOGIN_POLL`: the login is another process, and a pod re-reads what it wrote.
    async fn wait_for_login(&self, message: &str) -> bool {
        let name = &self.config.name;
        tracing::warn!(event = "mcp_server_needs_login", server = %name, error = %message);
        self.view.send_modify(|v| {
            v.state = McpState::NeedsLogin;
            v.last_error = Some(message.to_owned());
            v.peer = None;
            v.pid = None;
            v.settled = true;
        });
        self.alert(
            AlertLevel::Warn,
            format!("MCP server {name} needs a login: {message}."),
        )
        .await;
        let store = match &self.config.transport {
            McpTransport::Http { url, .. } => {
                let lookup = |var: &str| std::env::var(var).ok();
                let url = seedpod_config::expand::expand(url, &lookup).unwrap_or_default();
                super::oauth::store::TokenStore::for_server(name, &url).ok()
            }
            McpTransport::Stdio { .. } => None,
        };
        let Some(store) = store else {
            self.shutdown.cancelled().await;
            return false;
        };
        let before = store.stamp();
        let mut poll = tokio::time::interval(LOGIN_POLL);
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return false,
                _ = poll.tick() => {
                    if store.stamp() != before
                        && store.read().is_ok_and(|file| file.has_tokens())
                    {
                        tracing::info!(event = "mcp_server_login_seen", server = %name);
                        return true;
                    }
                }
            }
        }
    }

    /// Publish that it is disabled: no tools (the next segment offers none of them), and why.
    async fn disabled(&self, why: &str) {
        let had_tools = !self.view.borrow().tools.is_empty();
        self.view.send_modify(|v| {
            v.state = McpState::Disabled;
            v.tools = Arc::new(Vec::new());
            v.peer = None;
            v.pid = None;
            v.last_error = Some(why.to_owned());
            v.settled = true;
        });
        if had_tools {
            self.changed().await;
        }
    }

    /// Publish `live` and keep it until it dies or the pod stops.
    async fn serve(
        &self,
        live: Live,
        (tools_changed, catalogue_changed): (&Notify, &Notify),
        came_back: bool,
        control: &mut mpsc::Receiver<McpAction>,
    ) -> Ended {
        let Live {
            running,
            mut child,
            tag,
            lost,
            tools,
            catalogue,
            note,
        } = live;
        let name = &self.config.name;
        let peer = running.peer().clone();
        let progress = running.service().progress.clone();
        let pid = child.as_ref().and_then(Child::id);
        let count = tools.len();
        self.view.send_modify(|v| {
            v.state = McpState::Ready;
            v.started += 1;
            v.tools = Arc::new(tools);
            v.catalogue = Arc::new(catalogue);
            v.peer = Some(peer.clone());
            v.progress = Some(progress);
            v.pid = pid;
            v.last_error = note.clone();
            v.settled = true;
        });
        tracing::info!(event = "mcp_server_ready", server = %name, tools = count, pid = ?pid);
        self.changed().await;
        self.note_alert(None, note.as_deref()).await;
        if came_back {
            self.alert(
                AlertLevel::Info,
                format!("MCP server {name} is running again ({count} tools)."),
            )
            .await;
        }
        let stop = running.cancellation_token();
        let mut finished = Box::pin(running.waiting());
        // An HTTP server that keeps no stream open is otherwise only found dead (or restarted)
        // by the next call; a ping that cannot connect says `Lost` (`http.rs`).
        let mut health = tokio::time::interval_at(
            tokio::time::Instant::now() + HEALTH_INTERVAL,
            HEALTH_INTERVAL,
        );
        // Whether `finished` already completed (it must not be polled again).
        let mut drained = false;
        let ended = loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => break Ended::Shutdown,
                status = wait_child(&mut child) => break Ended::Died(status),
                gone = wait_lost(lost.as_deref()) => break match gone {
                    Gone::Lost(why) => Ended::Died(why),
                    Gone::NeedsLogin(why) => Ended::NeedsLogin(why),
                },
                quit = &mut finished => {
                    drained = true;
                    let closed = match quit {
                        Ok(_) => "its connection closed".to_owned(),
                        Err(err) => format!(
                            "its connection failed ({})",
                            super::words::transport(&err)
                        ),
                    };
                    // A stdio server's exit status says more than its closed pipe, and it
                    // comes at once when the process is gone.
                    let why = match child.is_some() {
                        true => tokio::time::timeout(STOP_GRACE, wait_child(&mut child))
                            .await
                            .unwrap_or(closed),
                        false => closed,
                    };
                    break Ended::Died(why);
                }
                _ = tools_changed.notified() => self.relist(&peer).await,
                _ = catalogue_changed.notified() => {
                    let catalogue = super::catalogue::list(
                        &self.config.name,
                        &peer,
                        self.config.startup_timeout,
                    )
                    .await;
                    let before = self.view.borrow().catalogue.note.clone();
                    let note = catalogue.note.clone();
                    self.view.send_modify(|v| v.catalogue = Arc::new(catalogue));
                    self.note_alert(before.as_deref(), note.as_deref()).await;
                }
                _ = health.tick(), if lost.is_some() => ping(&peer),
                action = control.recv() => match action.map(Next::of) {
                    None => break Ended::Shutdown,
                    Some(Next::Stay) => {}
                    Some(next) => break Ended::Asked(next),
                },
            }
        };
        // Calls in flight end now (they watch this), not when the old connection has drained;
        // and people hear of it now, not after the clean-up below.
        if let Ended::Died(why) = &ended {
            self.view.send_modify(|v| {
                v.state = McpState::Restarting;
                v.peer = None;
                v.pid = None;
                v.last_error = Some(why.clone());
            });
            self.alert(
                AlertLevel::Warn,
                format!(
                    "MCP server {name} stopped ({why}); calls in flight get an error result, and \
                     it is being started again."
                ),
            )
            .await;
        }
        // Calls in flight end now, and `mcp ls` says so before the login is waited for.
        if let Ended::NeedsLogin(why) = &ended {
            self.view.send_modify(|v| {
                v.state = McpState::NeedsLogin;
                v.peer = None;
                v.pid = None;
                v.last_error = Some(why.clone());
            });
        }
        // Calls in flight end now here too; the old process is stopped below.
        if let Ended::Asked(next) = &ended {
            self.view.send_modify(|v| {
                v.state = match next {
                    Next::Disable => McpState::Disabled,
                    Next::Start | Next::Stay => McpState::Starting,
                };
                v.peer = None;
                v.pid = None;
            });
        }
        stop.cancel();
        // The transport closes the server's stdin; a server that does not take the hint gets
        // SIGTERM and then SIGKILL, with its whole tree (what it started dies with it).
        if !drained {
            let _ = tokio::time::timeout(STOP_GRACE, finished).await;
        }
        if let Some(child) = child.as_mut() {
            stop_group(child, &tag).await;
        }
        ended
    }

    /// The server said its tools changed: list them again and tell the controller.
    async fn relist(&self, peer: &Peer<RoleClient>) {
        let listed =
            tokio::time::timeout(self.config.startup_timeout, super::pager::tools(peer)).await;
        match listed {
            Ok(Ok(listed)) => {
                let paged = listed.note("tools");
                let (tools, converted) = convert(&self.config.name, listed.items);
                let note = join_notes([paged, converted]);
                let before = self.view.borrow().last_error.clone();
                self.view.send_modify(|v| {
                    v.tools = Arc::new(tools);
                    v.last_error = note.clone();
                });
                self.changed().await;
                self.note_alert(before.as_deref(), note.as_deref()).await;
            }
            Ok(Err(err)) => {
                tracing::warn!(event = "mcp_relist_failed", server = %self.config.name, error = %err);
            }
            Err(_) => {
                tracing::warn!(event = "mcp_relist_failed", server = %self.config.name, error = "timed out");
            }
        }
    }

    /// Tell people what of the server's tool list was left out, when that is news.
    async fn note_alert(&self, before: Option<&str>, note: Option<&str>) {
        if let Some(note) = note
            && before != Some(note)
        {
            self.alert(
                AlertLevel::Warn,
                format!("MCP server {}: {note}.", self.config.name),
            )
            .await;
        }
    }

    async fn changed(&self) {
        let _ = self
            .events
            .send(super::McpEvent::ToolsListed {
                server: self.config.name.clone(),
            })
            .await;
    }

    async fn alert(&self, level: AlertLevel, message: String) {
        let _ = self
            .events
            .send(super::McpEvent::Alert { level, message })
            .await;
    }
}

fn backoff(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1));
    FIRST_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

/// A server started for `probe.rs`, not supervised.
pub(super) struct ProbeLive {
    pub(super) peer: Peer<RoleClient>,
    pub(super) tools: Vec<McpToolInfo>,
    live: Live,
}

impl ProbeLive {
    /// End the connection, and the server's processes if it has any.
    pub(super) async fn stop(self) {
        let Live {
            running,
            child,
            tag,
            ..
        } = self.live;
        let _ = tokio::time::timeout(STOP_GRACE, running.cancel()).await;
        if let Some(mut child) = child {
            stop_group(&mut child, &tag).await;
        }
    }
}

/// Start `config` once, as its supervisor would, within its startup timeout.
pub(super) async fn start_for_probe(
    config: &McpServer,
    cwd: &Path,
    handler: Handler,
) -> Result<ProbeLive, super::probe::ProbeError> {
    use super::probe::ProbeError;
    match tokio::time::timeout(config.startup_timeout, start(config, cwd, handler)).await {
        Err(_) => Err(ProbeError::Failed(format!(
            "it did not finish starting within {}s (startup_timeout_secs)",
            config.startup_timeout.as_secs()
        ))),
        Ok(Err(failure)) if failure.login || failure.may_login => {
            Err(ProbeError::NeedsLogin(failure.message))
        }
        Ok(Err(failure)) => Err(ProbeError::Failed(failure.message)),
        Ok(Ok(live)) => Ok(ProbeLive {
            peer: live.running.peer().clone(),
            tools: live.tools.clone(),
            live,
        }),
    }
}

/// Start the server, initialise it and list its tools.
async fn start(config: &McpServer, cwd: &Path, handler: Handler) -> Result<Live, StartError> {
    let tag = tree::new_tag();
    // `${VAR}` templates take their values now and only here (`seedpod_config::expand`):
    // messages below name what was written, never what it expanded to.
    let lookup = |var: &str| std::env::var(var).ok();
    let expanded = seedpod_config::expand::transport(&config.transport, &lookup)
        .map_err(StartError::permanent)?;
    let written = match &config.transport {
        McpTransport::Stdio { command, .. } => command,
        McpTransport::Http { url, .. } => url,
    };
    let (running, child, lost) = match &expanded {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd: dir,
        } => {
            let dir = match dir {
                Some(dir) => cwd.join(dir),
                None => cwd.to_path_buf(),
            };
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .current_dir(&dir)
                .env_clear()
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            for var in BASE_ENV
                .iter()
                .copied()
                .chain(env_vars.iter().map(String::as_str))
            {
                if let Some(value) = std::env::var_os(var) {
                    cmd.env(var, value);
                }
            }
            cmd.envs(env);
            // Marks everything the server starts, wherever it goes (`tree.rs`).
            cmd.env(tree::TAG_VAR, &tag);
            let mut child = cmd.spawn().map_err(|err| StartError {
                login: false,
                may_login: false,
                permanent: matches!(
                    err.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
                ),
                message: format!("cannot start `{written}` in {}: {err}", dir.display()),
            })?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(StartError::retry(
                    "its stdin and stdout could not be opened",
                ));
            };
            if let Some(stderr) = child.stderr.take() {
                tokio::spawn(log_stderr(config.name.clone(), stderr));
            }
            // An answer too large for rmcp is cut rather than dropped (`frames.rs`).
            let stdout = super::frames::cut_oversized(config.name.clone(), stdout);
            let running = serve_client(handler, (stdout, stdin)).await;
            match running {
                Ok(running) => (running, Some(child), None),
                Err(err) => {
                    // The process may have said why on stderr (it is in the log); its exit
                    // status says the rest.
                    let status = match tokio::time::timeout(STOP_GRACE, child.wait()).await {
                        Ok(Ok(status)) => format!(" ({})", describe_exit(status)),
                        _ => {
                            stop_group(&mut child, &tag).await;
                            String::new()
                        }
                    };
                    return Err(StartError::retry(format!(
                        "it did not initialise{status}: {}",
                        super::words::init_error(&err)
                    )));
                }
            }
        }
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            let (running, lost) = super::http_start::start(
                config,
                url,
                headers,
                bearer_token_env.as_deref(),
                handler,
            )
            .await?;
            (running, None, Some(lost))
        }
    };
    let listed = match super::pager::tools(running.peer()).await {
        Ok(listed) => listed,
        Err(err) => {
            // A server may let anyone initialise and want a login (or more scope) for its tools.
            if let McpTransport::Http { url, .. } = &expanded
                && let Some(refused) = super::http_start::refused(config, url, &err).await
            {
                return Err(refused);
            }
            return Err(StartError::retry(format!(
                "listing its tools failed: {}",
                super::words::service_error(&err)
            )));
        }
    };
    let paged = listed.note("tools");
    let (tools, converted) = convert(&config.name, listed.items);
    // Prompts and resources, where the server announced them; their failure costs only them.
    let catalogue =
        super::catalogue::list(&config.name, running.peer(), config.startup_timeout).await;
    let note = join_notes([paged, converted, catalogue.note.clone()]);
    Ok(Live {
        running,
        child,
        tag,
        lost,
        tools,
        catalogue,
        note,
    })
}

/// The server's tools as the pod offers them: named, deduplicated, their schemas made
/// acceptable, at most `MAX_TOOLS_PER_SERVER`; and a note when some were left out, saying
/// which and why.
fn convert(server: &str, listed: Vec<RmcpTool>) -> (Vec<McpToolInfo>, Option<String>) {
    let total = listed.len();
    let mut tools: Vec<McpToolInfo> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for tool in listed {
        let info = match McpToolInfo::from_rmcp(server, tool) {
            Ok(info) => info,
            Err((name, why)) => {
                tracing::warn!(event = "mcp_tool_refused", server, tool = %name, reason = %why);
                refused.push(format!("{name} ({why})"));
                continue;
            }
        };
        if tools.iter().any(|t| t.exposed == info.exposed) {
            tracing::warn!(event = "mcp_duplicate_tool", server, tool = %info.original);
            continue;
        }
        if tools.len() == MAX_TOOLS_PER_SERVER {
            break;
        }
        tools.push(info);
    }
    let mut notes = Vec::new();
    if !refused.is_empty() {
        notes.push(format!(
            "left out because no provider would accept its schema: {}",
            refused.join("; ")
        ));
    }
    if total > MAX_TOOLS_PER_SERVER {
        notes.push(format!(
            "it lists {total} tools; the first {MAX_TOOLS_PER_SERVER} are offered, to keep room \
             for the conversation"
        ));
    }
    let note = (!notes.is_empty()).then(|| notes.join(". "));
    (tools, note)
}

/// Notes about a server's lists, as one sentence each (`None`: nothing to say).
fn join_notes<const N: usize>(notes: [Option<String>; N]) -> Option<String> {
    let said: Vec<String> = notes.into_iter().flatten().collect();
    (!said.is_empty()).then(|| said.join(". "))
}

/// Ping the server, not waiting for the answer: what matters is what the transport finds on
/// the way (a refused connection says `Lost`; a forgotten session gets a new one).
fn ping(peer: &Peer<RoleClient>) {
    let peer = peer.clone();
    tokio::spawn(async move {
        let request = rmcp::model::ClientRequest::PingRequest(Default::default());
        if let Ok(Err(err)) = tokio::time::timeout(PING_TIMEOUT, peer.send_request(request)).await {
            tracing::debug!(event = "mcp_ping_failed", error = %super::words::service_error(&err));
        }
    });
}

/// Why an HTTP server's connection is gone; never for a stdio server.
async fn wait_lost(lost: Option<&Lost>) -> Gone {
    match lost {
        Some(lost) => lost.wait().await,
        None => std::future::pending().await,
    }
}

/// `text` if it has at most `max` characters; else its words up to `max` characters (a word
/// longer than that is cut inside) and a marker saying how much was cut, so neither the model
/// nor a person reading the schema takes a cut description for the whole one.
fn cut_description(text: &str, max: usize) -> String {
    let Some(kept) = seedpod_protocol::char_prefix(text, max) else {
        return text.to_owned();
    };
    let at_word = match text[kept.len()..].chars().next() {
        Some(next) if next.is_whitespace() => kept,
        _ => kept
            .rfind(char::is_whitespace)
            .map_or(kept, |end| &kept[..end]),
    };
    let kept = at_word.trim_end();
    let cut = text.chars().count() - kept.chars().count();
    format!("{kept} … [description cut: {cut} more characters]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_descriptions_are_cut_at_a_word_with_a_marker() {
        assert_eq!(cut_description("short one", 20), "short one");
        assert_eq!(cut_description("exactly10c", 10), "exactly10c");
        // Never inside a word; the marker counts what was left out.
        assert_eq!(
            cut_description("alpha bravo charlie", 14),
            "alpha bravo … [description cut: 8 more characters]"
        );
        // A cut that falls right before a space keeps the whole last word.
        assert_eq!(
            cut_description("alpha bravo charlie", 11),
            "alpha bravo … [description cut: 8 more characters]"
        );
        // One word longer than the limit is cut inside it rather than dropped.
        assert_eq!(
            cut_description("supercalifragilistic", 5),
            "super … [description cut: 15 more characters]"
        );
        // Characters, not bytes.
        let long = "é ".repeat(1_500);
        let cut = cut_description(long.trim_end(), MAX_DESCRIPTION_CHARS);
        assert!(cut.ends_with("more characters]"), "{cut}");
        assert!(cut.chars().count() < MAX_DESCRIPTION_CHARS + 50);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let delays: Vec<u64> = (1..=7).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn tools_are_named_deduplicated_and_capped() {
        let tool = |name: &str| {
            RmcpTool::new(
                name.to_owned(),
                "Does it.",
                Arc::new(serde_json::Map::new()),
            )
        };
        let mut listed: Vec<RmcpTool> = vec![tool("echo"), tool("echo")];
        listed.extend((0..200).map(|i| tool(&format!("t{i}"))));
        let (tools, note) = convert("s", listed);
        assert_eq!(tools.len(), MAX_TOOLS_PER_SERVER);
        assert_eq!(tools[0].exposed, "mcp__s__echo");
        assert_eq!(tools[1].exposed, "mcp__s__t0");
        assert_eq!(tools[0].schema["type"], "object");
        assert!(note.unwrap().contains("202 tools"));
    }
}
