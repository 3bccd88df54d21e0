//! The one commit path: log first, then the fold into memory, then the broadcast.

use std::sync::Arc;

use seedpod_protocol::{
    AlertLevel, EntryKind, ErrorCode, ModelItem, ReportId, RequestId, ServerMsg,
};
use seedpod_store::{Durability, StoreError};

use super::Controller;

/// The active segment as the controller holds it: the file's one writer, the state folded from
/// its entries, and the entries themselves (shared cheaply with snapshot builders).
pub(super) struct Log {
    pub(super) writer: seedpod_store::SegmentWriter,
    pub(super) state: seedpod_store::SegmentState,
    pub(super) entries: Vec<Arc<seedpod_protocol::Entry>>,
    /// Set after a log write failed; the file may end in a partial line, so no more writes.
    pub(super) storage_broken: Option<String>,
    /// The sync the reply being prepared must wait for (`commit_for_reply`).
    pub(super) unsynced: Option<seedpod_store::Durable>,
    /// Pod event ids already committed or queued, so a retried report is taken once.
    pub(super) seen_events: std::collections::HashSet<ReportId>,
}

/// Why a commit did not happen; mapped to `storage_failed` for clients.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "the log cannot be written since an earlier failure ({0}); restart the pod with `seedpod restart`"
    )]
    Broken(String),
    #[error("internal error: committed entry does not fold: {0}")]
    Fold(String),
}

impl CommitError {
    pub fn to_reply(&self, id: RequestId) -> ServerMsg {
        ServerMsg::Error {
            id: Some(id),
            code: ErrorCode::StorageFailed,
            message: format!("nothing was acknowledged: {self}"),
        }
    }
}

impl Controller {
    /// Append `kind` to the log, fold it into state, and broadcast it as `committed`.
    pub(super) async fn commit(
        &mut self,
        kind: EntryKind,
        durability: Durability,
    ) -> Result<(), CommitError> {
        self.check_writable()?;
        match self.log.writer.append(kind, durability).await {
            Ok(entry) => self.fold(entry),
            Err(err) => Err(self.write_failed(err)),
        }
    }

    /// Commit `kind` durably without the controller waiting for the fsync: the entry is folded
    /// and broadcast once it is written, and the reply to the request being answered waits for
    /// it to be synced (`answer` takes `unsynced`), so nothing is acknowledged before it is
    /// durable (invariant 5) while deltas and other requests go on meanwhile.
    pub(super) async fn commit_for_reply(&mut self, kind: EntryKind) -> Result<(), CommitError> {
        self.check_writable()?;
        match self
            .log
            .writer
            .append_pipelined(kind, Durability::Sync)
            .await
        {
            Ok((entry, durable)) => {
                self.fold(entry)?;
                // Syncs complete in order: the newest covers every earlier one.
                self.log.unsynced = Some(durable);
                Ok(())
            }
            Err(err) => Err(self.write_failed(err)),
        }
    }

    /// Commit `kind` durably without anyone waiting for the fsync: for an entry whose
    /// durability is covered by a later synced entry (an approval request, by its answer). A
    /// failed sync breaks the log as a failed write does.
    pub(super) async fn commit_sync_later(&mut self, kind: EntryKind) -> Result<(), CommitError> {
        self.check_writable()?;
        match self
            .log
            .writer
            .append_pipelined(kind, Durability::Sync)
            .await
        {
            Ok((entry, durable)) => {
                self.fold(entry)?;
                let tx = self.senders.commands.clone();
                tokio::spawn(async move {
                    if let Err(err) = durable.wait().await {
                        let reason = err.to_string();
                        let _ = tx.send(super::ControllerMsg::SyncFailed { reason }).await;
                    }
                });
                Ok(())
            }
            Err(err) => Err(self.write_failed(err)),
        }
    }

    fn check_writable(&self) -> Result<(), CommitError> {
        match &self.log.storage_broken {
            Some(reason) => Err(CommitError::Broken(reason.clone())),
            None => Ok(()),
        }
    }

    fn write_failed(&mut self, err: StoreError) -> CommitError {
        tracing::error!(event = "store_write_failed", error = %err);
        self.log.storage_broken = Some(err.to_string());
        let message = format!("the log could not be written: {err}");
        self.publish_alert(AlertLevel::Error, message);
        CommitError::Store(err)
    }

    /// A pipelined commit's fsync failed after it was folded: refuse every later commit, as a
    /// failed write does (`storage_broken`), and say so.
    pub(super) fn sync_failed(&mut self, reason: String) {
        tracing::error!(event = "store_sync_failed", error = %reason);
        if self.log.storage_broken.is_none() {
            let message = format!("the log could not be synced: {reason}");
            self.publish_alert(AlertLevel::Error, message);
            self.log.storage_broken = Some(reason);
        }
    }

    /// Fold a written entry into state and broadcast it.
    fn fold(&mut self, entry: seedpod_protocol::Entry) -> Result<(), CommitError> {
        let reports = self.log.state.outbox.len();
        if let Err(err) = self.log.state.apply(&entry) {
            // The writer and the fold disagree about seq: memory would drift from disk.
            self.log.storage_broken = Some(err.to_string());
            return Err(CommitError::Fold(err.to_string()));
        }
        tracing::debug!(
            event = "entry_committed",
            seq = entry.seq.get(),
            kind = entry.kind.name()
        );
        if self.log.state.outbox.len() > reports {
            self.report_added();
        }
        self.clear_in_flight_for(&entry.kind);
        let entry = Arc::new(entry);
        self.log.entries.push(entry.clone());
        self.audience.bus.publish(|seq| ServerMsg::Committed {
            seq,
            entry: (*entry).clone(),
        });
        self.publish_fill();
        Ok(())
    }

    /// Once an assistant item commits, the provisional text it replaces is no longer in flight.
    fn clear_in_flight_for(&mut self, kind: &EntryKind) {
        if let EntryKind::AssistantRaw { .. } = kind {
            self.audience.in_flight.text.clear();
        }
        if let EntryKind::AssistantItem { item } = kind {
            match item {
                ModelItem::AssistantText { .. } => self.audience.in_flight.text.clear(),
                ModelItem::Reasoning { .. } => self.audience.in_flight.thinking.clear(),
                ModelItem::ToolCall { .. } => {
                    if !self.audience.in_flight.tool_calls.is_empty() {
                        self.audience.in_flight.tool_calls.remove(0);
                    }
                }
                ModelItem::UserMessage { .. }
                | ModelItem::ToolResult { .. }
                | ModelItem::SystemMessage { .. } => {}
            }
        }
    }

    pub(super) fn publish_alert(&mut self, level: AlertLevel, message: String) {
        tracing::warn!(event = "alert", level = ?level, message = %message);
        self.audience.bus.publish(|seq| ServerMsg::Alert {
            seq,
            level,
            message,
        });
    }

    pub(super) fn publish_state(&mut self) {
        let state = self.pod_state();
        tracing::info!(event = "state", state = state.as_str());
        self.audience
            .bus
            .publish(|seq| ServerMsg::State { seq, state });
    }

    /// Tell clients the queue changed: now, or folded with the changes that follow within
    /// `queue_events::INTERVAL` (the run loop publishes it when due).
    pub(super) fn publish_queue(&mut self) {
        if self
            .audience
            .queue_events
            .changed(tokio::time::Instant::now())
        {
            self.publish_queue_now();
        }
    }

    pub(super) fn publish_queue_now(&mut self) {
        self.audience
            .queue_events
            .published(tokio::time::Instant::now());
        let queue = self.log.state.pending.clone();
        self.audience
            .bus
            .publish(|seq| ServerMsg::Queued { seq, queue });
    }
}
