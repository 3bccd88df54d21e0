//! What delegating to a child pod costs: how long `seedpod spawn` takes until the child accepts
//! connections, and how long a child's report takes from its `run_end` to the parent's
//! `pod_event` (entry timestamps, ms), over `ROUNDS` delegated turns. The suite checks that each
//! delegated turn is reported once (`tests/tests/e2e/children.rs`).
//!
//! Run: `cargo bench -p seedpod-e2e --bench delegation-bench`. Prints numbers; asserts only that
//! every turn was reported.

use std::time::Instant;

use seedpod_e2e::{TestHome, is_pod_event_from, wait_for};
use seedpod_protocol::{ClientMode, EntryKind, Method, Segment, SystemItem};
use serde_json::{Value, json};

const ROUNDS: usize = 20;

async fn report_from_kid(conn: &mut seedpod_client::Connection) {
    let mut seen = Vec::new();
    wait_for(conn, &mut seen, is_pod_event_from("kid")).await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sb = TestHome::new();
    // Reports are committed without waking the parent, so it needs no script of its own.
    std::fs::create_dir_all(sb.path().join(".seedpod")).expect("project dir");
    std::fs::write(
        sb.path().join(".seedpod/config.toml"),
        "[children]\nwake = false\n",
    )
    .expect("config");
    let steps: Vec<Value> = (0..=ROUNDS)
        .map(|i| json!({"text": format!("round {i}"), "pod": "kid"}))
        .collect();
    let script = sb.script("family.jsonl", &steps);
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    let started = Instant::now();
    sb.ok(&["spawn", "boss", "kid", "round zero"]);
    let spawn = started.elapsed();
    report_from_kid(&mut boss).await;

    let mut kid = sb.connect("kid", ClientMode::Control).await;
    for i in 1..=ROUNDS {
        kid.call(Method::Delegate {
            segments: vec![Segment::text(format!("round {i}"))],
        })
        .await
        .expect("delegated");
        report_from_kid(&mut boss).await;
    }
    let kid_ends: Vec<u64> = sb
        .history("kid")
        .await
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::RunEnd { .. }))
        .map(|e| e.ts)
        .collect();
    let boss_reports: Vec<u64> = sb
        .history("boss")
        .await
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EntryKind::SystemItem {
                    item: SystemItem::PodEvent { .. },
                    ..
                }
            )
        })
        .map(|e| e.ts)
        .collect();
    assert_eq!(kid_ends.len(), ROUNDS + 1);
    assert_eq!(boss_reports.len(), ROUNDS + 1, "one report per turn");
    let mut latency: Vec<u64> = kid_ends
        .iter()
        .zip(&boss_reports)
        .map(|(end, report)| report.saturating_sub(*end))
        .collect();
    latency.sort_unstable();
    println!("`seedpod spawn` until the child accepts connections: {spawn:?}");
    println!(
        "report latency (child run_end to parent pod_event, ms), {} turns: median {} max {}",
        latency.len(),
        latency[latency.len() / 2],
        latency[latency.len() - 1]
    );
}
