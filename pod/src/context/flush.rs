//! The memory flush before a compaction (docs/agent-loop.md §Memory flush): a silent turn in
//! which the model may write durable notes — to `AGENTS.md`, which every new segment's prompt
//! includes, or to `.seedpod/memory/DATE.md` — before its earlier messages are summarised away.
//!
//! It is a turn of its own, outside the pod's history: a minimal prompt, the last few messages,
//! only the file tools the pod's policy already allows without asking, at most
//! `MAX_REQUESTS` requests within `TIMEOUT`. Nothing of it becomes model-visible history; what
//! it wrote is named in the compaction's record (`memory_flush`), and the notes reach the model
//! through the files themselves.

use std::time::Duration;

use seedpod_engine::{
    Context, HostError, PreparedRequest, Provider, ProviderEvent, Purpose, RetryPolicy, RunHost,
    RunLimits, ToolRegistry, drive_run_with_retry, unanswered_tool_calls,
};
use seedpod_protocol::{EntryKind, InFlush, ModelConfig, ModelItem, SystemItem, ToolSpec};

use super::zone::is_assistant;

/// Model requests one flush may make: a few reads and writes, not a task.
pub const MAX_REQUESTS: u32 = 5;
/// How long a flush may take before it is abandoned: the compaction, and the person, wait.
pub const TIMEOUT: Duration = Duration::from_secs(90);
/// Recent messages the flush sees: the whole history no longer fits the window (that is why
/// the pod compacts), and the latest messages hold what is worth keeping now.
pub const RECENT_MESSAGES: usize = 10;
/// The only tools a flush may use (and of those only the ones the policy allows without a
/// person): those whose declarations offer them to it (`ToolDecl::in_flush`), in catalogue
/// order.
pub fn flush_tool_names() -> Vec<&'static str> {
    crate::catalogue::declared()
        .into_iter()
        .filter(|decl| decl.in_flush == InFlush::Offered)
        .map(|decl| decl.name)
        .collect()
}

/// Why no flush ran; the text is the note the compaction records (`memory_flush`).
#[derive(Debug, thiserror::Error)]
pub enum Skipped {
    /// The flush asks no one, and every file tool would ask.
    #[error("skipped: no file tool runs without asking ([approvals]), and a flush asks no one")]
    NoFileTool,
}

/// What a flush needs, gathered by the controller.
pub struct FlushInput {
    pub model: ModelConfig,
    pub items: Vec<ModelItem>,
    pub tools: ToolRegistry,
    pub date: String,
}

/// The flush's prompt (our own words).
fn prompt(date: &str) -> String {
    let tools = spoken_list(&flush_tool_names());
    format!(
        "Your conversation is about to be compacted: its earlier messages will be replaced by \
a summary. Before that, store anything worth remembering beyond this conversation — facts about \
the project, decisions and their reasons, the person's preferences — as short notes appended to \
AGENTS.md (read it first and add to it; never remove what is there) or to \
.seedpod/memory/{date}.md. Use only {tools}. Do not continue the \
task. If there is nothing worth storing, answer exactly NO_REPLY."
    )
}

/// `a`, `a and b`, `a, b and c`.
fn spoken_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The tools of `registry` a flush may use: the file tools whose policy is `allow`.
pub fn flush_tools(registry: &ToolRegistry, allowed: impl Fn(&str) -> bool) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    for name in flush_tool_names() {
        if allowed(name)
            && let Some(tool) = registry.get(name)
        {
            tools.register(tool);
        }
    }
    tools
}

/// The last `RECENT_MESSAGES` items of `history`, starting where no call is cut from its
/// result.
pub fn recent(history: &[ModelItem]) -> Vec<ModelItem> {
    let mut start = history.len().saturating_sub(RECENT_MESSAGES);
    while start < history.len()
        && (matches!(history[start], ModelItem::ToolResult { .. })
            || (start > 0 && is_assistant(&history[start]) && is_assistant(&history[start - 1])))
    {
        start += 1;
    }
    history[start..].to_vec()
}

/// Run the flush; returns one line per file tool call it made (`write_file AGENTS.md`), or why
/// it stopped early. Never fails the compaction: a flush that cannot run is a note.
pub async fn run(provider: &dyn Provider, retry: &RetryPolicy, input: FlushInput) -> Vec<String> {
    let mut host = FlushHost {
        model: input.model,
        system_prompt: prompt(&input.date),
        specs: input.tools.specs(),
        history: input.items,
        provider,
        iterations: 0,
    };
    host.history.insert(
        0,
        ModelItem::UserMessage {
            text: "The last messages of the conversation follow.".into(),
        },
    );
    host.history.push(ModelItem::UserMessage {
        text: "Store your notes now, or answer NO_REPLY.".into(),
    });
    let start = host.history.len();
    let limits = RunLimits {
        max_iterations: MAX_REQUESTS,
        brakes: seedpod_engine::BrakeLimits::default(),
        // The flush is a bounded side request; reminders belong to the person's runs.
        task_reminder_after: 0,
    };
    let outcome = tokio::time::timeout(
        TIMEOUT,
        drive_run_with_retry(&mut host, provider, &input.tools, &limits, retry),
    )
    .await;
    let mut actions: Vec<String> = host.history[start..]
        .iter()
        .filter_map(|item| match item {
            ModelItem::ToolCall {
                name, arguments, ..
            } => Some(format!("{name} {}", path_of(arguments))),
            _ => None,
        })
        .collect();
    match outcome {
        Ok(Ok(_)) => {}
        Ok(Err(err)) => actions.push(format!("stopped: {err}")),
        Err(_) => actions.push(format!("stopped after {}s", TIMEOUT.as_secs())),
    }
    actions
}

fn path_of(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| v.get("path").and_then(|p| p.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "(no path)".into())
}

/// The flush's own, unlogged history: it is not the pod's conversation.
struct FlushHost<'a> {
    model: ModelConfig,
    system_prompt: String,
    specs: Vec<ToolSpec>,
    history: Vec<ModelItem>,
    provider: &'a dyn Provider,
    iterations: u32,
}

impl RunHost for FlushHost<'_> {
    async fn prepare_request(&mut self) -> Result<PreparedRequest, HostError> {
        let body = self.provider.request_body(&Context {
            model: &self.model,
            system_prompt: &self.system_prompt,
            tools: &self.specs,
            items: &self.history,
        });
        Ok(PreparedRequest {
            purpose: Purpose::Answer,
            body,
            unanswered: unanswered_tool_calls(&self.history),
            iteration: self.iterations,
            // The flush is a few quiet requests with its own small iteration cap; the brakes
            // judge the person's runs.
            run_calls: Vec::new(),
        })
    }

    async fn provisional(&mut self, _event: ProviderEvent) {}

    async fn commit(&mut self, kind: EntryKind) -> Result<(), HostError> {
        match kind {
            EntryKind::AssistantItem { item } => self.history.push(item),
            EntryKind::ToolResult {
                call_id,
                content,
                is_error,
                meta,
                ..
            } => self.history.push(ModelItem::ToolResult {
                call_id,
                content,
                is_error,
                images: meta.images(),
            }),
            EntryKind::SystemItem { item, .. } if !matches!(item, SystemItem::Unknown) => {
                self.history.push(ModelItem::SystemMessage {
                    text: item.history_text().to_owned(),
                });
            }
            EntryKind::TurnEnd { .. } => self.iterations += 1,
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::items::{call, result, text, user};

    #[test]
    fn recent_messages_never_start_with_an_orphaned_result() {
        let mut h = vec![user("start")];
        for i in 0..6 {
            let id = format!("c{i}");
            h.extend([call(&id), result(&id, "r"), text("ok")]);
        }
        let r = recent(&h);
        assert!(r.len() <= RECENT_MESSAGES);
        assert!(!matches!(r[0], ModelItem::ToolResult { .. }), "{r:?}");
    }

    /// The flush's tools come from the declarations, and its prompt names exactly them.
    #[test]
    fn the_flush_offers_the_file_tools_and_its_prompt_names_them() {
        assert_eq!(flush_tool_names(), ["read_file", "write_file", "edit_file"]);
        assert!(
            prompt("2026-05-01").contains("Use only read_file, write_file and edit_file."),
            "{}",
            prompt("2026-05-01")
        );
        assert_eq!(spoken_list(&["a"]), "a");
        assert_eq!(spoken_list(&["a", "b"]), "a and b");
    }

    #[test]
    fn the_paths_a_flush_wrote_are_named() {
        assert_eq!(
            path_of(r#"{"path":"AGENTS.md","content":"x"}"#),
            "AGENTS.md"
        );
        assert_eq!(path_of("not json"), "(no path)");
    }
}
