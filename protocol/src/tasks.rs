//! The task list a model keeps with the `update_tasks` tool, and when the model is reminded of
//! it (docs/agent-loop.md §Reminders).
//!
//! The list is not state of its own: it is the arguments of the last `update_tasks` call whose
//! result succeeded, carried into a new segment by `segment_start.tasks`. `TaskTracker` is the one
//! rule for reading it out of entries, shared by the pod's fold, the TUI and `seedpod tasks`, so
//! they can never disagree about what the list is.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::entry::EntryKind;
use crate::ids::CallId;
use crate::item::ModelItem;
use crate::system_item::SystemItem;

/// The tool's name, as the model calls it.
pub const UPDATE_TASKS: &str = "update_tasks";
/// Items one list may hold: a plan, not a backlog; also bounds what a reminder repeats.
pub const MAX_TASKS: usize = 50;
/// Characters one item's text may have.
pub const MAX_TASK_CHARS: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub content: String,
    pub status: TaskStatus,
}

impl Task {
    pub fn is_open(&self) -> bool {
        self.status != TaskStatus::Done
    }

    /// `[x] text`, `[~] text`, `[ ] text`.
    pub fn checkbox_line(&self) -> String {
        let mark = match self.status {
            TaskStatus::Pending => "[ ]",
            TaskStatus::InProgress => "[~]",
            TaskStatus::Done => "[x]",
        };
        format!("{mark} {}", self.content)
    }
}

/// The `update_tasks` arguments: the whole list, replacing the one before.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    tasks: Vec<Task>,
}

/// Read an `update_tasks` call's raw arguments, or say what is wrong with them (the model reads
/// this as the call's error).
pub fn parse_update(arguments: &str) -> Result<Vec<Task>, String> {
    let args: UpdateArgs = serde_json::from_str(arguments).map_err(|e| {
        format!(
            "update_tasks takes {{\"tasks\": [{{\"content\": \"…\", \"status\": \"pending\" | \
             \"in_progress\" | \"done\"}}, …]}}: {e}"
        )
    })?;
    if args.tasks.len() > MAX_TASKS {
        return Err(format!(
            "the list has {} tasks; keep at most {MAX_TASKS} (merge small steps, drop done ones)",
            args.tasks.len()
        ));
    }
    for (i, task) in args.tasks.iter().enumerate() {
        let chars = task.content.chars().count();
        if task.content.trim().is_empty() {
            return Err(format!("task {} has no content", i + 1));
        }
        if chars > MAX_TASK_CHARS {
            return Err(format!(
                "task {} is {chars} characters long; keep each under {MAX_TASK_CHARS}",
                i + 1
            ));
        }
    }
    let in_progress = args
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::InProgress)
        .count();
    if in_progress > 1 {
        return Err(format!(
            "{in_progress} tasks are in_progress; work on one at a time (mark the others pending)"
        ));
    }
    Ok(args.tasks)
}

/// Follows the task list through a segment's entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskTracker {
    tasks: Vec<Task>,
    /// Model requests (`turn_end`s) since the list was last set or a reminder was given.
    untouched: u32,
    /// The list was set by a response whose `turn_end` is still to come: that response is the
    /// one that touched it, so its `turn_end` does not count as untouched.
    touched_this_turn: bool,
    /// `update_tasks` calls waiting for their result: call id → arguments, and whether the
    /// response that made the call has already ended.
    calls: HashMap<CallId, PendingCall>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PendingCall {
    arguments: String,
    turn_ended: bool,
}

impl TaskTracker {
    /// The tracker at the start of a segment that carried `tasks` over.
    pub fn starting_with(tasks: Vec<Task>) -> TaskTracker {
        TaskTracker {
            tasks,
            ..TaskTracker::default()
        }
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    pub fn has_open(&self) -> bool {
        self.tasks.iter().any(Task::is_open)
    }

    /// Requests since the list was last touched (or the model last reminded).
    pub fn untouched(&self) -> u32 {
        self.untouched
    }

    /// Follow one entry. Returns true when the list changed.
    pub fn apply(&mut self, kind: &EntryKind) -> bool {
        match kind {
            EntryKind::SegmentStart(start) => {
                *self = TaskTracker::starting_with(start.tasks.clone());
                true
            }
            EntryKind::AssistantItem {
                item:
                    ModelItem::ToolCall {
                        call_id,
                        name,
                        arguments,
                    },
            } if name == UPDATE_TASKS => {
                let call = PendingCall {
                    arguments: arguments.clone(),
                    turn_ended: false,
                };
                self.calls.insert(call_id.clone(), call);
                false
            }
            EntryKind::ToolResult {
                call_id,
                name,
                is_error,
                ..
            } if name == UPDATE_TASKS => {
                let Some(call) = self.calls.remove(call_id) else {
                    return false;
                };
                match parse_update(&call.arguments) {
                    Ok(tasks) if !is_error => {
                        self.tasks = tasks;
                        self.untouched = 0;
                        self.touched_this_turn = !call.turn_ended;
                        true
                    }
                    _ => false,
                }
            }
            EntryKind::TurnEnd { .. } => {
                for call in self.calls.values_mut() {
                    call.turn_ended = true;
                }
                if std::mem::take(&mut self.touched_this_turn) {
                    return false;
                }
                self.untouched = self.untouched.saturating_add(1);
                false
            }
            EntryKind::SystemItem {
                item: SystemItem::TaskReminder { .. },
                ..
            } => {
                self.untouched = 0;
                self.touched_this_turn = false;
                false
            }
            _ => false,
        }
    }

    /// The reminder due before the next request, when the model has open tasks and has not
    /// touched the list for `remind_after` requests (0: never).
    pub fn reminder_due(&self, remind_after: u32) -> Option<SystemItem> {
        if remind_after == 0 || !self.has_open() || self.untouched < remind_after {
            return None;
        }
        let lines: Vec<String> = self
            .tasks
            .iter()
            .map(|t| format!("- {}", t.checkbox_line()))
            .collect();
        let body = format!(
            "The task list has not been updated in the last {} requests. It says:\n{}\nIf one \
             is finished or the plan changed, call update_tasks with the whole list; if you are \
             on track, carry on. Do not mention this reminder to the person.",
            self.untouched,
            lines.join("\n")
        );
        Some(SystemItem::TaskReminder {
            source: ReminderSource::TaskInactivity,
            body: wrap_reminder(&body),
        })
    }
}

/// What produced a `task_reminder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReminderSource {
    /// Open tasks untouched for `[tasks] remind_after` requests. Entries written before the
    /// source was recorded read as this, the only kind there was.
    #[default]
    TaskInactivity,
    /// A source this binary does not know (written by a newer seedpod).
    #[serde(other)]
    Unknown,
}

impl ReminderSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReminderSource::TaskInactivity => "task_inactivity",
            ReminderSource::Unknown => "unknown",
        }
    }
}

const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

/// A reminder body wrapped in `<system-reminder>` exactly once: a body that already is wrapped
/// is unwrapped first, so no path can wrap it twice.
pub fn wrap_reminder(body: &str) -> String {
    let trimmed = body.trim();
    let inner = trimmed
        .strip_prefix(REMINDER_OPEN)
        .and_then(|rest| rest.strip_suffix(REMINDER_CLOSE))
        .map_or(trimmed, |inner| inner.trim_matches('\n'));
    format!("{REMINDER_OPEN}\n{inner}\n{REMINDER_CLOSE}")
}

#[cfg(test)]
mod tests;
