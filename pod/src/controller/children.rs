//! The controller's side of child pods (DESIGN §7). It owns the records in `pod.json`, which
//! of them it believes are live, the write scope lent to them, and this pod's own outbox.
//! Everything slow (starting processes, sockets, reading other logs) runs on tasks in
//! `crate::children`, which report back here with `ChildMsg`s.

use std::collections::HashSet;

use seedpod_client::launch::{Launch, launch};
use seedpod_protocol::{
    EntryKind, PodEvent, PodName, ReportId, RequestId, ServerMsg, SpawnRequest,
};
use seedpod_store::{ChildRecord, Durability, PendingReport, ScopeGrant, report_id, unix_ms};
use seedpod_tools::{Access, LentRoot, Scope};
use tokio::sync::oneshot;

use super::Controller;
use crate::children::limits::Refusal;
use crate::children::{
    ChildMsg, LaunchFailed, SpawnRefused, SpawnReply, child_args, outbox, probe, report_event,
    report_wakes,
};

/// Longest task text kept in a child record (listings show it; the child's log has it all).
const RECORD_TASK_CHARS: usize = 200;

/// Child pods as the controller sees them, and this pod's own line to its parent.
#[derive(Default)]
pub(super) struct Family {
    /// Recorded children believed not running (their write scope is this pod's again).
    pub(super) not_live: NotLive,
    /// How deep this pod is in its tree of pods, once read from its lineage.
    pub(super) depth: crate::children::limits::Depth,
    /// Delivers this pod's reports to its parent, for a child pod.
    pub(super) outbox: Option<crate::children::outbox::OutboxHandle>,
}

impl Controller {
    pub(super) async fn child_msg(&mut self, msg: ChildMsg) {
        match msg {
            ChildMsg::Spawn { request, reply } => self.begin_spawn(request, reply).await,
            ChildMsg::Launched {
                name,
                result,
                reply,
            } => self.launched(name, result, reply).await,
            ChildMsg::Records { reply } => {
                let _ = reply.send(self.pod.meta.children.clone());
            }
            ChildMsg::Liveness { name, live } => self.set_live(&name, live),
            ChildMsg::Cursor { name, cursor } => {
                if let Some(record) = self.pod.meta.children.iter_mut().find(|r| r.name == name) {
                    record.cursor = Some(cursor);
                    self.save_meta_logged().await;
                }
            }
            ChildMsg::Revive { name, reply } => {
                let _ = reply.send(self.revive(&name));
            }
            ChildMsg::Delivered { event_id } => self.delivered(event_id).await,
            ChildMsg::Reports { events } => {
                for event in events {
                    // Taken like a delivery (deduped by id); the child, when it runs again,
                    // delivers them once more and is acknowledged without a second commit.
                    let wake = report_wakes(&event);
                    if let ServerMsg::Error { message, .. } =
                        self.receive_report(RequestId::new(0), event, wake).await
                    {
                        tracing::warn!(event = "stopped_child_report_refused", error = %message);
                    }
                }
            }
        }
    }

    /// `spawn` from a client: answered when the child runs.
    pub(super) async fn spawn_child(
        &mut self,
        id: RequestId,
        request: SpawnRequest,
        reply: oneshot::Sender<ServerMsg>,
    ) {
        self.begin_spawn(request, SpawnReply::Client { id, reply })
            .await;
    }

    /// Check the request, record the child (so a crash from here on never forgets it), lend its
    /// write roots, then start its process on a task of its own.
    async fn begin_spawn(&mut self, request: SpawnRequest, reply: SpawnReply) {
        let record = match self.admit(&request) {
            Ok(record) => record,
            Err(message) => return reply.send(Err(message)),
        };
        let name = record.name.clone();
        let mcp_servers = request
            .mcp_servers
            .clone()
            .unwrap_or_else(|| self.mcp.hub.running_servers());
        let args = child_args(
            &self.pod.name,
            &self.pod.meta,
            &self.log.state.model.model,
            &request,
            &record,
            &mcp_servers,
        );
        self.pod.meta.children.push(record);
        // The record must be on disk before the process starts (a crash must never forget a
        // running child), but the controller does not wait for the disk: the launch task does.
        let recorded = self.pod.meta_file.save_queued(&self.pod.meta).await;
        self.family.not_live.remove(&name);
        self.relend();
        tracing::info!(event = "child_spawning", child = %name);
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(cause) => {
                let result = Err(LaunchFailed::NoBinary { cause });
                return self.launched(name, result, reply).await;
            }
        };
        let spec = Launch {
            exe,
            name: name.clone(),
            args,
            cwd: self.pod.meta.cwd.clone(),
            env: Vec::new(),
            inherit_fd: None,
        };
        let home = self.pod.home.clone();
        let tx = self.senders.children.clone();
        tokio::spawn(async move {
            let result = match recorded.await {
                Err(cause) => Err(LaunchFailed::NotRecorded { cause }),
                Ok(()) => match launch(&home, &spec).await {
                    Ok(()) => Ok(home.socket_path(&spec.name).display().to_string()),
                    Err(err) => Err(LaunchFailed::launch(&home, err)),
                },
            };
            let msg = ChildMsg::Launched {
                name: spec.name,
                result,
                reply,
            };
            let _ = tx.send(msg).await;
        });
    }

    /// Direct children believed running or starting: what `max_children` counts. A stopped
    /// one's process is gone; a descendant is its own parent's to count.
    fn live_children(&self) -> usize {
        self.pod
            .meta
            .children
            .iter()
            .filter(|r| r.via.is_none() && !self.family.not_live.contains(&r.name))
            .count()
    }

    /// Whether this pod may start one more child: depth first (no count fixes that), then the
    /// count. Called in the same step that records the child, so it is never stale.
    fn within_limits(&mut self) -> Result<(), Refusal> {
        let limits = self.session.child_limits;
        let depth = self.family.depth.get(
            &self.pod.home,
            self.pod.meta.parent.as_ref(),
            limits.max_depth,
        )?;
        limits.check(depth, self.live_children())
    }

    /// A stopped direct child is about to be restored: one more live child, so the same count.
    fn revive(&mut self, name: &PodName) -> Result<(), Refusal> {
        if !self.family.not_live.contains(name) {
            return Ok(());
        }
        let limits = self.session.child_limits;
        limits.room_for_one_more(self.live_children())?;
        self.set_live(name, true);
        Ok(())
    }

    /// What the request may have, as a record; or why not, worded for whoever asked.
    fn admit(&mut self, request: &SpawnRequest) -> Result<ChildRecord, SpawnRefused> {
        self.within_limits().map_err(SpawnRefused::Limits)?;
        // The name is a `PodName`: it was checked when the frame or the tool call was read.
        let name = &request.name;
        if let Some(servers) = &request.mcp_servers {
            let running = self.mcp.hub.running_servers();
            if let Some(unknown) = servers.iter().find(|s| !running.contains(s)) {
                return Err(SpawnRefused::UnknownMcpServer {
                    unknown: unknown.clone(),
                    running,
                });
            }
        }
        if *name == self.pod.name {
            return Err(SpawnRefused::OwnName(name.clone()));
        }
        if self.pod.meta.children.iter().any(|r| r.name == *name)
            || self
                .pod
                .home
                .pod_dir(name)
                .join(seedpod_store::META_FILE)
                .exists()
        {
            return Err(SpawnRefused::NameTaken(name.clone()));
        }
        if request.task.trim().is_empty() {
            return Err(SpawnRefused::EmptyTask);
        }
        let local;
        let scope: &Scope = match &self.session.scope {
            Some(scope) => scope,
            None => {
                local = Scope::for_cwd(&self.pod.meta.cwd).map_err(SpawnRefused::NoScope)?;
                &local
            }
        };
        let roots = |paths: &[String], access: Access| -> Result<Vec<_>, SpawnRefused> {
            paths
                .iter()
                .map(|p| {
                    scope
                        .delegable(p, access)
                        .map_err(|blocked| SpawnRefused::NotDelegable { access, blocked })
                })
                .collect()
        };
        let read = if request.read.is_empty() {
            vec![scope.cwd().to_path_buf()]
        } else {
            roots(&request.read, Access::Read)?
        };
        let write = roots(&request.write, Access::Write)?;
        Ok(ChildRecord {
            name: name.to_owned(),
            task: seedpod_protocol::ellipsize(request.task.trim(), RECORD_TASK_CHARS),
            scope: ScopeGrant { read, write },
            via: None,
            created_ms: unix_ms(),
            cursor: None,
        })
    }

    async fn launched(
        &mut self,
        name: PodName,
        result: Result<String, LaunchFailed>,
        reply: SpawnReply,
    ) {
        match result {
            Ok(socket) => {
                tracing::info!(event = "child_spawned", child = %name);
                let write = self
                    .pod
                    .meta
                    .children
                    .iter()
                    .find(|r| r.name == name)
                    .map(|r| r.scope.write.clone())
                    .unwrap_or_default();
                self.report_descendant(&name, &write).await;
                reply.send(Ok((name, socket)));
            }
            Err(cause) => {
                // Nothing runs and nothing was created under that name: forget it, return the
                // scope, and say why.
                tracing::warn!(event = "child_spawn_failed", child = %name, error = %cause);
                self.pod.meta.children.retain(|r| r.name != name);
                self.save_meta_logged().await;
                self.relend();
                reply.send(Err(SpawnRefused::NotStarted { name, cause }));
            }
        }
    }

    /// Tell this pod's parent (if it has one) about a new descendant, so the root knows every
    /// pod below it and can stop it even if the pods in between are gone.
    async fn report_descendant(&mut self, child: &PodName, write: &[std::path::PathBuf]) {
        if self.pod.meta.parent.is_none() {
            return;
        }
        let event = PodEvent::ScopeSubDelegated {
            pod: self.pod.name.to_string(),
            event_id: report_id(&self.log.state.segment_id, self.log.state.next_seq),
            child: child.to_string(),
            scope: write.iter().map(|p| p.display().to_string()).collect(),
        };
        if let Err(err) = self
            .commit(EntryKind::Outbox { event }, Durability::Sync)
            .await
        {
            tracing::error!(event = "outbox_commit_failed", error = %err);
        }
    }

    /// What a report from a child says about it, before the report itself is committed.
    pub(super) async fn note_child_event(&mut self, event: &PodEvent) {
        match event {
            PodEvent::TurnEnded { pod, .. } | PodEvent::Errored { pod, .. } => {
                self.set_reported_live(pod, true);
            }
            PodEvent::ShutDown { pod, .. } => self.set_reported_live(pod, false),
            PodEvent::ScopeSubDelegated {
                pod, child, scope, ..
            } => {
                // Only a child's report adds a descendant: anyone may send `pod_event`.
                let from_child = self
                    .pod
                    .meta
                    .children
                    .iter()
                    .any(|r| r.name.as_str() == pod.as_str());
                self.set_reported_live(pod, true);
                // Anything can claim a descendant's name; only one that could name a pod
                // becomes a record (it names a directory later).
                let child = PodName::new(child.as_str()).ok();
                if let Some(child) = child.filter(|child| {
                    from_child
                        && !self.pod.meta.children.iter().any(|r| r.name == *child)
                        && *child != self.pod.name
                }) {
                    let write: Vec<std::path::PathBuf> = scope.iter().map(Into::into).collect();
                    self.pod.meta.children.push(ChildRecord {
                        name: child.clone(),
                        task: format!("(started by {pod})"),
                        scope: ScopeGrant {
                            read: Vec::new(),
                            write: write.clone(),
                        },
                        via: PodName::new(pod.as_str()).ok(),
                        created_ms: unix_ms(),
                        cursor: None,
                    });
                    self.save_meta_logged().await;
                    self.relend();
                    self.report_descendant(&child, &write).await;
                }
            }
            PodEvent::Unknown => {}
        }
    }

    /// Whether a report should start a turn of an idle pod: the sender asks for it (children
    /// ask for the kinds in `report_wakes`) and `[children] wake` allows it.
    pub(super) fn child_report_wakes(&self, asked: bool) -> bool {
        asked && self.session.wake_on_child_reports
    }

    /// A report names its sender as text (anyone may send `pod_event`); text that is not a
    /// pod name is no child's.
    fn set_reported_live(&mut self, pod: &str, live: bool) {
        if let Ok(name) = PodName::new(pod) {
            self.set_live(&name, live);
        }
    }

    fn set_live(&mut self, name: &PodName, live: bool) {
        if !self.pod.meta.children.iter().any(|r| &r.name == name) {
            return;
        }
        let changed = if live {
            self.family.not_live.remove(name)
        } else {
            self.family.not_live.insert(name.clone())
        };
        if changed {
            tracing::info!(event = "child_liveness", child = %name, live);
            self.relend();
        }
    }

    /// Lend every believed-live child's write roots; the rest are this pod's again.
    pub(super) fn relend(&self) {
        let Some(scope) = &self.session.scope else {
            return;
        };
        let roots = self
            .pod
            .meta
            .children
            .iter()
            .filter(|r| !self.family.not_live.contains(&r.name))
            .flat_map(|r| {
                r.scope.write.iter().map(|root| LentRoot {
                    root: root.clone(),
                    child: r.name.to_string(),
                })
            })
            .collect();
        scope.lent().set(roots);
    }

    /// Bookkeeping a restart can redo: written without waiting (`meta_file.rs`).
    async fn save_meta_logged(&self) {
        self.pod.meta_file.save_later(&self.pod.meta).await;
    }

    /// On start: lend to every recorded child until a probe says it is not running, ask the
    /// live ones for undelivered reports, and start delivering this pod's own.
    pub(super) fn relink(&mut self) {
        self.relend();
        if !self.pod.meta.children.is_empty() {
            let pods = self
                .pod
                .meta
                .children
                .iter()
                .map(|r| probe::Relink {
                    name: r.name.clone(),
                    direct: r.via.is_none(),
                })
                .collect();
            tokio::spawn(probe::relink(
                self.pod.home.clone(),
                self.pod.name.clone(),
                pods,
                self.senders.children.clone(),
            ));
        }
        if let Some(parent) = self.pod.meta.parent.clone() {
            let handle = outbox::start(
                self.pod.home.clone(),
                self.pod.name.clone(),
                parent,
                self.senders.children.clone(),
            );
            for report in self.log.state.outbox.clone() {
                handle.send(self.report_event(&report));
            }
            self.family.outbox = Some(handle);
        }
    }

    /// The event a pending report is sent as.
    pub(super) fn report_event(&self, report: &PendingReport) -> PodEvent {
        report_event(&self.pod.name, report)
    }

    /// A commit added a report: hand it to the delivery task.
    pub(super) fn report_added(&self) {
        if let (Some(outbox), Some(report)) = (&self.family.outbox, self.log.state.outbox.last()) {
            outbox.send(self.report_event(report));
        }
    }

    async fn delivered(&mut self, event_id: ReportId) {
        if !self.log.state.outbox.iter().any(|r| r.event_id == event_id) {
            return;
        }
        if let Err(err) = self
            .commit(
                EntryKind::OutboxDelivered { event_id },
                Durability::Buffered,
            )
            .await
        {
            tracing::error!(event = "outbox_commit_failed", error = %err);
        }
    }

    pub(super) fn deliver_reports_now(&mut self) {
        if let Some(outbox) = &self.family.outbox {
            outbox.nudge();
        }
    }

    /// Stopping: a child reports `shut_down` and gets a moment to deliver what is pending.
    pub(super) async fn final_reports(&mut self) {
        let Some(outbox) = self.family.outbox.take() else {
            return;
        };
        let event = PodEvent::ShutDown {
            pod: self.pod.name.to_string(),
            event_id: report_id(&self.log.state.segment_id, self.log.state.next_seq),
        };
        if let Err(err) = self
            .commit(EntryKind::Outbox { event }, Durability::Sync)
            .await
        {
            tracing::error!(event = "outbox_commit_failed", error = %err);
        }
        if let Some(report) = self.log.state.outbox.last() {
            outbox.send(self.report_event(report));
        }
        for event_id in outbox.flush().await {
            self.delivered(event_id).await;
        }
    }

    /// Reports still pending when a new segment starts go on in the new one, ids unchanged. A
    /// pod without a parent has no one to report to, so nothing is carried.
    pub(super) fn carried_reports(&self) -> Vec<PodEvent> {
        if self.pod.meta.parent.is_none() {
            return Vec::new();
        }
        self.log
            .state
            .outbox
            .iter()
            .map(|r| self.report_event(r))
            .collect()
    }
}

/// Names of children believed not running, for `Controller` construction.
pub(super) type NotLive = HashSet<PodName>;
