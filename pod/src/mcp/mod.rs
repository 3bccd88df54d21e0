//! MCP servers' tools in a pod, on the official Rust SDK (`rmcp`; docs/decisions.md §MCP).
//!
//! Each configured server has one task (`server.rs`) that owns its process or HTTP session,
//! restarts it with backoff when it dies and publishes a `ServerView`. The `McpHub` is the
//! cheap, shared read side: which tools each server offers, the approval each gets, the
//! listing `seedpod mcp ls` and `/mcp` print, and the tool objects the registry calls.
//!
//! What the model is offered is fixed per segment like every tool (`segment_start.tools`, so
//! replay is exact): a new pod waits (within each server's startup timeout) for its servers
//! before its first segment; a server that starts late, or changes its tools, changes the
//! next segment, with an alert. A call goes to whatever process serves that name now; a
//! server that is down answers with an error result, never a hang past its timeouts.
//!
//! Must not own: the approval flow (the controller asks; this module only says what the
//! configuration says for a tool), the log, or the configuration's format.

pub use crate::mcp_names as names;
mod calling;
pub mod catalogue;
pub mod frames;
mod handler;
pub mod http;
mod http_start;
pub mod image;
pub mod oauth;
mod pager;
pub mod probe;
mod process;
mod progress;
pub mod prompts;
mod required;
pub mod resources;
pub mod result;
pub mod schema;
pub mod server;
pub mod tree;
pub mod words;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::CallToolRequestParams;
use seedpod_config::McpServer;
use seedpod_engine::{Tool, ToolOutput, ToolRegistry};
use seedpod_protocol::{
    AlertLevel, McpAction, McpServerStatus, McpState, ToolMeta, ToolSpec,
    mcp::{McpApproval, McpToolStatus},
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::policy::{Policies, Policy};
use server::{ServerView, Supervisor};

pub use crate::mcp_names::DECL;

/// MCP events queued to the controller (bounded: a server's task waits when it is full).
pub const MCP_QUEUE_CAPACITY: usize = 64;

/// `/mcp` actions waiting for one server's task: a person presses keys, a few at most.
const CONTROL_QUEUE_CAPACITY: usize = 4;

const NOT_PASSED_ON: &str = "not passed on to this child pod by its parent";

/// What the servers' tasks tell the controller, on their own queue.
#[derive(Debug)]
pub enum McpEvent {
    /// A server is ready, or listed its tools again: the controller compares them with the
    /// segment's.
    ToolsListed { server: String },
    /// Something a person should know (a server died, failed, came back).
    Alert { level: AlertLevel, message: String },
    /// How far a running call is, as its server last said: for the clients showing the
    /// call, never for the model or the log (`progress.rs`).
    Progress {
        call_id: seedpod_protocol::CallId,
        progress: seedpod_protocol::ToolProgress,
    },
}

/// The MCP part of a pod's settings: the servers the configuration names, and, for a child
/// pod, which of them its parent passed on (`None`: all).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpSettings {
    pub servers: Vec<McpServer>,
    pub only: Option<Vec<String>>,
}

/// Shared, cheap to clone; empty (no servers) by default.
#[derive(Clone, Default)]
pub struct McpHub {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    servers: Vec<Slot>,
    policies: Policies,
    shutdown: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Each tool's `readOnlyHint` as it was when the segment offered it (or, in a restored
    /// segment, when the pod first saw the tool): what `trust_read_only` judges by, so a
    /// server that turns a hint on mid-segment widens nothing (docs/configuration.md §MCP
    /// servers). A new segment records them afresh (`offer`).
    offered_hints: Mutex<HashMap<String, bool>>,
    /// The controller's queue, for the progress of running calls; `None` in tests that run
    /// no controller.
    events: Option<mpsc::Sender<McpEvent>>,
}

struct Slot {
    name: String,
    transport: &'static str,
    trust_read_only: bool,
    /// It runs in this pod and the pod must not run without it (`required.rs`).
    required: bool,
    startup_timeout: Duration,
    tool_timeout: Duration,
    /// How long a call may run in all, progress or not (`tool_max_secs`).
    tool_max: Duration,
    /// Bytes of one result the model reads (`max_output`).
    max_output: usize,
    view: watch::Receiver<ServerView>,
    /// Asks its task to reconnect, disable or enable it; `None` for a server this child pod
    /// was not given.
    control: Option<mpsc::Sender<McpAction>>,
}

impl McpHub {
    /// Start every enabled server (not waiting for any). `events` is the controller's queue.
    pub fn start(
        settings: &McpSettings,
        cwd: &Path,
        policies: Policies,
        events: mpsc::Sender<McpEvent>,
    ) -> McpHub {
        let shutdown = CancellationToken::new();
        let mut servers = Vec::new();
        let mut tasks = Vec::new();
        for config in &settings.servers {
            let passed_on = settings
                .only
                .as_ref()
                .is_none_or(|only| only.contains(&config.name));
            let runs = config.enabled && passed_on;
            let (tx, rx) = watch::channel(ServerView::new(if runs {
                McpState::Starting
            } else {
                McpState::Disabled
            }));
            // A server the parent did not pass on has no task: nobody in this pod may start
            // it. One with `enabled = false` has one, waiting to be enabled from `/mcp`.
            let control = if passed_on {
                let (control, requests) = mpsc::channel(CONTROL_QUEUE_CAPACITY);
                let supervisor = Supervisor {
                    config: config.clone(),
                    cwd: cwd.to_path_buf(),
                    view: tx,
                    events: events.clone(),
                    shutdown: shutdown.clone(),
                    enabled: config.enabled,
                };
                let name = config.name.clone();
                tasks.push(tokio::spawn(async move {
                    // A supervisor that fails must at least say so.
                    if let Err(err) = tokio::spawn(supervisor.run(requests)).await {
                        tracing::error!(event = "mcp_supervisor_failed", server = %name, error = %err);
                    }
                }));
                Some(control)
            } else {
                tx.send_modify(|v| {
                    v.settled = true;
                    v.last_error = Some(NOT_PASSED_ON.into());
                });
                None
            };
            servers.push(Slot {
                name: config.name.clone(),
                transport: config.transport.kind(),
                trust_read_only: config.trust_read_only,
                required: runs && config.required,
                startup_timeout: config.startup_timeout,
                tool_timeout: config.tool_timeout,
                tool_max: config.tool_max,
                max_output: config.max_output,
                view: rx,
                control,
            });
        }
        McpHub {
            inner: Arc::new(Inner {
                servers,
                policies,
                shutdown,
                tasks: Mutex::new(tasks),
                offered_hints: Mutex::default(),
                events: Some(events),
            }),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.inner.servers.is_empty()
    }

    /// Wait until every server's first start has ended (ready or not), each within its
    /// startup timeout: what a new pod does before it writes its first segment.
    pub async fn settle(&self) {
        let waits = self.inner.servers.iter().map(|slot| {
            let mut view = slot.view.clone();
            let limit = slot.startup_timeout + Duration::from_secs(1);
            async move {
                let _ = tokio::time::timeout(limit, view.wait_for(|v| v.settled)).await;
            }
        });
        futures::future::join_all(waits).await;
    }

    /// The specs of every tool the servers offer now (or offered before they died), in
    /// server-name order, leaving out denied ones.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        for slot in &self.inner.servers {
            let view = slot.view.borrow();
            for tool in view.tools.iter() {
                if self.policy(&tool.exposed) != Policy::Deny {
                    specs.push(tool.spec());
                }
            }
        }
        specs
    }

    /// What a new segment offers: `tool_specs`, with each tool's hints recorded as the
    /// segment's (approvals judge by these until the next segment).
    pub fn offer(&self) -> Vec<ToolSpec> {
        let mut hints = HashMap::new();
        for slot in &self.inner.servers {
            for tool in slot.view.borrow().tools.iter() {
                hints.insert(tool.exposed.clone(), tool.read_only);
            }
        }
        if let Ok(mut offered) = self.inner.offered_hints.lock() {
            *offered = hints;
        }
        let mut specs = self.tool_specs();
        // The resource tools, when a server has resources now (`resources.rs`): fixed in the
        // segment like every tool.
        if self.offers_resources() {
            specs.extend(resources::specs());
        }
        specs
    }

    /// The specs of `server`'s tools now, denied ones left out.
    pub fn server_specs(&self, server: &str) -> Vec<ToolSpec> {
        let Some(slot) = self.slot(server) else {
            return Vec::new();
        };
        let view = slot.view.borrow();
        view.tools
            .iter()
            .filter(|t| self.policy(&t.exposed) != Policy::Deny)
            .map(server::McpToolInfo::spec)
            .collect()
    }

    /// Add a callable tool for each MCP name in `offered`. A tool of a server that is no
    /// longer configured is one too: its call answers why it cannot run.
    pub fn register(&self, registry: &mut ToolRegistry, offered: &[ToolSpec]) {
        for spec in offered {
            let Some(server) = names::server_of(&spec.name) else {
                continue;
            };
            // One is as good as another: it finds its server's tool by name at call time.
            if registry.get(&spec.name).is_some() {
                continue;
            }
            registry.register(Arc::new(McpTool {
                hub: self.clone(),
                server: server.to_owned(),
                name: spec.name.clone(),
                spec: spec.clone(),
            }));
        }
    }

    /// What happens when the model calls MCP tool `name`: its `[approvals]` key, its server's
    /// `mcp__SERVER__*`, then `allow` for a tool its server (with `trust_read_only`) says is
    /// read-only, else `ask`.
    pub fn policy(&self, name: &str) -> Policy {
        // A server that is not configured runs nothing: the call only answers why.
        if names::server_of(name).is_some_and(|server| self.slot(server).is_none()) {
            return Policy::Allow;
        }
        let slot = names::server_of(name).and_then(|server| self.slot(server));
        let now = slot.and_then(|slot| {
            slot.view
                .borrow()
                .tools
                .iter()
                .find(|t| t.exposed == name)
                .map(|t| t.read_only)
        });
        // Read-only only if it was when offered and still is: a hint turned on later widens
        // nothing; one turned off narrows at once. A tool first seen now is recorded as seen;
        // one its server does not list (yet) is not read-only.
        let read_only = slot.is_some_and(|slot| slot.trust_read_only)
            && now.is_some_and(|now| match self.inner.offered_hints.lock() {
                Ok(mut offered) => *offered.entry(name.to_owned()).or_insert(now) && now,
                Err(_) => false,
            });
        self.inner.policies.for_mcp_tool(name, read_only)
    }

    /// The listing for `seedpod mcp ls` and `/mcp`: every server, or the one named.
    /// `offered` is the segment's tools.
    pub fn status(&self, only: Option<&str>, offered: &[ToolSpec]) -> Vec<McpServerStatus> {
        self.inner
            .servers
            .iter()
            .filter(|slot| only.is_none_or(|name| slot.name == name))
            .map(|slot| {
                let view = slot.view.borrow();
                let tools = view
                    .tools
                    .iter()
                    .map(|tool| McpToolStatus {
                        name: tool.exposed.clone(),
                        server_name: tool.original.clone(),
                        read_only: tool.read_only,
                        approval: match self.policy(&tool.exposed) {
                            Policy::Allow => McpApproval::Allow,
                            Policy::Deny => McpApproval::Deny,
                            Policy::Ask | Policy::Sandboxed => McpApproval::Ask,
                        },
                        offered: offered.iter().any(|s| s.name == tool.exposed),
                    })
                    .collect();
                McpServerStatus {
                    name: slot.name.clone(),
                    transport: slot.transport.to_owned(),
                    state: view.state,
                    tools,
                    last_error: view.last_error.clone(),
                    restarts: view.restarts,
                    pid: view.pid,
                }
            })
            .collect()
    }

    /// What a client attaching now should be told: each server that failed for good, and why.
    pub fn standing_alerts(&self) -> Vec<String> {
        self.inner
            .servers
            .iter()
            .filter_map(|slot| {
                let view = slot.view.borrow();
                let why = view.last_error.as_deref().unwrap_or("no reason given");
                match view.state {
                    McpState::Failed => Some(format!(
                        "MCP server {} failed: {why}. Its tools are missing; `seedpod mcp ls` \
                         shows its state, and `seedpod restart` tries again.",
                        slot.name,
                    )),
                    McpState::NeedsLogin => {
                        Some(format!("MCP server {} needs a login: {why}.", slot.name))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Ask `server`'s task to reconnect, disable or enable it (it does so at once; `status`
    /// shows the progress). `Err` says why it cannot, in a person's words.
    pub fn control(&self, server: &str, action: McpAction) -> Result<(), String> {
        let Some(slot) = self.slot(server) else {
            return Err(format!("no MCP server named {server}"));
        };
        if action == McpAction::Unknown {
            return Err("unknown MCP action; use reconnect, disable or enable".into());
        }
        let Some(control) = &slot.control else {
            return Err(format!(
                "MCP server {server} was {NOT_PASSED_ON}; only the parent can give it one"
            ));
        };
        control.try_send(action).map_err(|err| match err {
            mpsc::error::TrySendError::Full(_) => format!(
                "MCP server {server} is still doing what was asked before; try again in a moment"
            ),
            mpsc::error::TrySendError::Closed(_) => {
                format!("MCP server {server} is stopping with the pod")
            }
        })
    }

    pub fn has_server(&self, name: &str) -> bool {
        self.slot(name).is_some()
    }

    /// The names of the servers that run in this pod (for a child: what it may pass on).
    pub fn running_servers(&self) -> Vec<String> {
        self.inner
            .servers
            .iter()
            .filter(|slot| slot.view.borrow().state != McpState::Disabled)
            .map(|slot| slot.name.clone())
            .collect()
    }

    /// Stop every server and wait (boundedly) for their tasks to end.
    pub async fn stop(&self) {
        self.inner.shutdown.cancel();
        let tasks: Vec<JoinHandle<()>> = match self.inner.tasks.lock() {
            Ok(mut tasks) => tasks.drain(..).collect(),
            Err(_) => Vec::new(),
        };
        let all = futures::future::join_all(tasks);
        if tokio::time::timeout(Duration::from_secs(8), all)
            .await
            .is_err()
        {
            tracing::warn!(event = "mcp_stop_slow", "MCP servers did not stop in 8s");
        }
    }

    fn slot(&self, name: &str) -> Option<&Slot> {
        self.inner.servers.iter().find(|s| s.name == name)
    }
}

/// One MCP tool in the registry: a name, and the hub to find its server through at call time.
struct McpTool {
    hub: McpHub,
    server: String,
    name: String,
    spec: ToolSpec,
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let hub = self.hub.clone();
        let server = self.server.clone();
        let name = self.name.clone();
        async move { call(&hub, &server, &name, &arguments, None).await }.boxed()
    }

    fn call_for(
        &self,
        call_id: &seedpod_protocol::CallId,
        arguments: String,
    ) -> BoxFuture<'static, ToolOutput> {
        let hub = self.hub.clone();
        let server = self.server.clone();
        let name = self.name.clone();
        let call_id = call_id.clone();
        async move { call(&hub, &server, &name, &arguments, Some(call_id)).await }.boxed()
    }
}

/// Call `name` of `server`; its progress reports go to the clients under `call_id`, when
/// there is one.
async fn call(
    hub: &McpHub,
    server: &str,
    name: &str,
    arguments: &str,
    call_id: Option<seedpod_protocol::CallId>,
) -> ToolOutput {
    let Some(slot) = hub.slot(server) else {
        return ToolOutput::error(format!(
            "MCP server {server} is not configured for this pod any more; {name} was not called"
        ));
    };
    let arguments = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(serde_json::Value::Null) => serde_json::Map::new(),
        _ => {
            return ToolOutput::error(format!(
                "the arguments for {name} must be one JSON object; it was not called"
            ));
        }
    };
    // A server that is starting or restarting gets its startup timeout to come up.
    let mut view = slot.view.clone();
    let ready = tokio::time::timeout(
        slot.startup_timeout,
        view.wait_for(|v| {
            matches!(
                v.state,
                McpState::Ready
                    | McpState::Failed
                    | McpState::Disabled
                    | McpState::Stopped
                    | McpState::NeedsLogin
            )
        }),
    )
    .await
    .is_ok_and(|seen| seen.is_ok());
    let (peer, routes, original, start) = {
        let current = slot.view.borrow();
        let down = || {
            let why = current
                .last_error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            format!(
                "MCP server {server} is not running ({}{why}); {name} was not called",
                current.state.as_str()
            )
        };
        let peer = match (&ready, &current.peer) {
            (true, Some(peer)) if current.state == McpState::Ready => peer.clone(),
            _ => return ToolOutput::error(down()),
        };
        let Some(tool) = current.tools.iter().find(|t| t.exposed == name) else {
            return ToolOutput::error(format!(
                "MCP server {server} no longer offers {name}; it was not called. Its tools now: {}",
                current
                    .tools
                    .iter()
                    .map(|t| t.exposed.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        (
            peer,
            current.progress.clone(),
            tool.original.clone(),
            current.started,
        )
    };
    let params = CallToolRequestParams::new(original).with_arguments(arguments);
    // The server dying ends the call at once, whatever the old connection still drains.
    let mut watch = slot.view.clone();
    let died = async move {
        let _ = watch
            .wait_for(|v| v.started != start || v.state != McpState::Ready)
            .await;
    };
    // Progress from the server starts the idle limit again, never the total one
    // (`calling.rs`). Dropping this future (a pause, a cancel) sends `notifications/cancelled`.
    let limits = calling::Limits {
        idle: slot.tool_timeout,
        total: slot.tool_max,
    };
    let reporting = match (call_id, routes, hub.inner.events.clone()) {
        (Some(call_id), Some(routes), Some(events)) => Some(calling::Reporting {
            routes,
            call_id,
            events,
        }),
        _ => None,
    };
    let answer = tokio::select! {
        answer = calling::call_tool(&peer, params, limits, reporting) => Some(answer),
        () = died => None,
    };
    match answer {
        Some(Ok(result)) => result::to_output(result, name, slot.max_output),
        None => ToolOutput::error(format!(
            "MCP server {server} stopped during the call; the call may or may not have taken \
             effect. The server is being started again."
        )),
        Some(Err(calling::CallFailure::Idle)) => ToolOutput::error(format!(
            "{name} sent neither an answer nor progress for {}s (tool_timeout_secs of \
             MCP server {server}); it was cancelled",
            slot.tool_timeout.as_secs()
        ))
        .with_meta(ToolMeta {
            timed_out: true,
            ..ToolMeta::default()
        }),
        Some(Err(calling::CallFailure::Total)) => ToolOutput::error(format!(
            "{name} was still running after {}s, the most one call of MCP server {server} may \
             take (tool_max_secs), though it kept reporting progress; it was cancelled. Ask \
             for less in one call, or tell the person the limit may need raising",
            slot.tool_max.as_secs()
        ))
        .with_meta(ToolMeta {
            timed_out: true,
            ..ToolMeta::default()
        }),
        Some(Err(calling::CallFailure::Service(err))) => {
            let why = words::service_error(&err);
            let message = if peer.is_transport_closed() {
                format!(
                    "MCP server {server} stopped during the call ({why}); the call may or may \
                     not have taken effect. The server is being started again."
                )
            } else if matches!(err, rmcp::ServiceError::McpError(_)) {
                format!("MCP server {server}: {why}")
            } else {
                format!("{name} could not be completed: MCP server {server}: {why}")
            };
            ToolOutput::error(message)
        }
    }
}

/// For the controller: the difference between what a segment offers of `server` and what the
/// server offers now, as an alert, or `None` when they agree.
pub fn tools_changed_alert(server: &str, offered: &[ToolSpec], now: &[ToolSpec]) -> Option<String> {
    let prefix = format!("{}{server}__", names::PREFIX);
    let before: BTreeMap<&str, &ToolSpec> = offered
        .iter()
        .filter(|t| t.name.starts_with(&prefix))
        .map(|t| (t.name.as_str(), t))
        .collect();
    let after: BTreeMap<&str, &ToolSpec> = now.iter().map(|t| (t.name.as_str(), t)).collect();
    if before == after {
        return None;
    }
    let added: Vec<&str> = after
        .keys()
        .filter(|k| !before.contains_key(*k))
        .copied()
        .collect();
    let removed: Vec<&str> = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .copied()
        .collect();
    let changed = after
        .iter()
        .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
        .count();
    let mut parts = Vec::new();
    if !added.is_empty() {
        parts.push(format!("new: {}", added.join(", ")));
    }
    if !removed.is_empty() {
        parts.push(format!("gone: {}", removed.join(", ")));
    }
    if changed > 0 {
        parts.push(format!("{changed} changed"));
    }
    Some(format!(
        "MCP server {server}'s tools differ from this conversation's ({}); the next segment \
         (/clear, or a compaction) offers them as they are now",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        }
    }

    #[test]
    fn a_servers_changed_tools_are_named_and_other_servers_are_not_its_business() {
        let offered = [
            spec("read_file", "Read."),
            spec("mcp__t__echo", "Echo."),
            spec("mcp__t__gone", "Old."),
            spec("mcp__u__other", "Other."),
        ];
        let same = [spec("mcp__t__echo", "Echo."), spec("mcp__t__gone", "Old.")];
        assert_eq!(tools_changed_alert("t", &offered, &same), None);
        let now = [
            spec("mcp__t__echo", "Echo, louder."),
            spec("mcp__t__new", "New."),
        ];
        let alert = tools_changed_alert("t", &offered, &now).unwrap();
        assert!(alert.contains("new: mcp__t__new"), "{alert}");
        assert!(alert.contains("gone: mcp__t__gone"), "{alert}");
        assert!(alert.contains("1 changed"), "{alert}");
        assert!(!alert.contains("mcp__u__other"), "{alert}");
        assert!(alert.contains("next segment"), "{alert}");
    }

    /// A hub with one `trust_read_only` server `t` whose view the test writes.
    fn hub_with_view() -> (McpHub, watch::Sender<ServerView>) {
        let (tx, rx) = watch::channel(ServerView::new(McpState::Ready));
        let slot = Slot {
            name: "t".into(),
            transport: "stdio",
            trust_read_only: true,
            required: false,
            startup_timeout: Duration::from_secs(1),
            tool_timeout: Duration::from_secs(1),
            tool_max: Duration::from_secs(10),
            max_output: 1024,
            view: rx,
            control: None,
        };
        let hub = McpHub {
            inner: Arc::new(Inner {
                servers: vec![slot],
                ..Inner::default()
            }),
        };
        (hub, tx)
    }

    fn set_tool(view: &watch::Sender<ServerView>, read_only: bool) {
        view.send_modify(|v| {
            v.tools = Arc::new(vec![server::McpToolInfo {
                exposed: "mcp__t__write".into(),
                original: "write".into(),
                description: "Write.".into(),
                schema: serde_json::json!({"type": "object", "properties": {}}),
                read_only,
            }]);
        });
    }

    #[test]
    fn a_hint_turned_on_mid_segment_widens_nothing_until_the_next_segment() {
        let (hub, view) = hub_with_view();
        set_tool(&view, false);
        let offered = hub.offer();
        assert_eq!(offered.len(), 1);
        assert_eq!(hub.policy("mcp__t__write"), Policy::Ask);
        // The server now says the tool changes nothing: it still asks in this segment.
        set_tool(&view, true);
        assert_eq!(hub.policy("mcp__t__write"), Policy::Ask);
        assert_eq!(
            hub.status(None, &offered)[0].tools[0].approval,
            McpApproval::Ask
        );
        // A new segment offers it as it is now.
        hub.offer();
        assert_eq!(hub.policy("mcp__t__write"), Policy::Allow);
        // Turned off again: it asks at once.
        set_tool(&view, false);
        assert_eq!(hub.policy("mcp__t__write"), Policy::Ask);
    }

    #[test]
    fn a_tool_not_listed_yet_is_not_read_only_and_is_judged_when_it_is() {
        let (hub, view) = hub_with_view();
        // A restored segment, its server still starting.
        assert_eq!(hub.policy("mcp__t__write"), Policy::Ask);
        set_tool(&view, true);
        assert_eq!(hub.policy("mcp__t__write"), Policy::Allow);
    }

    /// Who may start what: a server a parent did not pass on has no task to ask, so nothing in
    /// the child (a person's `/mcp` included) starts it; a name that is not a server, or an
    /// action this pod does not know, is refused in words.
    #[test]
    fn only_a_server_this_pod_runs_can_be_controlled() {
        let (hub, _view) = hub_with_view();
        let refused = hub.control("t", McpAction::Enable).unwrap_err();
        assert!(refused.contains("not passed on"), "{refused}");
        let refused = hub.control("nope", McpAction::Reconnect).unwrap_err();
        assert!(refused.contains("no MCP server named nope"), "{refused}");
        let refused = hub.control("t", McpAction::Unknown).unwrap_err();
        assert!(
            refused.contains("reconnect, disable or enable"),
            "{refused}"
        );
    }

    #[tokio::test]
    async fn a_full_control_queue_says_to_try_again_and_never_waits() {
        let (tx, rx) = watch::channel(ServerView::new(McpState::Ready));
        let (control, _requests) = mpsc::channel(CONTROL_QUEUE_CAPACITY);
        let hub = McpHub {
            inner: Arc::new(Inner {
                servers: vec![Slot {
                    name: "t".into(),
                    transport: "stdio",
                    trust_read_only: false,
                    required: false,
                    startup_timeout: Duration::from_secs(1),
                    tool_timeout: Duration::from_secs(1),
                    tool_max: Duration::from_secs(10),
                    max_output: 1024,
                    view: rx,
                    control: Some(control),
                }],
                ..Inner::default()
            }),
        };
        for _ in 0..CONTROL_QUEUE_CAPACITY {
            hub.control("t", McpAction::Reconnect).unwrap();
        }
        let refused = hub.control("t", McpAction::Reconnect).unwrap_err();
        assert!(refused.contains("try again"), "{refused}");
        drop(tx);
    }

    #[tokio::test]
    async fn a_segments_tool_of_a_server_no_longer_configured_says_so_when_called() {
        let hub = McpHub::default();
        hub.settle().await;
        assert!(hub.tool_specs().is_empty() && hub.status(None, &[]).is_empty());
        let mut registry = ToolRegistry::new();
        hub.register(
            &mut registry,
            &[spec("mcp__t__echo", "Echo."), spec("read_file", "Read.")],
        );
        assert_eq!(format!("{registry:?}"), r#"["mcp__t__echo"]"#);
        assert_eq!(hub.policy("mcp__t__echo"), Policy::Allow);
        let out = registry.call("mcp__t__echo", "{}").await;
        assert!(out.is_error);
        assert!(out.content.contains("not configured"), "{}", out.content);
        hub.stop().await;
    }
}
