//! Benchmarks of the pod's core paths (docs/testing.md §Benchmarks), measured against the real
//! binary:
//!
//! - notify round trip (connect, hello, notify, durable ack) from an in-process client;
//! - attach snapshot of a segment with 10,000 entries, to `snapshot_end`;
//! - restore (replay) of a pod whose segment holds 100,000 entries;
//! - an idle pod's RSS and its wake-ups over a quiet interval.
//!
//! Run: `cargo bench -p seedpod-e2e --bench seedpod-bench`. Prints numbers; asserts none
//! (budgets are judged by people, not by tests).

use std::time::{Duration, Instant};

use seedpod_e2e::{TestHome, rss_kb};
use seedpod_protocol::{ClientMode, Method, ServerMsg};
use serde_json::json;

const NOTIFY_ROUNDS: usize = 2000;
const SNAPSHOT_ENTRIES: usize = 10_000;
const REPLAY_ENTRIES: usize = 100_000;
const IDLE_WINDOW: Duration = Duration::from_secs(3);

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("bench", &script);

    // 1. Notify round trip, each on a fresh connection.
    let mut rounds = Vec::with_capacity(NOTIFY_ROUNDS);
    for i in 0..NOTIFY_ROUNDS {
        let started = Instant::now();
        let mut conn = sb.connect("bench", ClientMode::Control).await;
        let reply = conn
            .call(Method::Notify {
                message: format!("note {i}"),
                wake: false,
            })
            .await
            .expect("notify");
        rounds.push(started.elapsed());
        assert!(matches!(reply, ServerMsg::Ack { .. }));
    }
    rounds.sort();
    println!(
        "notify round trip (connect+hello+notify+fsynced ack), n={NOTIFY_ROUNDS}: p50 {} p90 {} p99 {}",
        ms(percentile(&rounds, 0.5)),
        ms(percentile(&rounds, 0.9)),
        ms(percentile(&rounds, 0.99))
    );

    // 2. Attach snapshot with 10,000 entries (topped up with no-wake notifications).
    sb.grow("bench", SNAPSHOT_ENTRIES).await;
    let conn = sb.connect("bench", ClientMode::Control).await;
    let mut times = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let mut attach = sb.connect("bench", ClientMode::Attach).await;
        let mut entries = 0;
        loop {
            match attach.recv().await.expect("frame").expect("open") {
                ServerMsg::SnapshotEntries { entries: batch } => entries += batch.len(),
                ServerMsg::SnapshotEnd { .. } => break,
                _ => {}
            }
        }
        times.push(started.elapsed());
        assert!(entries >= SNAPSHOT_ENTRIES);
    }
    times.sort();
    println!(
        "attach snapshot of {SNAPSHOT_ENTRIES} entries to snapshot_end: p50 {} max {}",
        ms(percentile(&times, 0.5)),
        ms(*times.last().unwrap())
    );

    // 3. Idle pod: RSS and wake-ups.
    let pid = sb.pid("bench").await;
    drop(conn);
    let before = context_switches(pid);
    tokio::time::sleep(IDLE_WINDOW).await; // measuring an interval, not synchronising
    let after = context_switches(pid);
    println!(
        "idle pod (10k entries in memory): RSS {} kB, context switches over {}s: {}",
        rss_kb(pid),
        IDLE_WINDOW.as_secs(),
        after.saturating_sub(before)
    );

    // 4. Replay: grow the log to 100,000 entries, then time a restart until ready.
    sb.grow("bench", REPLAY_ENTRIES).await;
    sb.ok(&["stop", "bench"]);
    let started = Instant::now();
    sb.start_scripted("bench", &script);
    println!(
        "restore of {REPLAY_ENTRIES} entries (process start + read + replay + listen): {}",
        ms(started.elapsed())
    );
    let pid = sb.pid("bench").await;
    println!(
        "RSS after restoring {REPLAY_ENTRIES} entries: {} kB",
        rss_kb(pid)
    );
}

/// Voluntary + involuntary context switches summed over all threads of `pid`.
fn context_switches(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .map(|status| {
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1))
                .filter_map(|v| v.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}
