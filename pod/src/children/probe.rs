//! Talking to children over their sockets: is it live, give it input, stop it. Each call is
//! bounded, so a wedged child cannot hold a tool call (or the parent) forever.

use std::time::Duration;

use seedpod_client::pods::STATUS_TIMEOUT;
use seedpod_client::{ClientError, Connection, Home, Liveness};
use seedpod_protocol::{
    AckOutcome, ClientMode, Entry, Method, PodEvent, PodName, PodState, Segment, ServerMsg,
};
use tokio::sync::mpsc;

use super::ChildMsg;
use super::report_event;

/// A graceful stop: the child finishes its log and reports `shut_down` first.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// What a parent knows of a child (DESIGN §7's tri-state). A failed probe is never "gone":
/// only a child whose pod directory is missing is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildLiveness {
    Live(PodState),
    /// Not running, but its log and pod.json are there: `seedpod start NAME` restores it.
    StoppedRestorable,
    /// Something listens but did not answer (busy or wedged); still counted as live.
    Unresponsive(String),
    /// No pod.json: deleted, or never created.
    Gone,
}

impl ChildLiveness {
    pub fn is_live(&self) -> bool {
        matches!(
            self,
            ChildLiveness::Live(_) | ChildLiveness::Unresponsive(_)
        )
    }

    pub fn describe(&self) -> String {
        match self {
            ChildLiveness::Live(state) => format!("live ({})", state.as_str()),
            ChildLiveness::StoppedRestorable => "stopped (restorable)".into(),
            ChildLiveness::Unresponsive(why) => format!("live but not answering ({why})"),
            ChildLiveness::Gone => "gone (no pod directory)".into(),
        }
    }
}

fn client_name(me: &PodName) -> String {
    format!("seedpod-pod:{me}")
}

/// The client's status probe (the one `ls` and the picker use), plus "gone" for a child whose
/// pod directory is missing.
pub async fn probe(home: &Home, me: &PodName, name: &PodName) -> ChildLiveness {
    match seedpod_client::pods::probe(home, name, &client_name(me)).await {
        Liveness::Running(status) => ChildLiveness::Live(status.state),
        Liveness::Stopped => not_running(home, name),
        Liveness::Unresponsive(why) => ChildLiveness::Unresponsive(why),
    }
}

fn not_running(home: &Home, name: &PodName) -> ChildLiveness {
    if home.pod_dir(name).join(seedpod_store::META_FILE).exists() {
        ChildLiveness::StoppedRestorable
    } else {
        ChildLiveness::Gone
    }
}

/// One recorded pod to relink: a direct child, or a descendant learned through one (whose
/// reports go to its own parent, so they are not ours to deliver or take).
pub struct Relink {
    pub name: PodName,
    pub direct: bool,
}

/// After a restart: probe every recorded child, tell the controller what was found, ask live
/// direct children to deliver reports that waited for us, and take those a stopped one left.
pub async fn relink(home: Home, me: PodName, pods: Vec<Relink>, tx: mpsc::Sender<ChildMsg>) {
    for Relink { name, direct } in pods {
        let liveness = probe(&home, &me, &name).await;
        tracing::info!(event = "child_relinked", child = %name, liveness = %liveness.describe());
        if direct && liveness.is_live() {
            let nudge = tokio::time::timeout(STATUS_TIMEOUT, async {
                let mut conn =
                    Connection::connect(&home, &name, &client_name(&me), ClientMode::Control)
                        .await?;
                conn.call(Method::DeliverReports).await
            })
            .await;
            if let Ok(Err(err)) = nudge {
                tracing::info!(event = "child_nudge_failed", child = %name, error = %err);
            }
        }
        if direct && liveness == ChildLiveness::StoppedRestorable {
            let events = stopped_reports(&home, &name).await;
            if !events.is_empty() {
                tracing::info!(event = "stopped_child_reports", child = %name, count = events.len());
                let _ = tx.send(ChildMsg::Reports { events }).await;
            }
        }
        let msg = ChildMsg::Liveness {
            live: liveness.is_live(),
            name,
        };
        if tx.send(msg).await.is_err() {
            return;
        }
    }
}

/// Reports a stopped child could not deliver (its parent was away when it stopped): read from
/// its log without touching it. Anything unreadable (a torn line from a crash) means none are
/// taken; the child delivers them itself when it is restored.
async fn stopped_reports(home: &Home, name: &PodName) -> Vec<PodEvent> {
    let pod_dir = home.pod_dir(name);
    let name = name.to_owned();
    let read = tokio::task::spawn_blocking(move || {
        let meta = seedpod_store::load_meta(&pod_dir).ok().flatten()?;
        let path = seedpod_store::segment_path(&pod_dir, &meta.active_segment);
        let text = std::fs::read_to_string(path).ok()?;
        let entries: Vec<Entry> = text
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .ok()?;
        let state = seedpod_store::SegmentState::replay(&entries).ok()?;
        Some(
            state
                .outbox
                .iter()
                .map(|report| report_event(&name, report))
                .collect::<Vec<_>>(),
        )
    })
    .await;
    read.ok().flatten().unwrap_or_default()
}

/// Start a stopped child again (`pod serve NAME`, which restores it from its log with the
/// settings and scope its `pod.json` records).
pub async fn restore(home: &Home, name: &PodName) -> Result<(), RestoreError> {
    let meta = seedpod_store::load_meta(&home.pod_dir(name))
        .ok()
        .flatten()
        .ok_or_else(|| RestoreError::NoMeta(name.clone()))?;
    let exe = std::env::current_exe().map_err(RestoreError::NoBinary)?;
    let spec = seedpod_client::launch::Launch {
        exe,
        name: name.to_owned(),
        args: Vec::new(),
        cwd: meta.cwd,
        env: Vec::new(),
        inherit_fd: None,
    };
    seedpod_client::launch::launch(home, &spec)
        .await
        .map_err(|error| RestoreError::Launch {
            name: name.clone(),
            error,
        })
}

/// Why a stopped child could not be started again.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("child pod {0} has no readable pod.json")]
    NoMeta(PodName),
    #[error("cannot find the seedpod binary: {0}")]
    NoBinary(std::io::Error),
    #[error("child pod {name} could not be restored: {error}")]
    Launch {
        name: PodName,
        error: seedpod_client::launch::LaunchError,
    },
}

/// Why a child did not take input or a stop; worded for the model (the tools' error results).
#[derive(Debug, thiserror::Error)]
pub enum TalkError {
    /// Nothing listens on its socket.
    #[error(
        "child pod {name} is not running ({}); nothing was sent. A person can restore it with \
         `seedpod start {name}`.",
        liveness.describe()
    )]
    NotRunning {
        name: PodName,
        liveness: ChildLiveness,
    },
    #[error("cannot reach child pod {name}: {cause}")]
    Unreachable { name: PodName, cause: ClientError },
    /// It answered a delegation with something that is not an acknowledgement.
    #[error("child pod {name} answered unexpectedly: {answer:?}")]
    Unexpected {
        name: PodName,
        answer: Box<ServerMsg>,
    },
    #[error("child pod {name} did not take the message: {cause}")]
    NotTaken { name: PodName, cause: ClientError },
    #[error("child pod {name} did not stop cleanly: {cause}")]
    NotStopped { name: PodName, cause: ClientError },
    #[error("child pod {name} did not stop within {}s", STOP_TIMEOUT.as_secs())]
    StopTimedOut { name: PodName },
}

/// Give `name` new input as its parent; returns how it was taken.
pub async fn send_input(
    home: &Home,
    me: &PodName,
    name: &PodName,
    message: &str,
) -> Result<String, TalkError> {
    let mut conn = Connection::connect(home, name, &client_name(me), ClientMode::Control)
        .await
        .map_err(|err| match err {
            ClientError::NotRunning { .. } => TalkError::NotRunning {
                name: name.clone(),
                liveness: not_running(home, name),
            },
            cause => TalkError::Unreachable {
                name: name.clone(),
                cause,
            },
        })?;
    let method = Method::Delegate {
        segments: vec![Segment::text(message)],
    };
    match conn.call(method).await {
        Ok(ServerMsg::Ack {
            outcome, queue_id, ..
        }) => Ok(match (outcome, queue_id) {
            (AckOutcome::Queued, Some(queue_id)) => format!(
                "child pod {name} is busy; your message is queued (#{queue_id}) and starts its \
                 next turn. You get a pod_event when that turn ends."
            ),
            _ => format!(
                "child pod {name} took your message and started a turn; you get a pod_event \
                 when it ends."
            ),
        }),
        Ok(other) => Err(TalkError::Unexpected {
            name: name.clone(),
            answer: Box::new(other),
        }),
        Err(cause) => Err(TalkError::NotTaken {
            name: name.clone(),
            cause,
        }),
    }
}

/// Ask `name` to shut down and wait until it has closed its log. `Ok(false)`: it was not
/// running.
pub async fn stop(home: &Home, me: &PodName, name: &PodName) -> Result<bool, TalkError> {
    let mut conn =
        match Connection::connect(home, name, &client_name(me), ClientMode::Control).await {
            Ok(conn) => conn,
            Err(ClientError::NotRunning { .. }) => return Ok(false),
            Err(cause) => {
                return Err(TalkError::Unreachable {
                    name: name.clone(),
                    cause,
                });
            }
        };
    let stopped = tokio::time::timeout(STOP_TIMEOUT, async {
        conn.call(Method::Shutdown).await?;
        // The pod closes every connection only after its log is closed.
        while let Ok(Some(_)) = conn.recv().await {}
        Ok::<(), ClientError>(())
    })
    .await;
    match stopped {
        Ok(Ok(())) => Ok(true),
        Ok(Err(cause)) => Err(TalkError::NotStopped {
            name: name.clone(),
            cause,
        }),
        Err(_) => Err(TalkError::StopTimedOut { name: name.clone() }),
    }
}
