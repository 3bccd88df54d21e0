//! Which HTTP statuses a failed request is retried on (`[retry] retryable_statuses`).
//!
//! A set of error statuses (400–599) kept as bits, so a `RetryPolicy` stays `Copy` and a look-up
//! costs nothing. A status outside the set fails the request at once, whatever the provider's
//! own classification; a status inside it is retried unless the request can never fit (a
//! context overflow is answered by compaction, not by sending the same body again).

pub use seedpod_config::effective::DEFAULT_RETRYABLE_STATUSES;

/// The lowest and highest status a set may hold: only errors can be retried.
pub const LOWEST_STATUS: u16 = 400;
pub const HIGHEST_STATUS: u16 = 599;

const WORDS: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryStatuses {
    /// Bit `code - LOWEST_STATUS` is set when `code` is retried.
    bits: [u64; WORDS],
}

impl Default for RetryStatuses {
    fn default() -> Self {
        let mut set = RetryStatuses { bits: [0; WORDS] };
        for code in DEFAULT_RETRYABLE_STATUSES {
            set.insert(code);
        }
        set
    }
}

impl RetryStatuses {
    /// The set of `codes`; the first code that is not an error status (400–599) is refused.
    pub fn new(codes: &[u16]) -> Result<RetryStatuses, u16> {
        let mut set = RetryStatuses { bits: [0; WORDS] };
        for &code in codes {
            if !(LOWEST_STATUS..=HIGHEST_STATUS).contains(&code) {
                return Err(code);
            }
            set.insert(code);
        }
        Ok(set)
    }

    fn insert(&mut self, code: u16) {
        let bit = usize::from(code - LOWEST_STATUS);
        self.bits[bit / 64] |= 1 << (bit % 64);
    }

    pub fn contains(&self, code: u16) -> bool {
        if !(LOWEST_STATUS..=HIGHEST_STATUS).contains(&code) {
            return false;
        }
        let bit = usize::from(code - LOWEST_STATUS);
        self.bits[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// The statuses in ascending order.
    pub fn codes(&self) -> Vec<u16> {
        (LOWEST_STATUS..=HIGHEST_STATUS)
            .filter(|&code| self.contains(code))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_set_is_the_documented_list() {
        assert_eq!(
            RetryStatuses::default().codes(),
            DEFAULT_RETRYABLE_STATUSES.to_vec()
        );
        let set = RetryStatuses::default();
        assert!(set.contains(429) && set.contains(503) && set.contains(529));
        assert!(!set.contains(501) && !set.contains(400) && !set.contains(401));
    }

    #[test]
    fn a_set_holds_exactly_what_it_was_given_across_word_edges() {
        // 463 and 464 sit either side of the first word's edge (bit 63 and 64).
        let codes = [400, 463, 464, 527, 528, 599];
        let set = RetryStatuses::new(&codes).expect("valid");
        assert_eq!(set.codes(), codes.to_vec());
        for code in LOWEST_STATUS..=HIGHEST_STATUS {
            assert_eq!(set.contains(code), codes.contains(&code), "{code}");
        }
        assert_eq!(
            RetryStatuses::new(&[]).expect("empty").codes(),
            Vec::<u16>::new()
        );
    }

    #[test]
    fn statuses_that_are_no_errors_are_refused_and_never_contained() {
        for bad in [0, 200, 399, 600, u16::MAX] {
            assert_eq!(RetryStatuses::new(&[503, bad]), Err(bad));
            assert!(!RetryStatuses::default().contains(bad));
        }
    }
}
