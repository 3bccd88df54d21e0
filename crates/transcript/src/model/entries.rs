//! Committed log entries → cells. The same function serves snapshot entries and live
//! `committed` events, so a reattached client draws exactly what a live one drew.

use seedpod_protocol::{
    AlertLevel, CallId, Entry, EntryKind, FinishReason, ModelItem, Origin, SegmentStart,
    SystemItem, Usage, WindowSource, is_no_reply,
};

use super::cells::{CellKind, SegmentOrigin, ToolStatus};
use super::live::LiveRole;
use super::transcript::{OpenCall, OpenRun, Transcript};

impl Transcript {
    /// Fold one committed entry; true when anything visible changed.
    pub(super) fn apply_entry(&mut self, entry: &Entry) -> bool {
        if self.in_snapshot && self.earlier.oldest.is_none() {
            // The snapshot's first entry is the oldest this client holds: is there more before?
            self.note_oldest(entry);
        }
        let tasks_changed = self.tasks.apply(&entry.kind);
        self.entry_key = Some(super::CellKey::of(entry));
        let changed = self.entry_cells(entry);
        self.entry_key = None;
        tasks_changed | changed
    }

    fn entry_cells(&mut self, entry: &Entry) -> bool {
        match &entry.kind {
            EntryKind::SegmentStart(start) => self.segment_start(start),
            EntryKind::RunStart { trigger } => {
                // Whatever went wrong before, the pod is working again.
                self.view.notice = None;
                self.run = Some(OpenRun {
                    start_ts: entry.ts,
                    usage: Usage::default(),
                    trigger: *trigger,
                    person_spoke: false,
                });
                self.turn_pending = true;
                false
            }
            EntryKind::UserInput { segments, .. } => {
                if let Some(run) = &mut self.run {
                    run.person_spoke = true;
                }
                let kind = CellKind::UserInput {
                    segments: segments.clone(),
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::AssistantItem { item } => self.assistant_item(item, entry),
            // The streamed text was the raw answer; the cleaned items that follow replace it
            // (and when cleaning left no text, nothing replaces it).
            EntryKind::AssistantRaw { .. } => self.take_live(LiveRole::Text).is_some(),
            // The streamed text a stop cut short: the provisional block becomes this cell.
            EntryKind::AssistantInterrupted { text } => {
                self.take_live(LiveRole::Text);
                let kind = CellKind::AssistantText {
                    text: text.clone(),
                    streaming: false,
                    interrupted: true,
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::ToolResult {
                call_id,
                name,
                content,
                is_error,
                meta,
            } => self.tool_result(call_id, name, content, *is_error, meta.outcome(), entry.ts),
            EntryKind::SystemItem { item, .. } => {
                let kind = system_cell(item, entry);
                self.push_committed(kind, None);
                true
            }
            EntryKind::TurnEnd { finish, .. } => self.turn_end(*finish),
            EntryKind::RunEnd { reason, message } => {
                self.clear_live();
                self.close_approvals();
                self.view.retry_notice = None;
                self.turn_pending = false;
                let run = self.run.take();
                let kind = CellKind::RunEnd {
                    reason: *reason,
                    message: message.clone(),
                    duration_ms: run.map(|r| entry.ts.saturating_sub(r.start_ts)),
                    tokens: run.map(|r| r.usage),
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::Usage(usage) => {
                // "In" counts every prompt token the provider processed, cached or not.
                self.view.tokens_in +=
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens;
                self.view.tokens_out += usage.output_tokens;
                if let Some(run) = &mut self.run {
                    run.usage.add(usage);
                }
                true
            }
            EntryKind::ConfigChanged { model } => {
                self.view.provider = model.provider.as_str().to_string();
                self.view.model = model.model.clone();
                let kind = CellKind::ModelChanged {
                    provider: self.view.provider.clone(),
                    model: model.model.clone(),
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::ApprovalRequest(request) => self.approval_request(request),
            EntryKind::ApprovalAnswer { call_id, decision } => {
                self.approval_answer(call_id, decision)
            }
            // The queue is shown from `queued` frames, which carry its whole content.
            EntryKind::ApprovalRevoked { standing } => {
                let kind = CellKind::ApprovalRevoked {
                    rule: standing.display(),
                };
                self.push_committed(kind, None);
                true
            }
            // A notice the pod committed: drawn like a live alert, and there on every attach.
            EntryKind::Notice { level, message } => {
                let kind = CellKind::Alert {
                    level: *level,
                    message: message.clone(),
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::ApprovalStanding { standing, .. } => {
                let kind = CellKind::StandingAllowed {
                    rule: standing.display(),
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::Queued { .. }
            | EntryKind::Dequeued { .. }
            | EntryKind::Outbox { .. }
            | EntryKind::OutboxDelivered { .. } => false,
            // Said once, where it was learned; a configured or looked-up window is the
            // status line's business.
            EntryKind::ContextWindow(window) => match window.source {
                WindowSource::Learned => {
                    let kind = CellKind::WindowLearned {
                        tokens: window.tokens,
                    };
                    self.push_committed(kind, None);
                    true
                }
                WindowSource::Config
                | WindowSource::Table
                | WindowSource::Server
                | WindowSource::Unknown => false,
            },
            EntryKind::ContextPruned { trims } if trims.is_empty() => false,
            EntryKind::ContextPruned { trims } => {
                let kind = CellKind::ContextPruned {
                    results: trims.len(),
                };
                self.push_committed(kind, None);
                true
            }
            EntryKind::Unknown => {
                let kind = CellKind::Unknown {
                    label: format!("log entry #{} of an unknown kind", entry.seq),
                    raw: raw_json(entry),
                };
                self.push_committed(kind, None);
                true
            }
        }
    }

    /// A segment's first entry: in a snapshot the top of the transcript; live, a `/clear` (or
    /// compaction) starting a new segment. The cells above stay on screen under the separator
    /// this draws, but what is counted per segment (tokens, open calls and runs, pending
    /// approvals) starts again, as it does in the pod.
    fn segment_start(&mut self, start: &SegmentStart) -> bool {
        self.clear_live();
        self.close_approvals();
        self.open_calls.clear();
        self.run = None;
        self.turn_pending = false;
        // The pod's totals carry across segments (docs/storage.md): a new segment starts the
        // counters where the last one left them, not at zero.
        let totals = start.totals.as_deref().copied().unwrap_or_default();
        self.view.tokens_in = totals
            .usage
            .input_tokens
            .saturating_add(totals.usage.cache_read_tokens)
            .saturating_add(totals.usage.cache_creation_tokens);
        self.view.tokens_out = totals.usage.output_tokens;
        self.view.retry_notice = None;
        self.view.provider = start.model.provider.as_str().to_string();
        self.view.model = start.model.model.clone();
        self.view.segment_id = start.segment_id.clone();
        let origin = match &start.origin {
            Origin::New => SegmentOrigin::New,
            Origin::CompactedFrom { segment_id } => {
                SegmentOrigin::CompactedFrom(segment_id.clone())
            }
            Origin::ForkedFrom { segment_id, .. } => SegmentOrigin::ForkedFrom(segment_id.clone()),
            Origin::RewoundFrom { segment_id, .. } => {
                SegmentOrigin::RewoundFrom(segment_id.clone())
            }
            Origin::ClearedFrom { segment_id } => SegmentOrigin::ClearedFrom(segment_id.clone()),
            Origin::RecomposedFrom { segment_id } => {
                SegmentOrigin::RecomposedFrom(segment_id.clone())
            }
            Origin::Unknown => SegmentOrigin::Unknown,
        };
        let kind = CellKind::SegmentStart {
            segment_id: start.segment_id.clone(),
            provider: self.view.provider.clone(),
            model: start.model.model.clone(),
            origin,
        };
        self.push_committed(kind, None);
        if let Some(record) = &start.compaction {
            let kind = CellKind::Compaction {
                record: record.clone(),
            };
            self.push_committed(kind, None);
        }
        true
    }

    fn assistant_item(&mut self, item: &ModelItem, entry: &Entry) -> bool {
        match item {
            ModelItem::AssistantText { text } => {
                self.view.retry_notice = None;
                let replaces = self.take_live(LiveRole::Text);
                let silent = self.run.as_ref().is_some_and(|run| {
                    run.trigger.may_be_silent() && !run.person_spoke && is_no_reply(text)
                });
                let kind = if silent {
                    CellKind::Noted
                } else {
                    CellKind::AssistantText {
                        text: text.clone(),
                        streaming: false,
                        interrupted: false,
                    }
                };
                self.push_committed(kind, replaces);
            }
            ModelItem::Reasoning { text, .. } => {
                let replaces = self.take_live(LiveRole::Thinking);
                let kind = CellKind::Thinking {
                    text: text.clone(),
                    streaming: false,
                };
                self.push_committed(kind, replaces);
            }
            ModelItem::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let replaces = self
                    .live_tool_role(call_id)
                    .and_then(|role| self.take_live(role));
                let kind = CellKind::ToolCall {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    status: ToolStatus::Running,
                    output: String::new(),
                    duration_ms: None,
                    outcome: None,
                    progress: None,
                };
                let index = self.push_committed(kind, replaces);
                let call = OpenCall {
                    index,
                    ts: entry.ts,
                };
                self.open_calls.insert(call_id.clone(), call);
            }
            ModelItem::UserMessage { .. }
            | ModelItem::ToolResult { .. }
            | ModelItem::SystemMessage { .. } => {
                // Not something a model says; show it rather than guess what it means.
                let kind = CellKind::Unknown {
                    label: format!("assistant item #{} of an unexpected type", entry.seq),
                    raw: raw_json(entry),
                };
                self.push_committed(kind, None);
            }
        }
        true
    }

    /// Pair a result with its call. A result whose call this client never saw (an older
    /// segment) still shows, as a call cell of its own.
    fn tool_result(
        &mut self,
        result_call_id: &CallId,
        result_name: &str,
        content: &str,
        is_error: bool,
        outcome: Option<String>,
        ts: u64,
    ) -> bool {
        let status = if is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        let Some(call) = self.open_calls.remove(result_call_id) else {
            let kind = CellKind::ToolCall {
                call_id: result_call_id.clone(),
                name: result_name.to_string(),
                arguments: String::new(),
                status,
                output: content.to_string(),
                duration_ms: None,
                outcome,
                progress: None,
            };
            self.push_committed(kind, None);
            return true;
        };
        let Some(cell) = self.cells.get_mut(call.index) else {
            return false;
        };
        if let CellKind::ToolCall {
            status: cell_status,
            output,
            duration_ms,
            outcome: cell_outcome,
            progress,
            ..
        } = &mut cell.kind
        {
            *cell_status = status;
            *output = content.to_string();
            *duration_ms = Some(ts.saturating_sub(call.ts));
            *cell_outcome = outcome;
            *progress = None;
        }
        cell.touch();
        true
    }

    fn turn_end(&mut self, finish: FinishReason) -> bool {
        let cleared = self.clear_live();
        let warning = match finish {
            FinishReason::Stop | FinishReason::ToolUse | FinishReason::Unknown => None,
            FinishReason::Length => Some("the answer was cut off: the model hit its output limit"),
            FinishReason::ContentFilter => Some("the provider's content filter stopped the answer"),
        };
        let Some(message) = warning else {
            return cleared;
        };
        let kind = CellKind::Alert {
            level: AlertLevel::Warn,
            message: message.to_string(),
        };
        self.push_committed(kind, None);
        true
    }
}

fn system_cell(item: &SystemItem, entry: &Entry) -> CellKind {
    match item {
        SystemItem::Notification { message, .. } => CellKind::Notification {
            message: message.clone(),
        },
        SystemItem::PodEvent { event, .. } => CellKind::PodEvent {
            event: event.clone(),
        },
        SystemItem::FileAttachment { path, body } => CellKind::FileAttachment {
            path: path.clone(),
            body: body.clone(),
        },
        SystemItem::Knowledge { slug, body } => CellKind::Knowledge {
            slug: slug.clone(),
            body: body.clone(),
        },
        SystemItem::Workflow { slug, body } => CellKind::Workflow {
            slug: slug.clone(),
            body: body.clone(),
        },
        SystemItem::TaskReminder { source, body } => CellKind::TaskReminder {
            source: *source,
            body: body.clone(),
        },
        SystemItem::Interrupt { body } => CellKind::Interrupt { body: body.clone() },
        SystemItem::DateChanged { date, .. } => CellKind::DateChanged { date: date.clone() },
        SystemItem::Unknown => CellKind::Unknown {
            label: format!("system item #{} of an unknown kind", entry.seq),
            raw: raw_json(entry),
        },
    }
}

/// The entry as JSON, for unknown kinds. The decoder keeps only the tag of what it did not
/// understand, so this is what this client knows, not the original line.
fn raw_json(entry: &Entry) -> String {
    serde_json::to_string(entry).unwrap_or_else(|e| format!("(unprintable: {e})"))
}
