//! Child pods from the parent's side: `/spawn NAME TASK` asks the attached pod to start one,
//! Ctrl-G goes into the child that reported last (or was just started), Ctrl-O goes back to the
//! pod attached before. Going anywhere is an `Effect::Attach`, the path the picker takes too.

use std::time::Instant;

use seedpod_protocol::{Entry, EntryKind, Method, PodName, ServerMsg, SpawnRequest, SystemItem};

use super::{App, Effect, FlashLevel, Pending};
use crate::commands::Spawn;

impl App {
    /// `/spawn NAME TASK`: the child reads what its parent reads and writes nothing (the
    /// defaults of `spawn`); the model can hand out more with its own tool.
    pub(super) fn spawn(&mut self, spawn: Option<Spawn>, now: Instant) -> Vec<Effect> {
        let Some(Spawn { name, task }) = spawn else {
            self.flash(
                FlashLevel::Warn,
                "usage: /spawn NAME TASK — starts a child pod of this one with TASK as its input",
                now,
            );
            return Vec::new();
        };
        let name = match PodName::new(name) {
            Ok(name) => name,
            Err(e) => {
                self.flash(FlashLevel::Warn, format!("{e}"), now);
                return Vec::new();
            }
        };
        // The pod answers once the child's process is up, which takes a moment.
        self.flash(FlashLevel::Info, format!("starting child pod {name}…"), now);
        let request = SpawnRequest {
            name: name.clone(),
            task,
            read: Vec::new(),
            write: Vec::new(),
            model: None,
            instructions: None,
            mcp_servers: None,
        };
        vec![self.request(Pending::Spawn { name }, Method::Spawn(request))]
    }

    pub(super) fn spawned(&mut self, name: PodName, now: Instant) {
        self.flash(
            FlashLevel::Info,
            format!("started child pod {name} — Ctrl-G goes into it"),
            now,
        );
        self.last_child = Some(name);
    }

    pub(super) fn spawn_failed(&mut self, name: &PodName, reason: &str, now: Instant) {
        self.flash(
            FlashLevel::Error,
            format!("child pod {name} not started: {reason}"),
            now,
        );
    }

    /// A frame from the pod: if it carries children's reports, the newest names Ctrl-G's pod.
    pub(super) fn note_reports(&mut self, msg: &ServerMsg) {
        let entries = if let ServerMsg::Committed { entry, .. } = msg {
            std::slice::from_ref(entry)
        } else if let ServerMsg::SnapshotEntries { entries } = msg {
            entries.as_slice()
        } else {
            return;
        };
        if let Some(pod) = entries.iter().rev().find_map(reporter) {
            // A report names its pod as text; only a real pod name can be gone to.
            self.last_child = PodName::new(pod).ok();
        }
    }

    /// Ctrl-G.
    pub(super) fn go_to_child(&mut self, now: Instant) -> Vec<Effect> {
        match self.last_child.clone() {
            Some(child) if child != self.pod => vec![Effect::Attach(child)],
            Some(_) | None => {
                self.flash(
                    FlashLevel::Info,
                    "no child pod has reported yet — /spawn NAME TASK starts one, Ctrl-P lists all",
                    now,
                );
                Vec::new()
            }
        }
    }

    /// Ctrl-O.
    pub(super) fn go_back(&mut self, now: Instant) -> Vec<Effect> {
        match self.previous_pod.clone() {
            Some(pod) => vec![Effect::Attach(pod)],
            None => {
                self.flash(
                    FlashLevel::Info,
                    "no pod to go back to yet — Ctrl-P lists the pods",
                    now,
                );
                Vec::new()
            }
        }
    }

    /// Where Ctrl-O goes, for the footer.
    pub fn previous_pod(&self) -> Option<&PodName> {
        self.previous_pod.as_ref()
    }

    /// Where Ctrl-G goes, for the footer.
    pub fn last_child(&self) -> Option<&PodName> {
        self.last_child.as_ref().filter(|child| **child != self.pod)
    }
}

/// The pod that reported, if `entry` is a child's report.
fn reporter(entry: &Entry) -> Option<&str> {
    let EntryKind::SystemItem {
        item: SystemItem::PodEvent { event, .. },
        ..
    } = &entry.kind
    else {
        return None;
    };
    event.pod()
}
