//! Retrying a model request when the failure is transient and retrying cannot duplicate output.
//!
//! The rules (and why: docs/agent-loop.md §Provider failures):
//! - an error with an HTTP status is retried when the status is in `retryable_statuses` (and it
//!   is no context overflow); one without a status when it is `ProviderError::Transient` (a
//!   dropped connection, a timeout); at most `max_retries` times;
//! - only while nothing of the answer has reached clients in this attempt: once text, reasoning
//!   or a tool call has streamed, a retry would show a second copy of the answer, so the error
//!   ends the run instead (what was committed stays committed; nothing of the failed attempt was);
//! - the wait before retry `n` (0-based) is `base_delay_ms · 2^n`, capped at `max_delay_ms`, times
//!   a jitter factor in [0.5, 1.0]; a provider's `retry-after` replaces it;
//! - every wait is announced to clients as a provisional `Status` and logged as
//!   `provider_rate_limit` (429) or `provider_error`.
//!
//! Every attempt sends the same body and assembles a fresh `Response`, so nothing from a failed
//! attempt can reach the log.

mod statuses;
#[cfg(test)]
mod tests;

pub use statuses::{DEFAULT_RETRYABLE_STATUSES, HIGHEST_STATUS, LOWEST_STATUS, RetryStatuses};

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use crate::host::RunHost;
use crate::provider::{Provider, ProviderError, ProviderEvent};
use crate::response::{self, Progress, Response};

pub use seedpod_config::effective::{
    DEFAULT_BASE_DELAY_MS, DEFAULT_MAX_DELAY_MS, DEFAULT_MAX_RETRIES,
};

/// The longest `retry-after` honoured. A provider asking for more is effectively down for now;
/// the run ends with an error that says how long it asked for, rather than stalling silently.
pub const MAX_HONOURED_RETRY_AFTER: Duration = Duration::from_secs(300);

/// HTTP 429: the one status reported as a rate limit rather than a provider error.
const TOO_MANY_REQUESTS: u16 = 429;

/// How hard to retry transient provider failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
    /// The HTTP statuses worth another attempt.
    pub retryable_statuses: RetryStatuses,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: DEFAULT_MAX_RETRIES,
            base_delay_ms: DEFAULT_BASE_DELAY_MS,
            max_delay_ms: DEFAULT_MAX_DELAY_MS,
            retryable_statuses: RetryStatuses::default(),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `retry` (0 for the first) without jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u64.checked_shl(retry).unwrap_or(u64::MAX);
        Duration::from_millis(
            self.base_delay_ms
                .saturating_mul(factor)
                .min(self.max_delay_ms),
        )
    }

    /// The wait before retry `retry` with jitter applied.
    pub fn delay(&self, retry: u32, jitter: &mut Jitter) -> Duration {
        self.backoff(retry).mul_f64(jitter.factor())
    }
}

/// A small seedable random source (SplitMix64) for jitter. Not cryptographic, and need not be:
/// it only keeps pods that failed together from retrying in lockstep.
#[derive(Debug, Clone)]
pub struct Jitter {
    state: u64,
}

impl Jitter {
    /// A fixed sequence, for tests.
    pub fn seeded(seed: u64) -> Self {
        Jitter { state: seed }
    }

    /// A sequence that differs per process and per call: std's per-process hash keys mixed with
    /// the clock.
    pub fn from_entropy() -> Self {
        let mut hasher = RandomState::new().build_hasher();
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.write_u128(nanos);
        Jitter::seeded(hasher.finish())
    }

    /// A factor in [0.5, 1.0).
    pub fn factor(&mut self) -> f64 {
        // 53 random bits make a uniform double in [0, 1).
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        0.5 + unit / 2.0
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Send `body` and stream the response, retrying as the module doc says.
pub(crate) async fn request_with_retries<H: RunHost>(
    host: &mut H,
    provider: &dyn Provider,
    body: &str,
    policy: &RetryPolicy,
    jitter: &mut Jitter,
) -> Result<Response, ProviderError> {
    let name = provider.kind().as_str();
    let mut retry = 0;
    // The server's answer to the same request unstreamed, when that failed too without a
    // reason (`overflow_behind_cut`).
    let mut failed_both_ways: Option<ProviderError> = None;
    loop {
        let attempt = retry + 1;
        tracing::info!(event = "llm_request_start", provider = name, attempt);
        let started = Instant::now();
        let mut progress = Progress::default();
        let result = response::receive(host, provider.stream(body.to_owned()), &mut progress).await;
        log_request_end(name, attempt, started, &progress, &result);
        let error = match result {
            Ok(response) => return Ok(response),
            Err(error) => error,
        };
        if retry == 0 && progress.first_event.is_none() && crate::http::is_cut(&error) {
            match overflow_behind_cut(provider, body).await {
                CutAnswer::TooLong(refusal) => {
                    log_final_error(name, attempt, &refusal);
                    return Err(refusal);
                }
                CutAnswer::FailedToo(answer) => failed_both_ways = Some(answer),
                CutAnswer::Accepted => {}
            }
        }
        if let Next::Fail(note) = next_step(&error, &progress, retry, policy) {
            let error = with_note(error, note);
            let error = match failed_both_ways.take() {
                Some(answer) if crate::http::is_cut_at_start(&error, &progress) => {
                    crate::window::unstated_overflow(&error, &answer)
                }
                Some(_) | None => error,
            };
            log_final_error(name, attempt, &error);
            return Err(error);
        }
        let wait = error
            .retry_after()
            .unwrap_or_else(|| policy.delay(retry, jitter));
        announce_wait(host, name, &error, wait, retry, policy).await;
        tokio::time::sleep(wait).await;
        retry += 1;
    }
}

/// The request failed for good: an `error` line (docs/configuration.md §What the log says),
/// except a context overflow, which the run answers by fitting the context.
/// A stream cut before anything arrived may be a server's way of refusing a prompt over its
/// window (docs/agent-loop.md §Provider failures): retrying the same request would be cut the
/// same way, every turn, and the compaction that would save the pod would never run. Ask the
/// server once, unstreamed; its "too long" answer, if that is what it says, ends the attempt
/// like any refusal, so the run learns the window and fits the request to it.
///
/// A server that fails the unstreamed question too, without a reason (the connection dropped,
/// a 5xx), may be one that cannot read the prompt either way: if the usual retries of the cut
/// all fail as well, the request ends as a "too long" refusal that states no window, so the
/// run shrinks its working window instead of failing the same way every turn.
async fn overflow_behind_cut(provider: &dyn Provider, body: &str) -> CutAnswer {
    let Some(answer) = provider.diagnose_cut(body).await else {
        return CutAnswer::Accepted;
    };
    let overflow = crate::window::overflow_of(&answer).is_some();
    tracing::info!(
        event = "provider_cut_diagnosed",
        provider = provider.kind().as_str(),
        overflow,
        answer = %answer,
        "a stream was cut before any content; asked again without streaming"
    );
    if overflow {
        return CutAnswer::TooLong(answer);
    }
    let unexplained = match answer.status() {
        None => answer.is_transient(),
        Some(status) => status >= 500,
    };
    if unexplained {
        CutAnswer::FailedToo(answer)
    } else {
        CutAnswer::Accepted
    }
}

/// What asking about a cut stream found.
enum CutAnswer {
    /// The server refused the request as too long: that refusal.
    TooLong(ProviderError),
    /// The server failed it unstreamed as well, saying nothing of why: its answer.
    FailedToo(ProviderError),
    /// The server took it, or the provider has no question to ask: the cut was the network.
    Accepted,
}

fn log_final_error(provider: &str, attempt: u32, error: &ProviderError) {
    if crate::window::overflow_of(error).is_some() {
        tracing::warn!(
            event = "provider_error",
            provider,
            status = error.status(),
            attempt,
            error = %error,
            "the request is over the context window; the run fits it and asks again"
        );
        return;
    }
    tracing::error!(
        event = "provider_error",
        provider,
        status = error.status(),
        attempt,
        transient = error.is_transient(),
        error = %error,
        "provider request failed; not retrying"
    );
}

/// What to do after a failed attempt.
enum Next {
    Retry,
    /// End the request with the error, plus a note saying why it was not retried.
    Fail(Option<String>),
}

fn next_step(error: &ProviderError, progress: &Progress, retry: u32, policy: &RetryPolicy) -> Next {
    match error.status() {
        Some(code) if !policy.retryable_statuses.contains(code) => {
            // Say so when the configuration is what stopped a retry the status alone would get.
            return Next::Fail(
                error
                    .is_transient()
                    .then(|| format!("not retried: {code} is not in [retry] retryable_statuses")),
            );
        }
        Some(_) if crate::window::overflow_of(error).is_some() => {
            return Next::Fail(None);
        }
        Some(_) => {}
        None if !error.is_transient() => return Next::Fail(None),
        None => {}
    }
    if progress.output_forwarded {
        return Next::Fail(Some(
            "the answer was cut off after it had started streaming; not retried, so that it is \
             not shown twice"
                .to_owned(),
        ));
    }
    if retry >= policy.max_retries {
        let retries = if retry == 1 { "retry" } else { "retries" };
        return Next::Fail(Some(format!("gave up after {retry} {retries}")));
    }
    match error.retry_after() {
        Some(after) if after > MAX_HONOURED_RETRY_AFTER => Next::Fail(Some(format!(
            "the provider asks to wait {}s before retrying; try again later",
            after.as_secs()
        ))),
        Some(_) | None => Next::Retry,
    }
}

fn with_note(error: ProviderError, note: Option<String>) -> ProviderError {
    let Some(note) = note else {
        return error;
    };
    match error {
        ProviderError::Transient {
            message,
            status,
            retry_after,
        } => ProviderError::Transient {
            message: format!("{message} ({note})"),
            status,
            retry_after,
        },
        ProviderError::Permanent { message, status } => ProviderError::Permanent {
            message: format!("{message} ({note})"),
            status,
        },
    }
}

/// Tell clients (status line) and the log that a retry is coming after `wait`.
async fn announce_wait<H: RunHost>(
    host: &mut H,
    provider: &str,
    error: &ProviderError,
    wait: Duration,
    retry: u32,
    policy: &RetryPolicy,
) {
    let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
    let next_attempt = retry + 1;
    let when = format!(
        "Retrying in {} (attempt {next_attempt}/{})",
        whole_seconds(wait),
        policy.max_retries
    );
    let status = match error.status() {
        Some(TOO_MANY_REQUESTS) => {
            tracing::warn!(
                event = "provider_rate_limit",
                provider,
                retry_after_ms = wait_ms,
                attempt = retry + 1,
                error = %error,
                "rate limited; waiting before retrying"
            );
            format!("Rate limited. {when}")
        }
        status => {
            tracing::warn!(
                event = "provider_error",
                provider,
                status,
                attempt = retry + 1,
                transient = true,
                retry_in_ms = wait_ms,
                error = %error,
                "provider request failed; waiting before retrying"
            );
            match status {
                Some(code) => format!("Provider error ({code}). {when}"),
                None => format!("Provider error: {}. {when}", error.message()),
            }
        }
    };
    host.provisional(ProviderEvent::Status(status)).await;
}

/// A wait as people read it on a status line: whole seconds, rounded up.
fn whole_seconds(wait: Duration) -> String {
    let millis = wait.as_millis().max(1);
    format!("{}s", millis.div_ceil(1000))
}

fn log_request_end(
    provider: &str,
    attempt: u32,
    started: Instant,
    progress: &Progress,
    result: &Result<Response, ProviderError>,
) {
    let duration_ms = millis(started.elapsed());
    let ttfb_ms = progress.first_event.map(|at| millis(at - started));
    match result {
        Ok(_) => tracing::info!(
            event = "llm_request_end",
            provider,
            attempt,
            status = "ok",
            ttfb_ms,
            duration_ms
        ),
        Err(error) => tracing::info!(
            event = "llm_request_end",
            provider,
            attempt,
            status = "error",
            http_status = error.status(),
            ttfb_ms,
            duration_ms
        ),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
