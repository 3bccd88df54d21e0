//! What the accept loop does when `accept` fails. Out of file descriptors (EMFILE, ENFILE) every
//! retry fails at once, so retrying immediately spins a core and floods the log while nothing
//! improves; waiting lets connections close and descriptors return. The wait doubles from
//! `FIRST` to `LONGEST` and resets at the next success; only the first failure of a run and then
//! one in every `LOG_EVERY` are logged.

use std::time::Duration;

pub const FIRST: Duration = Duration::from_millis(5);
pub const LONGEST: Duration = Duration::from_secs(1);
pub const LOG_EVERY: u64 = 100;

#[derive(Debug, Default)]
pub struct AcceptBackoff {
    failures: u64,
}

impl AcceptBackoff {
    /// A failed accept: how long to wait before the next, and whether to log this one.
    pub fn failed(&mut self) -> (Duration, bool) {
        self.failures += 1;
        let doublings = u32::try_from(self.failures - 1).unwrap_or(u32::MAX).min(16);
        let wait = FIRST.saturating_mul(1 << doublings).min(LONGEST);
        (
            wait,
            self.failures == 1 || self.failures.is_multiple_of(LOG_EVERY),
        )
    }

    /// A successful accept; returns how many failures it ended, if any (worth one log line).
    pub fn succeeded(&mut self) -> Option<u64> {
        let ended = std::mem::take(&mut self.failures);
        (ended > 0).then_some(ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_a_cap_log_sparsely_and_reset_on_success() {
        let mut backoff = AcceptBackoff::default();
        let (first, logged) = backoff.failed();
        assert_eq!((first, logged), (FIRST, true));
        let (second, logged) = backoff.failed();
        assert_eq!((second, logged), (FIRST * 2, false));
        let mut last = second;
        let mut logs = 0;
        for _ in 2..1000 {
            let (wait, logged) = backoff.failed();
            assert!(wait >= last && wait <= LONGEST);
            last = wait;
            logs += usize::from(logged);
        }
        assert_eq!(last, LONGEST);
        assert_eq!(
            logs, 10,
            "one line per {LOG_EVERY} failures after the first"
        );
        assert_eq!(backoff.succeeded(), Some(1000));
        assert_eq!(backoff.failed().0, FIRST, "a new run starts short again");
        assert_eq!(backoff.succeeded(), Some(1));
        assert_eq!(backoff.succeeded(), None);
    }
}
