//! Approvals: the run task asks before each tool call; a call whose policy is `ask` commits an
//! `approval_request` and waits, and any client's `approve` commits the answer and lets it go.
//!
//! Nothing about a request lives only in memory: the request and the answer are log entries
//! (durable before anyone is told), and the run task asks again after a pause or a restart, so
//! it finds the request still pending (and waits again) or already answered (and goes on).
//! The only in-memory piece is the reply channel of the run task that is waiting right now.

use seedpod_engine::{Authorization, HostError, PendingCall};
use seedpod_protocol::{
    AckOutcome, ApprovalAnswer, ApprovalDecision, ApprovalRequest, CallId, EntryKind, ErrorCode,
    Preview, Replaces, RequestId, ServerMsg, StandingApproval,
};
use seedpod_store::Durability;
use seedpod_tools::Judgement;
use tokio::sync::oneshot;

use super::{Activity, Controller};
use crate::hooks::PreTool;
use crate::policy::Policy;

/// The run task waiting for a person's answer on a call.
pub(super) struct WaitingApproval {
    pub call_id: CallId,
    pub reply: oneshot::Sender<Result<Authorization, HostError>>,
}

/// The most bytes of a file a write or an edit would change that an approval request carries.
const REPLACES_MAX_BYTES: u64 = 64 * 1024;

/// How the declaration of tool `name` previews its calls (`ToolDecl::preview`): a command's
/// `approve_always` is narrowed to a command rule, a file change carries the file's text.
fn preview_of(name: &str) -> Preview {
    crate::catalogue::decl_for(name).map_or(Preview::Arguments, |decl| decl.preview)
}

/// What the run task is told for a committed decision.
fn authorization(decision: &ApprovalDecision) -> Authorization {
    match decision {
        ApprovalDecision::Approve | ApprovalDecision::ApproveAlways(_) => Authorization::Allowed,
        ApprovalDecision::Deny { reason } => Authorization::Denied {
            reason: format!("A person denied this call: {reason}. Do not retry it as is."),
        },
        ApprovalDecision::Unknown => Authorization::Denied {
            reason: "This call was answered in a way this seedpod does not understand, so it \
                     was not run."
                .into(),
        },
    }
}

impl Controller {
    /// What a standing rule may make of a `shell` call, judged against this pod's scope.
    fn judge_shell(&self, arguments: &str) -> Judgement {
        let fallback;
        let scope = match &self.session.scope {
            Some(scope) => Some(scope.as_ref()),
            None => {
                fallback = seedpod_tools::Scope::for_cwd(&self.pod.meta.cwd).ok();
                fallback.as_ref()
            }
        };
        seedpod_tools::judge_shell_command(arguments, scope)
    }

    /// What the file a write or an edit names holds now, for the approval's diff: read through
    /// the scope, race-free, off the controller's loop, at most `REPLACES_MAX_BYTES`. `None`
    /// when there is no such file (the write creates it) or the path is not the pod's to read.
    fn current_content(
        &self,
        arguments: &str,
    ) -> impl std::future::Future<Output = Option<Replaces>> + Send + 'static {
        let path = serde_json::from_str::<serde_json::Value>(arguments)
            .ok()
            .and_then(|v| v.get("path")?.as_str().map(str::to_owned));
        let scope = self.session.scope.clone();
        let cwd = self.pod.meta.cwd.clone();
        let read = tokio::task::spawn_blocking(move || {
            #[cfg(test)]
            super::stall::point(&cwd, super::stall::Step::Preview);
            let path = path?;
            let scope = match scope {
                Some(scope) => scope,
                None => std::sync::Arc::new(seedpod_tools::Scope::for_cwd(&cwd).ok()?),
            };
            let real = scope.check(&path, seedpod_tools::Access::Read).ok()?;
            let meta = std::fs::symlink_metadata(&real).ok()?;
            if !meta.is_file() {
                return None;
            }
            if meta.len() > REPLACES_MAX_BYTES {
                return Some(Replaces::Unshown {
                    why: format!("the file has {} bytes", meta.len()),
                });
            }
            let mut bytes = Vec::new();
            let read = seedpod_tools::open_checked(&real, &path)
                .map_err(|unopenable| unopenable.to_string())
                .and_then(|mut file| {
                    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| e.to_string())
                });
            Some(match read {
                Err(why) => Replaces::Unshown { why },
                Ok(_) if seedpod_tools::looks_binary(&bytes) => Replaces::Unshown {
                    why: "it is a binary file".into(),
                },
                Ok(_) => match String::from_utf8(bytes) {
                    Ok(content) => Replaces::Text { content },
                    Err(_) => Replaces::Unshown {
                        why: "it is not UTF-8 text".into(),
                    },
                },
            })
        });
        async move { read.await.ok().flatten() }
    }

    /// The run task asks whether `call` may run. Answers at once unless a person must decide;
    /// then the reply is kept until `approve` (or dropped when the run stops).
    pub(super) async fn authorize(
        &mut self,
        generation: u64,
        call: PendingCall,
        hook: PreTool,
        reply: oneshot::Sender<Result<Authorization, HostError>>,
    ) {
        if !self.is_current(generation) {
            let _ = reply.send(Err(HostError::Stopped));
            return;
        }
        // A hook narrows first: its deny stands whatever the policy says (docs/hooks.md).
        if let PreTool::Deny { reason } = &hook {
            tracing::info!(event = "hook_denied", tool = %call.name, call_id = %call.call_id);
            let _ = reply.send(Ok(Authorization::Denied {
                reason: format!(
                    "A pre_tool hook of the person's denied this call: {reason}. Do not retry it \
                     as is."
                ),
            }));
            return;
        }
        // A tool this segment does not offer (left out of a compact prompt, or registered
        // since the segment started) is not the model's to call, whatever the policy says. An
        // unknown name is the registry's to answer ("no such tool").
        let offered = self.log.state.tools.iter().any(|t| t.name == call.name);
        if !offered && self.runs.tools.get(&call.name).is_some() {
            let offered: Vec<&str> = self
                .log
                .state
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            let _ = reply.send(Ok(Authorization::Denied {
                reason: format!(
                    "There is no tool named {} in this conversation; the tools are: {}.",
                    call.name,
                    offered.join(", ")
                ),
            }));
            return;
        }
        // An MCP tool's policy depends on its server too (`trust_read_only` and what the
        // server says of the tool now).
        let policy = if crate::mcp::names::server_of(&call.name).is_some() {
            self.mcp.hub.policy(&call.name)
        } else if crate::mcp::resources::is_resource_tool(&call.name) {
            self.mcp.hub.resource_policy(&call.name, &call.arguments)
        } else {
            self.session.policies.for_tool(&call.name)
        };
        // A hook's `ask` (or a failed hook) sends even an allowed call to a person; its
        // `allow` answers an `ask` only where the person's own file lets hooks approve, and
        // never a `deny` (DESIGN invariant 6).
        let hook_asks = hook == PreTool::Ask;
        match policy {
            Policy::Allow if !hook_asks => {
                let _ = reply.send(Ok(Authorization::Allowed));
                return;
            }
            Policy::Deny => {
                let _ = reply.send(Ok(Authorization::Denied {
                    reason: format!(
                        "The {} tool is denied by this pod's configuration ([approvals] {} = \
                         \"deny\").",
                        call.name, call.name
                    ),
                }));
                return;
            }
            Policy::Sandboxed
                if !hook_asks && !seedpod_tools::wants_unconfined(&call.arguments) =>
            {
                tracing::info!(event = "approval_sandboxed", call_id = %call.call_id);
                let _ = reply.send(Ok(Authorization::Allowed));
                return;
            }
            // Leaving the sandbox is asked about like any `ask` call.
            Policy::Allow | Policy::Sandboxed | Policy::Ask => {}
        }
        if hook == PreTool::Allow && self.hooks.may_allow() {
            tracing::info!(event = "hook_allowed", tool = %call.name, call_id = %call.call_id);
            let _ = reply.send(Ok(Authorization::Allowed));
            return;
        }
        match self
            .log
            .state
            .approval(&call.call_id)
            .map(|a| a.decision.clone())
        {
            // Answered while the run was paused or the pod was down.
            Some(Some(decision)) => {
                let _ = reply.send(Ok(authorization(&decision)));
                return;
            }
            // Asked before a pause or a restart and still unanswered: wait again.
            Some(None) => {}
            None => {
                let previewed = preview_of(&call.name);
                let judgement =
                    (previewed == Preview::Command).then(|| self.judge_shell(&call.arguments));
                let words = judgement.as_ref().and_then(Judgement::words);
                if let Some(standing) = self
                    .log
                    .state
                    .standing_approvals
                    .iter()
                    .filter(|_| !hook_asks)
                    .find(|s| seedpod_tools::standing_covers(s, &call.name, words))
                {
                    tracing::info!(event = "approval_standing", tool = %call.name, call_id = %call.call_id, rule = %standing.display());
                    // The person sees which of their rules let it through (and can revoke it).
                    let kind = EntryKind::ApprovalStanding {
                        call_id: call.call_id.clone(),
                        standing: standing.clone(),
                    };
                    if let Err(err) = self.commit(kind, Durability::Buffered).await {
                        let _ = reply.send(Err(HostError::log(err)));
                        return;
                    }
                    let _ = reply.send(Ok(Authorization::Allowed));
                    return;
                }
                if let Some(Judgement::NotSimple(why)) = &judgement {
                    tracing::info!(event = "approval_no_standing_rule", call_id = %call.call_id, why = %why);
                }
                let always = words.map(seedpod_tools::narrowest_rule);
                // The file's text, so the modal can show the change at its line numbers: read
                // on a task, which hands the call back (`ControllerMsg::Ask`) — the controller never
                // waits for that file.
                if previewed.is_file_change() {
                    let preview = self.current_content(&call.arguments);
                    let tx = self.senders.commands.clone();
                    tokio::spawn(async move {
                        let replaces = preview.await;
                        let ask = super::ControllerMsg::Ask {
                            generation,
                            call,
                            always,
                            replaces,
                            reply,
                        };
                        // Sent back into a stopped controller, the reply is dropped with the
                        // command, and the run task sees the pod stop.
                        let _ = tx.send(ask).await;
                    });
                    return;
                }
                return self.ask(generation, call, always, None, reply).await;
            }
        }
        self.wait_for_answer(call.call_id, reply);
    }

    /// Ask the person about `call`: log the request (its fsync not awaited — the answer's own
    /// sync comes after it and covers it) and keep the run's reply until the answer.
    pub(super) async fn ask(
        &mut self,
        generation: u64,
        call: PendingCall,
        always: Option<seedpod_protocol::CommandRule>,
        replaces: Option<Replaces>,
        reply: oneshot::Sender<Result<Authorization, HostError>>,
    ) {
        if !self.is_current(generation) {
            let _ = reply.send(Err(HostError::Stopped));
            return;
        }
        let request = ApprovalRequest {
            summary: crate::catalogue::call_summary(&call.name, &call.arguments),
            call_id: call.call_id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            always,
            replaces,
        };
        tracing::info!(event = "approval_requested", tool = %request.tool, summary = %request.summary);
        let kind = EntryKind::ApprovalRequest(request);
        if let Err(err) = self.commit_sync_later(kind).await {
            let _ = reply.send(Err(HostError::log(err)));
            return;
        }
        self.wait_for_answer(call.call_id, reply);
    }

    fn wait_for_answer(
        &mut self,
        call_id: CallId,
        reply: oneshot::Sender<Result<Authorization, HostError>>,
    ) {
        self.runs.waiting_approval = Some(WaitingApproval { call_id, reply });
        self.publish_state();
    }

    /// `approve`: commit the answer to the named (or oldest) pending request, then let the
    /// waiting run go on, or continue a paused run that stopped at this request.
    pub(super) async fn approve(
        &mut self,
        id: RequestId,
        call_id: Option<CallId>,
        answer: ApprovalAnswer,
        reason: Option<String>,
    ) -> ServerMsg {
        let pending = match &call_id {
            Some(call_id) => self
                .log
                .state
                .approval(call_id)
                .filter(|a| a.decision.is_none())
                .map(|a| a.request.clone()),
            None => self.log.state.pending_approval().cloned(),
        };
        let Some(request) = pending else {
            let message = match call_id {
                Some(call_id) => format!(
                    "call {call_id} is not waiting for approval: it was answered already or its \
                     turn ended"
                ),
                None => "nothing is waiting for approval".to_string(),
            };
            return ServerMsg::Error {
                id: Some(id),
                code: ErrorCode::NothingPending,
                message,
            };
        };
        let decision = match answer {
            ApprovalAnswer::Approve => ApprovalDecision::Approve,
            // A command no rule may cover is approved once, never for every command.
            ApprovalAnswer::ApproveAlways
                if preview_of(&request.tool) == Preview::Command && request.always.is_none() =>
            {
                ApprovalDecision::Approve
            }
            ApprovalAnswer::ApproveAlways => ApprovalDecision::ApproveAlways(StandingApproval {
                tool: request.tool.clone(),
                rule: request.always.clone(),
            }),
            ApprovalAnswer::Deny => ApprovalDecision::Deny {
                reason: reason
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| "no reason given".into()),
            },
            ApprovalAnswer::Unknown => {
                return ServerMsg::Error {
                    id: Some(id),
                    code: ErrorCode::InvalidRequest,
                    message: "answer must be approve, approve_always or deny".into(),
                };
            }
        };
        let kind = EntryKind::ApprovalAnswer {
            call_id: request.call_id.clone(),
            decision: decision.clone(),
        };
        if let Err(err) = self.commit(kind, Durability::Sync).await {
            return err.to_reply(id);
        }
        tracing::info!(event = "approval_answered", tool = %request.tool, call_id = %request.call_id, decision = ?decision);
        let mut outcome = AckOutcome::Done;
        match self.runs.waiting_approval.take() {
            Some(waiting) if waiting.call_id == request.call_id => {
                let _ = waiting.reply.send(Ok(authorization(&decision)));
            }
            other => {
                self.runs.waiting_approval = other;
                if matches!(self.runs.activity, Activity::Paused)
                    && self.log.state.pending_approval().is_none()
                {
                    // The pod stopped (or was paused) at this request: the answer is the
                    // person's go-ahead to continue the turn.
                    self.spawn_run();
                    outcome = AckOutcome::Started;
                }
            }
        }
        self.publish_state();
        ServerMsg::Ack {
            id,
            outcome,
            queue_id: None,
            entry_seq: self.log.entries.last().map(|e| e.seq),
        }
    }
}
