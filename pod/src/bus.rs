//! The broadcast bus: numbers live events, keeps a short replay ring, and fans frames out to
//! subscribers through bounded queues (invariant 4: a pod never waits for a client).
//!
//! Owned by the controller task; never shared. Each event is serialised once and handed to every
//! subscriber as the same `Arc<str>`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use seedpod_protocol::{EventSeq, ServerMsg, encode};
use tokio::sync::mpsc;

/// Frames a client may fall behind before it is resynced. Large enough to absorb a burst of
/// token deltas while a terminal redraws; small enough to bound memory per client.
pub const CLIENT_QUEUE_CAPACITY: usize = 4096;

/// Bytes of encoded events one client may have waiting, whatever their number: 4,096 queued
/// token deltas are a few hundred KB, but 4,096 queued big tool results would be gigabytes.
/// A client past either bound is resynced with a snapshot, like one past the count.
pub const CLIENT_QUEUE_BYTES: usize = 16 * 1024 * 1024;

/// Recent events kept for `subscribe {since_seq}` catch-up without a full snapshot.
pub const REPLAY_RING_CAPACITY: usize = 2048;

/// Bytes of encoded events the replay ring holds at most, whatever their number: a few big
/// committed tool results must not keep hundreds of MB alive for the life of the pod
/// (docs/storage.md, "Memory"). An event bigger than this is not kept at all; a client asking
/// for events from before what the ring holds gets a snapshot, as when it is too far behind.
pub const REPLAY_RING_BYTES: usize = 4 * 1024 * 1024;

/// What a connection receives when it subscribes.
pub struct Subscription {
    rx: mpsc::Receiver<Arc<str>>,
    /// Bytes of the events in `rx`, shared with the bus's side of the queue.
    queued: Arc<AtomicUsize>,
    /// Set by the bus when it dropped this subscriber because its queue was full.
    pub lagged: Arc<AtomicBool>,
}

impl Subscription {
    /// The next event, or `None` once the bus has dropped this subscriber (see `lagged`).
    pub async fn recv(&mut self) -> Option<Arc<str>> {
        let line = self.rx.recv().await?;
        self.queued.fetch_sub(line.len(), Ordering::AcqRel);
        Some(line)
    }
}

struct Subscriber {
    tx: mpsc::Sender<Arc<str>>,
    queued: Arc<AtomicUsize>,
    lagged: Arc<AtomicBool>,
}

impl Subscriber {
    /// Queue `line`, or say why not. The byte count is raised before the send so the
    /// receiver's decrement can never run ahead of it.
    fn offer(&self, line: &Arc<str>) -> bool {
        let before = self.queued.fetch_add(line.len(), Ordering::AcqRel);
        // A lone event bigger than the bound still goes to a client that has nothing waiting:
        // the frame layer sends it in parts, and refusing it would resync the client forever.
        if before > 0 && before + line.len() > CLIENT_QUEUE_BYTES {
            self.lagged.store(true, Ordering::Release);
            return false;
        }
        match self.tx.try_send(line.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.lagged.store(true, Ordering::Release);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

pub struct Bus {
    seq: EventSeq,
    ring: VecDeque<(EventSeq, Arc<str>)>,
    /// The encoded length of every event in `ring`, kept under `REPLAY_RING_BYTES`.
    ring_bytes: usize,
    subscribers: Vec<Subscriber>,
}

impl Default for Bus {
    fn default() -> Self {
        Bus::new()
    }
}

impl Bus {
    pub fn new() -> Bus {
        Bus {
            seq: EventSeq::new(0),
            ring: VecDeque::with_capacity(REPLAY_RING_CAPACITY),
            ring_bytes: 0,
            subscribers: Vec::new(),
        }
    }

    /// The seq of the last event published (0 before any).
    pub fn seq(&self) -> EventSeq {
        self.seq
    }

    pub fn subscriber_count(&self) -> usize {
        self.subscribers.len()
    }

    /// Publish one event built with the next seq.
    pub fn publish(&mut self, build: impl FnOnce(EventSeq) -> ServerMsg) -> EventSeq {
        self.seq = self.seq.next();
        let seq = self.seq;
        let line: Arc<str> = Arc::from(encode(&build(seq)));
        self.keep(seq, &line);
        self.subscribers.retain(|sub| sub.offer(&line));
        seq
    }

    /// Remember `line` for catch-up, dropping the oldest events while the ring is over either
    /// bound. One event over the byte bound empties the ring: what came before it can no longer
    /// be replayed without it.
    fn keep(&mut self, seq: EventSeq, line: &Arc<str>) {
        if line.len() > REPLAY_RING_BYTES {
            self.ring.clear();
            self.ring_bytes = 0;
            return;
        }
        while self.ring.len() >= REPLAY_RING_CAPACITY
            || self.ring_bytes + line.len() > REPLAY_RING_BYTES
        {
            let Some((_, old)) = self.ring.pop_front() else {
                break;
            };
            self.ring_bytes -= old.len();
        }
        self.ring_bytes += line.len();
        self.ring.push_back((seq, line.clone()));
    }

    /// The bytes of encoded events the replay ring holds.
    pub fn ring_bytes(&self) -> usize {
        self.ring_bytes
    }

    /// Register a subscriber that receives every event published from now on.
    pub fn subscribe(&mut self) -> Subscription {
        let (tx, rx) = mpsc::channel(CLIENT_QUEUE_CAPACITY);
        let lagged = Arc::new(AtomicBool::new(false));
        let queued = Arc::new(AtomicUsize::new(0));
        self.subscribers.push(Subscriber {
            tx,
            queued: queued.clone(),
            lagged: lagged.clone(),
        });
        Subscription { rx, queued, lagged }
    }

    /// The frames after `since`, if the ring still holds all of them.
    pub fn replay_since(&self, since: EventSeq) -> Option<Vec<Arc<str>>> {
        if since > self.seq {
            return None;
        }
        let oldest = self
            .ring
            .front()
            .map(|(seq, _)| *seq)
            .unwrap_or(self.seq.next());
        if since.next() < oldest {
            return None;
        }
        Some(
            self.ring
                .iter()
                .filter(|(seq, _)| *seq > since)
                .map(|(_, line)| line.clone())
                .collect(),
        )
    }

    /// Drop every subscriber (shutdown): their connections see the end of the stream.
    pub fn close_all(&mut self) {
        self.subscribers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::PodState;

    fn state(seq: EventSeq) -> ServerMsg {
        ServerMsg::State {
            seq,
            state: PodState::Idle,
        }
    }

    #[tokio::test]
    async fn subscribers_get_events_in_order() {
        let mut bus = Bus::new();
        let mut sub = bus.subscribe();
        bus.publish(state);
        bus.publish(state);
        let first = sub.recv().await.unwrap();
        let second = sub.recv().await.unwrap();
        assert!(first.contains("\"seq\":1"), "{first}");
        assert!(second.contains("\"seq\":2"), "{second}");
    }

    #[test]
    fn a_full_subscriber_is_dropped_and_marked_lagged() {
        let mut bus = Bus::new();
        let sub = bus.subscribe();
        let _other = bus.subscribe();
        for _ in 0..=CLIENT_QUEUE_CAPACITY {
            bus.publish(state);
        }
        assert!(sub.lagged.load(Ordering::Acquire));
        assert_eq!(bus.subscriber_count(), 0, "both filled up");
    }

    #[test]
    fn replay_ring_answers_recent_and_refuses_old() {
        let mut bus = Bus::new();
        for _ in 0..(REPLAY_RING_CAPACITY + 10) {
            bus.publish(state);
        }
        assert!(bus.replay_since(EventSeq::new(5)).is_none());
        let recent = bus
            .replay_since(EventSeq::new(bus.seq().get() - 3))
            .unwrap();
        assert_eq!(recent.len(), 3);
        assert_eq!(bus.replay_since(bus.seq()).unwrap().len(), 0);
        assert!(bus.replay_since(bus.seq().next()).is_none());
    }

    fn alert(size: usize) -> impl FnOnce(EventSeq) -> ServerMsg {
        move |seq| ServerMsg::Alert {
            seq,
            level: seedpod_protocol::AlertLevel::Info,
            message: "x".repeat(size),
        }
    }

    #[test]
    fn a_client_that_does_not_read_is_dropped_by_bytes_long_before_the_count() {
        let mut bus = Bus::new();
        let sub = bus.subscribe();
        let big = CLIENT_QUEUE_BYTES / 8;
        let mut published = 0;
        while bus.subscriber_count() == 1 {
            bus.publish(alert(big));
            published += 1;
            assert!(published < 100, "the byte bound never dropped the client");
        }
        assert!(sub.lagged.load(Ordering::Acquire));
        assert!(published <= 9, "{published} events of 2 MB queued");
        assert!(sub.queued.load(Ordering::Acquire) <= CLIENT_QUEUE_BYTES + big);
    }

    #[tokio::test]
    async fn a_client_that_reads_frees_its_bytes_and_stays() {
        let mut bus = Bus::new();
        let mut sub = bus.subscribe();
        // Four times the byte bound in total, read as it comes: never lagged.
        for _ in 0..32 {
            bus.publish(alert(CLIENT_QUEUE_BYTES / 8));
            assert!(sub.recv().await.is_some());
        }
        assert_eq!(bus.subscriber_count(), 1);
        assert!(!sub.lagged.load(Ordering::Acquire));
        assert_eq!(sub.queued.load(Ordering::Acquire), 0);
    }

    #[tokio::test]
    async fn one_event_over_the_bound_still_reaches_an_idle_client() {
        let mut bus = Bus::new();
        let mut sub = bus.subscribe();
        bus.publish(alert(CLIENT_QUEUE_BYTES + 1));
        assert_eq!(bus.subscriber_count(), 1);
        let line = sub.recv().await.expect("the big event is delivered");
        assert!(line.len() > CLIENT_QUEUE_BYTES);
        // A second one behind it is too much: that client gets a snapshot instead.
        bus.publish(alert(CLIENT_QUEUE_BYTES + 1));
        bus.publish(alert(CLIENT_QUEUE_BYTES + 1));
        assert_eq!(bus.subscriber_count(), 0);
        assert!(sub.lagged.load(Ordering::Acquire));
    }

    #[test]
    fn the_ring_is_bounded_in_bytes_not_only_in_events() {
        let mut bus = Bus::new();
        for _ in 0..40 {
            bus.publish(alert(REPLAY_RING_BYTES / 10));
        }
        assert!(
            bus.ring_bytes() <= REPLAY_RING_BYTES,
            "{}",
            bus.ring_bytes()
        );
        let kept = bus.ring.len();
        assert!((5..10).contains(&kept), "{kept} big events kept");
        // A client behind what the ring still holds is sent a snapshot instead.
        assert!(bus.replay_since(EventSeq::new(20)).is_none());
        let since = EventSeq::new(bus.seq().get() - kept as u64);
        assert_eq!(bus.replay_since(since).map(|l| l.len()), Some(kept));
    }

    #[test]
    fn an_event_over_the_byte_bound_empties_the_ring() {
        let mut bus = Bus::new();
        bus.publish(state);
        bus.publish(alert(REPLAY_RING_BYTES + 1));
        assert_eq!(bus.ring_bytes(), 0);
        assert!(
            bus.replay_since(EventSeq::new(1)).is_none(),
            "the big one is gone"
        );
        assert_eq!(bus.replay_since(bus.seq()).map(|l| l.len()), Some(0));
        bus.publish(state);
        let recent = bus
            .replay_since(EventSeq::new(2))
            .expect("the ring holds seq 3");
        assert_eq!(recent.len(), 1);
        assert!(bus.ring_bytes() > 0);
    }
}
