//! Learning the window late, from how the server treats a request (docs/agent-loop.md
//! §Provider failures): a "too long" refusal that states the window, one that does not (the pod
//! then halves its own working window, down to `SHRINK_FLOOR`), and a server that silently read
//! less than it was sent. Each is recorded as a learned `context_window` entry, so restores keep
//! it and `seedpod ls` shows it; fitting the next request to it is `context.rs`'s work, measured
//! with how much more this server counts than the pod's estimate (`calibrated_fill`).

use seedpod_engine::{HostError, ProviderError};
use seedpod_protocol::{AlertLevel, ContextWindow, EntryKind, Origin, WindowSource, thousands};
use seedpod_store::Durability;

use super::Controller;
use super::context::Refusal;
use crate::context::compact::{self, Depth};
use crate::context::estimate;
use crate::context::window::SHRINK_FLOOR;

/// The most the server's count is believed to exceed the pod's estimate: past this the
/// numbers are broken (a server counting something else), not a tokenizer's difference.
const MAX_COUNT_RATIO: f64 = 2.0;

/// The ratio assumed before a server that proved tight has counted anything: the estimate's
/// four bytes a token is below what common tokenizers make of prose (three to three and a
/// half characters a token).
const UNCOUNTED_RATIO: f64 = 1.25;

impl Controller {
    /// The server refused a request. If it was for length, learn the window it states; then
    /// move the conversation under the compact prompt when that window calls for it, or make
    /// the next request compact (harder the second time). `Fail` when nothing is left to cut.
    pub(super) async fn refused(
        &mut self,
        generation: u64,
        err: &ProviderError,
    ) -> Result<Refusal, HostError> {
        if !self.is_current(generation) {
            return Err(HostError::Stopped);
        }
        let Some(overflow) = seedpod_engine::overflow_of(err) else {
            return Ok(Refusal::Fail);
        };
        tracing::warn!(
            event = "context_overflow",
            limit = ?overflow.limit,
            requested = ?overflow.requested,
            error = %err,
        );
        match overflow.limit {
            Some(limit) if crate::context::window::BELIEVABLE.contains(&limit) => {
                // A server that confirms the window the pod already had teaches nothing new.
                if self.log.state.window.is_none_or(|w| w.tokens != limit) {
                    tracing::warn!(event = "context_window_learned", tokens = limit);
                    self.record_learned(limit).await?;
                }
            }
            // A number no server could mean is a broken server's: nothing is learned.
            Some(_) => {}
            None => self.shrink_window().await?,
        }
        if self.needs_small_prompt() {
            return Ok(Refusal::SmallPrompt);
        }
        let window = self.log.state.window.map_or(4_096, |w| w.tokens);
        // A compaction this run already made did not suffice: keep only the last exchange.
        let depth = if matches!(self.state_origin(), Origin::CompactedFrom { .. })
            && self.log.state.history.len() <= self.compacted_seed_len()
        {
            Depth::Deep
        } else {
            Depth::Normal
        };
        if compact::plan(&self.log.state.history, window, depth, None).is_none() {
            let advice = self.nothing_to_cut(window);
            self.publish_alert(AlertLevel::Error, advice);
            return Ok(Refusal::Fail);
        }
        self.publish_alert(
            AlertLevel::Warn,
            format!(
                "the model server refused the request as too long for its {}-token context \
                 window; compacting and sending it again",
                thousands(window)
            ),
        );
        self.fitting.fit.forced = Some(depth);
        Ok(Refusal::Retry)
    }

    /// A server that read far fewer tokens than the pod sent dropped the rest without a word
    /// (Ollama past its `num_ctx` keeps the end of the prompt and reports what it kept). The
    /// count it reports is then the most it reads: learn it as the window, so the next request
    /// is compacted to fit, and say so once (docs/agent-loop.md §Provider failures). What no
    /// estimate error explains: a count that grew by under a quarter of what the request grew
    /// (in this server's tokens, from its count of the last request it read whole), or, with
    /// nothing to compare, a count under half the estimate and over 1,024 tokens short.
    pub(super) async fn check_truncation(&mut self, reported: u64) -> Result<(), HostError> {
        let Some(sent) = self.fitting.fit.sent_estimate.take() else {
            return Ok(());
        };
        if reported == 0 || sent == 0 {
            return Ok(());
        }
        let (truncated, expected) = match self.fitting.fit.last_whole {
            Some((prev_sent, prev_reported)) if prev_sent > 0 => {
                let ratio = prev_reported as f64 / prev_sent as f64;
                let expected = sent as f64 * ratio;
                let grew = sent > prev_sent + 256;
                let expected_growth = sent.saturating_sub(prev_sent) as f64 * ratio;
                let growth = reported as f64 - prev_reported as f64;
                (grew && growth < expected_growth / 4.0, expected)
            }
            Some(_) | None => (
                reported.saturating_mul(2) < sent && sent - reported > 1_024,
                sent as f64,
            ),
        };
        let truncated = truncated
            && crate::context::window::BELIEVABLE.contains(&reported)
            && self.log.state.window.is_none_or(|w| w.tokens > reported);
        if !truncated {
            self.fitting.fit.last_whole = Some((sent, reported));
            return Ok(());
        }
        tracing::warn!(
            event = "context_truncated_by_server",
            reported,
            estimated = sent,
            expected = expected as u64
        );
        self.record_learned(reported).await?;
        // The pair kept as read whole may have been cut already, in part: its ratio is not
        // this server's tokenizer.
        self.fitting.fit.last_whole = None;
        self.publish_alert(
            AlertLevel::Warn,
            format!(
                "the model server read only {} of the about {} tokens sent: it dropped the start \
                 of the conversation without saying so (Ollama does this past its num_ctx). The \
                 pod now keeps the conversation within {} tokens and compacts to fit; if the \
                 server has more room, raise it (Ollama: num_ctx) and set context_window",
                thousands(reported),
                thousands(expected as u64),
                thousands(reported)
            ),
        );
        Ok(())
    }

    /// How many of the server's tokens one token of the pod's estimate is, when the server
    /// counts more (its tokenizer, and the JSON around the texts, which the estimate leaves
    /// out): from the last request it read whole, else from this segment's last usage report
    /// (so a restore knows it too), else `UNCOUNTED_RATIO` on a learned window. Never below 1 — an estimate that is too high only compacts
    /// early — and never above `MAX_COUNT_RATIO`.
    fn count_ratio(&self) -> f64 {
        let state = &self.log.state;
        let whole = self
            .fitting
            .fit
            .last_whole
            .filter(|(sent, _)| *sent > 0)
            .map(|(sent, reported)| reported as f64 / sent as f64);
        let marked = state
            .usage_mark
            .filter(|mark| mark.history_len <= state.history.len())
            .map(|mark| {
                let sent = estimate::base_tokens(&state.system_prompt, &state.tools)
                    + estimate::items_tokens(&state.history[..mark.history_len]);
                mark.input_tokens as f64 / sent.max(1) as f64
            });
        // Nothing counted yet (a restored pod in a segment that has sent nothing): where the
        // server already proved tight, assume it counts more than the estimate does.
        let learned = state
            .window
            .is_some_and(|w| w.source == WindowSource::Learned);
        let unknown = if learned { UNCOUNTED_RATIO } else { 1.0 };
        whole
            .or(marked)
            .unwrap_or(unknown)
            .clamp(1.0, MAX_COUNT_RATIO)
    }

    /// The fill of the next request in the server's tokens: its count of the last request plus
    /// what was committed since, scaled by `count_ratio`; the whole estimate scaled, when there
    /// is no count in this segment yet. Deciding to compact on the raw estimate would let a
    /// server that counts a quarter more refuse (or silently cut) every other request.
    pub(super) fn calibrated_fill(&self) -> u64 {
        let ratio = self.count_ratio();
        let state = &self.log.state;
        let scaled = |tokens: u64| (tokens as f64 * ratio).ceil() as u64;
        match state.usage_mark {
            Some(mark) if mark.history_len <= state.history.len() => {
                mark.input_tokens
                    + scaled(estimate::items_tokens(&state.history[mark.history_len..]))
            }
            Some(_) | None => scaled(estimate::request_tokens(state)),
        }
    }

    /// The window to plan a compaction for, in the pod's estimate: `window` shrunk by
    /// `count_ratio`, so that what is kept fits in the server's count.
    pub(super) fn planning_window(&self, window: u64) -> u64 {
        (window as f64 / self.count_ratio()) as u64
    }

    /// Record `tokens` as the window the server holds: durably, since a restore must not send
    /// what the server cannot read.
    async fn record_learned(&mut self, tokens: u64) -> Result<(), HostError> {
        self.commit(
            EntryKind::ContextWindow(ContextWindow {
                tokens,
                source: WindowSource::Learned,
            }),
            Durability::Sync,
        )
        .await
        .map_err(HostError::log)?;
        self.publish_fill();
        Ok(())
    }

    /// The server refused a request as too long without saying how much it holds (an older
    /// llama.cpp, LM Studio's MLX engine, a proxy's own words). Guessing is all that is left:
    /// the pod works within half of the smaller of the window it knew and its estimate of the
    /// refused request, never below `SHRINK_FLOOR`, records that like a learned window and
    /// says so. Refused again, it halves again; at the floor it stops shrinking and the usual
    /// compaction (harder the second time) decides. A configured window is never shrunk.
    async fn shrink_window(&mut self) -> Result<(), HostError> {
        // The person's `context_window` is theirs to change; the advice when the run fails
        // names it.
        if self
            .log
            .state
            .window
            .is_some_and(|w| w.source == WindowSource::Config)
        {
            return Ok(());
        }
        let known = self.log.state.window.map(|w| w.tokens);
        let sent = self.fitting.fit.sent_estimate;
        let Some(base) = known.into_iter().chain(sent).min() else {
            return Ok(());
        };
        let tokens = (base / 2).max(SHRINK_FLOOR);
        if known.is_some_and(|w| tokens >= w) {
            return Ok(());
        }
        tracing::warn!(event = "context_window_shrunk", tokens, from = base);
        self.record_learned(tokens).await?;
        self.publish_alert(AlertLevel::Warn, shrunk_note(tokens, base));
        Ok(())
    }
}

/// What the person is told when the pod shrinks its own window.
fn shrunk_note(tokens: u64, base: u64) -> String {
    format!(
        "the model server refused the request as too long without saying how much it holds; \
         the pod now keeps the conversation within {} tokens (half of about {}, halving again \
         if refused again, never below {}) and compacts to fit. If you know the server's \
         window, set context_window in the pod's config",
        thousands(tokens),
        thousands(base),
        thousands(SHRINK_FLOOR)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shrink_note_says_what_the_pod_did_and_what_to_set() {
        let note = shrunk_note(2_048, 4_096);
        assert!(note.contains("within 2,048 tokens"), "{note}");
        assert!(note.contains("half of about 4,096"), "{note}");
        assert!(note.contains("set context_window"), "{note}");
        assert!(!note.contains("message"), "never blames a message: {note}");
    }
}
