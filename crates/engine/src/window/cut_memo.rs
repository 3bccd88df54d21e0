//! What asking about a cut stream taught, kept so that it is asked once per window, not once
//! per turn (docs/agent-loop.md §Provider failures): once the server answered an unstreamed
//! question with "too long", a later stream it cuts before any content, on a request nearly
//! as large, is that same refusal. A smaller request cut is asked about again — the server may
//! have been restarted with a smaller window, or the cut may be the network.

use std::sync::{Arc, Mutex, PoisonError};

use crate::provider::ProviderError;

/// A cut request at least this share of the smallest one refused is taken as refused too:
/// requests a pod sends after fitting to a learned window sit just under it.
const NEAR: f64 = 0.9;

/// Shared by a provider and the futures its `diagnose_cut` returns.
#[derive(Clone, Default)]
pub(crate) struct CutMemo {
    /// The smallest request body (in bytes) the server refused, and its refusal.
    refused: Arc<Mutex<Option<(usize, ProviderError)>>>,
}

impl CutMemo {
    /// The refusal a cut request of `len` bytes stands for, if the server already said.
    pub(crate) fn recall(&self, len: usize) -> Option<ProviderError> {
        let refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        refused
            .as_ref()
            .filter(|(smallest, _)| len as f64 >= *smallest as f64 * NEAR)
            .map(|(_, answer)| answer.clone())
    }

    /// The server answered the unstreamed question about a `len`-byte request with `answer`.
    pub(crate) fn remember(&self, len: usize, answer: &ProviderError) {
        if super::overflow_of(answer).is_none() {
            return;
        }
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        if refused.as_ref().is_none_or(|(smallest, _)| len < *smallest) {
            *refused = Some((len, answer.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_recalled_for_requests_nearly_as_large_and_no_others() {
        let memo = CutMemo::default();
        let too_long =
            ProviderError::permanent("This model's maximum context length is 2048 tokens.");
        assert!(memo.recall(1_000).is_none(), "nothing learned yet");
        memo.remember(1_000, &ProviderError::permanent("HTTP 500: boom"));
        assert!(
            memo.recall(1_000).is_none(),
            "only a refusal for length is kept"
        );
        memo.remember(1_000, &too_long);
        assert_eq!(memo.recall(1_000), Some(too_long.clone()));
        assert_eq!(memo.recall(950), Some(too_long.clone()));
        assert!(
            memo.recall(800).is_none(),
            "a much smaller request is asked about"
        );
        memo.remember(800, &too_long);
        assert!(
            memo.recall(750).is_some(),
            "the smallest refused one counts"
        );
    }
}
