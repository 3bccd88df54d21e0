//! Attach and subscribe: a consistent snapshot taken inside the controller (so the next live
//! event has exactly the next seq: no gap, no duplicate), serialised by the connection.

use std::collections::HashSet;
use std::sync::Arc;

use seedpod_protocol::{
    Entry, EntryKind, EventSeq, PodState, QueuedItem, ReportId, SegmentId, ServerMsg, SystemItem,
};

use super::Controller;
use crate::bus::Subscription;

/// The state a connection turns into `snapshot_begin` … `snapshot_end`.
pub struct SnapshotData {
    pub seq: EventSeq,
    pub state: PodState,
    pub greeting: String,
    pub segment_id: SegmentId,
    pub entries: Vec<Arc<Entry>>,
    /// How full the context is.
    pub context: seedpod_protocol::ContextFill,
    /// The `in_flight` frame.
    pub in_flight: ServerMsg,
    /// Alerts the pod raised at restore, repeated to each new client after the snapshot.
    pub alerts: Vec<String>,
    /// `[input] max_message_chars`.
    pub message_cap: u64,
}

pub enum CatchUp {
    /// Everything after `since` was still in the ring.
    Replay(Vec<Arc<str>>),
    Snapshot(Box<SnapshotData>),
}

pub struct SubscribeReply {
    pub catch_up: CatchUp,
    pub subscription: Subscription,
}

/// The clients' side of the pod: the event bus, how many are attached, what is streaming now
/// (for a reattaching client's snapshot), and alerts to repeat to each one that attaches.
pub(super) struct Audience {
    pub(super) bus: crate::bus::Bus,
    pub(super) in_flight: super::InFlight,
    pub(super) clients: u32,
    /// Alerts to repeat to every client that attaches (restore findings).
    pub(super) standing_alerts: Vec<String>,
    /// When the next `queued` event may go out (`queue_events.rs`).
    pub(super) queue_events: super::queue_events::QueueEvents,
    /// The fill clients were last told, so a commit that changes it tells them again and one
    /// that does not stays quiet (`context.rs` `publish_fill`).
    pub(super) fill: seedpod_protocol::ContextFill,
}

impl Controller {
    pub(super) fn subscribe(&mut self, since: Option<EventSeq>) -> SubscribeReply {
        let replay = since.and_then(|since| self.audience.bus.replay_since(since));
        let catch_up = match replay {
            Some(lines) => CatchUp::Replay(lines),
            None => CatchUp::Snapshot(Box::new(self.snapshot())),
        };
        SubscribeReply {
            catch_up,
            subscription: self.audience.bus.subscribe(),
        }
    }

    fn snapshot(&self) -> SnapshotData {
        SnapshotData {
            seq: self.audience.bus.seq(),
            state: self.pod_state(),
            greeting: format!(
                "pod {} · {}/{} · {} entries in segment {}",
                self.pod.name,
                self.log.state.model.provider.as_str(),
                self.log.state.model.model,
                self.log.entries.len(),
                self.log.state.segment_id
            ),
            segment_id: self.log.state.segment_id.clone(),
            entries: self.log.entries.clone(),
            context: crate::context::estimate::fill(&self.log.state),
            in_flight: ServerMsg::InFlight {
                text: self.audience.in_flight.text.clone(),
                thinking: self.audience.in_flight.thinking.clone(),
                tool_calls: self.audience.in_flight.tool_calls.clone(),
                queue: self.log.state.pending.clone(),
            },
            // Besides restore's findings: what is wrong with an MCP server now, so a client
            // that attaches after the alert went out still learns it.
            alerts: self
                .audience
                .standing_alerts
                .iter()
                .cloned()
                .chain(self.mcp.hub.standing_alerts())
                .chain(self.mcp.flags.values().cloned())
                .collect(),
            message_cap: self.session.max_message_chars as u64,
        }
    }
}

/// Pod event ids already in the log (committed or queued), for dedupe after a restart.
pub fn event_ids(entries: &[Entry]) -> HashSet<ReportId> {
    let mut ids = HashSet::new();
    for entry in entries {
        let event = match &entry.kind {
            EntryKind::SystemItem {
                item: SystemItem::PodEvent { event, .. },
                ..
            }
            | EntryKind::Queued {
                item: QueuedItem::PodEvent { event, .. },
                ..
            } => event,
            EntryKind::SegmentStart(_)
            | EntryKind::RunStart { .. }
            | EntryKind::UserInput { .. }
            | EntryKind::AssistantItem { .. }
            | EntryKind::AssistantRaw { .. }
            | EntryKind::AssistantInterrupted { .. }
            | EntryKind::ToolResult { .. }
            | EntryKind::SystemItem { .. }
            | EntryKind::TurnEnd { .. }
            | EntryKind::RunEnd { .. }
            | EntryKind::Usage(_)
            | EntryKind::ConfigChanged { .. }
            | EntryKind::Queued { .. }
            | EntryKind::Dequeued { .. }
            | EntryKind::ApprovalRequest(_)
            | EntryKind::ApprovalAnswer { .. }
            | EntryKind::ApprovalRevoked { .. }
            | EntryKind::ApprovalStanding { .. }
            | EntryKind::ContextWindow(_)
            | EntryKind::ContextPruned { .. }
            | EntryKind::Outbox { .. }
            | EntryKind::OutboxDelivered { .. }
            | EntryKind::Notice { .. }
            | EntryKind::Unknown => continue,
        };
        if let Some(id) = event.event_id() {
            ids.insert(id.clone());
        }
    }
    ids
}
