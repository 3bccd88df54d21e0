//! How often the `queued` event goes out. It carries the whole queue, so a burst of n
//! notifications while a turn runs would otherwise send n events of up to n items each —
//! megabytes for every attached client to write and parse, ahead of the turn's deltas. A change
//! after a quiet spell is published at once; changes within `INTERVAL` of the last event are
//! folded into one event at the end of the interval, which carries the queue as it is then.
//! Nothing is lost: the queue is state (every client gets it whole, and snapshots carry it),
//! and each change is also a `committed` entry.

use std::time::Duration;

use tokio::time::Instant;

/// At most one `queued` event per this long; short enough that a person never sees it lag.
pub const INTERVAL: Duration = Duration::from_millis(25);

#[derive(Debug, Default)]
pub(super) struct QueueEvents {
    last: Option<Instant>,
    due: Option<Instant>,
}

impl QueueEvents {
    /// The queue changed at `now`: true when the event should go out now; otherwise it is due
    /// at `due()`.
    pub(super) fn changed(&mut self, now: Instant) -> bool {
        if self.due.is_some() {
            return false;
        }
        match self.last {
            Some(last) if now.duration_since(last) < INTERVAL => {
                self.due = Some(last + INTERVAL);
                false
            }
            _ => {
                self.last = Some(now);
                true
            }
        }
    }

    /// When a folded event must go out, if one is waiting.
    pub(super) fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The folded event went out at `now`.
    pub(super) fn published(&mut self, now: Instant) {
        self.due = None;
        self.last = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_change_goes_out_at_once_and_a_burst_becomes_one_event_per_interval() {
        let start = Instant::now();
        let mut events = QueueEvents::default();
        assert!(events.changed(start), "after a quiet spell: at once");
        assert_eq!(events.due(), None);
        // A burst within the interval: nothing now, one event due at its end.
        for ms in 1..20 {
            assert!(!events.changed(start + Duration::from_millis(ms)));
        }
        assert_eq!(events.due(), Some(start + INTERVAL));
        events.published(start + INTERVAL);
        assert_eq!(events.due(), None);
        // Still within an interval of that event: folded again.
        assert!(!events.changed(start + INTERVAL + Duration::from_millis(1)));
        assert_eq!(events.due(), Some(start + INTERVAL * 2));
        events.published(start + INTERVAL * 2);
        // After a quiet spell: at once again.
        assert!(events.changed(start + INTERVAL * 5));
        assert_eq!(events.due(), None);
    }
}
