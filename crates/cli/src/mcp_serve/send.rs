//! `send_message`: give the pod a message as its user and, when asked, wait for the run's
//! answer — its committed messages — until the run ends, needs a person's approval, or the
//! client's time is up. Stopping the wait never stops the run.

use std::time::Duration;

use seedpod_client::Connection;
use seedpod_protocol::{
    AckOutcome, EntryKind, EntrySeq, Method, ModelItem, QueueId, RunEndReason, Segment, ServerMsg,
};

use super::Reply;

/// How this client finds its own input among the pod's committed entries.
enum Marker {
    Seq(EntrySeq),
    Queue(QueueId),
}

/// Send `text` on `conn`; with `wait`, follow the run for at most `wait_for`.
pub async fn send(conn: &mut Connection, text: &str, wait: Option<Duration>) -> Reply {
    if wait.is_some()
        && let Err(err) = conn
            .send(Method::Subscribe {
                since_seq: Some(conn.welcome.seq),
            })
            .await
    {
        return Reply::error(format!("the pod could not be followed: {err}"));
    }
    let run_id = match conn
        .send(Method::Run {
            // Plain text: no `@path` attachment or `/command` is read into what an MCP client
            // sends; it is a message, as a person would paste it.
            segments: vec![Segment::text(text)],
        })
        .await
    {
        Ok(id) => id,
        Err(err) => return Reply::error(format!("the message was not sent: {err}")),
    };
    let mut follow = Follow::default();
    let mut early = Vec::new();
    let deadline = wait.map(|wait| tokio::time::Instant::now() + wait);
    loop {
        let next = match deadline {
            Some(deadline) => match tokio::time::timeout_at(deadline, conn.recv()).await {
                Ok(next) => next,
                Err(_) => return follow.timed_out(),
            },
            None => conn.recv().await,
        };
        let msg = match next {
            Ok(Some(msg)) => msg,
            Ok(None) => return follow.partial("the pod closed the connection during the run"),
            Err(err) => return follow.partial(&format!("the pod's events stopped: {err}")),
        };
        match msg {
            ServerMsg::Ack {
                id,
                outcome,
                queue_id,
                entry_seq,
            } if id == run_id => {
                if wait.is_none() {
                    return Reply::text(match outcome {
                        AckOutcome::Queued => "queued: the pod takes it after its current run",
                        _ => "sent: the pod is working on it",
                    });
                }
                follow.marker = match (outcome, queue_id, entry_seq) {
                    (AckOutcome::Queued, Some(queue), _) => Some(Marker::Queue(queue)),
                    (_, _, Some(seq)) => Some(Marker::Seq(seq)),
                    _ => return Reply::error("the pod took the message without saying where"),
                };
                for msg in std::mem::take(&mut early) {
                    if let Some(reply) = follow.handle(msg) {
                        return reply;
                    }
                }
            }
            ServerMsg::Error {
                id: Some(id),
                message,
                ..
            } if id == run_id => {
                return Reply::error(format!("the pod refused the message: {message}"));
            }
            msg if follow.marker.is_none() => early.push(msg),
            msg => {
                if let Some(reply) = follow.handle(msg) {
                    return reply;
                }
            }
        }
    }
}

#[derive(Default)]
struct Follow {
    marker: Option<Marker>,
    started: bool,
    answers: Vec<String>,
}

impl Follow {
    fn handle(&mut self, msg: ServerMsg) -> Option<Reply> {
        let ServerMsg::Committed { entry, .. } = msg else {
            return None;
        };
        if !self.started {
            if let EntryKind::UserInput { queue_id, .. } = &entry.kind {
                self.started = match self.marker {
                    Some(Marker::Seq(seq)) => entry.seq == seq,
                    Some(Marker::Queue(queue)) => *queue_id == Some(queue),
                    None => false,
                };
            }
            return None;
        }
        match entry.kind {
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { text },
            } => {
                self.answers.push(text);
                None
            }
            EntryKind::ApprovalRequest(request) => Some(self.finish(
                false,
                &format!(
                    "[the run waits for a person to approve `{}` (call_id {}); it goes on once \
                     answered]",
                    request.summary, request.call_id
                ),
            )),
            EntryKind::RunEnd { reason, message } => {
                let detail = message.map(|m| format!(": {m}")).unwrap_or_default();
                Some(match reason {
                    RunEndReason::Completed => self.finish(false, "[run completed]"),
                    RunEndReason::Error => self.finish(true, &format!("[run failed{detail}]")),
                    RunEndReason::LimitReached => {
                        self.finish(true, &format!("[run hit its iteration limit{detail}]"))
                    }
                    RunEndReason::NoProgress => {
                        self.finish(true, &format!("[run stopped: no progress{detail}]"))
                    }
                    RunEndReason::Cancelled | RunEndReason::Abandoned => {
                        self.finish(true, "[run cancelled]")
                    }
                    RunEndReason::Unknown => self.finish(true, "[run ended]"),
                })
            }
            _ => None,
        }
    }

    /// The answers so far and a closing line.
    fn finish(&mut self, is_error: bool, last: &str) -> Reply {
        let mut text = std::mem::take(&mut self.answers).join("\n\n");
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(last);
        Reply { text, is_error }
    }

    fn timed_out(&mut self) -> Reply {
        self.finish(
            false,
            "[still running when the wait ended; read_history shows what comes later]",
        )
    }

    fn partial(&mut self, why: &str) -> Reply {
        self.finish(true, &format!("[{why}]"))
    }
}
