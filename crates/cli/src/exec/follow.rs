//! Following one `exec` run on its pod: submit the task, print what the log commits (text on
//! stdout, progress on stderr, or `--json` events), answer approval requests as the flags say,
//! and say how the run ended. Only committed entries are printed, never the raw deltas: stdout
//! holds what the log holds (`docs/exec.md`).

use std::io::Write as _;

use anyhow::Result;
use seedpod_client::Connection;
use seedpod_protocol::{
    AckOutcome, AlertLevel, ApprovalAnswer, ApprovalRequest, EntryKind, EntrySeq, Method,
    ModelItem, PodState, QueueId, RequestId, RunEndReason, ServerMsg,
};

use super::event::{ApprovalOutcome, ExecEvent, Outcome};
use super::policy::{Decision, ExecPolicy};
use crate::terminal;

/// How a followed run ended.
#[derive(Debug)]
pub struct Ended {
    pub outcome: Outcome,
    /// Why, in people's words, when it did not complete.
    pub message: Option<String>,
}

impl Ended {
    fn new(outcome: Outcome, message: impl Into<String>) -> Ended {
        Ended {
            outcome,
            message: Some(message.into()),
        }
    }
}

/// Where `exec` writes: the answer's text on stdout and progress on stderr, or one JSON event
/// per line on stdout.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    pub json: bool,
}

impl Printer {
    pub fn event(&self, event: &ExecEvent<'_>) {
        if self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", event.to_line());
            let _ = out.flush();
        }
    }

    /// A progress line on stderr (never in `--json` mode, whose events say the same).
    pub fn progress(&self, line: &str) {
        if !self.json {
            let _ = writeln!(std::io::stderr(), "{}", terminal::cell(line));
        }
    }

    fn text(&self, text: &str) {
        if self.json {
            self.event(&ExecEvent::Text { text });
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{}", terminal::text(text));
        if !text.ends_with('\n') {
            let _ = writeln!(out);
        }
        let _ = out.flush();
    }
}

/// Where this run's input went, so its entries are told from anything before it.
enum Marker {
    Seq(EntrySeq),
    Queue(QueueId),
}

/// The state of one followed run.
struct Follow<'a> {
    policy: &'a ExecPolicy,
    print: Printer,
    run_id: RequestId,
    marker: Option<Marker>,
    started: bool,
    /// Frames that came before the acknowledgement said where the input went.
    early: Vec<ServerMsg>,
    /// Set when a call asked for an approval nobody gave: the run is being cancelled, and this
    /// is how it ends whatever the cancel's `run_end` says.
    refused: Option<String>,
    /// The last error alert: why the run stopped if it stops without a recorded end.
    last_error: Option<String>,
}

/// Submit `task` to the pod behind `conn` and follow its run to the end.
pub async fn run(
    conn: &mut Connection,
    task: &str,
    policy: &ExecPolicy,
    print: Printer,
) -> Result<Ended> {
    conn.send(Method::Subscribe {
        since_seq: Some(conn.welcome.seq),
    })
    .await?;
    let run_id = conn
        .send(Method::Run {
            segments: seedpod_protocol::parse_typed(task),
        })
        .await?;
    let mut follow = Follow {
        policy,
        print,
        run_id,
        marker: None,
        started: false,
        early: Vec::new(),
        refused: None,
        last_error: None,
    };
    loop {
        let Some(msg) = conn.recv().await? else {
            return Ok(Ended::new(
                Outcome::Failed,
                "the pod closed the connection before the run finished",
            ));
        };
        let mut replies = Vec::new();
        let ended = follow.handle(msg, &mut replies);
        for method in replies {
            conn.send(method).await?;
        }
        if let Some(ended) = ended {
            return Ok(ended);
        }
    }
}

impl Follow<'_> {
    /// Handle one frame, pushing any requests to send in answer; `Some` when the run is over.
    fn handle(&mut self, msg: ServerMsg, replies: &mut Vec<Method>) -> Option<Ended> {
        match msg {
            ServerMsg::Ack {
                id,
                outcome,
                queue_id,
                entry_seq,
            } if id == self.run_id => {
                self.marker = match (outcome, queue_id, entry_seq) {
                    (AckOutcome::Queued, Some(queue), _) => Some(Marker::Queue(queue)),
                    (_, _, Some(seq)) => Some(Marker::Seq(seq)),
                    _ => {
                        return Some(Ended::new(
                            Outcome::Failed,
                            "the pod acknowledged the task without saying where it went",
                        ));
                    }
                };
                for early in std::mem::take(&mut self.early) {
                    if let Some(ended) = self.handle(early, replies) {
                        return Some(ended);
                    }
                }
                None
            }
            // A pod command (`/clear`, `/model`, …) typed as the task: its answer is the result.
            ServerMsg::CommandDone { id, message, .. } if id == self.run_id => {
                self.print.text(&message);
                Some(Ended {
                    outcome: Outcome::Completed,
                    message: None,
                })
            }
            ServerMsg::Error {
                id: Some(id),
                message,
                ..
            } if id == self.run_id => Some(Ended::new(
                Outcome::Failed,
                format!("the pod refused the task: {message}"),
            )),
            // An answer to one of this run's approvals that the pod refused (the call was
            // answered already, or the run ended meanwhile): nothing waits on it.
            ServerMsg::Error { id: Some(_), .. } => None,
            ServerMsg::Goodbye { message, .. } => Some(Ended::new(
                Outcome::Failed,
                format!("the pod stopped before the run finished: {message}"),
            )),
            msg if self.marker.is_none() => {
                self.early.push(msg);
                None
            }
            msg => self.live(msg, replies),
        }
    }

    /// A live event once the input's place is known.
    fn live(&mut self, msg: ServerMsg, replies: &mut Vec<Method>) -> Option<Ended> {
        match msg {
            ServerMsg::Committed { entry, .. } if !self.started => {
                if let EntryKind::UserInput { queue_id, .. } = &entry.kind {
                    self.started = match self.marker {
                        Some(Marker::Seq(seq)) => entry.seq == seq,
                        Some(Marker::Queue(queue)) => *queue_id == Some(queue),
                        None => false,
                    };
                }
                None
            }
            ServerMsg::Committed { entry, .. } => self.committed(entry.kind, replies),
            ServerMsg::Alert { level, message, .. } => {
                let level_name = match level {
                    AlertLevel::Info => "info",
                    AlertLevel::Warn => "warning",
                    AlertLevel::Error => "error",
                    AlertLevel::Unknown => "unknown",
                };
                if level == AlertLevel::Error {
                    self.last_error = Some(message.clone());
                }
                self.print.progress(&format!("[{level_name}] {message}"));
                self.print.event(&ExecEvent::Alert {
                    level: level_name,
                    message: &message,
                });
                None
            }
            // Every run that ends in the log ends with `run_end` before the pod goes idle; idle
            // without one means its end could not be written, and waiting on would be forever.
            ServerMsg::State {
                state: PodState::Idle,
                ..
            } if self.started => Some(self.refused_or(Ended::new(
                Outcome::Failed,
                self.last_error.clone().unwrap_or_else(|| {
                    "the run stopped: the pod went idle without recording its end".into()
                }),
            ))),
            _ => None,
        }
    }

    fn committed(&mut self, kind: EntryKind, replies: &mut Vec<Method>) -> Option<Ended> {
        match kind {
            EntryKind::AssistantItem { item } => {
                self.assistant(item);
                None
            }
            EntryKind::ToolResult {
                call_id,
                name,
                content,
                is_error,
                ..
            } => {
                // After a refusal the cancelled calls' results say only that they did not run.
                if is_error && self.refused.is_none() {
                    let first = content.lines().next().unwrap_or_default();
                    self.print
                        .progress(&format!("[tool error] {name}: {first}"));
                }
                self.print.event(&ExecEvent::ToolResult {
                    call_id: call_id.as_str(),
                    tool: &name,
                    content: &content,
                    is_error,
                });
                None
            }
            EntryKind::ApprovalRequest(request) => {
                self.approval(&request, replies);
                None
            }
            EntryKind::Usage(usage) => {
                self.print.event(&ExecEvent::Usage {
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                });
                None
            }
            EntryKind::RunEnd { reason, message } => Some(self.refused_or(ended(reason, message))),
            _ => None,
        }
    }

    fn assistant(&mut self, item: ModelItem) {
        match item {
            ModelItem::AssistantText { text } => self.print.text(&text),
            ModelItem::Reasoning { text, .. } => {
                self.print.event(&ExecEvent::Reasoning { text: &text });
            }
            ModelItem::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let summary = seedpod_pod::catalogue::call_summary(&name, &arguments);
                self.print.progress(&format!("[tool] {summary}"));
                self.print.event(&ExecEvent::ToolCall {
                    call_id: call_id.as_str(),
                    tool: &name,
                    arguments: &arguments,
                });
            }
            ModelItem::UserMessage { .. }
            | ModelItem::ToolResult { .. }
            | ModelItem::SystemMessage { .. } => {}
        }
    }

    /// Answer a request as the flags say: approve it once, or cancel the run (nobody is there
    /// to say yes, and waiting would be forever).
    fn approval(&mut self, request: &ApprovalRequest, replies: &mut Vec<Method>) {
        let decision = self.policy.decide(&request.tool);
        let (outcome, by) = match &decision {
            Decision::Approve(by) => (ApprovalOutcome::Approved, Some(by.as_str())),
            Decision::Refuse => (ApprovalOutcome::Refused, None),
        };
        self.print.event(&ExecEvent::Approval {
            call_id: request.call_id.as_str(),
            tool: &request.tool,
            summary: &request.summary,
            decision: outcome,
            by,
        });
        match decision {
            Decision::Approve(by) => {
                self.print
                    .progress(&format!("[approved by {by}] {}", request.summary));
                replies.push(Method::Approve {
                    call_id: Some(request.call_id.clone()),
                    answer: ApprovalAnswer::Approve,
                    reason: None,
                });
            }
            Decision::Refuse if self.refused.is_none() => {
                self.refused = Some(format!(
                    "the call `{}` needs approval and nobody is there to give it; {}",
                    request.summary,
                    self.policy.advice(&request.tool)
                ));
                replies.push(Method::Cancel);
            }
            Decision::Refuse => {}
        }
    }

    /// How the run ended: as a refused approval made it end, if one did.
    fn refused_or(&mut self, ended: Ended) -> Ended {
        match self.refused.take() {
            Some(why) => Ended::new(Outcome::NeedsApproval, why),
            None => ended,
        }
    }
}

/// The outcome a recorded `run_end` stands for.
fn ended(reason: RunEndReason, message: Option<String>) -> Ended {
    let detail = message.unwrap_or_default();
    match reason {
        RunEndReason::Completed => Ended {
            outcome: Outcome::Completed,
            message: None,
        },
        RunEndReason::Error => Ended::new(Outcome::Failed, format!("the run failed: {detail}")),
        RunEndReason::LimitReached => Ended::new(
            Outcome::Failed,
            format!("the run hit its iteration limit: {detail}"),
        ),
        RunEndReason::NoProgress => Ended::new(
            Outcome::Failed,
            format!("the run made no progress and was stopped: {detail}"),
        ),
        RunEndReason::Cancelled | RunEndReason::Abandoned => Ended::new(
            Outcome::Interrupted,
            "the run was cancelled before it finished",
        ),
        RunEndReason::Unknown => Ended::new(
            Outcome::Failed,
            "the run ended for a reason this seedpod does not know",
        ),
    }
}
