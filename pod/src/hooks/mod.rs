//! Lifecycle hooks (`[hooks]`, docs/hooks.md): the person's own commands, run at points of the
//! pod's life with a JSON event on stdin.
//!
//! Owns: which hooks run for an event (in configured order), the event's JSON (`event.rs`),
//! running each command off the controller's loop with a timeout and bounded output (`run.rs`),
//! reading what it answered (`answer.rs`), combining several answers, and reporting a hook
//! that failed (an alert for the person, a line in the pod's log). Must not own: what an answer
//! changes — the controller applies a `pre_tool` verdict to its policy, and whatever a hook
//! adds to the model's view is committed by the caller as part of the entry the model reads,
//! so replay never runs a hook again (DESIGN invariant 2).
//!
//! Every event's waiting callers (`pre_tool`, `post_tool`, `user_prompt`) run on the task that
//! needs the answer (the run task, a connection's task); the others (`observe`) run on a task
//! of their own, at most `MAX_OBSERVERS` at once.

pub mod answer;
pub mod event;
pub mod run;

use std::path::PathBuf;
use std::sync::Arc;

use seedpod_config::{Hook, HookEvent, HooksSettings};
use tokio::sync::{Semaphore, mpsc};

pub use answer::{Answer, Decision};
pub use event::Details;

/// Hooks that only observe (`turn_end`, `notification`, `pre_compact`, `session_start`)
/// running at once; one that would exceed it is skipped and reported, so a burst of
/// notifications cannot start a process each.
pub const MAX_OBSERVERS: usize = 4;

/// Reports of failed hooks waiting for the controller; past it a report is only logged.
pub const HOOK_ALERT_CAPACITY: usize = 64;

/// What the `pre_tool` hooks decided about a call, before the policy has its say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PreTool {
    /// No hook ran, or none had an opinion: the policy decides.
    #[default]
    NoOpinion,
    /// Every hook that spoke allowed it. Skips an `ask` only when the person's own file says
    /// `pre_tool_may_allow = true`; never a `deny`.
    Allow,
    /// A person must decide, even where the policy would allow: a hook said `ask`, or one
    /// failed (a failing guard never lets a call through unseen).
    Ask,
    /// Not run; the model reads `reason`.
    Deny { reason: String },
}

/// What the `user_prompt` hooks decided about an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompted {
    /// Go on, with what the hooks add for the model (empty: nothing).
    Go { context: Vec<String> },
    /// Not recorded; the person reads `reason`.
    Block { reason: String },
}

/// The pod's hooks and what they need to run: one per pod, shared by the tasks that run them.
pub struct Hooks {
    settings: HooksSettings,
    /// `SEEDPOD_POD` and the event's `pod`.
    pod: String,
    /// Where hooks run, and the event's `cwd`.
    cwd: PathBuf,
    /// Failed hooks, to the controller, which publishes them as alerts.
    alerts: mpsc::Sender<String>,
    observers: Arc<Semaphore>,
}

impl Hooks {
    pub fn new(
        settings: HooksSettings,
        pod: String,
        cwd: PathBuf,
        alerts: mpsc::Sender<String>,
    ) -> Hooks {
        Hooks {
            settings,
            pod,
            cwd,
            alerts,
            observers: Arc::new(Semaphore::new(MAX_OBSERVERS)),
        }
    }

    /// Whether any hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.settings.hooks.iter().any(|h| h.event == event)
    }

    /// Whether a `pre_tool` hook's `allow` may answer a call the policy would ask about.
    pub fn may_allow(&self) -> bool {
        self.settings.pre_tool_may_allow.value
    }

    /// Run one hook with `details` and read its answer; a failure is reported.
    async fn one(&self, hook: &Hook, details: &Details) -> Answer {
        let input = event::render(hook.event, &self.pod, &self.cwd, details);
        let env = [
            ("SEEDPOD_HOOK_EVENT", hook.event.as_str()),
            ("SEEDPOD_POD", self.pod.as_str()),
        ];
        tracing::debug!(event = "hook_start", hook_event = hook.event.as_str(), command = %hook.command);
        let ran = run::run(&hook.command, &self.cwd, &env, &input, hook.timeout).await;
        let answer = answer::read(hook.event, ran, hook.timeout.as_secs());
        match &answer {
            Answer::Failed { why } => self.report(hook, why),
            Answer::Said { decision, .. } => {
                tracing::debug!(event = "hook_answer", hook_event = hook.event.as_str(), command = %hook.command, decision = ?decision);
            }
        }
        answer
    }

    /// Tell the person (an alert) and the log that `hook` failed, and what that meant.
    fn report(&self, hook: &Hook, why: &str) {
        let meant = match hook.event {
            HookEvent::PreTool => "the call waits for a person's approval instead",
            HookEvent::PostTool => "the result went to the model without it",
            HookEvent::UserPrompt => "the input went on without it",
            HookEvent::TurnEnd
            | HookEvent::Notification
            | HookEvent::PreCompact
            | HookEvent::SessionStart => "nothing waited for it",
        };
        let command = seedpod_protocol::ellipsize(&hook.command, 80);
        let message = format!(
            "the {} hook `{command}` (from {}) {why}; {meant}",
            hook.event.as_str(),
            hook.source
        );
        tracing::warn!(event = "hook_failed", hook_event = hook.event.as_str(), command = %hook.command, why = %why);
        if self.alerts.try_send(message).is_err() {
            tracing::warn!(
                event = "hook_alert_dropped",
                "too many hook reports waiting"
            );
        }
    }

    /// The `pre_tool` hooks matching the call, in order. A deny ends it (later hooks do not
    /// run); an `ask` or a failure makes the call ask whatever the others say.
    pub async fn pre_tool(&self, name: &str, call_id: &str, arguments: &str) -> PreTool {
        let hooks = self.settings.for_event(HookEvent::PreTool, Some(name));
        if hooks.is_empty() {
            return PreTool::NoOpinion;
        }
        let details = Details::Tool {
            name: name.to_owned(),
            call_id: call_id.to_owned(),
            arguments: arguments.to_owned(),
            result: None,
        };
        let mut verdict = PreTool::NoOpinion;
        for hook in hooks {
            match self.one(&hook, &details).await {
                Answer::Said {
                    decision: Some(Decision::Deny),
                    reason,
                    ..
                } => {
                    let reason = reason
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| "no reason given".into());
                    return PreTool::Deny { reason };
                }
                Answer::Said {
                    decision: Some(Decision::Ask),
                    ..
                }
                | Answer::Failed { .. } => verdict = PreTool::Ask,
                Answer::Said {
                    decision: Some(Decision::Allow),
                    ..
                } if verdict == PreTool::NoOpinion => verdict = PreTool::Allow,
                Answer::Said { .. } => {}
            }
        }
        verdict
    }

    /// The `post_tool` hooks matching the call, in order: what each adds for the model.
    pub async fn post_tool(
        &self,
        name: &str,
        call_id: &str,
        arguments: &str,
        content: &str,
        is_error: bool,
    ) -> Vec<String> {
        let hooks = self.settings.for_event(HookEvent::PostTool, Some(name));
        if hooks.is_empty() {
            return Vec::new();
        }
        let details = Details::Tool {
            name: name.to_owned(),
            call_id: call_id.to_owned(),
            arguments: arguments.to_owned(),
            result: Some((content.to_owned(), is_error)),
        };
        let mut added = Vec::new();
        for hook in hooks {
            if let Answer::Said {
                context: Some(context),
                ..
            } = self.one(&hook, &details).await
            {
                added.push(context);
            }
        }
        added
    }

    /// The `user_prompt` hooks, in order. A block ends it; a failure lets the input go on.
    pub async fn user_prompt(&self, text: &str) -> Prompted {
        let details = Details::Prompt {
            text: text.to_owned(),
        };
        let mut context = Vec::new();
        for hook in self.settings.for_event(HookEvent::UserPrompt, None) {
            match self.one(&hook, &details).await {
                Answer::Said {
                    decision: Some(Decision::Block),
                    reason,
                    ..
                } => {
                    let reason = reason
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| "no reason given".into());
                    return Prompted::Block { reason };
                }
                Answer::Said {
                    context: Some(added),
                    ..
                } => context.push(added),
                Answer::Said { .. } | Answer::Failed { .. } => {}
            }
        }
        Prompted::Go { context }
    }

    /// Run `event`'s hooks on a task of their own, in order; nothing waits for them and what
    /// they print is not read beyond a failure's report.
    pub fn observe(self: &Arc<Self>, event: HookEvent, details: Details) {
        if !self.has(event) {
            return;
        }
        let Ok(permit) = self.observers.clone().try_acquire_owned() else {
            tracing::warn!(
                event = "hook_skipped",
                hook_event = event.as_str(),
                "too many observing hooks running"
            );
            let _ = self.alerts.try_send(format!(
                "the {} hooks were skipped: {MAX_OBSERVERS} hooks were still running",
                event.as_str()
            ));
            return;
        };
        let hooks = self.clone();
        tokio::spawn(async move {
            let _permit = permit;
            for hook in hooks.settings.for_event(event, None) {
                hooks.one(&hook, &details).await;
            }
        });
    }
}

/// The `turn_end` event of a run that ended with `result`.
pub fn turn_end_details(
    result: &Result<seedpod_engine::RunOutcome, seedpod_engine::HostError>,
) -> Details {
    use seedpod_engine::RunOutcome;
    let (outcome, message) = match result {
        Ok(RunOutcome::Completed) => ("completed", None),
        Ok(RunOutcome::LimitReached) => ("limit_reached", None),
        Ok(RunOutcome::NoProgress { message }) => ("no_progress", Some(message.clone())),
        Ok(RunOutcome::Failed { message }) => ("failed", Some(message.clone())),
        Err(err) => ("stopped", Some(err.to_string())),
    };
    Details::TurnEnd { outcome, message }
}

/// What each added for the model, after a tool result: one paragraph per hook, labelled, so
/// the model tells the tool's output from the person's hook.
pub fn with_context(content: String, added: &[String]) -> String {
    let mut content = content;
    for context in added {
        content.push_str("\n\n[post_tool hook] ");
        content.push_str(context);
    }
    content
}
