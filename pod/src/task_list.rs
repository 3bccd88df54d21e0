//! The `update_tasks` tool: the model's own plan, replaced whole with every call.
//!
//! The tool holds no state. Its call and its result are committed like every other call, and
//! `seedpod_protocol::TaskTracker` reads the list back out of them, so the list replays from the
//! log exactly and a crash cannot separate "the tool ran" from "the list changed". The tool's job
//! is only to check the list and answer in a way the model can act on.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_engine::{Tool, ToolOutput, ToolRegistry};
use seedpod_protocol::tasks::{MAX_TASK_CHARS, MAX_TASKS, UPDATE_TASKS, parse_update};
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Preview, Task, TaskStatus, ToolDecl,
    ToolSpec,
};
use serde_json::json;

use crate::policy::{Policies, Policy};

/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`): it only
/// records the model's plan in the log, so it runs without asking; a small window has no room
/// for keeping a plan, and small models misuse it.
pub const DECL: ToolDecl = ToolDecl {
    name: UPDATE_TASKS,
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: None,
    small_note: None,
    in_small_prompt: InSmallPrompt::Never,
    summary: CallSummary::raw,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

pub struct UpdateTasks;

impl UpdateTasks {
    /// Offer the tool unless `policies` deny it.
    pub fn register(registry: &mut ToolRegistry, policies: &Policies) {
        if policies.offers(&DECL) {
            registry.register(Arc::new(UpdateTasks));
        }
    }
}

/// The spec, also used to describe a pod without running it.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: UPDATE_TASKS.into(),
        description: format!(
            "Keep a task list for work with several steps: send the whole list each time (it \
             replaces the one before), marking one task in_progress while you work on it and \
             each done as soon as it is. The person sees the list. Skip it for a one-step \
             request. Up to {MAX_TASKS} tasks of up to {MAX_TASK_CHARS} characters."
        ),
        parameters: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["tasks"],
            "properties": {
                "tasks": {
                    "type": "array",
                    "description": "The whole list, in order.",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["content", "status"],
                        "properties": {
                            "content": {"type": "string", "description": "What to do, in a few words."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
                        }
                    }
                }
            }
        }),
    }
}

impl Tool for UpdateTasks {
    fn spec(&self) -> ToolSpec {
        spec()
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let output = match parse_update(&arguments) {
            Ok(tasks) => ToolOutput::ok(summary(&tasks)),
            Err(error) => ToolOutput::error(format!("the task list was not changed: {error}")),
        };
        futures::future::ready(output).boxed()
    }
}

/// What the model reads back: counts, and the task it said it is on.
fn summary(tasks: &[Task]) -> String {
    if tasks.is_empty() {
        return "task list cleared".into();
    }
    let count = |status| tasks.iter().filter(|t| t.status == status).count();
    let mut text = format!(
        "task list updated: {} tasks ({} done, {} in progress, {} pending)",
        tasks.len(),
        count(TaskStatus::Done),
        count(TaskStatus::InProgress),
        count(TaskStatus::Pending)
    );
    if let Some(current) = tasks.iter().find(|t| t.status == TaskStatus::InProgress) {
        text.push_str(&format!("; now: {}", current.content));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn call(arguments: &str) -> ToolOutput {
        UpdateTasks.call(arguments.to_owned()).await
    }

    #[tokio::test]
    async fn a_valid_list_is_acknowledged_with_its_counts() {
        let out = call(
            r#"{"tasks":[{"content":"read","status":"done"},{"content":"fix","status":"in_progress"},{"content":"test","status":"pending"}]}"#,
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            out.content,
            "task list updated: 3 tasks (1 done, 1 in progress, 1 pending); now: fix"
        );
        let cleared = call(r#"{"tasks":[]}"#).await;
        assert_eq!(cleared.content, "task list cleared");
    }

    #[tokio::test]
    async fn an_invalid_list_fails_the_call_and_says_nothing_changed() {
        for arguments in [
            r#"{"tasks":"buy milk"}"#,
            r#"{"tasks":[{"content":"a","status":"started"}]}"#,
            r#"{"tasks":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}"#,
        ] {
            let out = call(arguments).await;
            assert!(out.is_error, "{arguments}");
            assert!(
                out.content.starts_with("the task list was not changed: "),
                "{}",
                out.content
            );
        }
    }

    #[test]
    fn a_denied_tool_is_not_offered() {
        let mut registry = ToolRegistry::new();
        UpdateTasks::register(
            &mut registry,
            &Policies::new([(UPDATE_TASKS.to_string(), Policy::Deny)]),
        );
        assert!(registry.specs().is_empty());
        UpdateTasks::register(&mut registry, &crate::catalogue::default_policies());
        assert_eq!(registry.specs()[0].name, UPDATE_TASKS);
    }
}
