//! The five tools a pod's model drives its children with: `spawn_pod`, `send_to_pod`,
//! `read_pod_output`, `list_pods`, `stop_pod`. Each call either asks the controller (which owns
//! the records and the lent scope) or does the slow work here and reports what it found.
//! Like every tool, problems come back as error results worded for the model: each step says
//! so by returning a `ToolFailure`, and the typed errors of the steps it takes (a refused
//! spawn, a child that would not talk) become one here, at the edge, in their own words.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_client::Home;
use seedpod_engine::{Tool, ToolFailure, ToolOutput, ToolRegistry};
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, PodName, Preview, SpawnRequest,
    ToolDecl, ToolSpec,
};
use seedpod_store::{ChildRecord, OutputCursor};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::output::{DEFAULT_BUDGET_CHARS, OutputError, read_output};
use super::probe::{self, ChildLiveness, RestoreError, TalkError};
use super::{ChildMsg, SpawnRefused, SpawnReply};
use crate::policy::{Policies, Policy};

/// The child tools' declarations, in the order the model sees them
/// (`seedpod_protocol::tool_decl`). They are allowed by default: a child only gets scope its
/// parent holds, so it can do nothing its parent could not. Their results are other pods'
/// transcripts, so the guard expects seedpod's markers in them.
pub const DECLS: [&ToolDecl; Kind::ALL.len()] = {
    let mut decls = [Kind::ALL[0].decl(); Kind::ALL.len()];
    let mut at = 1;
    while at < decls.len() {
        decls[at] = Kind::ALL[at].decl();
        at += 1;
    }
    decls
};

const SPAWN: ToolDecl = child(
    "spawn_pod",
    Effect::Changes,
    "start a child pod on a task; it reports back when its turn ends.",
);
const SEND: ToolDecl = child(
    "send_to_pod",
    Effect::Changes,
    "give a child pod more input.",
);
const READ: ToolDecl = child(
    "read_pod_output",
    Effect::ReadOnly,
    "what a child pod did since your last read.",
);
const LIST: ToolDecl = child(
    "list_pods",
    Effect::ReadOnly,
    "your child pods and whether each is live.",
);
const STOP: ToolDecl = child(
    "stop_pod",
    Effect::Changes,
    "stop a child pod; what it could write is yours again.",
);

/// What the five declarations share; each says its name, effect and compact line.
const fn child(name: &'static str, effect: Effect, small_note: &'static str) -> ToolDecl {
    ToolDecl {
        name,
        default_policy: Policy::Allow,
        effect,
        note: None,
        small_note: Some(small_note),
        in_small_prompt: InSmallPrompt::WhenConfigured,
        summary: CallSummary::raw,
        guard: GuardScan::ExceptPodMarkers,
        preview: Preview::Arguments,
        in_flush: InFlush::Never,
    }
}

/// The child tools a pod with `policies` offers: a denied tool is not offered at all.
fn offered(policies: &Policies) -> impl Iterator<Item = Kind> + '_ {
    Kind::ALL
        .into_iter()
        .filter(|kind| policies.offers(kind.decl()))
}

/// The specs of the child tools a pod with `policies` offers, for describing a pod without
/// running it (`seedpod prompt show`); `ChildTools::register` offers the same ones.
pub fn offered_specs(policies: &Policies) -> Vec<ToolSpec> {
    offered(policies).map(spec).collect()
}

/// The child tools as a closed set, so the spec and the call always agree on which is which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Spawn,
    Send,
    Read,
    List,
    Stop,
}

impl Kind {
    const ALL: [Kind; 5] = [Kind::Spawn, Kind::Send, Kind::Read, Kind::List, Kind::Stop];

    const fn decl(self) -> &'static ToolDecl {
        match self {
            Kind::Spawn => &SPAWN,
            Kind::Send => &SEND,
            Kind::Read => &READ,
            Kind::List => &LIST,
            Kind::Stop => &STOP,
        }
    }

    fn name(self) -> &'static str {
        self.decl().name
    }
}

/// What every child tool needs: where pods live, who "I" am, and the controller.
#[derive(Clone)]
pub struct ChildTools {
    home: Home,
    me: PodName,
    tx: mpsc::Sender<ChildMsg>,
}

impl ChildTools {
    pub fn new(home: Home, me: PodName, tx: mpsc::Sender<ChildMsg>) -> ChildTools {
        ChildTools { home, me, tx }
    }

    /// Add the child tools `policies` do not deny to `registry`, in `DECLS` order.
    pub fn register(&self, registry: &mut ToolRegistry, policies: &Policies) {
        for kind in offered(policies) {
            registry.register(Arc::new(ChildTool {
                kind,
                ctx: self.clone(),
            }));
        }
    }

    async fn ask<T>(
        &self,
        msg: impl FnOnce(oneshot::Sender<T>) -> ChildMsg,
    ) -> Result<T, ToolFailure> {
        let stopping = |_| ToolFailure::new("the pod is stopping");
        let (reply, rx) = oneshot::channel();
        self.tx.send(msg(reply)).await.map_err(stopping)?;
        rx.await
            .map_err(|_| ToolFailure::new("the pod is stopping"))
    }

    async fn records(&self) -> Result<Vec<ChildRecord>, ToolFailure> {
        self.ask(|reply| ChildMsg::Records { reply }).await
    }

    async fn record(&self, name: &PodName) -> Result<ChildRecord, ToolFailure> {
        let records = self.records().await?;
        records
            .iter()
            .find(|r| &r.name == name)
            .cloned()
            .ok_or_else(|| {
                let known: Vec<&str> = records.iter().map(|r| r.name.as_str()).collect();
                ToolFailure::new(format!(
                    "\"{name}\" is not a child of this pod (children: {}); list_pods shows them",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }

    async fn tell_liveness(&self, name: &PodName, live: bool) {
        let msg = ChildMsg::Liveness {
            name: name.clone(),
            live,
        };
        let _ = self.tx.send(msg).await;
    }
}

struct ChildTool {
    kind: Kind,
    ctx: ChildTools,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpawnArgs {
    name: PodName,
    task: String,
    #[serde(default)]
    scope: Option<ScopeArgs>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default)]
    mcp_servers: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ScopeArgs {
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    name: PodName,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    name: PodName,
    #[serde(default)]
    since: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameArgs {
    name: PodName,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn parse<T: for<'de> Deserialize<'de>>(tool: &str, arguments: &str) -> Result<T, ToolFailure> {
    serde_json::from_str(arguments).map_err(|e| {
        ToolFailure::new(format!(
            "the arguments for {tool} do not match its schema: {e}"
        ))
    })
}

/// Why `read_pod_output` read nothing of a child's log.
#[derive(Debug, thiserror::Error)]
enum Unread {
    #[error("cannot read child pod {name}'s pod.json: {cause}")]
    Meta {
        name: PodName,
        cause: seedpod_store::StoreError,
    },
    #[error("child pod {name} is gone: its pod directory is missing")]
    Gone { name: PodName },
    #[error(transparent)]
    Output(#[from] OutputError),
}

// The typed errors of the steps a child tool takes, said to the model in their own words.
impl From<SpawnRefused> for ToolFailure {
    fn from(refused: SpawnRefused) -> ToolFailure {
        ToolFailure::new(refused.to_string())
    }
}

impl From<TalkError> for ToolFailure {
    fn from(err: TalkError) -> ToolFailure {
        ToolFailure::new(err.to_string())
    }
}

impl From<RestoreError> for ToolFailure {
    fn from(err: RestoreError) -> ToolFailure {
        ToolFailure::new(err.to_string())
    }
}

fn name_param(what: &str) -> serde_json::Value {
    json!({"type": "string", "description": what})
}

fn spec(kind: Kind) -> ToolSpec {
    let (description, parameters) = match kind {
        Kind::Spawn => (
            "Start a child pod: a separate agent with its own history and log that works \
                 on `task` in this directory and reports back (a pod_event) when it finishes \
                 a turn. By default it may read this directory and write nothing; `scope.write` \
                 lends it paths to write, which you cannot write until it stops.",
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["name", "task"],
                "properties": {
                    "name": name_param("A new pod name: letters, digits, - and _."),
                    "task": {"type": "string", "description": "What the child should do; its first input."},
                    "scope": {
                        "type": "object",
                        "additionalProperties": false,
                        "properties": {
                            "read": {"type": "array", "items": {"type": "string"}, "description": "Paths it may read (default: this directory)."},
                            "write": {"type": "array", "items": {"type": "string"}, "description": "Paths it may write (default: none)."}
                        }
                    },
                    "model": {"type": "string", "description": "Its model (default: yours)."},
                    "instructions": {"type": "string", "description": "Extra instructions for its system prompt."},
                    "mcp_servers": {"type": "array", "items": {"type": "string"}, "description": "Which of your MCP servers it gets (default: all of yours; [] for none)."}
                }
            }),
        ),
        Kind::Send => (
            "Give a child pod more input. It starts a turn (or queues behind the running \
                 one); you get a pod_event when that turn ends.",
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["name", "message"],
                "properties": {
                    "name": name_param("The child's name."),
                    "message": {"type": "string", "description": "What to tell it."}
                }
            }),
        ),
        Kind::Read => (
            "Read what a child pod did since you last read (its inputs, answers, tool calls \
                 and results), a page at a time. Continues where the last read stopped unless \
                 `since` gives a cursor.",
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {
                    "name": name_param("The child's name."),
                    "since": {"type": "string", "description": "A cursor (SEGMENT:INDEX) from an earlier read."}
                }
            }),
        ),
        Kind::List => (
            "List this pod's children and their descendants: whether each is live, \
                 stopped (restorable) or gone, its task, and what it may write.",
            json!({"type": "object", "additionalProperties": false, "properties": {}}),
        ),
        Kind::Stop => (
            "Stop a child pod (or a descendant) gracefully; what it may write becomes \
                 yours again. Its log stays; a person can restore it with `seedpod start`.",
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {"name": name_param("The pod to stop.")}
            }),
        ),
    };
    ToolSpec {
        name: kind.name().to_owned(),
        description: description.to_owned(),
        parameters,
    }
}

impl Tool for ChildTool {
    fn spec(&self) -> ToolSpec {
        spec(self.kind)
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let ctx = self.ctx.clone();
        let kind = self.kind;
        async move {
            let result = match kind {
                Kind::Spawn => spawn(&ctx, &arguments).await,
                Kind::Send => send(&ctx, &arguments).await,
                Kind::Read => read(&ctx, &arguments).await,
                Kind::List => list(&ctx, &arguments).await,
                Kind::Stop => stop(&ctx, &arguments).await,
            };
            match result {
                Ok(text) => ToolOutput::ok(text),
                Err(failure) => ToolOutput::from(failure),
            }
        }
        .boxed()
    }
}

async fn spawn(ctx: &ChildTools, arguments: &str) -> Result<String, ToolFailure> {
    let args: SpawnArgs = parse(SPAWN.name, arguments)?;
    let scope = args.scope.unwrap_or_default();
    let request = SpawnRequest {
        name: args.name,
        task: args.task,
        read: scope.read,
        write: scope.write,
        model: args.model,
        instructions: args.instructions,
        mcp_servers: args.mcp_servers,
    };
    let started = ctx
        .ask(|reply| ChildMsg::Spawn {
            request,
            reply: SpawnReply::Tool(reply),
        })
        .await?;
    Ok(started?)
}

async fn send(ctx: &ChildTools, arguments: &str) -> Result<String, ToolFailure> {
    let args: SendArgs = parse(SEND.name, arguments)?;
    ctx.record(&args.name).await?;
    // A stopped child (crashed, or stopped by a person) is restored from its log first: it
    // comes back exactly as it was, so giving it work is what sending to it would mean.
    let restored = match probe::probe(&ctx.home, &ctx.me, &args.name).await {
        ChildLiveness::StoppedRestorable => {
            // Restoring makes one more live child: the controller counts it first, so a
            // stop-and-restore cycle cannot run more children than `max_children`.
            let name = args.name.clone();
            if let Err(refusal) = ctx.ask(|reply| ChildMsg::Revive { name, reply }).await? {
                return Err(ToolFailure::new(format!(
                    "child pod {} was not restored: {refusal}",
                    args.name
                )));
            }
            if let Err(err) = probe::restore(&ctx.home, &args.name).await {
                ctx.tell_liveness(&args.name, false).await;
                return Err(err.into());
            }
            format!(
                "child pod {} was stopped; restored it from its log. ",
                args.name
            )
        }
        ChildLiveness::Gone => {
            return Err(ToolFailure::new(format!(
                "child pod {} is gone (its pod directory is missing); spawn_pod starts a new one",
                args.name
            )));
        }
        ChildLiveness::Live(_) | ChildLiveness::Unresponsive(_) => String::new(),
    };
    let sent = probe::send_input(&ctx.home, &ctx.me, &args.name, &args.message).await;
    ctx.tell_liveness(&args.name, sent.is_ok()).await;
    Ok(sent.map(|taken| format!("{restored}{taken}"))?)
}

async fn read(ctx: &ChildTools, arguments: &str) -> Result<String, ToolFailure> {
    let args: ReadArgs = parse(READ.name, arguments)?;
    let record = ctx.record(&args.name).await?;
    let since = match &args.since {
        Some(text) => Some(text.parse::<OutputCursor>().map_err(ToolFailure::new)?),
        None => record.cursor.clone(),
    };
    let pod_dir = ctx.home.pod_dir(&args.name);
    let name = args.name.clone();
    let page = tokio::task::spawn_blocking(move || {
        let meta = seedpod_store::load_meta(&pod_dir)
            .map_err(|cause| Unread::Meta {
                name: name.clone(),
                cause,
            })?
            .ok_or(Unread::Gone { name })?;
        Ok::<_, Unread>(read_output(
            &pod_dir,
            &meta,
            since.as_ref(),
            DEFAULT_BUDGET_CHARS,
        )?)
    })
    .await
    .map_err(|e| ToolFailure::new(format!("reading the child's log failed: {e}")))?
    .map_err(|unread| ToolFailure::new(unread.to_string()))?;
    let msg = ChildMsg::Cursor {
        name: args.name.clone(),
        cursor: page.next.clone(),
    };
    let _ = ctx.tx.send(msg).await;
    Ok(format!(
        "{}\nnext cursor: {}{}",
        page.text.trim_end(),
        page.next,
        if page.more {
            " (more follows: call read_pod_output again)"
        } else {
            ""
        }
    ))
}

async fn list(ctx: &ChildTools, arguments: &str) -> Result<String, ToolFailure> {
    let _: NoArgs = parse(LIST.name, arguments)?;
    let records = ctx.records().await?;
    if records.is_empty() {
        return Ok("this pod has no children; spawn_pod starts one".into());
    }
    let mut out = Vec::new();
    for record in &records {
        let liveness = probe::probe(&ctx.home, &ctx.me, &record.name).await;
        ctx.tell_liveness(&record.name, liveness.is_live()).await;
        out.push(describe(ctx, record, &liveness));
    }
    Ok(out.join("\n"))
}

fn describe(ctx: &ChildTools, record: &ChildRecord, liveness: &ChildLiveness) -> String {
    let via = record
        .via
        .as_ref()
        .map(|via| format!(" (child of {via})"))
        .unwrap_or_default();
    let write = if record.scope.write.is_empty() {
        "nothing".to_owned()
    } else {
        roots(&record.scope.write)
    };
    let activity = last_activity(ctx, &record.name)
        .map(|ms| {
            format!(
                "; last activity {}",
                seedpod_client::pods::ago(ms, std::time::SystemTime::now())
            )
        })
        .unwrap_or_default();
    format!(
        "- {}{via}: {}{activity}; writes {write}; task: {}",
        record.name,
        liveness.describe(),
        record.task
    )
}

fn last_activity(ctx: &ChildTools, name: &PodName) -> Option<u64> {
    let meta = seedpod_store::load_meta(&ctx.home.pod_dir(name))
        .ok()
        .flatten()?;
    seedpod_client::pods::last_activity(&ctx.home, name, &meta)
}

fn roots(paths: &[std::path::PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

async fn stop(ctx: &ChildTools, arguments: &str) -> Result<String, ToolFailure> {
    let args: NameArgs = parse(STOP.name, arguments)?;
    let record = ctx.record(&args.name).await?;
    let stopped = probe::stop(&ctx.home, &ctx.me, &args.name).await?;
    ctx.tell_liveness(&args.name, false).await;
    let returned = if record.scope.write.is_empty() {
        String::new()
    } else {
        format!("; you may write {} again", roots(&record.scope.write))
    };
    Ok(if stopped {
        format!("stopped child pod {}{returned}", args.name)
    } else {
        format!("child pod {} was not running{returned}", args.name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model that names a child `../x` gets a tool error that says what a name may hold;
    /// nothing reaches the controller, so nothing can build a path from it.
    #[test]
    fn a_name_that_could_leave_the_runtime_directory_is_refused_as_arguments() {
        for bad in ["../x", "a/b", "", ".hidden"] {
            let arguments = json!({"name": bad, "task": "t"}).to_string();
            let err = match parse::<SpawnArgs>("spawn_pod", &arguments) {
                Ok(_) => panic!("{bad:?} was accepted"),
                Err(err) => err,
            };
            assert!(err.text().contains("spawn_pod"), "{err}");
            assert!(err.text().contains("pod name"), "{err}");
        }
        let fine = json!({"name": "kid-1", "task": "t"}).to_string();
        assert!(parse::<SpawnArgs>("spawn_pod", &fine).is_ok());
    }
}
