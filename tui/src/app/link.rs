//! What the link reports: frames for the transcript, replies to our requests, and the
//! connection coming and going.

use std::time::Instant;

use seedpod_protocol::{AckOutcome, PodCommand, ServerMsg};
use seedpod_transcript::ConnectionState;

use super::{App, Effect, ExitReason, FlashLevel, Pending};
use crate::connection::ConnectionEvent;

impl App {
    /// One link event. Returns the effects and whether the screen changed.
    pub fn on_link(&mut self, event: ConnectionEvent, now: Instant) -> (bool, Vec<Effect>) {
        let result = self.link_event(event, now);
        // A request that arrived opens the modal now: its grace period starts here.
        self.sync_approval(now);
        result
    }

    /// A live frame worth a person's attention while the terminal is not focused: a turn
    /// that ended, an approval that waits. Snapshot entries are history, never news.
    fn attention(&self, msg: &ServerMsg) -> Option<Effect> {
        if self.focused {
            return None;
        }
        let ServerMsg::Committed { entry, .. } = msg else {
            return None;
        };
        let body = match &entry.kind {
            seedpod_protocol::EntryKind::RunEnd { reason, .. } => {
                use seedpod_protocol::RunEndReason;
                match reason {
                    RunEndReason::Completed => "the turn is done".to_owned(),
                    RunEndReason::Error => "the turn failed".to_owned(),
                    RunEndReason::LimitReached | RunEndReason::NoProgress => {
                        "the turn was stopped".to_owned()
                    }
                    RunEndReason::Cancelled | RunEndReason::Abandoned | RunEndReason::Unknown => {
                        return None;
                    }
                }
            }
            seedpod_protocol::EntryKind::ApprovalRequest(request) => {
                format!("waiting for your approval: {}", request.summary)
            }
            _ => return None,
        };
        Some(Effect::Notify {
            title: format!("seedpod {}", self.pod),
            body,
        })
    }

    /// Connected: the transcript learns which pod process it is looking at.
    fn welcomed(&mut self, welcome: seedpod_client::Welcome) {
        self.link = ConnectionState::Connected;
        self.transcript.apply(&ServerMsg::Welcome {
            protocol: seedpod_protocol::PROTOCOL_VERSION,
            pod: welcome.pod,
            server_version: welcome.server_version,
            state: welcome.state,
            instance: welcome.instance,
            seq: welcome.seq,
        });
    }

    fn link_event(&mut self, event: ConnectionEvent, now: Instant) -> (bool, Vec<Effect>) {
        match event {
            ConnectionEvent::Connected(welcome) => {
                if matches!(
                    self.link,
                    ConnectionState::Reconnecting { .. } | ConnectionState::Stopped
                ) {
                    self.flash(FlashLevel::Info, "reconnected to the pod", now);
                }
                self.welcomed(welcome);
                (true, Vec::new())
            }
            // The same pod process after a dropped link: what was missed follows as events.
            ConnectionEvent::Resumed(welcome) => {
                self.flash(
                    FlashLevel::Info,
                    "link back — resumed where it left off",
                    now,
                );
                self.welcomed(welcome);
                (true, Vec::new())
            }
            ConnectionEvent::Frame(msg) => {
                self.note_reports(&msg);
                let mut effects = self.approvals_changed(&msg);
                effects.extend(self.mcp_changed(&msg));
                let changed = self.transcript.apply(&msg);
                effects.extend(self.attention(&msg));
                (changed, effects)
            }
            ConnectionEvent::Reply { tag, msg } => match self.pending.remove(&tag) {
                Some(pending) => self.reply(pending, msg, now),
                None => (false, Vec::new()),
            },
            ConnectionEvent::Failed { tag, reason } => match self.pending.remove(&tag) {
                Some(pending) => self.failed(pending, &reason, now),
                None => (false, Vec::new()),
            },
            ConnectionEvent::Down { attempt, reason } => {
                if self.is_pending(|p| matches!(p, Pending::Stop)) {
                    // The pod we asked to stop has closed its socket: that is the stop.
                    return (true, vec![self.exit(ExitReason::Stopped)]);
                }
                self.link = ConnectionState::Reconnecting { attempt, reason };
                (true, Vec::new())
            }
            ConnectionEvent::Stopped { attempt } => {
                if self.is_pending(|p| matches!(p, Pending::Stop)) {
                    return (true, vec![self.exit(ExitReason::Stopped)]);
                }
                // Once is news; the link's later attempts change nothing on screen.
                let changed = self.link != ConnectionState::Stopped || attempt == 1;
                self.link = ConnectionState::Stopped;
                (changed, Vec::new())
            }
            ConnectionEvent::Incompatible { message } => {
                self.link = ConnectionState::Incompatible { message };
                (true, Vec::new())
            }
        }
    }

    fn reply(&mut self, pending: Pending, msg: ServerMsg, now: Instant) -> (bool, Vec<Effect>) {
        if let ServerMsg::Error { message, .. } = &msg {
            return self.failed(pending, message, now);
        }
        match (pending, msg) {
            (Pending::Run(_), ServerMsg::Ack { outcome, .. }) => {
                if outcome == AckOutcome::Queued {
                    self.flash(
                        FlashLevel::Info,
                        "queued — it runs when the current turn ends",
                        now,
                    );
                }
                (true, Vec::new())
            }
            (Pending::Stop, _) => (true, vec![self.exit(ExitReason::Stopped)]),
            (Pending::Withdraw(entry), ServerMsg::Ack { .. }) => {
                if self.composer.is_empty() {
                    self.composer.set(&entry);
                }
                self.flash(
                    FlashLevel::Info,
                    "withdrawn from the queue — edit it and press Enter to send again",
                    now,
                );
                (true, Vec::new())
            }
            (
                Pending::Completion { kind, prefix },
                ServerMsg::Completions {
                    items, truncated, ..
                },
            ) => {
                let changed = self
                    .popup
                    .as_mut()
                    .is_some_and(|popup| popup.answer(kind, &prefix, items, truncated));
                (changed, Vec::new())
            }
            // The footer said "cancelling…"; once the pod has done it, it says so instead.
            (Pending::Cancel, ServerMsg::Ack { .. }) => {
                self.flash(FlashLevel::Info, "cancelled the turn", now);
                (true, Vec::new())
            }
            (Pending::Approve { call_id, answer }, ServerMsg::Ack { .. }) => {
                self.approval_replied(&call_id, answer, Ok(()), now);
                (true, Vec::new())
            }
            (Pending::Command(command), ServerMsg::CommandDone { message, .. }) => {
                self.command_done(command, &message, now);
                (true, Vec::new())
            }
            // `/model` alone: the model in use and the server's list, which a footer line cuts.
            (Pending::Models, ServerMsg::CommandDone { message, .. }) => {
                self.overlay = super::Overlay::Text {
                    title: "models",
                    text: model_listing(&message),
                    top: 0,
                };
                (true, Vec::new())
            }
            (Pending::McpServers, ServerMsg::McpServers { servers, .. }) => {
                self.mcp_listed(servers);
                (true, Vec::new())
            }
            (Pending::Approvals, ServerMsg::Approvals { standing, .. }) => {
                self.approvals_listed(standing);
                (true, Vec::new())
            }
            (Pending::Spawn { .. }, ServerMsg::Spawned { name, .. }) => {
                self.spawned(name, now);
                (true, Vec::new())
            }
            (
                Pending::Earlier { generation },
                ServerMsg::Earlier {
                    segment_id,
                    entries,
                    more,
                    ..
                },
            ) => (
                self.earlier_page(generation, &segment_id, &entries, more),
                Vec::new(),
            ),
            (
                Pending::Run(_)
                | Pending::Pause
                | Pending::Cancel
                | Pending::Resume
                | Pending::Withdraw(_)
                | Pending::Completion { .. }
                | Pending::Approve { .. }
                | Pending::Command(_)
                | Pending::Models
                | Pending::Spawn { .. }
                | Pending::Approvals
                | Pending::McpServers
                | Pending::Earlier { .. },
                _,
            ) => (false, Vec::new()),
        }
    }

    /// A pod command is done: say so in the footer. For `/clear` in words of our own: the pod's
    /// message names both segments in full and would not fit.
    fn command_done(&mut self, command: PodCommand, message: &str, now: Instant) {
        let text = match command {
            PodCommand::Clear => {
                self.view.end();
                "started a new segment: the model starts afresh; the old one stays in the log"
                    .to_string()
            }
            // The compaction cell is at the end: show it.
            PodCommand::Compact => {
                self.view.end();
                message.trim().replace('\n', " ")
            }
            // A listing: it gets a popup of its own.
            PodCommand::Mcp => {
                self.overlay = super::Overlay::Text {
                    title: "MCP servers",
                    text: message.trim().to_owned(),
                    top: 0,
                };
                return;
            }
            PodCommand::Memory
            | PodCommand::Model
            | PodCommand::Help
            | PodCommand::Commit
            | PodCommand::Unknown => message.trim().replace('\n', " "),
        };
        self.flash(FlashLevel::Info, text, now);
    }

    fn failed(&mut self, pending: Pending, reason: &str, now: Instant) -> (bool, Vec<Effect>) {
        match pending {
            Pending::Run(entry) => {
                // Nothing typed is lost: a refused input goes back into an empty composer.
                if self.composer.is_empty() {
                    self.composer.set(&entry);
                }
                self.flash(
                    FlashLevel::Error,
                    format!("not sent: {reason} — your message is back in the composer"),
                    now,
                );
            }
            Pending::Pause | Pending::Cancel | Pending::Resume => {
                self.flash(FlashLevel::Warn, reason.to_string(), now);
            }
            // Usually: it was sent before the withdrawal arrived.
            Pending::Withdraw(_) => {
                self.flash(FlashLevel::Warn, format!("not withdrawn: {reason}"), now);
            }
            Pending::Approve { call_id, answer } => {
                self.approval_replied(&call_id, answer, Err(reason), now);
            }
            // `busy` (a turn runs) and friends: the pod's message says what to do.
            Pending::Command(command) => {
                self.flash(
                    FlashLevel::Warn,
                    format!("/{}: {reason}", command.as_str()),
                    now,
                );
            }
            Pending::Models => self.flash(FlashLevel::Warn, format!("/model: {reason}"), now),
            Pending::Spawn { name } => self.spawn_failed(&name, reason, now),
            Pending::Approvals => self.approvals_failed(reason, now),
            Pending::McpServers => self.mcp_failed(reason, now),
            Pending::Earlier { generation } => self.earlier_failed(generation, reason, now),
            Pending::Stop => return (true, vec![self.exit(ExitReason::Stopped)]),
            // A pod without completion support answers `invalid_request`; no popup then.
            Pending::Completion { .. } => return (false, Vec::new()),
        }
        (true, Vec::new())
    }
}

/// The pod's one-line answer to `/model` ("model: m (p); the server offers 3: a, b, c;
/// /model NAME switches") as a listing: one model per line.
fn model_listing(message: &str) -> String {
    let mut out = String::new();
    for part in message.trim().split("; ") {
        match part.split_once(": ") {
            Some((head, models)) if head.starts_with("the server offers") => {
                out.push_str(head);
                out.push('\n');
                for model in models.split(", ") {
                    out.push_str("  ");
                    out.push_str(model);
                    out.push('\n');
                }
            }
            Some(_) | None => {
                out.push_str(part);
                out.push('\n');
            }
        }
    }
    out
}
