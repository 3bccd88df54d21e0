//! Must-show 5: over random sequences of run / notify / pause / resume / cancel / scripted tool
//! calls / restarts, after every step the live `get_context` equals, byte for byte, the context
//! of a pod restored from a copy of the same log.

use proptest::prelude::*;
use seedpod_e2e::{Sandbox, wait_for};
use seedpod_protocol::{ClientMode, Method, PodState, Segment, ServerMsg};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Op {
    Run(u8),
    Notify { wake: bool },
    Pause,
    Resume,
    Cancel,
    Restart { kill: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u8>().prop_map(Op::Run),
        3 => any::<bool>().prop_map(|wake| Op::Notify { wake }),
        2 => Just(Op::Pause),
        2 => Just(Op::Resume),
        1 => Just(Op::Cancel),
        1 => any::<bool>().prop_map(|kill| Op::Restart { kill }),
    ]
}

/// A script long enough for any sequence: plain answers, tool calls (unknown tool → error
/// result, so the loop runs another request), thinking with a signature, and slow streams that
/// pause/cancel can land in.
fn script_steps() -> Vec<Value> {
    (0..80)
        .map(|i| match i % 4 {
            0 => json!({"text": format!("answer {i}")}),
            1 => json!({"text": "let me check", "tool_calls": [{"name": "probe", "arguments": format!("{{\"n\": {i}}}")}]}),
            2 => json!({"thinking": "hmm", "signature": format!("sig-{i}"), "text": format!("thought {i}")}),
            _ => json!({"text": "slow ".repeat(20), "chunk_chars": 5, "chunk_delay_ms": 2}),
        })
        .collect()
}

struct Live<'a> {
    sb: &'a Sandbox,
    events: seedpod_client::Connection,
    seen: Vec<ServerMsg>,
}

impl Live<'_> {
    async fn status(&self) -> seedpod_protocol::PodStatus {
        let mut conn = self.sb.connect("p", ClientMode::Control).await;
        match conn.call(Method::Status).await.unwrap() {
            ServerMsg::StatusReply { status, .. } => status,
            other => panic!("{other:?}"),
        }
    }

    /// Wait until nothing is running and nothing runnable is queued.
    async fn quiesce(&mut self) {
        loop {
            let status = self.status().await;
            let settled = status.state == PodState::Paused
                || (status.state == PodState::Idle && status.queue.is_empty());
            if settled {
                return;
            }
            wait_for(&mut self.events, &mut self.seen, |m| {
                matches!(m, ServerMsg::State { .. }).then_some(())
            })
            .await;
            self.seen.clear();
        }
    }
}

/// The context a pod restored from a copy of `p`'s log would send next.
fn restored_context(sb: &Sandbox) -> String {
    let other = Sandbox::new();
    let from = sb.home.pod_dir("p");
    let to = other.home.pod_dir("p");
    copy_dir(&from, &to);
    let _ = std::fs::remove_file(to.join("pod.lock"));
    other.ok(&["context", "p"])
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

async fn apply(sb: &Sandbox, live: &mut Live<'_>, op: &Op, script: &std::path::Path) {
    let mut control = sb.connect("p", ClientMode::Control).await;
    let method = match op {
        Op::Run(n) => Method::Run {
            segments: vec![Segment::text(format!("input {n}"))],
        },
        Op::Notify { wake } => Method::Notify {
            message: "ping".into(),
            wake: *wake,
        },
        Op::Pause => Method::Pause,
        Op::Resume => Method::Resume,
        Op::Cancel => Method::Cancel,
        Op::Restart { kill } => {
            drop(control);
            if *kill {
                sb.kill9("p").await;
            } else {
                sb.ok(&["stop", "p"]);
            }
            sb.start_scripted("p", script);
            live.events = sb.connect("p", ClientMode::Attach).await;
            live.seen.clear();
            return;
        }
    };
    // Errors (pause while idle, resume while running) are legal answers that change nothing.
    let _ = control.call(method).await;
}

fn check(ops: Vec<Op>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let sb = Sandbox::new();
        let script = sb.script("s.jsonl", &script_steps());
        sb.start_scripted("p", &script);
        let mut live = Live {
            sb: &sb,
            events: sb.connect("p", ClientMode::Attach).await,
            seen: Vec::new(),
        };
        for (step, op) in ops.iter().enumerate() {
            apply(&sb, &mut live, op, &script).await;
            live.quiesce().await;
            let live_context = sb.context("p").await;
            let restored = restored_context(&sb);
            assert_eq!(
                live_context,
                restored.trim_end_matches('\n'),
                "step {step} ({op:?}) of {ops:?}: live context differs from a restored pod's"
            );
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        max_shrink_iters: 20,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]
    #[test]
    fn live_context_equals_restored_context(ops in proptest::collection::vec(op(), 1..10)) {
        check(ops);
    }
}
