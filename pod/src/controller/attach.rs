//! Attaching what an input references (`@path`, `#slug`, `/slug args`): one system item per
//! reference, committed right after the input and before the run's first request.
//!
//! Resolving reads files, blocking I/O of unbounded latency, so the controller never does it:
//! the run task resolves on a blocking thread before its first request and hands the items
//! back to the controller to guard and commit, tagged with its generation like every run
//! command. Until they are committed the controller keeps the input's segments, so a run
//! paused before then resolves them again when it resumes instead of losing them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seedpod_engine::HostError;
use seedpod_protocol::{AlertLevel, EntryKind, Segment, SystemItem};
use seedpod_store::Durability;
use seedpod_tools::{Access, Scope};
use tokio::sync::oneshot;

use super::data_guard::{DataSource, Guarded};
use super::host::{PodHost, gone};
use super::input::MAX_ATTACHMENT_BYTES;
use super::{Controller, ControllerMsg};
use crate::references::{self, NotAttached, ReferenceContext, Resolved};

/// References to resolve for a run, with what resolving needs and nothing of the controller.
pub(super) struct Attachments {
    segments: Vec<Segment>,
    cwd: PathBuf,
    scope: Option<Arc<Scope>>,
    /// The MCP servers, when a person's input may name their resources (`@SERVER:URI`); a
    /// parent's or a notification's input may not: it is not a person saying to read them.
    resources: Option<crate::mcp::McpHub>,
    /// The resources read (`read_resources`), by the path the input wrote.
    premade: Vec<(String, Resolved)>,
}

/// Whether `segments` reference anything that must be attached.
pub(super) fn has_references(segments: &[Segment]) -> bool {
    segments.iter().any(|s| {
        matches!(
            s,
            Segment::FileRef { .. } | Segment::KnowledgeRef { .. } | Segment::WorkflowInvoke { .. }
        )
    })
}

impl Attachments {
    /// Blocking: reads every referenced file, each through the pod's read scope.
    fn resolve(self) -> Vec<Resolved> {
        // A pod without a configured scope reads what its working directory allows.
        let scope = self
            .scope
            .or_else(|| Scope::for_cwd(&self.cwd).ok().map(Arc::new));
        let can_read = |path: &str| -> Result<PathBuf, NotAttached> {
            match &scope {
                Some(scope) => scope
                    .check(path, Access::Read)
                    .map_err(NotAttached::OutOfScope),
                None => Err(NotAttached::NoScope),
            }
        };
        let ctx = ReferenceContext {
            premade: &self.premade,
            cwd: Path::new(&self.cwd),
            can_read: &can_read,
            max_file_bytes: MAX_ATTACHMENT_BYTES,
            scope: scope.as_deref(),
        };
        references::resolve(&self.segments, &ctx)
    }

    /// Read every `@SERVER:URI` of the input from its server (each within the server's tool
    /// timeout). One that cannot be read is attached as a placeholder saying why, and alerted,
    /// like a file that vanished since it was typed.
    async fn read_resources(&mut self) {
        let Some(hub) = &self.resources else {
            return;
        };
        for segment in &self.segments {
            let Segment::FileRef { path } = segment else {
                continue;
            };
            if hub.check_reference(path).is_none()
                || self.premade.iter().any(|(made, _)| made == path)
            {
                continue;
            }
            let Some((server, uri)) = crate::mcp::resources::split_reference(path) else {
                continue;
            };
            let resolved = match hub.read_resource(server, uri).await {
                Ok((result, _)) => {
                    tracing::info!(event = "mcp_resource_attached", server, uri);
                    Resolved {
                        item: SystemItem::FileAttachment {
                            path: path.clone(),
                            body: crate::mcp::resources::attachment_body(
                                path,
                                result,
                                MAX_ATTACHMENT_BYTES,
                            ),
                        },
                        problem: None,
                    }
                }
                Err(why) => Resolved {
                    item: SystemItem::FileAttachment {
                        path: path.clone(),
                        body: format!("[Resource: {path}] (not attached: {why})"),
                    },
                    problem: Some(format!("@{path} was not attached: {why}")),
                },
            };
            self.premade.push((path.clone(), resolved));
        }
    }
}

impl PodHost {
    /// Resolve `job` off every async thread, then have the controller commit the items.
    pub(super) async fn attach(&mut self, mut job: Attachments) -> Result<(), HostError> {
        job.read_resources().await;
        let resolved = tokio::task::spawn_blocking(move || job.resolve())
            .await
            .map_err(|_| {
                HostError::Internal(
                    "reading the referenced files failed unexpectedly; send the input again".into(),
                )
            })?;
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(ControllerMsg::Attach {
                generation: self.generation,
                resolved,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }
}

impl Controller {
    /// What the next run task must attach before its first request, if anything.
    pub(super) fn attachments(&self) -> Option<Attachments> {
        self.runs.unattached.as_ref().map(|segments| Attachments {
            segments: segments.clone(),
            cwd: self.pod.meta.cwd.clone(),
            scope: self.session.scope.clone(),
            resources: self.runs.unattached_by_person.then(|| self.mcp.hub.clone()),
            premade: Vec::new(),
        })
    }

    /// Commit one system item per resolved reference, in order. A reference that could not be
    /// attached is committed as a placeholder (the model knows it is missing) and alerted.
    pub(super) async fn attach(
        &mut self,
        generation: u64,
        resolved: Vec<Resolved>,
    ) -> Result<(), HostError> {
        if !self.is_current(generation) {
            return Err(gone());
        }
        for mut reference in resolved {
            // Attached files and knowledge notes are outside text: the guard reads them (without
            // their first line, the pod's own `[File: …]` header).
            if let SystemItem::FileAttachment { path, body }
            | SystemItem::Knowledge { slug: path, body } = &mut reference.item
                && reference.problem.is_none()
            {
                let content = body
                    .split_once('\n')
                    .map_or("", |(_, rest)| rest)
                    .to_string();
                match self.guard_data(DataSource::Attachment(path), &content) {
                    Guarded::Pass => {}
                    Guarded::Noted(note) => body.push_str(&note),
                    Guarded::Withheld(replacement) => {
                        let header = body.lines().next().unwrap_or_default().to_string();
                        *body = format!("{header}\n{replacement}");
                    }
                }
            }
            if let Some(problem) = reference.problem {
                self.publish_alert(AlertLevel::Warn, problem);
            }
            if let SystemItem::FileAttachment { path, .. } = &reference.item {
                tracing::info!(event = "file_attached", path = %path);
            }
            self.commit(
                EntryKind::SystemItem {
                    item: reference.item,
                    queue_id: None,
                },
                Durability::Buffered,
            )
            .await
            .map_err(HostError::log)?;
        }
        self.runs.unattached = None;
        Ok(())
    }
}
