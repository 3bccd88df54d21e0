//! Replay as a pure fold: `SegmentState` is what a segment's entries mean.
//!
//! The live pod applies every entry it commits with `SegmentState::apply`, and restore folds the
//! same entries read back from disk with `SegmentState::replay`. Because both paths run this one
//! function, the history a restored pod sends is the history the live pod would have sent
//! (invariant 2); there is no second, "live-only" way to change it.
//!
//! The fold refuses what it cannot interpret faithfully (unknown kinds from a newer seedpod, a
//! second `segment_start`, a gap in `seq`), but tolerates queue bookkeeping that points at nothing
//! (a dequeue of an id that is not pending): that cannot change what the model sees, and refusing
//! it would make a pod unrestorable for no benefit.

use seedpod_protocol::{
    ApprovalDecision, ApprovalRequest, CallId, ContextWindow, Entry, EntryKind, EntrySeq,
    ModelConfig, ModelItem, PodEvent, PodTotals, QueueEntry, QueueId, ReportId, RunEndReason,
    RunTrigger, SegmentId, SegmentStart, StandingApproval, SystemItem, TaskTracker, ToolResultTrim,
    ToolSpec, Usage,
};

/// Why a sequence of entries does not fold. Each variant names the entry's `seq`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("the segment has no entries; it must begin with segment_start")]
    Empty,
    #[error("entry {seq}: a segment must begin with segment_start at seq 0, found {kind}")]
    NotAStart { seq: EntrySeq, kind: &'static str },
    #[error("entry {seq}: expected seq {expected}; the log skips or repeats an entry")]
    OutOfOrder { seq: EntrySeq, expected: EntrySeq },
    #[error("entry {seq}: segment_start may only be the first entry of a segment")]
    SecondStart { seq: EntrySeq },
    #[error("entry {seq}: unknown entry kind, written by a newer seedpod; upgrade seedpod")]
    UnknownKind { seq: EntrySeq },
    #[error("entry {seq}: unknown system item kind, written by a newer seedpod; upgrade seedpod")]
    UnknownSystemItem { seq: EntrySeq },
    #[error(
        "entry {seq}: a pruning step names history item {index}, which is not the result of call {call_id}"
    )]
    BadTrim {
        seq: EntrySeq,
        index: u64,
        call_id: CallId,
    },
}

/// Everything a segment's entries determine: the model-visible history plus the bookkeeping the
/// controller needs (the durable queue, an unfinished run, usage totals).
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentState {
    pub segment_id: SegmentId,
    /// Rendered once at segment start and sent verbatim with every request.
    pub system_prompt: String,
    /// The current model; `config_changed` replaces it.
    pub model: ModelConfig,
    pub tools: Vec<ToolSpec>,
    /// Model-visible history: the segment's seed followed by every committed item.
    pub history: Vec<ModelItem>,
    /// Requests received durably (`queued`) and neither committed nor dequeued, in queue order.
    pub pending: Vec<QueueEntry>,
    /// The trigger of a `run_start` without its `run_end`: a restore finds the pod mid-turn.
    pub open_run: Option<RunTrigger>,
    /// Sum of every `usage` entry in the segment.
    pub usage: Usage,
    /// The pod's totals over its life: `segment_start.totals` plus this segment's own
    /// entries, so they replay exactly and survive a new segment (docs/storage.md).
    pub totals: PodTotals,
    /// The timestamp of the open run's `run_start` in this segment, for `totals.run_ms`.
    pub run_started_ts: Option<u64>,
    /// The `seq` the next entry must carry.
    pub next_seq: EntrySeq,
    /// One more than the highest `queue_id` seen; queue ids start at 1.
    pub next_queue_id: QueueId,
    /// `turn_end` entries since the open run started (the iteration cap counts these).
    pub iterations_in_run: u32,
    /// Where the open run's items begin in `history` (the loop brakes look at these); 0 when
    /// the segment began mid-run.
    pub run_history_start: usize,
    /// Approval requests of the open run, answered or not, in request order. A run's end
    /// closes them all (a cancelled run's pending request is no longer pending).
    pub approvals: Vec<ApprovalState>,
    /// `approve_always` answers: calls they cover run without asking.
    pub standing_approvals: Vec<StandingApproval>,
    /// Reports for the pod's parent not yet acknowledged by it, oldest first (DESIGN §7).
    pub outbox: Vec<PendingReport>,
    /// The model's context window as last recorded (`segment_start`, then `context_window`).
    pub window: Option<ContextWindow>,
    /// What the provider said the last request's input was, and how much history that request
    /// carried: the fill estimate starts from it. Cleared by a pruning step, which changes
    /// what that request's prefix would be now.
    pub usage_mark: Option<UsageMark>,
    /// The model's task list and how long it has gone untouched (the reminder's clock).
    pub tasks: TaskTracker,
    /// The UTC day the model was last told it is (`segment_start.date`, then `date_changed`
    /// items); `None` in a segment written before the date was recorded.
    pub model_date: Option<String>,
}

/// The input tokens the provider reported for a request and the history length it was built
/// from (usage is committed before the response's own items).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageMark {
    /// Input tokens including cache reads and writes.
    pub input_tokens: u64,
    pub history_len: usize,
}

/// A report waiting in the outbox. Its id is `<segment id>/<seq>` of the entry that made it, so
/// the live pod and a restore derive the same id and a parent can dedupe a redelivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingReport {
    pub event_id: ReportId,
    pub report: Report,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// A run the parent started ended (the `run_end` is the report; no entry of its own).
    TurnEnded,
    /// A run the parent started ended with an error.
    Errored { message: String },
    /// An explicit `outbox` entry (`shut_down`, `scope_sub_delegated`, or a report carried
    /// into a new segment), sent as written.
    Event(PodEvent),
}

/// The id of the report made by entry `seq` of `segment_id`.
pub fn report_id(segment_id: &SegmentId, seq: EntrySeq) -> ReportId {
    ReportId::new(format!("{segment_id}/{seq}"))
}

/// One approval request and, once given, its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalState {
    pub request: ApprovalRequest,
    pub decision: Option<ApprovalDecision>,
}

impl SegmentState {
    /// The state right after a segment's first entry, which must be `segment_start` at seq 0.
    pub fn start(entry: &Entry) -> Result<SegmentState, FoldError> {
        let EntryKind::SegmentStart(start) = &entry.kind else {
            return Err(FoldError::NotAStart {
                seq: entry.seq,
                kind: entry.kind.name(),
            });
        };
        if entry.seq != EntrySeq::FIRST {
            return Err(FoldError::NotAStart {
                seq: entry.seq,
                kind: entry.kind.name(),
            });
        }
        Ok(Self::from_start(start))
    }

    fn from_start(start: &SegmentStart) -> SegmentState {
        SegmentState {
            segment_id: start.segment_id.clone(),
            system_prompt: start.system_prompt.clone(),
            model: start.model.clone(),
            tools: start.tools.clone(),
            history: start.seed.clone(),
            pending: Vec::new(),
            open_run: None,
            usage: Usage::default(),
            totals: start.totals.as_deref().copied().unwrap_or_default(),
            run_started_ts: None,
            next_seq: EntrySeq::new(1),
            next_queue_id: QueueId::FIRST,
            iterations_in_run: 0,
            run_history_start: 0,
            approvals: Vec::new(),
            standing_approvals: start.standing_approvals.clone(),
            outbox: Vec::new(),
            window: start.context_window,
            usage_mark: None,
            tasks: TaskTracker::starting_with(start.tasks.clone()),
            model_date: start.date.clone(),
        }
    }

    /// Fold one more entry in. On error the state is unchanged.
    pub fn apply(&mut self, entry: &Entry) -> Result<(), FoldError> {
        let seq = entry.seq;
        if seq != self.next_seq {
            return Err(FoldError::OutOfOrder {
                seq,
                expected: self.next_seq,
            });
        }
        match &entry.kind {
            EntryKind::SegmentStart(_) => return Err(FoldError::SecondStart { seq }),
            EntryKind::Unknown => return Err(FoldError::UnknownKind { seq }),
            EntryKind::RunStart { trigger } => {
                self.totals.runs = self.totals.runs.saturating_add(1);
                self.run_started_ts = Some(entry.ts);
                self.open_run = Some(*trigger);
                self.iterations_in_run = 0;
                self.run_history_start = self.history.len();
            }
            EntryKind::UserInput { text, queue_id, .. } => {
                self.history
                    .push(ModelItem::UserMessage { text: text.clone() });
                self.remove_pending(*queue_id);
            }
            EntryKind::AssistantItem { item } => {
                if matches!(item, ModelItem::ToolCall { .. }) {
                    self.totals.tool_calls = self.totals.tool_calls.saturating_add(1);
                }
                self.history.push(item.clone());
            }
            // The record of what the model sent; its cleaned items follow and are the history.
            EntryKind::AssistantRaw { .. } => {}
            EntryKind::AssistantInterrupted { text } => self
                .history
                .push(ModelItem::AssistantText { text: text.clone() }),
            EntryKind::ToolResult {
                call_id,
                content,
                is_error,
                meta,
                ..
            } => {
                self.history.push(ModelItem::ToolResult {
                    call_id: call_id.clone(),
                    content: content.clone(),
                    is_error: *is_error,
                    images: meta.images(),
                });
                // Tools a `tool_search` result loaded join the segment's tools after those
                // it offers, in load order; one already offered stays where it is.
                for spec in &meta.loaded_tools {
                    if !self.tools.iter().any(|t| t.name == spec.name) {
                        self.tools.push(spec.clone());
                    }
                }
            }
            EntryKind::SystemItem { item, queue_id } => {
                match item {
                    SystemItem::Unknown => return Err(FoldError::UnknownSystemItem { seq }),
                    SystemItem::DateChanged { date, .. } => self.model_date = Some(date.clone()),
                    _ => {}
                }
                self.history.push(ModelItem::SystemMessage {
                    text: item.history_text().to_owned(),
                });
                self.remove_pending(*queue_id);
            }
            EntryKind::TurnEnd { .. } => {
                self.iterations_in_run = self.iterations_in_run.saturating_add(1);
            }
            EntryKind::RunEnd { reason, message } => {
                if self.open_run == Some(RunTrigger::Parent) {
                    let report = match reason {
                        RunEndReason::Error => Report::Errored {
                            message: message.clone().unwrap_or_default(),
                        },
                        RunEndReason::Completed
                        | RunEndReason::LimitReached
                        | RunEndReason::NoProgress
                        | RunEndReason::Cancelled
                        | RunEndReason::Abandoned
                        | RunEndReason::Unknown => Report::TurnEnded,
                    };
                    self.outbox.push(PendingReport {
                        event_id: report_id(&self.segment_id, seq),
                        report,
                    });
                }
                if let Some(started) = self.run_started_ts.take() {
                    let ms = entry.ts.saturating_sub(started);
                    self.totals.run_ms = self.totals.run_ms.saturating_add(ms);
                }
                self.open_run = None;
                self.approvals.clear();
            }
            EntryKind::Outbox { event } => {
                // An event without an id (unknown kind) could never be acknowledged.
                if let Some(event_id) = event.event_id() {
                    self.outbox.push(PendingReport {
                        event_id: event_id.to_owned(),
                        report: Report::Event(event.clone()),
                    });
                }
            }
            EntryKind::OutboxDelivered { event_id } => {
                self.outbox.retain(|r| &r.event_id != event_id);
            }
            EntryKind::Usage(usage) => {
                add_usage(&mut self.usage, usage);
                add_usage(&mut self.totals.usage, usage);
                let input_tokens = usage
                    .input_tokens
                    .saturating_add(usage.cache_read_tokens)
                    .saturating_add(usage.cache_creation_tokens);
                if input_tokens > 0 {
                    self.usage_mark = Some(UsageMark {
                        input_tokens,
                        history_len: self.history.len(),
                    });
                }
            }
            EntryKind::ContextWindow(window) => self.window = Some(*window),
            EntryKind::ContextPruned { trims } => {
                self.check_trims(seq, trims)?;
                for trim in trims {
                    if let Some(ModelItem::ToolResult {
                        content, images, ..
                    }) = self.history.get_mut(trim.index as usize)
                    {
                        content.clone_from(&trim.content);
                        // A trimmed result keeps only its note: its images go with its text.
                        images.clear();
                    }
                }
                self.usage_mark = None;
            }
            EntryKind::ConfigChanged { model } => self.model = model.clone(),
            EntryKind::Queued { queue_id, item } => {
                self.pending.push(QueueEntry {
                    queue_id: *queue_id,
                    item: item.clone(),
                });
                self.next_queue_id = self.next_queue_id.max(queue_id.next());
            }
            EntryKind::Dequeued { queue_id, .. } => self.remove_pending(Some(*queue_id)),
            EntryKind::ApprovalRequest(request) => self.approvals.push(ApprovalState {
                request: request.clone(),
                decision: None,
            }),
            EntryKind::ApprovalAnswer { call_id, decision } => {
                // An answer to a request that is not open is bookkeeping about nothing; like a
                // dequeue of an unknown id it cannot change what the model sees.
                if let Some(approval) = self
                    .approvals
                    .iter_mut()
                    .find(|a| &a.request.call_id == call_id && a.decision.is_none())
                {
                    approval.decision = Some(decision.clone());
                }
                if let ApprovalDecision::ApproveAlways(standing) = decision
                    && !self.standing_approvals.contains(standing)
                {
                    self.standing_approvals.push(standing.clone());
                }
            }
            EntryKind::ApprovalRevoked { standing } => {
                self.standing_approvals.retain(|s| s != standing);
            }
            // A record for the person; what it names is already in `standing_approvals`.
            EntryKind::ApprovalStanding { .. } => {}
            // For the person only: never history, so replay's bytes do not depend on it.
            EntryKind::Notice { .. } => {}
        }
        self.tasks.apply(&entry.kind);
        self.next_seq = self.next_seq.next();
        Ok(())
    }

    /// Fold a whole segment, first entry to last.
    pub fn replay(entries: &[Entry]) -> Result<SegmentState, FoldError> {
        let (first, rest) = entries.split_first().ok_or(FoldError::Empty)?;
        let mut state = Self::start(first)?;
        for entry in rest {
            state.apply(entry)?;
        }
        Ok(state)
    }

    /// The oldest approval request still waiting for an answer.
    pub fn pending_approval(&self) -> Option<&ApprovalRequest> {
        self.approvals
            .iter()
            .find(|a| a.decision.is_none())
            .map(|a| &a.request)
    }

    /// The request for `call_id` in the open run, answered or not.
    pub fn approval(&self, call_id: &CallId) -> Option<&ApprovalState> {
        self.approvals
            .iter()
            .find(|a| &a.request.call_id == call_id)
    }

    /// Every trim must name a tool result of this history by position and call id; checked
    /// before any is applied, so a bad step leaves the state unchanged.
    fn check_trims(&self, seq: EntrySeq, trims: &[ToolResultTrim]) -> Result<(), FoldError> {
        for trim in trims {
            let matches = usize::try_from(trim.index)
                .ok()
                .and_then(|i| self.history.get(i))
                .is_some_and(|item| tool_result_call_id(item) == Some(&trim.call_id));
            if !matches {
                return Err(FoldError::BadTrim {
                    seq,
                    index: trim.index,
                    call_id: trim.call_id.clone(),
                });
            }
        }
        Ok(())
    }

    fn remove_pending(&mut self, queue_id: Option<QueueId>) {
        if let Some(id) = queue_id {
            self.pending.retain(|entry| entry.queue_id != id);
        }
    }
}

/// `Usage::add` with saturation: totals come from disk, and a hostile or damaged log must not be
/// able to overflow (and, in debug builds, panic) the fold.
fn add_usage(total: &mut Usage, add: &Usage) {
    total.input_tokens = total.input_tokens.saturating_add(add.input_tokens);
    total.output_tokens = total.output_tokens.saturating_add(add.output_tokens);
    total.cache_read_tokens = total
        .cache_read_tokens
        .saturating_add(add.cache_read_tokens);
    total.cache_creation_tokens = total
        .cache_creation_tokens
        .saturating_add(add.cache_creation_tokens);
}

/// The call a tool result answers, if `item` is one.
fn tool_result_call_id(item: &ModelItem) -> Option<&CallId> {
    match item {
        ModelItem::ToolResult { call_id, .. } => Some(call_id),
        ModelItem::UserMessage { .. }
        | ModelItem::AssistantText { .. }
        | ModelItem::Reasoning { .. }
        | ModelItem::ToolCall { .. }
        | ModelItem::SystemMessage { .. } => None,
    }
}
