//! `seedpod send`: submit input, then follow the event stream until that input's run ends.
//!
//! Stdout gets what the log holds: each assistant message's text as the pod commits it,
//! cleaned (reasoning moved out, a stuttered repeat removed: `docs/agent-loop.md` §Cleaning an
//! answer), never the raw deltas, which a script could not take back. Tool calls, alerts and
//! pauses go to stderr. `--json` prints every frame of the run as it comes, deltas included.

use std::io::Write;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::{
    AckOutcome, ClientMode, EntryKind, EntrySeq, Method, ModelItem, QueueId, RunEndReason,
    ServerMsg,
};

use crate::exit::Exit;
use crate::pods;

/// How long `send` waits for the pod to acknowledge its input (a durable log write) before it
/// gives up and says so.
const ACK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// How this client recognises its own input in the stream.
enum Marker {
    /// Committed right away at this log seq.
    Seq(EntrySeq),
    /// Queued; committed later carrying this queue id.
    Queue(QueueId),
}

pub async fn send(
    home: &Home,
    pod: &pods::Pod,
    text: String,
    json: bool,
    no_wait: bool,
) -> Result<()> {
    let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
    if !no_wait {
        let since = conn.welcome.seq;
        conn.send(Method::Subscribe {
            since_seq: Some(since),
        })
        .await?;
    }
    let run_id = conn
        .send(Method::Run {
            segments: seedpod_protocol::parse_typed(&text),
        })
        .await?;
    let mut follow = Follow {
        marker: None,
        started: false,
        json,
        buffered: Vec::new(),
        last_error: None,
    };
    loop {
        // Until the pod acknowledges, a silent pod is an error with a way out; after, the run
        // may take as long as it takes.
        let next = conn.recv_line();
        let received = if follow.marker.is_none() {
            match tokio::time::timeout(ACK_TIMEOUT, next).await {
                Ok(received) => received,
                Err(_) => {
                    return Err(Exit::failure(format!(
                        "pod \"{pod}\" did not acknowledge the input within {} s; it may be \
                         wedged (`seedpod ls` shows its state). Whether the input was kept, \
                         `seedpod history {pod}` shows",
                        ACK_TIMEOUT.as_secs()
                    )));
                }
            }
        } else {
            next.await
        };
        let Some(line) = received? else {
            return Err(Exit::failure(format!(
                "pod \"{pod}\" closed the connection before the run finished; `seedpod history {pod}` shows what was committed"
            )));
        };
        let msg: ServerMsg = serde_json::from_str(&line)
            .map_err(|e| Exit::failure(format!("undecodable frame from the pod: {e}")))?;
        match &msg {
            ServerMsg::Ack {
                id,
                outcome,
                queue_id,
                entry_seq,
            } if *id == run_id => {
                follow.marker = match (outcome, queue_id, entry_seq) {
                    (AckOutcome::Queued, Some(q), _) => Some(Marker::Queue(*q)),
                    (_, _, Some(seq)) => Some(Marker::Seq(*seq)),
                    _ => {
                        return Err(Exit::failure(
                            "the pod acknowledged without saying where the input went",
                        ));
                    }
                };
                if no_wait {
                    println!(
                        "{}",
                        if matches!(outcome, AckOutcome::Queued) {
                            "queued"
                        } else {
                            "started"
                        }
                    );
                    return Ok(());
                }
                for (line, msg) in std::mem::take(&mut follow.buffered) {
                    if let Some(done) = follow.handle(&line, &msg)? {
                        return done;
                    }
                }
            }
            // A pod command (`/clear`, `/memory`, `/model`, `/help`): its answer is the result.
            ServerMsg::CommandDone { id, message, .. } if *id == run_id => {
                if json {
                    println!("{line}");
                } else {
                    println!("{}", crate::terminal::text(message));
                }
                return Ok(());
            }
            ServerMsg::Error {
                id: Some(id),
                message,
                ..
            } if *id == run_id => {
                return Err(Exit::failure(format!(
                    "pod \"{pod}\" refused the input: {message}"
                )));
            }
            ServerMsg::Goodbye { message, .. } => {
                return Err(Exit::failure(format!(
                    "pod \"{pod}\" said goodbye before the run finished: {message}"
                )));
            }
            _ if follow.marker.is_none() => follow.buffered.push((line, msg)),
            _ => {
                if let Some(done) = follow.handle(&line, &msg)? {
                    return done;
                }
            }
        }
    }
}

struct Follow {
    marker: Option<Marker>,
    started: bool,
    json: bool,
    buffered: Vec<(String, ServerMsg)>,
    /// The last error alert since the run started: why it stopped, if it stops unrecorded.
    last_error: Option<String>,
}

impl Follow {
    /// Handle one frame; `Some` when the run is over.
    fn handle(&mut self, line: &str, msg: &ServerMsg) -> Result<Option<Result<()>>> {
        if !self.started {
            if let ServerMsg::Committed { entry, .. } = msg
                && let EntryKind::UserInput { queue_id, .. } = &entry.kind
            {
                self.started = match self.marker {
                    Some(Marker::Seq(seq)) => entry.seq == seq,
                    Some(Marker::Queue(q)) => *queue_id == Some(q),
                    None => false,
                };
                if self.started && self.json {
                    println!("{line}");
                }
            }
            return Ok(None);
        }
        if self.json {
            println!("{line}");
        }
        let mut out = std::io::stdout();
        match msg {
            ServerMsg::Committed { entry, .. } => match &entry.kind {
                EntryKind::AssistantItem {
                    item: ModelItem::AssistantText { text },
                } if !self.json => {
                    let _ = write!(out, "{}", crate::terminal::text(text));
                    let _ = out.flush();
                }
                EntryKind::AssistantItem {
                    item:
                        ModelItem::ToolCall {
                            name, arguments, ..
                        },
                } if !self.json => {
                    let _ = writeln!(out);
                    eprintln!(
                        "[tool call] {} {}",
                        crate::terminal::cell(name),
                        crate::terminal::cell(arguments)
                    );
                }
                EntryKind::RunEnd { reason, message } => {
                    if !self.json {
                        let _ = writeln!(out);
                    }
                    let detail = message.clone().unwrap_or_default();
                    let done = match reason {
                        RunEndReason::Completed => Ok(()),
                        RunEndReason::Error => {
                            Err(Exit::failure(format!("the run failed: {detail}")))
                        }
                        RunEndReason::LimitReached => Err(Exit::failure(format!(
                            "the run hit its iteration limit: {detail}"
                        ))),
                        RunEndReason::NoProgress => Err(Exit::failure(format!(
                            "the run made no progress and was stopped: {detail}"
                        ))),
                        RunEndReason::Cancelled | RunEndReason::Abandoned => {
                            Err(Exit::failure("the run was cancelled before it finished"))
                        }
                        RunEndReason::Unknown => Err(Exit::failure(
                            "the run ended for a reason this seedpod does not know",
                        )),
                    };
                    return Ok(Some(done));
                }
                _ => {}
            },
            ServerMsg::State { state, .. }
                if !self.json && *state == seedpod_protocol::PodState::Paused =>
            {
                eprintln!("\n[paused] `seedpod resume` continues this run; Ctrl-C stops waiting");
            }
            // Every run that ends in the log ends with `run_end` before the pod goes idle. Idle
            // without one means the end could not be written (a full disk, a failed log): the
            // run is over all the same, and waiting on would be forever.
            ServerMsg::State { state, .. } if *state == seedpod_protocol::PodState::Idle => {
                if !self.json {
                    let _ = writeln!(out);
                }
                // The pod's own alert says what happened ("the run stopped: …").
                let why = self.last_error.clone().unwrap_or_else(|| {
                    "the run stopped: the pod went idle without recording its end".into()
                });
                return Ok(Some(Err(Exit::failure(crate::terminal::text(&why)))));
            }
            ServerMsg::Alert { message, level, .. } => {
                if *level == seedpod_protocol::AlertLevel::Error {
                    self.last_error = Some(message.clone());
                }
                if !self.json {
                    eprintln!("\n[alert] {}", crate::terminal::text(message));
                }
            }
            _ => {}
        }
        Ok(None)
    }
}
