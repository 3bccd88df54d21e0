//! Child pods (DESIGN §7), the parts that run off the controller: starting a child process,
//! talking to children, reading their logs, delivering this pod's own reports to its parent,
//! the five tools the model drives them with, and the limits on how many there may be.
//!
//! The controller owns every piece of state (the records in `pod.json`, the scope lent to
//! children, the outbox); these tasks only do the slow work (processes, sockets, disk reads)
//! and send the controller `ChildMsg`s (`msg.rs`) with what they found, on their own queue:
//! nothing here knows the controller's other commands.

pub mod limits;
mod msg;
pub mod outbox;
pub mod output;
pub mod probe;
mod spawn_error;
pub mod tools;

pub use msg::{CHILD_QUEUE_CAPACITY, ChildMsg, SpawnReply};
pub use spawn_error::{LaunchFailed, SpawnRefused};

use std::ffi::OsString;

use seedpod_protocol::{PodEvent, PodName, SpawnRequest};
use seedpod_store::{ChildRecord, PendingReport, PodMeta, Report, ScopeGrant};

/// How a new pod was started by its parent: recorded in its `pod.json` at creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildStart {
    pub parent: PodName,
    /// The child's first input: committed (queued) in its log before it reports ready, so it
    /// is never lost between "started" and "told what to do".
    pub task: String,
    /// What the parent delegated; replaces the configured read and write roots.
    pub grant: ScopeGrant,
    /// The parent's MCP servers the child starts too (`None`: every configured one).
    pub mcp_servers: Option<Vec<String>>,
}

/// Whether a report of this kind wakes an idle parent. A finished or failed turn is what a
/// parent waits for; a stop usually comes from the parent itself or a person (and waking a
/// parent that `stop --with-children` is about to stop would leave it paused mid-turn), and a
/// grandchild is bookkeeping. Those are read at the parent's next turn.
pub fn report_wakes(event: &PodEvent) -> bool {
    match event {
        PodEvent::TurnEnded { .. } | PodEvent::Errored { .. } => true,
        PodEvent::ShutDown { .. } | PodEvent::ScopeSubDelegated { .. } | PodEvent::Unknown => false,
    }
}

/// The event pod `pod` sends a pending report as.
pub fn report_event(pod: &PodName, report: &PendingReport) -> PodEvent {
    let pod = pod.to_string();
    let event_id = report.event_id.clone();
    match &report.report {
        Report::TurnEnded => PodEvent::TurnEnded { pod, event_id },
        Report::Errored { message } => PodEvent::Errored {
            pod,
            event_id,
            message: message.clone(),
        },
        Report::Event(event) => event.clone(),
    }
}

/// What a child is told about itself in its session instructions (a layer of its system
/// prompt, rendered once per segment like every layer): who started it, what it may touch, and
/// that its parent reads what it does.
fn standing(parent: &PodName, record: &ChildRecord) -> String {
    let list = |paths: &[std::path::PathBuf]| {
        if paths.is_empty() {
            "nothing".to_owned()
        } else {
            let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            shown.join(", ")
        }
    };
    format!(
        "You are a child pod started by pod {parent} for the task in your first message. \
         {parent} is told when a turn it started ends and reads what you did, so end each turn \
         with a short summary of what you did and what is left. Your file tools may read {} and \
         write {}; anything else is refused.",
        list(&record.scope.read),
        list(&record.scope.write)
    )
}

/// The `pod serve` arguments for a new child: the parent's provider settings (a child talks to
/// the same kind of model unless told otherwise), its lineage, task and scope.
pub fn child_args(
    parent: &PodName,
    meta: &PodMeta,
    model: &str,
    request: &SpawnRequest,
    record: &ChildRecord,
    mcp_servers: &[String],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "--parent".into(),
        parent.as_str().into(),
        "--task".into(),
        request.task.clone().into(),
        "--cwd".into(),
        meta.cwd.clone().into(),
        "--provider".into(),
        meta.config.provider.as_str().into(),
        "--model".into(),
        request
            .model
            .clone()
            .unwrap_or_else(|| model.to_owned())
            .into(),
    ];
    if let Some(script) = &meta.config.script {
        args.extend(["--script".into(), script.clone().into()]);
    }
    if let Some(base_url) = &meta.config.base_url {
        args.extend(["--base-url".into(), base_url.into()]);
    }
    if let Some(temperature) = meta.config.temperature {
        args.extend(["--temperature".into(), temperature.to_string().into()]);
    }
    if let Some(max_tokens) = meta.config.max_tokens {
        args.extend(["--max-tokens".into(), max_tokens.to_string().into()]);
    }
    // Always given, and always text (`--instructions @FILE` would read a file): the child's own
    // standing, then whatever the parent added.
    let mut instructions = standing(parent, record);
    if let Some(extra) = &request.instructions {
        instructions.push_str("\n\n");
        instructions.push_str(extra);
    }
    args.extend(["--instructions".into(), instructions.into()]);
    for root in &record.scope.read {
        args.extend(["--scope-read".into(), root.clone().into()]);
    }
    for root in &record.scope.write {
        args.extend(["--scope-write".into(), root.clone().into()]);
    }
    // Always given, so a child never starts a server its parent does not run.
    args.extend(["--mcp-servers".into(), mcp_servers.join(",").into()]);
    args
}
