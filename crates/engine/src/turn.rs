//! The turn loop: request, stream, commit, run tools, repeat, until the model stops calling tools
//! or the iteration cap is reached.
//!
//! The loop holds no state of its own between steps: everything it knows comes back from the host
//! in `PreparedRequest`, built from committed history. That is what makes it cancel-safe (the host
//! cancels a run by dropping this future at any await, and nothing is lost that was not already in
//! the log) and what makes resuming after a pause or a crash the same code path as a normal step:
//! unanswered tool calls found in history are simply answered first.
//!
//! The host commits `run_start` and the user input before calling `drive_run`; the loop commits
//! everything after, ending with exactly one `run_end` unless the host's log fails.

use futures::future::join_all;
use seedpod_protocol::{EntryKind, FinishReason, RunEndReason};

use crate::brakes::{self, BrakeLimits, CallRecord};
use crate::host::{Authorization, HostError, Purpose, RunHost};
use crate::pending::PendingCall;
use crate::provider::{Provider, ProviderError, ProviderEvent};
use crate::response::Response;
use crate::retry::{Jitter, RetryPolicy, request_with_retries};
use crate::tool::{ToolOutput, ToolRegistry};

pub use seedpod_config::agent_loop::{
    DEFAULT_MAX_ITERATIONS, DEFAULT_REMIND_AFTER as DEFAULT_TASK_REMINDER_AFTER,
};

/// Refused requests ("too long") the host may recover from in a row before the run fails: each
/// recovery must change the request (a learned window, a compaction, a harder cut), so a few
/// are enough; more would mean the host's cuts are not helping.
pub const MAX_REFUSAL_RECOVERIES: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Model responses (`turn_end` entries) allowed in one run.
    pub max_iterations: u32,
    /// When a run that is going nowhere is told so, and stopped.
    pub brakes: BrakeLimits,
    /// Requests with open tasks left untouched before the pod reminds the model (`[tasks]
    /// remind_after`); 0: never. The pod acts on it while preparing a request.
    pub task_reminder_after: u32,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            brakes: BrakeLimits::default(),
            task_reminder_after: DEFAULT_TASK_REMINDER_AFTER,
        }
    }
}

/// How a run ended; the matching `run_end` entry is already committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    Completed,
    LimitReached,
    /// A brake stopped a run that was going nowhere; `message` says which.
    NoProgress {
        message: String,
    },
    /// The provider failed; `message` says how (and is the `run_end` message).
    Failed {
        message: String,
    },
}

/// Drive one run to its end, retrying transient provider failures with the default
/// `RetryPolicy`. `Err` only when the host could not commit: the log is failing, so the run stops
/// at once without trying to commit anything more (not even a `run_end`).
pub async fn drive_run<H: RunHost>(
    host: &mut H,
    provider: &dyn Provider,
    tools: &ToolRegistry,
    limits: &RunLimits,
) -> Result<RunOutcome, HostError> {
    drive_run_with_retry(host, provider, tools, limits, &RetryPolicy::default()).await
}

/// `drive_run` with a configured retry policy.
pub async fn drive_run_with_retry<H: RunHost>(
    host: &mut H,
    provider: &dyn Provider,
    tools: &ToolRegistry,
    limits: &RunLimits,
    retry: &RetryPolicy,
) -> Result<RunOutcome, HostError> {
    let mut jitter = Jitter::from_entropy();
    let mut recoveries = 0;
    loop {
        let prepared = host.prepare_request().await?;
        if prepared.purpose == Purpose::Summary {
            let summary = summarize_with(host, provider, &prepared.body, retry, &mut jitter).await;
            host.compacted(summary).await?;
            continue;
        }
        let iteration = prepared.iteration;
        if !prepared.unanswered.is_empty() {
            tracing::info!(
                calls = prepared.unanswered.len(),
                "answering tool calls left unanswered in history"
            );
            answer(
                host,
                tools,
                &prepared.unanswered,
                &prepared.run_calls,
                limits,
            )
            .await?;
            end_turn(host, iteration, FinishReason::ToolUse).await?;
            continue;
        }
        if let Some(message) = brakes::stop_reason(&prepared.run_calls, &limits.brakes) {
            tracing::warn!(event = "loop_brake", reason = %message);
            end_run(host, RunEndReason::NoProgress, Some(message.clone())).await?;
            return Ok(RunOutcome::NoProgress { message });
        }
        if iteration >= limits.max_iterations {
            let message = format!("stopped after {iteration} model requests (limit)");
            end_run(host, RunEndReason::LimitReached, Some(message)).await?;
            return Ok(RunOutcome::LimitReached);
        }
        let response = match request(host, provider, &prepared.body, retry, &mut jitter).await {
            Ok(response) => {
                recoveries = 0;
                response
            }
            Err(err)
                if !err.is_transient()
                    && recoveries < MAX_REFUSAL_RECOVERIES
                    && host.refused(&err).await? =>
            {
                recoveries += 1;
                tracing::info!(recoveries, error = %err, "request refused; the host made it fit, preparing it again");
                continue;
            }
            Err(err) => {
                let message = failure_message(&err, recoveries);
                tracing::warn!(error = %message, transient = err.is_transient(), "provider request failed");
                end_run(host, RunEndReason::Error, Some(message.clone())).await?;
                return Ok(RunOutcome::Failed { message });
            }
        };
        for entry in response.entries() {
            host.commit(entry).await?;
        }
        let calls = response.tool_calls();
        if calls.is_empty() {
            end_turn(host, iteration, response.finish()).await?;
            end_run(host, RunEndReason::Completed, None).await?;
            return Ok(RunOutcome::Completed);
        }
        answer(host, tools, &calls, &prepared.run_calls, limits).await?;
        end_turn(host, iteration, FinishReason::ToolUse).await?;
    }
}

/// What a run that failed says. A "too long" refusal the pod could not recover from says what
/// the pod tried and which setting decides (docs/agent-loop.md §Provider failures); the
/// person's message is never the suspect, since the pod would have said so when it fitted it.
fn failure_message(err: &ProviderError, recoveries: u32) -> String {
    if crate::window::overflow_of(err).is_none() {
        return err.to_string();
    }
    let tried = match recoveries {
        0 => "the pod could not make it smaller".to_owned(),
        1 => "the pod fitted the request to the window once (learning the window or halving its \
              own, compacting, the compact prompt) and it still does not fit"
            .to_owned(),
        n => format!(
            "the pod fitted the request to the window {n} times (learning the window or halving \
             its own, compacting, the compact prompt) and it still does not fit"
        ),
    };
    format!(
        "{err} — {tried}: set context_window in the pod's config to the window the server \
         really holds, or start the server with a larger one"
    )
}

/// One model request, streamed to the end, with transient failures retried as `retry.rs`
/// describes (re-sending the same body, reporting waits as `ProviderEvent::Status`). Each attempt
/// assembles a fresh `Response`, so nothing from a failed attempt can leak into the log.
async fn request<H: RunHost>(
    host: &mut H,
    provider: &dyn Provider,
    body: &str,
    policy: &RetryPolicy,
    jitter: &mut Jitter,
) -> Result<Response, ProviderError> {
    request_with_retries(host, provider, body, policy, jitter).await
}

/// Send a summary request (compaction) outside a run: what the turn loop does for a
/// `Purpose::Summary` request, for a host that compacts while idle.
pub async fn summarize<H: RunHost>(
    host: &mut H,
    provider: &dyn Provider,
    body: &str,
    retry: &RetryPolicy,
) -> Result<String, ProviderError> {
    summarize_with(host, provider, body, retry, &mut Jitter::from_entropy()).await
}

/// A summary request (compaction): streamed like any request, with the same retries, but
/// nothing of it is shown as the answer or committed; only retry notices reach clients.
async fn summarize_with<H: RunHost>(
    host: &mut H,
    provider: &dyn Provider,
    body: &str,
    policy: &RetryPolicy,
    jitter: &mut Jitter,
) -> Result<String, ProviderError> {
    let mut quiet = Quiet(host);
    let response = request_with_retries(&mut quiet, provider, body, policy, jitter).await?;
    let text = response.text();
    let text = text.trim();
    if text.is_empty() {
        return Err(ProviderError::permanent(
            "the model answered the summary request with no text",
        ));
    }
    Ok(text.to_owned())
}

/// A host seen through a summary request: status notices pass, deltas do not (they are not
/// the turn's answer), and nothing can be committed through it.
struct Quiet<'a, H>(&'a mut H);

impl<H: RunHost> RunHost for Quiet<'_, H> {
    async fn prepare_request(&mut self) -> Result<crate::host::PreparedRequest, HostError> {
        Err(HostError::Internal(
            "a summary request prepares nothing".into(),
        ))
    }

    async fn provisional(&mut self, event: ProviderEvent) {
        if let ProviderEvent::Status(_) = event {
            self.0.provisional(event).await;
        }
    }

    async fn commit(&mut self, kind: EntryKind) -> Result<(), HostError> {
        Err(HostError::Internal(format!(
            "a summary request commits nothing ({})",
            kind.name()
        )))
    }
}

/// Ask the host about each call in call order (an approval waits here), then run the allowed
/// ones concurrently and commit every result in call order, whatever order they finished in, so
/// the log (and replay) never depends on timing. A call naming no registered tool is the
/// registry's to answer ("unknown tool", with the tools there are): there is nothing for a
/// policy to allow. A failure that repeats an earlier failed call of the run (`earlier`) carries
/// the brakes' note, so the model hears it with the error itself.
async fn answer<H: RunHost>(
    host: &mut H,
    tools: &ToolRegistry,
    calls: &[PendingCall],
    earlier: &[CallRecord],
    limits: &RunLimits,
) -> Result<(), HostError> {
    let mut decisions = Vec::with_capacity(calls.len());
    for call in calls {
        let decision = match tools.get(&call.name) {
            Some(_) => host.authorize(call).await?,
            None => Authorization::Allowed,
        };
        decisions.push(decision);
    }
    let outputs = join_all(
        calls
            .iter()
            .zip(decisions)
            .map(|(call, decision)| async move {
                match decision {
                    Authorization::Allowed => {
                        tools
                            .call_for(&call.call_id, &call.name, &call.arguments)
                            .await
                    }
                    Authorization::Denied { reason } => ToolOutput::error(reason),
                }
            }),
    )
    .await;
    let mut seen = earlier.to_vec();
    for (call, output) in calls.iter().zip(outputs) {
        let mut content = output.content;
        if output.is_error
            && let Some(note) =
                brakes::repeat_note(&seen, &call.name, &call.arguments, &limits.brakes)
        {
            content.push_str(&note);
        }
        seen.push(CallRecord::new(
            &call.name,
            &call.arguments,
            output.is_error,
            &content,
        ));
        host.commit(EntryKind::ToolResult {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            content,
            is_error: output.is_error,
            meta: *output.meta,
        })
        .await?;
    }
    Ok(())
}

async fn end_turn<H: RunHost>(
    host: &mut H,
    iteration: u32,
    finish: FinishReason,
) -> Result<(), HostError> {
    host.commit(EntryKind::TurnEnd { iteration, finish }).await
}

async fn end_run<H: RunHost>(
    host: &mut H,
    reason: RunEndReason,
    message: Option<String>,
) -> Result<(), HostError> {
    host.commit(EntryKind::RunEnd { reason, message }).await
}

#[cfg(test)]
mod tests;
