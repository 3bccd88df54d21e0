//! A pod's log read as a transcript for people: the messages, tool calls with their results
//! folded in, reports and summaries, in order — what every export format renders. Built from
//! committed entries only, so an export says what the log says (DESIGN invariant 3).

use seedpod_protocol::{
    Entry, EntryKind, ModelItem, Origin, PodEvent, RunEndReason, SegmentId, SystemItem,
};

/// One segment as a person reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub segment: SegmentId,
    /// Where the segment came from, in words (`new`, `compacted from …`).
    pub origin: String,
    pub blocks: Vec<Block>,
}

/// One thing in a transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// What the person (or the parent pod, or a script) submitted.
    User { text: String },
    /// An answer; `interrupted` when it was stopped partway.
    Assistant { text: String, interrupted: bool },
    /// The model's reasoning (only when asked for).
    Thinking { text: String },
    /// A tool call and, once committed, its result.
    Tool {
        /// Pairs the call with its result; not shown.
        call_id: String,
        summary: String,
        arguments: String,
        result: Option<ToolOutcome>,
    },
    /// The summary a compaction wrote in place of earlier messages.
    Summary { text: String },
    /// Something the pod was told or added: a notification, a child pod's report, an
    /// attached file, an interruption. `label` says which, `text` is what the model read.
    Note { label: String, text: String },
    /// A run that did not complete, and why.
    RunEnded { text: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub content: String,
    pub is_error: bool,
}

/// What to include beyond the conversation itself.
#[derive(Debug, Clone, Copy)]
pub struct Include {
    pub thinking: bool,
    /// Show the messages a compaction carried into this segment (its seed): right for the
    /// first segment exported, a repeat for a later one whose predecessor is exported too.
    pub seed: bool,
}

/// The transcript of one segment's entries.
pub fn part(segment: SegmentId, entries: &[Entry], include: Include) -> Part {
    let mut part = Part {
        segment,
        origin: "empty".into(),
        blocks: Vec::new(),
    };
    for entry in entries {
        match &entry.kind {
            EntryKind::SegmentStart(start) => {
                part.origin = origin(&start.origin);
                if let Some(compaction) = &start.compaction {
                    part.blocks.push(Block::Summary {
                        text: compaction.summary.clone(),
                    });
                }
                if include.seed {
                    // The summary is also the seed's first item (as the model reads it, with
                    // a preface); it is shown once, above.
                    let summary = start.compaction.as_ref().map(|c| c.summary.as_str());
                    for item in &start.seed {
                        match (item, summary) {
                            (ModelItem::SystemMessage { text }, Some(summary))
                                if text.ends_with(summary) => {}
                            (item, _) => item_block(&mut part.blocks, item, include),
                        }
                    }
                }
            }
            EntryKind::UserInput { text, .. } => {
                part.blocks.push(Block::User { text: text.clone() })
            }
            EntryKind::AssistantItem { item } => item_block(&mut part.blocks, item, include),
            EntryKind::AssistantInterrupted { text } => part.blocks.push(Block::Assistant {
                text: text.clone(),
                interrupted: true,
            }),
            EntryKind::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => attach_result(
                &mut part.blocks,
                call_id.as_str(),
                ToolOutcome {
                    content: content.clone(),
                    is_error: *is_error,
                },
            ),
            EntryKind::SystemItem { item, .. } => {
                if let Some(note) = note(item) {
                    part.blocks.push(note);
                }
            }
            EntryKind::Notice { message, .. } => part.blocks.push(Block::Note {
                label: "notice".into(),
                text: message.clone(),
            }),
            EntryKind::RunEnd { reason, message } => {
                if let Some(text) = run_end(*reason, message.as_deref()) {
                    part.blocks.push(Block::RunEnded { text });
                }
            }
            // Bookkeeping a reader of the conversation does not need: what the log keeps for
            // replay, accounting and approvals (the tool's result says what happened).
            EntryKind::RunStart { .. }
            | EntryKind::AssistantRaw { .. }
            | EntryKind::TurnEnd { .. }
            | EntryKind::Usage(_)
            | EntryKind::ConfigChanged { .. }
            | EntryKind::Queued { .. }
            | EntryKind::Dequeued { .. }
            | EntryKind::ApprovalRequest(_)
            | EntryKind::ApprovalAnswer { .. }
            | EntryKind::ApprovalRevoked { .. }
            | EntryKind::ApprovalStanding { .. }
            | EntryKind::Outbox { .. }
            | EntryKind::OutboxDelivered { .. }
            | EntryKind::ContextWindow(_)
            | EntryKind::ContextPruned { .. }
            | EntryKind::Unknown => {}
        }
    }
    part
}

/// The block a history item stands for, pushed onto `blocks` (a result joins its call).
fn item_block(blocks: &mut Vec<Block>, item: &ModelItem, include: Include) {
    match item {
        ModelItem::UserMessage { text } => blocks.push(Block::User { text: text.clone() }),
        ModelItem::AssistantText { text } => blocks.push(Block::Assistant {
            text: text.clone(),
            interrupted: false,
        }),
        ModelItem::Reasoning { text, .. } if include.thinking => {
            blocks.push(Block::Thinking { text: text.clone() });
        }
        ModelItem::Reasoning { .. } => {}
        ModelItem::ToolCall {
            call_id,
            name,
            arguments,
        } => blocks.push(Block::Tool {
            call_id: call_id.to_string(),
            summary: seedpod_pod::catalogue::call_summary(name, arguments),
            arguments: arguments.clone(),
            result: None,
        }),
        ModelItem::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => attach_result(
            blocks,
            call_id.as_str(),
            ToolOutcome {
                content: content.clone(),
                is_error: *is_error,
            },
        ),
        ModelItem::SystemMessage { text } => blocks.push(Block::Note {
            label: "Note".into(),
            text: text.clone(),
        }),
    }
}

/// Put `outcome` on the call it answers (the latest call with that id still without one).
fn attach_result(blocks: &mut [Block], call_id: &str, outcome: ToolOutcome) {
    let call = blocks.iter_mut().rev().find_map(|block| match block {
        Block::Tool {
            call_id: id,
            result: result @ None,
            ..
        } if id == call_id => Some(result),
        _ => None,
    });
    if let Some(result) = call {
        *result = Some(outcome);
    }
}

/// The note a system item shows as, if a reader needs it. Reminders and date changes are the
/// pod talking to its model about bookkeeping, not part of the conversation.
fn note(item: &SystemItem) -> Option<Block> {
    let (label, text) = match item {
        SystemItem::Notification { message, .. } => ("Notification".to_string(), message.clone()),
        SystemItem::PodEvent { event, body } => (report_label(event), body.clone()),
        SystemItem::FileAttachment { path, body } => {
            (format!("Attached file {path}"), body.clone())
        }
        SystemItem::Knowledge { slug, body } => (format!("Knowledge #{slug}"), body.clone()),
        SystemItem::Workflow { slug, body } => (format!("Workflow /{slug}"), body.clone()),
        SystemItem::Interrupt { body } => ("Interrupted".to_string(), body.clone()),
        SystemItem::TaskReminder { .. } | SystemItem::DateChanged { .. } => return None,
        SystemItem::Unknown => return None,
    };
    Some(Block::Note { label, text })
}

fn report_label(event: &PodEvent) -> String {
    match event {
        PodEvent::TurnEnded { pod, .. } => format!("Report from child pod {pod}: turn ended"),
        PodEvent::Errored { pod, .. } => format!("Report from child pod {pod}: error"),
        PodEvent::ShutDown { pod, .. } => format!("Report from child pod {pod}: stopped"),
        PodEvent::ScopeSubDelegated { pod, .. } => {
            format!("Report from child pod {pod}: scope delegated")
        }
        PodEvent::Unknown => "Report from a child pod".to_string(),
    }
}

/// A line for a run that did not complete; `None` for one that did.
fn run_end(reason: RunEndReason, message: Option<&str>) -> Option<String> {
    let what = match reason {
        RunEndReason::Completed => return None,
        RunEndReason::Error => "The run failed",
        RunEndReason::LimitReached => "The run hit its iteration limit",
        RunEndReason::NoProgress => "The run made no progress and was stopped",
        RunEndReason::Cancelled | RunEndReason::Abandoned => "The run was cancelled",
        RunEndReason::Unknown => "The run ended",
    };
    Some(match message {
        Some(message) if !message.is_empty() => format!("{what}: {message}"),
        _ => what.to_string(),
    })
}

/// Where a segment came from, as `history --all` names it.
fn origin(origin: &Origin) -> String {
    crate::history::origin_words(origin)
}

#[cfg(test)]
mod tests {
    use seedpod_protocol::{
        CallId, Compaction, CompactionTrigger, EntrySeq, ModelConfig, ProviderKind, SegmentStart,
        ToolMeta,
    };

    use super::*;

    fn entries(kinds: Vec<EntryKind>) -> Vec<Entry> {
        kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| Entry {
                v: 1,
                seq: EntrySeq::new(i as u64),
                ts: 0,
                kind,
            })
            .collect()
    }

    fn start(origin: Origin, compaction: Option<Compaction>, seed: Vec<ModelItem>) -> EntryKind {
        EntryKind::SegmentStart(SegmentStart {
            date: None,
            segment_id: SegmentId::new("s2"),
            system_prompt: "system".into(),
            model: ModelConfig::new(ProviderKind::Scripted, "m"),
            tools: Vec::new(),
            seed,
            standing_approvals: Vec::new(),
            origin,
            context_window: None,
            compaction,
            tasks: Vec::new(),
            totals: None,
        })
    }

    fn assistant(item: ModelItem) -> EntryKind {
        EntryKind::AssistantItem { item }
    }

    const BOTH: Include = Include {
        thinking: true,
        seed: true,
    };

    #[test]
    fn results_join_their_calls_and_thinking_shows_only_when_asked() {
        let log = entries(vec![
            start(Origin::New, None, Vec::new()),
            EntryKind::UserInput {
                segments: Vec::new(),
                text: "list it".into(),
                queue_id: None,
            },
            assistant(ModelItem::Reasoning {
                text: "hmm".into(),
                signature: None,
                responses: None,
            }),
            assistant(ModelItem::ToolCall {
                call_id: CallId::new("a"),
                name: "list_dir".into(),
                arguments: r#"{"path":"."}"#.into(),
            }),
            assistant(ModelItem::ToolCall {
                call_id: CallId::new("b"),
                name: "shell".into(),
                arguments: r#"{"command":"ls"}"#.into(),
            }),
            EntryKind::ToolResult {
                call_id: CallId::new("b"),
                name: "shell".into(),
                content: "denied".into(),
                is_error: true,
                meta: ToolMeta::default(),
            },
            EntryKind::ToolResult {
                call_id: CallId::new("a"),
                name: "list_dir".into(),
                content: "x\ny".into(),
                is_error: false,
                meta: ToolMeta::default(),
            },
            assistant(ModelItem::AssistantText {
                text: "two files".into(),
            }),
            EntryKind::RunEnd {
                reason: RunEndReason::Completed,
                message: None,
            },
        ]);
        let shown = part(SegmentId::new("s1"), &log, BOTH);
        assert_eq!(shown.origin, "new");
        let results: Vec<Option<bool>> = shown
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Tool { result, .. } => Some(result.as_ref().map(|r| r.is_error)),
                _ => None,
            })
            .collect();
        assert_eq!(
            results,
            [Some(false), Some(true)],
            "each result on its own call"
        );
        assert!(
            shown
                .blocks
                .contains(&Block::Thinking { text: "hmm".into() })
        );
        assert_eq!(shown.blocks.len(), 5, "{:?}", shown.blocks);

        let plain = part(
            SegmentId::new("s1"),
            &log,
            Include {
                thinking: false,
                seed: true,
            },
        );
        assert!(
            !plain
                .blocks
                .iter()
                .any(|b| matches!(b, Block::Thinking { .. }))
        );
    }

    #[test]
    fn a_compacted_segment_shows_its_summary_once_and_its_kept_messages_when_first() {
        let summary = "We listed the files.";
        let seed = vec![
            ModelItem::SystemMessage {
                text: format!("[Summary …]\n\n{summary}"),
            },
            ModelItem::UserMessage {
                text: "kept question".into(),
            },
        ];
        let compaction = Compaction {
            summary: summary.into(),
            compacted_items: 4,
            kept_items: 1,
            tokens_before: 100,
            tokens_after: 10,
            trigger: CompactionTrigger::Command,
            focus: None,
            memory_flush: Vec::new(),
        };
        let log = entries(vec![start(
            Origin::CompactedFrom {
                segment_id: SegmentId::new("s1"),
            },
            Some(compaction),
            seed,
        )]);
        let first = part(SegmentId::new("s2"), &log, BOTH);
        assert_eq!(first.origin, "compacted from s1");
        assert_eq!(
            first.blocks,
            [
                Block::Summary {
                    text: summary.into()
                },
                Block::User {
                    text: "kept question".into()
                }
            ]
        );
        let later = part(
            SegmentId::new("s2"),
            &log,
            Include {
                thinking: false,
                seed: false,
            },
        );
        assert_eq!(
            later.blocks,
            [Block::Summary {
                text: summary.into()
            }]
        );
    }
}
