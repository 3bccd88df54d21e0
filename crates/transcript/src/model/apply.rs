//! `Transcript::apply`: one frame from the pod in, the view model updated.
//!
//! Order rules (DESIGN §4): `snapshot_begin` resets; snapshot frames carry the snapshot's own
//! seq and are always applied; after `snapshot_end` a live event whose seq is not above the last
//! applied one is a duplicate and changes nothing.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use seedpod_protocol::{AlertLevel, GoodbyeReason, PodState, ServerMsg};

use super::cells::CellKind;
use super::status::Notice;
use super::transcript::Transcript;

impl Transcript {
    /// Apply one frame received from the pod. Returns true when anything visible changed.
    pub fn apply(&mut self, msg: &ServerMsg) -> bool {
        if let Some(seq) = msg.seq() {
            if !self.in_snapshot && self.last_seq.is_some_and(|last| seq <= last) {
                return false;
            }
            self.last_seq = Some(self.last_seq.map_or(seq, |last| last.max(seq)));
        }
        match msg {
            ServerMsg::Welcome {
                pod,
                server_version,
                state,
                instance,
                ..
            } => {
                // A new pod process numbers its events from scratch: forget the old seq.
                if *instance != self.view.instance {
                    self.last_seq = None;
                }
                // A goodbye or a refusal was about the connection this one replaces.
                self.view.notice = None;
                self.view.name = pod.to_string();
                self.view.server_version = server_version.clone();
                self.view.instance = instance.clone();
                self.set_state(*state);
                true
            }
            ServerMsg::Incompatible { reason, .. } => self.notice(AlertLevel::Error, reason),
            ServerMsg::Error { code, message, .. } => {
                let text = format!("{}: {message}", error_code_name(code));
                self.notice(AlertLevel::Error, &text)
            }
            ServerMsg::Goodbye { reason, message } => {
                let level = match reason {
                    GoodbyeReason::Shutdown => AlertLevel::Info,
                    GoodbyeReason::Lagged
                    | GoodbyeReason::ProtocolError
                    | GoodbyeReason::Unknown => AlertLevel::Warn,
                };
                self.notice(level, message)
            }
            ServerMsg::SnapshotBegin {
                seq,
                state,
                greeting,
                segment_id,
                context,
                message_cap,
                ..
            } => {
                self.reset();
                self.view.message_cap = *message_cap;
                self.in_snapshot = true;
                self.last_seq = Some(*seq);
                self.view.greeting = greeting.clone();
                self.view.context = *context;
                self.view.segment_id = segment_id.clone();
                self.set_state(*state);
                true
            }
            ServerMsg::SnapshotEntries { entries } => {
                let mut changed = false;
                for entry in entries {
                    changed |= self.apply_entry(entry);
                }
                changed
            }
            ServerMsg::InFlight {
                text,
                thinking,
                tool_calls,
                queue,
            } => {
                self.set_live(text, thinking, tool_calls);
                self.view.queue = queue.clone();
                true
            }
            ServerMsg::SnapshotEnd { seq } => {
                self.in_snapshot = false;
                self.last_seq = Some(self.last_seq.map_or(*seq, |last| last.max(*seq)));
                self.date_running_since();
                true
            }
            ServerMsg::Committed { entry, .. } => self.apply_entry(entry),
            ServerMsg::TextDelta { text, .. } => {
                self.view.retry_notice = None;
                self.live_text(text);
                true
            }
            ServerMsg::ThinkingDelta { text, .. } => {
                self.view.retry_notice = None;
                self.live_thinking(text);
                true
            }
            ServerMsg::ToolCallDelta {
                index,
                call_id,
                name,
                arguments,
                ..
            } => {
                self.view.retry_notice = None;
                self.live_tool(*index, call_id.as_ref(), name.as_deref(), arguments);
                true
            }
            ServerMsg::State { state, .. } => {
                self.set_state(*state);
                true
            }
            ServerMsg::Queued { queue, .. } => {
                self.view.queue = queue.clone();
                true
            }
            ServerMsg::Alert { level, message, .. } => {
                let kind = CellKind::Alert {
                    level: *level,
                    message: message.clone(),
                };
                self.push_committed(kind, None);
                true
            }
            ServerMsg::ToolProgress {
                call_id, progress, ..
            } => self.tool_progress(call_id, Some(progress)),
            ServerMsg::ContextFill { context, .. } => {
                let changed = self.view.context != *context;
                self.view.context = *context;
                changed
            }
            ServerMsg::Status { message, .. } => {
                self.view.retry_notice = Some(message.clone());
                true
            }
            ServerMsg::StatusReply { status, .. } => {
                self.view.provider = status.provider.clone();
                self.view.model = status.model.clone();
                self.view.queue = status.queue.clone();
                true
            }
            // Replies the app routes itself; nothing here to show.
            ServerMsg::Ack { .. }
            | ServerMsg::History { .. }
            | ServerMsg::Context { .. }
            | ServerMsg::Completions { .. }
            | ServerMsg::CommandDone { .. }
            | ServerMsg::Spawned { .. }
            | ServerMsg::Earlier { .. }
            | ServerMsg::Approvals { .. }
            | ServerMsg::McpServers { .. }
            | ServerMsg::Unknown => false,
        }
    }

    fn set_state(&mut self, state: PodState) {
        let was = self.view.state;
        self.view.state = state;
        if state != PodState::Compacting {
            self.view.compacting_since = None;
        }
        match state {
            PodState::Running => {
                // Going on after an approval or a compaction between two requests is the same
                // run: its clock keeps counting.
                let same_run = matches!(
                    was,
                    PodState::Running | PodState::WaitingForApproval | PodState::Compacting
                );
                if !same_run || self.view.running_since.is_none() {
                    self.view.running_since = Some(Instant::now());
                }
            }
            // The run is open and nothing streams while a person decides; keep its clock.
            PodState::WaitingForApproval => self.view.retry_notice = None,
            // Nothing streams while the pod summarises. A compaction inside a run keeps the
            // run's clock for when it goes on; one between runs has no run to time.
            PodState::Compacting => {
                if was != PodState::Compacting || self.view.compacting_since.is_none() {
                    self.view.compacting_since = Some(Instant::now());
                }
                if self.run.is_none() {
                    self.view.running_since = None;
                }
                self.view.retry_notice = None;
                self.clear_live();
            }
            // A paused or stopped pod drops what was streaming (it never committed), so the
            // provisional block goes too: a client attaching now would not see it either.
            PodState::Idle | PodState::Paused | PodState::Stopping | PodState::Unknown => {
                self.view.running_since = None;
                self.view.retry_notice = None;
                self.clear_live();
                // A call stopped with its run reports no more; what it last said is stale.
                self.clear_progress();
            }
        }
        self.refresh_approval_view();
    }

    /// After a snapshot of a running pod, date the run from its `run_start` entry rather than
    /// from the moment we attached.
    fn date_running_since(&mut self) {
        let (PodState::Running, Some(run)) = (self.view.state, self.run) else {
            return;
        };
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let elapsed = Duration::from_millis(now_ms.saturating_sub(run.start_ts));
        self.view.running_since = Instant::now().checked_sub(elapsed).or(Some(Instant::now()));
    }

    fn notice(&mut self, level: AlertLevel, message: &str) -> bool {
        self.view.notice = Some(Notice {
            level,
            message: message.to_string(),
        });
        true
    }
}

fn error_code_name(code: &seedpod_protocol::ErrorCode) -> &'static str {
    use seedpod_protocol::ErrorCode;
    match code {
        ErrorCode::InvalidRequest => "invalid request",
        ErrorCode::MalformedFrame => "malformed frame",
        ErrorCode::FrameTooLarge => "frame too large",
        ErrorCode::HandshakeRequired => "handshake required",
        ErrorCode::NotRunning => "not running",
        ErrorCode::NotPaused => "not paused",
        ErrorCode::Stopping => "stopping",
        ErrorCode::StorageFailed => "storage failed",
        ErrorCode::NothingPending => "nothing pending",
        ErrorCode::Busy => "busy",
        ErrorCode::Internal => "internal error",
        ErrorCode::Unknown => "error",
    }
}
