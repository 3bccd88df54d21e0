//! A bounded soak. Three clients send notifications as fast as the pod acknowledges
//! them (some waking turns, some not) while the pod is killed with `kill -9` at random points
//! and restored, round after round. Afterwards every acknowledged notification is in the log
//! exactly once, nothing unacknowledged is there twice, and the restored context is byte for
//! byte the live one. The seed is printed; `SEEDPOD_SOAK_SEED` replays a run, and
//! `SEEDPOD_SOAK_ROUNDS` makes it longer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use seedpod_e2e::TestHome;
use seedpod_protocol::{ClientMode, EntryKind, Method, PodState, ServerMsg, SystemItem};
use serde_json::json;
use tokio::sync::watch;

const CLIENTS: usize = 3;
const DEFAULT_ROUNDS: usize = 8;

/// A small deterministic generator (xorshift): no dependency, and a seed replays a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Send notifications until the pod goes away; report each acknowledged one.
async fn notify_loop(
    sb: Arc<TestHome>,
    client: usize,
    round: usize,
    acked: watch::Sender<usize>,
    log: Arc<Mutex<Vec<String>>>,
    sent: Arc<Mutex<Vec<String>>>,
) {
    let name = seedpod_protocol::PodName::new("p".to_string()).unwrap();
    let Ok(mut conn) =
        seedpod_client::Connection::connect(&sb.home, &name, "soak", ClientMode::Control).await
    else {
        return;
    };
    for n in 0.. {
        let message = format!("r{round}-c{client}-n{n}");
        sent.lock().unwrap().push(message.clone());
        let reply = conn
            .call(Method::Notify {
                message: message.clone(),
                wake: n % 4 == 0,
            })
            .await;
        match reply {
            Ok(ServerMsg::Ack { .. }) => {
                log.lock().unwrap().push(message);
                acked.send_modify(|count| *count += 1);
            }
            _ => return,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_notifications_survive_kill_9_exactly_once() {
    let seed = std::env::var("SEEDPOD_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    let rounds = std::env::var("SEEDPOD_SOAK_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS);
    eprintln!("soak: seed {seed}, {rounds} rounds");
    let mut rng = Rng(seed);

    let sb = Arc::new(TestHome::new());
    // Plenty of short answers for the turns the waking notifications start.
    let steps: Vec<_> = (0..2_000)
        .map(|i| json!({"text": format!("noted {i}")}))
        .collect();
    let script = sb.script("s.jsonl", &steps);
    sb.start_scripted("p", &script);

    let acked_log = Arc::new(Mutex::new(Vec::new()));
    let sent_log = Arc::new(Mutex::new(Vec::new()));
    let mut kills = 0;
    for round in 0..rounds {
        let (acked_tx, mut acked_rx) = watch::channel(0usize);
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                tokio::spawn(notify_loop(
                    sb.clone(),
                    client,
                    round,
                    acked_tx.clone(),
                    acked_log.clone(),
                    sent_log.clone(),
                ))
            })
            .collect();
        // Kill after a random number of acknowledgements: mid-commit, mid-turn, mid-ack.
        let target = 5 + rng.below(40) as usize;
        acked_rx
            .wait_for(|count| *count >= target)
            .await
            .expect("the clients run");
        sb.kill9("p").await;
        kills += 1;
        for client in clients {
            client.await.unwrap();
        }
        sb.ok(&["start", "p"]);
    }

    // A kill mid-turn restores the pod paused; resume it until every acknowledged
    // notification still waiting in the queue is committed and the pod is idle.
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let since = events.welcome.seq;
    events
        .send(Method::Subscribe {
            since_seq: Some(since),
        })
        .await
        .unwrap();
    let mut control = sb.connect("p", ClientMode::Control).await;
    loop {
        let ServerMsg::StatusReply { status, .. } = control.call(Method::Status).await.unwrap()
        else {
            panic!("status");
        };
        match status.state {
            PodState::Idle if status.queue.is_empty() => break,
            PodState::Paused => {
                control.call(Method::Resume).await.unwrap();
            }
            _ => {}
        }
        // Wait for the next change of state (events since the subscription, so none is missed).
        let next_state = tokio::time::timeout(seedpod_e2e::EVENT_TIMEOUT, async {
            loop {
                match events.recv().await.unwrap() {
                    Some(ServerMsg::State { .. }) => return,
                    Some(_) => {}
                    None => panic!("the pod went away"),
                }
            }
        });
        next_state.await.expect("the pod changes state");
    }

    // Every acknowledged notification once; nothing twice.
    let history = sb.history("p").await;
    let mut counts: HashMap<String, usize> = HashMap::new();
    for entry in &history {
        if let EntryKind::SystemItem {
            item: SystemItem::Notification { message, .. },
            ..
        } = &entry.kind
        {
            *counts.entry(message.clone()).or_default() += 1;
        }
    }
    let acked = acked_log.lock().unwrap().clone();
    assert!(acked.len() >= rounds * 5, "{} acknowledged", acked.len());
    for message in &acked {
        assert_eq!(counts.get(message), Some(&1), "{message} (seed {seed})");
    }
    for (message, count) in &counts {
        assert_eq!(*count, 1, "{message} committed {count} times (seed {seed})");
        assert!(
            sent_log.lock().unwrap().contains(message),
            "{message} was never sent"
        );
    }
    eprintln!(
        "soak: {kills} kills, {} acknowledged, {} committed",
        acked.len(),
        counts.len()
    );

    // Replay is exact: the restored pod's context is the live one.
    let live = sb.context("p").await;
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, live, "seed {seed}");
}
