//! One-line human summaries of entries and events for `history`, `events` and `send`.

use seedpod_protocol::{
    ApprovalDecision, Entry, EntryKind, ModelItem, QueuedItem, ServerMsg, SystemItem,
};

/// Longest tool output shown on one line before it is cut.
const PREVIEW_CHARS: usize = 200;

fn preview(text: &str) -> String {
    let flat: String = text.replace('\n', "⏎");
    if flat.chars().count() <= PREVIEW_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(PREVIEW_CHARS).collect();
    format!("{cut}… ({} chars)", text.chars().count())
}

/// One line per entry; what the entry quotes (model text, tool output) is escaped for the
/// terminal.
pub fn entry_line(entry: &Entry) -> String {
    let summary = entry_summary(&entry.kind);
    format!("#{:<5} {}", entry.seq, crate::terminal::cell(&summary))
}

pub fn entry_summary(kind: &EntryKind) -> String {
    match kind {
        EntryKind::SegmentStart(start) => format!(
            "segment {} started ({}/{}, {} tools)",
            start.segment_id,
            start.model.provider.as_str(),
            start.model.model,
            start.tools.len()
        ),
        EntryKind::RunStart { trigger } => format!("run started ({trigger:?})").to_lowercase(),
        EntryKind::UserInput { text, .. } => format!("user: {}", preview(text)),
        EntryKind::AssistantItem { item } => match item {
            ModelItem::AssistantText { text } => format!("assistant: {}", preview(text)),
            ModelItem::Reasoning { text, .. } => format!("thinking: {}", preview(text)),
            ModelItem::ToolCall {
                name, arguments, ..
            } => format!("tool call {name}({})", preview(arguments)),
            ModelItem::UserMessage { text } => format!("user: {}", preview(text)),
            ModelItem::ToolResult { content, .. } => format!("tool result: {}", preview(content)),
            ModelItem::SystemMessage { text } => format!("system: {}", preview(text)),
        },
        EntryKind::AssistantRaw { text } => {
            format!("raw model output (cleaned below): {}", preview(text))
        }
        EntryKind::AssistantInterrupted { text } => {
            format!("assistant (interrupted): {}", preview(text))
        }
        EntryKind::ToolResult {
            name,
            content,
            is_error,
            meta,
            ..
        } => {
            let failed = match (is_error, meta.outcome()) {
                (true, Some(outcome)) => format!(" [error: {outcome}]"),
                (true, None) => " [error]".to_owned(),
                (false, _) => String::new(),
            };
            format!("tool result {name}{failed}: {}", preview(content))
        }
        EntryKind::SystemItem { item, .. } => match item {
            SystemItem::Notification { message, .. } => {
                format!("notification: {}", preview(message))
            }
            SystemItem::Unknown => "system item of an unknown kind".into(),
            other => format!("{}: {}", other.kind_name(), preview(other.history_text())),
        },
        EntryKind::TurnEnd { iteration, finish } => {
            format!("turn {iteration} ended ({finish:?})").to_lowercase()
        }
        EntryKind::RunEnd { reason, message } => format!(
            "run ended: {}{}",
            format!("{reason:?}").to_lowercase(),
            message
                .as_ref()
                .map(|m| format!(" — {m}"))
                .unwrap_or_default()
        ),
        EntryKind::Usage(usage) => format!(
            "usage: {} in, {} out",
            usage.input_tokens, usage.output_tokens
        ),
        EntryKind::ApprovalRequest(request) => {
            format!("approval requested: {}", preview(&request.summary))
        }
        EntryKind::ApprovalAnswer { call_id, decision } => match decision {
            ApprovalDecision::Approve => format!("approved {call_id}"),
            ApprovalDecision::ApproveAlways(standing) => {
                format!("approved {call_id}, and from now on {}", standing.display())
            }
            ApprovalDecision::Deny { reason } => format!("denied {call_id}: {}", preview(reason)),
            ApprovalDecision::Unknown => format!("answered {call_id} (in an unknown way)"),
        },
        EntryKind::ApprovalRevoked { standing } => {
            format!("standing approval revoked: {}", standing.display())
        }
        EntryKind::Notice { message, .. } => format!("note: {message}"),
        EntryKind::ApprovalStanding { call_id, standing } => {
            format!(
                "{call_id} allowed by the standing rule {}",
                standing.display()
            )
        }
        EntryKind::ConfigChanged { model } => {
            format!("model set to {}/{}", model.provider.as_str(), model.model)
        }
        EntryKind::Queued { queue_id, item } => format!("queued #{queue_id}: {}", queued(item)),
        EntryKind::Dequeued { queue_id, reason } => {
            format!("dequeued #{queue_id} ({reason:?})").to_lowercase()
        }
        EntryKind::Outbox { event } => format!(
            "report for the parent: {}",
            seedpod_pod::render::pod_event_body(event)
        ),
        EntryKind::OutboxDelivered { event_id } => format!("parent received report {event_id}"),
        EntryKind::ContextWindow(window) => format!(
            "context window: {} tokens ({})",
            window.tokens,
            window.source.as_str()
        ),
        EntryKind::ContextPruned { trims } => {
            format!("pruned {} old tool result(s)", trims.len())
        }
        EntryKind::Unknown => "entry of an unknown kind (written by a newer seedpod)".into(),
    }
}

fn queued(item: &QueuedItem) -> String {
    match item {
        QueuedItem::Run { segments } => {
            format!(
                "input {}",
                preview(&seedpod_protocol::flatten_to_text(segments))
            )
        }
        QueuedItem::Delegated { segments } => format!(
            "input from the parent pod {}",
            preview(&seedpod_protocol::flatten_to_text(segments))
        ),
        QueuedItem::Notify { message, .. } => format!("notification {}", preview(message)),
        QueuedItem::PodEvent { event, .. } => {
            format!("pod event from {}", event.pod().unwrap_or("?"))
        }
        QueuedItem::Unknown => "an item of an unknown kind".into(),
    }
}

/// A human line for an event frame, or `None` for frames `events` does not print (deltas).
/// One line per event, escaped for the terminal.
pub fn event_line(msg: &ServerMsg) -> Option<String> {
    event_text(msg).map(|line| crate::terminal::cell(&line).into_owned())
}

fn event_text(msg: &ServerMsg) -> Option<String> {
    match msg {
        ServerMsg::Committed { entry, .. } => Some(entry_line(entry)),
        ServerMsg::State { state, .. } => Some(format!("-- state: {}", state.as_str())),
        ServerMsg::Alert { level, message, .. } => Some(format!(
            "!! {}: {message}",
            format!("{level:?}").to_lowercase()
        )),
        ServerMsg::Status { message, .. } => Some(format!("-- {message}")),
        ServerMsg::Queued { queue, .. } => Some(format!("-- queue: {} waiting", queue.len())),
        ServerMsg::SnapshotBegin { greeting, .. } => Some(format!("== {greeting}")),
        ServerMsg::SnapshotEntries { entries } => Some(
            entries
                .iter()
                .map(entry_line)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        ServerMsg::InFlight { text, .. } if !text.is_empty() => {
            Some(format!("-- streaming: {}", preview(text)))
        }
        ServerMsg::SnapshotEnd { .. } => Some("== live".into()),
        ServerMsg::Goodbye { message, .. } => Some(format!("== goodbye: {message}")),
        ServerMsg::Error { message, .. } => Some(format!("!! error: {message}")),
        ServerMsg::CommandDone { message, .. } => Some(format!("-- {message}")),
        ServerMsg::Spawned { name, .. } => Some(format!("-- spawned child pod {name}")),
        ServerMsg::ContextFill { context, .. } => Some(format!(
            "-- context: {} tokens{}",
            context.tokens,
            context
                .window
                .map(|w| format!(" of {w}"))
                .unwrap_or_default()
        )),
        // A running call's progress, as its MCP server last said (at most a few a second).
        ServerMsg::ToolProgress {
            call_id, progress, ..
        } => Some(format!("-- progress of {call_id}: {}", progress.label())),
        ServerMsg::InFlight { .. }
        | ServerMsg::TextDelta { .. }
        | ServerMsg::ThinkingDelta { .. }
        | ServerMsg::ToolCallDelta { .. }
        | ServerMsg::Welcome { .. }
        | ServerMsg::Incompatible { .. }
        | ServerMsg::Ack { .. }
        | ServerMsg::History { .. }
        | ServerMsg::Context { .. }
        | ServerMsg::StatusReply { .. }
        | ServerMsg::Completions { .. }
        | ServerMsg::Earlier { .. }
        | ServerMsg::Approvals { .. }
        | ServerMsg::McpServers { .. } => None,
        ServerMsg::Unknown => Some("?? an event this seedpod does not know".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::{CallId, EventSeq, ToolProgress};

    /// `seedpod events` prints a call's progress as one line, whatever the message holds.
    #[test]
    fn a_progress_event_is_one_escaped_line() {
        let line = |message: &str| {
            event_line(&ServerMsg::ToolProgress {
                seq: EventSeq::new(1),
                call_id: CallId::new("call_1"),
                progress: ToolProgress {
                    progress: 3.0,
                    total: Some(10.0),
                    message: Some(message.into()),
                },
            })
            .unwrap_or_default()
        };
        assert_eq!(
            line("indexing files"),
            "-- progress of call_1: 3/10 · indexing files"
        );
        // A message from a pod that did not clean it still cannot steer the terminal.
        let hostile = line("\u{1b}]0;pwned\u{7}\nnext");
        assert!(
            !hostile.contains('\u{1b}') && !hostile.contains('\n'),
            "{hostile:?}"
        );
    }
}
