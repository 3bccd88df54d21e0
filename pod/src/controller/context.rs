//! The controller's side of context management (DESIGN invariant 7): before each request it
//! prunes or compacts when the fill calls for it, it commits the compaction the run task's
//! summary request produced, and it compacts after a run and on `/compact`. Learning the
//! window from how the server answered is `window_learned.rs`. The decisions are `crate::context`'s pure functions; this file
//! only commits them.

use seedpod_engine::{HostError, PreparedRequest, ProviderError, Purpose};
use seedpod_protocol::{
    AlertLevel, Compaction, CompactionTrigger, EntryKind, ErrorCode, Origin, PodCommand, RequestId,
    SegmentId, ServerMsg, thousands,
};
use seedpod_store::Durability;
use tokio::sync::oneshot;

use super::data_guard::{DataSource, Guarded};
use super::switch::{AfterSwitch, NewSegment, SwitchError};
use super::{Activity, Controller, ControllerMsg};
use crate::context::compact::{self, Depth};
use crate::context::{estimate, flush, prune};

/// An automatic compaction summarises at least 1/this of the window, or it is not made.
const MIN_WORTH_DIVISOR: u64 = 10;

/// A last message over 1/this of the window is long enough to blame when a request that
/// cannot be cut does not fit; a shorter one is not, and the advice names the prompt instead.
const MESSAGE_SHARE_DIVISOR: u64 = 4;

/// What the pod does about a refused request.
pub(super) enum Refusal {
    /// Nothing: the run fails with the server's error.
    Fail,
    /// The next request compacts; send it again.
    Retry,
    /// Move the conversation under the compact prompt first (`recompose`), then send again.
    SmallPrompt,
}

/// A compaction under way: the plan whose summary request is out.
pub(super) struct Compacting {
    plan: compact::Plan,
    trigger: CompactionTrigger,
    focus: Option<String>,
    tokens_before: u64,
    /// `/compact`, waiting for its answer.
    reply: Option<(RequestId, oneshot::Sender<ServerMsg>)>,
    /// What the memory flush before it did, once it reported.
    memory_flush: Vec<String>,
}

/// A compaction whose new segment is being written (`switch.rs`): what to report when it is.
pub(super) struct CompactionDone {
    job: Compacting,
    /// The segment compacted from.
    old: SegmentId,
    summary_tokens: u64,
    tokens_after: u64,
    /// The run task (or idle compaction task) waiting for `compacted`.
    reply: oneshot::Sender<Result<(), HostError>>,
}

impl CompactionDone {
    /// The pod stopped first: a waiting `/compact` is told, the task sees the pod stop.
    pub(super) fn abandon(self) {
        if let Some((id, reply)) = self.job.reply {
            let _ = reply.send(refusal(
                id,
                "the pod stopped before the compacted segment was in place; nothing was changed",
            ));
        }
        let _ = self.reply.send(Err(HostError::Stopped));
    }
}

/// Why a compaction changed nothing; the text follows "compaction failed, nothing was changed:"
/// in the alert and in a `/compact`'s refusal.
#[derive(Debug, thiserror::Error)]
pub(super) enum CompactionFailed {
    #[error("the summary request failed: {cause}")]
    Summary { cause: ProviderError },
    /// An automatic compaction whose summary is no shorter than what it would replace: it
    /// would only start a loop of compactions.
    #[error(
        "the summary would not make the conversation shorter ({} → {} tokens)",
        thousands(*before),
        thousands(*after)
    )]
    NotShorter { before: u64, after: u64 },
    /// The compacted segment could not be put in place.
    #[error(transparent)]
    Switch(SwitchError),
}

/// What the controller remembers between requests about fitting the context.
#[derive(Default)]
pub(super) struct FitState {
    /// Where the last compaction failed (segment, history length): not tried again until
    /// something new is committed, so a dead summary model cannot loop.
    failed_at: Option<(SegmentId, usize)>,
    /// The server refused the last request: the next one compacts, however full the estimate
    /// says the context is, this hard.
    pub(super) forced: Option<Depth>,
    /// The pod's estimate of the answer request last sent, to hold the server's count against
    /// (`check_truncation`).
    pub(super) sent_estimate: Option<u64>,
    /// The pod's estimate and the server's count of the last request the server read whole:
    /// how this server's tokenizer compares with the estimate, so a count that stops growing
    /// with the request stands out.
    pub(super) last_whole: Option<(u64, u64)>,
}

/// Fitting the context: the compaction under way and what earlier attempts taught.
#[derive(Default)]
pub(super) struct Fitting {
    /// The compaction whose summary request is out, if one is.
    pub(super) compacting: Option<Compacting>,
    /// What the last attempts to fit the context taught (a failed compaction, a refusal).
    pub(super) fit: FitState,
}

impl Controller {
    /// Called by `prepare` once queued items are in: prune, or start a compaction by returning
    /// its summary request. `None`: send the turn's request.
    pub(super) async fn fit_context(&mut self) -> Result<Option<PreparedRequest>, HostError> {
        let Some(window) = self.log.state.window.map(|w| w.tokens) else {
            return Ok(None);
        };
        let settings = self.session.context.clone();
        let forced = self.fitting.fit.forced.take();
        if forced.is_none() {
            let fill = estimate::fill_tokens(&self.log.state);
            let trims = prune::plan(&self.log.state.history, fill, window, &settings);
            if !trims.is_empty() {
                tracing::info!(event = "context_pruned", trims = trims.len(), fill, window);
                self.commit(EntryKind::ContextPruned { trims }, Durability::Buffered)
                    .await
                    .map_err(HostError::log)?;
                self.publish_fill();
            }
        }
        let fill = self.calibrated_fill();
        let due = forced.is_some() || self.over_threshold(fill, window);
        if !due || self.failed_here() {
            return Ok(None);
        }
        let trigger = if forced.is_some() {
            CompactionTrigger::Overflow
        } else {
            CompactionTrigger::Auto
        };
        Ok(self
            .begin_compaction(forced.unwrap_or(Depth::Normal), trigger, None, None)
            .map(|body| PreparedRequest {
                purpose: Purpose::Summary,
                body,
                unanswered: Vec::new(),
                iteration: self.log.state.iterations_in_run,
                run_calls: Vec::new(),
            }))
    }

    /// Whether the next request passes `compact_at` of the window, or would leave no room for
    /// the answer.
    fn over_threshold(&self, fill: u64, window: u64) -> bool {
        fill as f64 >= window as f64 * self.session.context.compact_at
            || fill.saturating_add(self.answer_reserve(window)) > window
    }

    /// Whether the next request, with room for the answer, is over the window.
    fn would_not_fit(&self, window: u64) -> bool {
        window > 0
            && self
                .calibrated_fill()
                .saturating_add(self.answer_reserve(window))
                > window
    }

    /// Room for the answer: the output limit when one is set — though never more than a
    /// quarter of the window, or a misconfigured limit would compact before every request.
    fn answer_reserve(&self, window: u64) -> u64 {
        self.log
            .state
            .model
            .max_tokens
            .map_or((window / 8).min(4_096), u64::from)
            .min(window / 4)
    }

    fn failed_here(&self) -> bool {
        self.fitting
            .fit
            .failed_at
            .as_ref()
            .is_some_and(|(segment, len)| {
                *segment == self.log.state.segment_id && *len == self.log.state.history.len()
            })
    }

    /// Plan a compaction and remember it; returns the summary request's body, or `None` when
    /// there is nothing to summarise.
    fn begin_compaction(
        &mut self,
        depth: Depth,
        trigger: CompactionTrigger,
        focus: Option<String>,
        reply: Option<(RequestId, oneshot::Sender<ServerMsg>)>,
    ) -> Option<String> {
        let window = self.log.state.window.map_or(0, |w| w.tokens);
        let plan_window = if window == 0 {
            // `/compact` on a pod whose window is unknown: size the cut for what it holds.
            estimate::fill_tokens(&self.log.state).max(4_096)
        } else {
            self.planning_window(window)
        };
        let plan = compact::plan(
            &self.log.state.history,
            plan_window,
            depth,
            focus.as_deref(),
        )
        // An automatic compaction must be worth a request: one that would summarise a
        // sliver of the window (a window too small for the system prompt, a segment that
        // was just compacted) would only repeat itself.
        // A request that would not fit at all is cut even when the cut is small: sent as it is,
        // the server would refuse it (or silently drop its start) for certain.
        .filter(|plan| {
            trigger != CompactionTrigger::Auto
                || self.would_not_fit(window)
                || estimate::items_tokens(&self.log.state.history[..plan.keep_from])
                    >= plan_window / MIN_WORTH_DIVISOR
        });
        let Some(plan) = plan else {
            if let Some((id, reply)) = reply {
                let _ = reply.send(refusal(
                    id,
                    "there is nothing to compact yet: the history is a single exchange",
                ));
            }
            return None;
        };
        let model = compact::summary_model(
            &self.log.state.model,
            self.session.context.summary_model.as_deref(),
            plan.max_tokens,
        );
        let body = self.runs.provider.request_body(&seedpod_engine::Context {
            model: &model,
            system_prompt: &plan.system_prompt,
            tools: &[],
            items: &plan.request,
        });
        let tokens_before = estimate::fill_tokens(&self.log.state);
        self.hooks.observe(
            seedpod_config::HookEvent::PreCompact,
            crate::hooks::Details::PreCompact {
                trigger: crate::hooks::event::trigger_name(trigger),
            },
        );
        tracing::info!(
            event = "compaction_started",
            trigger = ?trigger,
            depth = ?depth,
            compacted = plan.keep_from,
            kept = plan.kept.len(),
            tokens_before,
        );
        self.fitting.compacting = Some(Compacting {
            plan,
            trigger,
            focus,
            tokens_before,
            reply,
            memory_flush: Vec::new(),
        });
        self.publish_state();
        Some(body)
    }

    /// The run task's (or the compaction task's) summary arrived, or failed. `reply` is
    /// answered once the compacted segment is in place (or why not).
    pub(super) fn compacted(
        &mut self,
        generation: u64,
        summary: Result<String, ProviderError>,
        reply: oneshot::Sender<Result<(), HostError>>,
    ) {
        if !self.is_current(generation) {
            let _ = reply.send(Err(HostError::Stopped));
            return;
        }
        let Some(job) = self.fitting.compacting.take() else {
            let _ = reply.send(Ok(()));
            return;
        };
        let summary = match summary {
            Ok(summary) => summary,
            Err(cause) => {
                self.compaction_ended(job, Err(CompactionFailed::Summary { cause }));
                let _ = reply.send(Ok(()));
                return;
            }
        };
        match self.compacted_segment(&job, summary) {
            Ok((new, old, summary_tokens, tokens_after)) => {
                let done = CompactionDone {
                    job,
                    old,
                    summary_tokens,
                    tokens_after,
                    reply,
                };
                self.begin_switch(new, AfterSwitch::Compaction(Box::new(done)));
            }
            Err(reason) => {
                self.compaction_ended(job, Err(reason));
                let _ = reply.send(Ok(()));
            }
        }
    }

    /// The compacted segment is in place, or could not be written.
    pub(super) fn compaction_switched(
        &mut self,
        done: CompactionDone,
        result: Result<(), SwitchError>,
    ) {
        let CompactionDone {
            job,
            old,
            summary_tokens,
            tokens_after,
            reply,
        } = done;
        // The new segment recounted the context under its own prompt (`switch::write_new`).
        let tokens_after = self
            .compaction_record()
            .map_or(tokens_after, |c| c.tokens_after);
        let result = result.map_err(CompactionFailed::Switch).map(|()| {
            tracing::info!(
                event = "session_compacted",
                removed_messages = job.plan.keep_from,
                kept_messages = job.plan.kept.len(),
                summary_tokens,
                tokens_before = job.tokens_before,
                tokens_after,
                from = %old,
                to = %self.log.state.segment_id,
            );
            format!(
                "compacted {} messages into a summary of {} tokens (context {} → {} tokens); \
                 the earlier segment {old} stays in the log",
                job.plan.keep_from,
                thousands(summary_tokens),
                thousands(job.tokens_before),
                thousands(tokens_after)
            )
        });
        self.compaction_ended(job, result);
        let _ = reply.send(Ok(()));
    }

    /// Tell a waiting `/compact` and the clients how the compaction ended.
    fn compaction_ended(&mut self, job: Compacting, result: Result<String, CompactionFailed>) {
        match result {
            Ok(message) => {
                self.fitting.fit.failed_at = None;
                if let Some((id, reply)) = job.reply {
                    let _ = reply.send(ServerMsg::CommandDone {
                        id,
                        command: PodCommand::Compact,
                        message,
                    });
                }
            }
            Err(reason) => {
                tracing::warn!(event = "compaction_failed", reason = %reason);
                self.fitting.fit.failed_at = Some((
                    self.log.state.segment_id.clone(),
                    self.log.state.history.len(),
                ));
                let message = format!("compaction failed, nothing was changed: {reason}");
                self.publish_alert(AlertLevel::Warn, message.clone());
                if let Some((id, reply)) = job.reply {
                    let _ = reply.send(refusal(id, &message));
                }
            }
        }
        self.publish_state();
    }

    /// The new segment a summary makes: its start, and the numbers to report. Refused when the
    /// summary would not shorten an automatic compaction.
    fn compacted_segment(
        &mut self,
        job: &Compacting,
        summary: String,
    ) -> Result<(NewSegment, SegmentId, u64, u64), CompactionFailed> {
        // The summary's length is the model's promise (`max_tokens`); a server that ignores it
        // cannot fill the new segment with one message.
        let limit = job.plan.max_tokens as usize * 8;
        let chars = summary.chars().count();
        let summary = if chars > limit {
            prune::keep_ends(
                &summary,
                chars,
                limit / 2,
                limit / 2,
                "from an over-long summary",
            )
        } else {
            summary
        };
        // What a transcript of tool output made the summariser write becomes a system message:
        // the guard judges it like the data it came from, and its verdict is what is committed.
        let summary = match self.guard_data(DataSource::Summary, &summary) {
            Guarded::Pass => summary,
            Guarded::Noted(note) => format!("{summary}{note}"),
            Guarded::Withheld(text) => text,
        };
        let seed = compact::seed(&summary, &job.plan.kept);
        // Under this segment's prompt; recounted under the new segment's once it is rendered.
        let tokens_after =
            estimate::base_tokens(&self.log.state.system_prompt, &self.log.state.tools)
                + estimate::items_tokens(&seed);
        // An automatic summary as long as what it replaces would only start a loop of
        // compactions. (`/compact` is a person's explicit wish: it is carried out.)
        let history_before = estimate::items_tokens(&self.log.state.history);
        let history_after = estimate::items_tokens(&seed);
        if job.trigger != CompactionTrigger::Command && history_after >= history_before {
            return Err(CompactionFailed::NotShorter {
                before: history_before,
                after: history_after,
            });
        }
        let old = self.log.state.segment_id.clone();
        let compaction = Compaction {
            summary,
            compacted_items: job.plan.keep_from as u64,
            kept_items: job.plan.kept.len() as u64,
            tokens_before: job.tokens_before,
            tokens_after,
            trigger: job.trigger,
            focus: job.focus.clone(),
            memory_flush: job.memory_flush.clone(),
        };
        let summary_tokens = estimate::tokens(&compaction.summary);
        let new = NewSegment {
            origin: Origin::CompactedFrom {
                segment_id: old.clone(),
            },
            seed,
            compaction: Some(compaction),
            // The plan survives a compaction; the summary alone would lose its statuses.
            tasks: self.log.state.tasks.tasks().to_vec(),
        };
        Ok((new, old, summary_tokens, tokens_after))
    }

    /// Why a request that cannot be cut still does not fit, and what to do. A message that is
    /// small beside the window is not the culprit: the system prompt and tools are, and the
    /// person is told which key fixes that (docs/configuration.md, `context_window`).
    pub(super) fn nothing_to_cut(&self, window: u64) -> String {
        let base = estimate::base_tokens(&self.log.state.system_prompt, &self.log.state.tools);
        let last = self
            .log
            .state
            .history
            .last()
            .map_or(0, |item| estimate::items_tokens(std::slice::from_ref(item)));
        if last.saturating_mul(MESSAGE_SHARE_DIVISOR) > window {
            return format!(
                "the request is too long for the model's {}-token context window and nothing \
                 is left to cut: the last message alone takes about {} tokens — shorten it, or \
                 attach long text as a file (@path) so the model can read it in parts",
                thousands(window),
                thousands(last)
            );
        }
        let mode = crate::prompt::PromptMode::for_window(self.segment_window());
        let fix = match mode {
            crate::prompt::PromptMode::Small => {
                "this segment already has the compact prompt; shorten the project's \
                 instructions (AGENTS.md), drop MCP servers or tools, or use a model with a \
                 larger window"
            }
            crate::prompt::PromptMode::Full => &format!(
                "set context_window in the pod's config to the model's real window ({} or \
                 less gets the compact prompt), or use a model with a larger window",
                thousands(crate::context::SMALL_WINDOW_TOKENS)
            ),
        };
        format!(
            "the system prompt and tools (about {} tokens) are too large for the model's \
             {}-token context window; the message is not the problem — {fix}",
            thousands(base),
            thousands(window)
        )
    }

    /// The compaction that made the current segment, as its `segment_start` records it.
    fn compaction_record(&self) -> Option<&Compaction> {
        match self.log.entries.first().map(|e| &e.kind) {
            Some(EntryKind::SegmentStart(start)) => start.compaction.as_ref(),
            _ => None,
        }
    }

    /// The window the current segment was planned for (its `segment_start`).
    pub(super) fn segment_window(&self) -> Option<u64> {
        match self.log.entries.first().map(|e| &e.kind) {
            Some(EntryKind::SegmentStart(start)) => start.context_window.map(|w| w.tokens),
            _ => None,
        }
    }

    /// The window known now calls for the compact prompt, but this segment was planned with
    /// the full one (its window was unknown or larger then): only a new segment can change
    /// the system prompt, which is stored once per segment (DESIGN invariant 2).
    pub(super) fn needs_small_prompt(&self) -> bool {
        use crate::prompt::PromptMode;
        PromptMode::for_window(self.log.state.window.map(|w| w.tokens)) == PromptMode::Small
            && PromptMode::for_window(self.segment_window()) == PromptMode::Full
    }

    /// Move the conversation, whole, to a new segment planned with the compact prompt; the run
    /// task waiting in `refused` is answered when it is in place (`switch_ended`).
    /// `resend`: a run task waits to send its refused request again (else the move is made
    /// between runs, after a window learned from a silent truncation).
    pub(super) fn recompose(
        &mut self,
        reply: oneshot::Sender<Result<bool, HostError>>,
        resend: bool,
    ) {
        let old = self.log.state.segment_id.clone();
        let window = self.log.state.window.map_or(0, |w| w.tokens);
        let (cause, then) = if resend {
            (
                "the model server refused the request: ",
                " and sending it again",
            )
        } else {
            ("", "")
        };
        self.publish_alert(
            AlertLevel::Warn,
            format!(
                "{cause}the model's context window is only {} tokens, too small for the full \
                 system prompt; continuing the conversation in a new segment with the compact \
                 prompt{then}",
                thousands(window)
            ),
        );
        let new = NewSegment {
            origin: Origin::RecomposedFrom {
                segment_id: old.clone(),
            },
            seed: self.log.state.history.clone(),
            compaction: None,
            tasks: self.log.state.tasks.tasks().to_vec(),
        };
        self.begin_switch(new, AfterSwitch::Recompose { reply, old });
    }

    /// The compact-prompt segment is in place (the run sends its request again), or not.
    pub(super) fn recomposed(
        &mut self,
        reply: oneshot::Sender<Result<bool, HostError>>,
        old: SegmentId,
        result: Result<(), SwitchError>,
    ) {
        match result {
            Ok(()) => {
                tracing::info!(event = "segment_recomposed", from = %old, to = %self.log.state.segment_id);
                let _ = reply.send(Ok(true));
            }
            Err(reason) => {
                self.publish_alert(
                    AlertLevel::Error,
                    format!(
                        "the conversation could not be moved under the compact prompt, nothing \
                         was changed: {reason}"
                    ),
                );
                let _ = reply.send(Ok(false));
            }
        }
        self.publish_state();
    }

    pub(super) fn state_origin(&self) -> Origin {
        match self.log.entries.first().map(|e| &e.kind) {
            Some(EntryKind::SegmentStart(start)) => start.origin.clone(),
            _ => Origin::New,
        }
    }

    /// The history length a compacted segment started with (its seed plus the carried run).
    pub(super) fn compacted_seed_len(&self) -> usize {
        match self.log.entries.first().map(|e| &e.kind) {
            Some(EntryKind::SegmentStart(start)) => start.seed.len(),
            _ => 0,
        }
    }

    /// After a run: compact when the fill passed `compact_at`. Returns true when a compaction
    /// task started (the pod shows `compacting`; the queue drains when it is done), or a move
    /// to the compact prompt did (the queue drains when the new segment is in place).
    pub(super) fn compact_after_run(&mut self) -> bool {
        // A window learned during the run (a server that dropped context without a word) may
        // call for the compact prompt, which only a new segment can bring; the refusal path
        // moves at once, this one between runs. Nobody waits for the answer: `switch_ended`
        // drains the queue.
        if self.needs_small_prompt() {
            let (reply, _) = oneshot::channel();
            self.recompose(reply, false);
            return true;
        }
        let Some(window) = self.log.state.window.map(|w| w.tokens) else {
            return false;
        };
        let fill = self.calibrated_fill();
        if !self.over_threshold(fill, window) || self.failed_here() {
            return false;
        }
        self.start_compaction_task(CompactionTrigger::Auto, None, None)
    }

    /// `/compact [focus]`: answered when the new segment is written (or why not).
    pub(super) fn compact_command(
        &mut self,
        id: RequestId,
        focus: String,
        reply: oneshot::Sender<ServerMsg>,
    ) {
        if !matches!(self.runs.activity, Activity::Idle) || self.log.state.open_run.is_some() {
            let _ = reply.send(ServerMsg::Error {
                id: Some(id),
                code: ErrorCode::Busy,
                message: format!(
                    "the pod is {}; /compact runs between turns (the pod also compacts by \
                     itself between requests when the context fills) — wait for the turn to \
                     end or cancel it",
                    self.pod_state().as_str()
                ),
            });
            return;
        }
        let focus = Some(focus.trim().to_owned()).filter(|f| !f.is_empty());
        self.start_compaction_task(CompactionTrigger::Command, focus, Some((id, reply)));
    }

    /// Summarise on a task of its own (the pod is idle): the same summary request the run
    /// loop makes, then `compacted`, then back to idle and the queue.
    fn start_compaction_task(
        &mut self,
        trigger: CompactionTrigger,
        focus: Option<String>,
        reply: Option<(RequestId, oneshot::Sender<ServerMsg>)>,
    ) -> bool {
        let depth = Depth::Normal;
        let Some(body) = self.begin_compaction(depth, trigger, focus, reply) else {
            return false;
        };
        self.runs.generation += 1;
        let generation = self.runs.generation;
        let mut link = super::host::PodHost::new(
            generation,
            self.senders.commands.clone(),
            self.hooks.clone(),
        );
        let provider = self.runs.provider.clone();
        let retry = self.runs.retry;
        let tx = self.senders.commands.clone();
        let flush = self.flush_input();
        let task = tokio::spawn(async move {
            if let Some(flush) = flush {
                let actions = match flush {
                    Ok(input) => flush::run(provider.as_ref(), &retry, input).await,
                    Err(why) => vec![why.to_string()],
                };
                tracing::info!(event = "memory_flushed", actions = ?actions);
                let flushed = ControllerMsg::MemoryFlushed {
                    generation,
                    actions,
                };
                let _ = tx.send(flushed).await;
            }
            let summary =
                seedpod_engine::summarize(&mut link, provider.as_ref(), &body, &retry).await;
            let _ = seedpod_engine::RunHost::compacted(&mut link, summary).await;
            let _ = tx
                .send(ControllerMsg::CompactionFinished { generation })
                .await;
        });
        self.runs.activity = Activity::Compacting { generation, task };
        self.publish_state();
        true
    }

    /// What a memory flush before this compaction runs with: `None` when it is not configured,
    /// `Err` (a note for the record) when the policy allows no file tool without a person.
    fn flush_input(&self) -> Option<Result<flush::FlushInput, flush::Skipped>> {
        if !self.session.context.memory_flush {
            return None;
        }
        let tools = flush::flush_tools(&self.runs.tools, |name| {
            self.session.policies.for_tool(name) == crate::policy::Policy::Allow
        });
        if tools.is_empty() {
            return Some(Err(flush::Skipped::NoFileTool));
        }
        Some(Ok(flush::FlushInput {
            model: self.log.state.model.clone(),
            items: flush::recent(&self.log.state.history),
            tools,
            date: crate::calendar::today(),
        }))
    }

    /// The memory flush before the compaction under way reported what it did.
    pub(super) fn memory_flushed(&mut self, generation: u64, actions: Vec<String>) {
        if !self.is_current(generation) {
            return;
        }
        if let Some(job) = &mut self.fitting.compacting {
            job.memory_flush = actions;
        }
    }

    /// The idle compaction task is done (its `compacted` already ran).
    pub(super) async fn compaction_finished(&mut self, generation: u64) {
        if !self.is_current(generation) {
            return;
        }
        self.runs.activity = Activity::Idle;
        self.publish_state();
        self.after_run().await;
    }

    /// A stopped run or cancelled compaction drops the compaction under way; nothing of it was
    /// written, and a waiting `/compact` is told.
    pub(super) fn abandon_compaction(&mut self, why: &str) {
        if let Some(job) = self.fitting.compacting.take() {
            tracing::info!(event = "compaction_abandoned", why);
            let message = format!("compaction {why}; nothing was changed");
            self.publish_alert(AlertLevel::Info, message.clone());
            if let Some((id, reply)) = job.reply {
                let _ = reply.send(refusal(id, &message));
            }
        }
    }

    /// Tell clients how full the context is now, when that changed: after every commit and
    /// every usage report, so what an attached TUI shows is what `seedpod ls` would answer.
    pub(super) fn publish_fill(&mut self) {
        let context = estimate::fill(&self.log.state);
        if context == self.audience.fill {
            return;
        }
        self.audience.fill = context;
        self.audience
            .bus
            .publish(|seq| ServerMsg::ContextFill { seq, context });
    }

    /// A tool result too large for the context it is about to join keeps its head and tail.
    pub(super) fn fit_tool_result(&self, tool: &str, content: String) -> String {
        let Some(window) = self.log.state.window.map(|w| w.tokens) else {
            return content;
        };
        let budget = (window as f64 * compact::KEEP_SHARE) as u64;
        if estimate::tokens(&content) <= budget {
            return content;
        }
        let chars = content.chars().count();
        let keep = (budget * 4) as usize / 2;
        tracing::warn!(
            event = "tool_output_truncated",
            tool,
            original_size = content.len(),
            window,
        );
        prune::keep_ends(
            &content,
            chars,
            keep,
            keep,
            "because the result is larger than the model's context can hold",
        )
    }
}

fn refusal(id: RequestId, message: &str) -> ServerMsg {
    ServerMsg::Error {
        id: Some(id),
        code: ErrorCode::Busy,
        message: message.to_owned(),
    }
}
