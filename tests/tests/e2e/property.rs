//! Over random sequences of run / notify / pause / resume / cancel / scripted tool
//! calls / restarts, after every step the live `get_context` equals, byte for byte, the context
//! of a pod restored from a copy of the same log.
//!
//! With context management in the loop, the pod runs in a small window
//! (`context_window` in its project config), so long answers trigger pruning and automatic
//! compaction; `/compact` is an operation; the script answers some requests with the real
//! OpenAI "maximum context length" refusal, which the pod recovers from; and a `kill -9` can
//! land while a compaction's summary streams.

use proptest::prelude::*;
use seedpod_e2e::{TestHome, wait_for};
use seedpod_protocol::{ClientMode, Method, PodCommand, PodName, PodState, Segment, ServerMsg};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Op {
    Run(u8),
    Notify {
        wake: bool,
    },
    Pause,
    Resume,
    Cancel,
    Restart {
        kill: bool,
    },
    /// `/compact`, waited for.
    Compact,
    /// `/compact`, and `kill -9` as soon as the pod says it is compacting.
    CompactThenKill,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u8>().prop_map(Op::Run),
        3 => any::<bool>().prop_map(|wake| Op::Notify { wake }),
        2 => Just(Op::Pause),
        2 => Just(Op::Resume),
        1 => Just(Op::Cancel),
        1 => any::<bool>().prop_map(|kill| Op::Restart { kill }),
        1 => Just(Op::Compact),
        1 => Just(Op::CompactThenKill),
    ]
}

/// The pod's window: small enough that a few long answers fill it.
const WINDOW: &str = "context_window = 9000\n";

/// A script long enough for any sequence: plain answers, tool calls (unknown tool → error
/// result, so the loop runs another request), thinking with a signature, and slow streams that
/// pause/cancel can land in.
fn script_steps() -> Vec<Value> {
    (0..120)
        .map(|i| match i % 6 {
            0 => json!({"text": format!("answer {i} {}", "long ".repeat(400))}),
            1 => json!({"text": "let me check", "tool_calls": [{"name": "probe", "arguments": format!("{{\"n\": {i}}}")}]}),
            2 => json!({"thinking": "hmm", "signature": format!("sig-{i}"), "text": format!("thought {i}")}),
            3 => json!({"error": {"kind": "permanent", "message": "HTTP 400: This model's maximum context length is 7000 tokens. However, your messages resulted in 9100 tokens. Please reduce the length of the messages."}}),
            4 => json!({"text": format!("summary-or-answer {i} {}", "word ".repeat(300))}),
            _ => json!({"text": "slow ".repeat(40), "chunk_chars": 5, "chunk_delay_ms": 3}),
        })
        .collect()
}

struct Live<'a> {
    sb: &'a TestHome,
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
fn restored_context(sb: &TestHome) -> String {
    let other = TestHome::new();
    let from = sb.home.pod_dir(&PodName::new("p").unwrap());
    let to = other.home.pod_dir(&PodName::new("p").unwrap());
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

async fn apply(sb: &TestHome, live: &mut Live<'_>, op: &Op, script: &std::path::Path) {
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
        Op::Compact => Method::Command {
            name: PodCommand::Compact,
            args: String::new(),
        },
        Op::CompactThenKill => {
            let call = tokio::spawn(async move {
                let _ = control
                    .call(Method::Command {
                        name: PodCommand::Compact,
                        args: String::new(),
                    })
                    .await;
            });
            let compacting = seedpod_e2e::is_state(PodState::Compacting);
            tokio::select! {
                () = wait_for(&mut live.events, &mut live.seen, compacting) => {
                    sb.kill9("p").await;
                    sb.start_scripted("p", script);
                    live.events = sb.connect("p", ClientMode::Attach).await;
                    live.seen.clear();
                }
                // Refused (a turn runs, nothing to compact) or done before we saw it.
                _ = call => {}
            }
            return;
        }
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
        let sb = TestHome::new();
        std::fs::create_dir_all(sb.path().join(".seedpod")).unwrap();
        std::fs::write(sb.path().join(".seedpod/config.toml"), WINDOW).unwrap();
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

/// Cases per half: `PROPTEST_CASES` (12 by default) split between the two tests below, so the
/// suite runs them side by side rather than one long test at its end.
fn half_of_the_cases() -> u32 {
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    cases.div_ceil(2)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: half_of_the_cases(),
        max_shrink_iters: 20,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]
    #[test]
    fn live_context_equals_restored_context(ops in proptest::collection::vec(op(), 1..10)) {
        check(ops);
    }

    #[test]
    fn live_context_equals_restored_context_second_half(
        ops in proptest::collection::vec(op(), 1..10)
    ) {
        check(ops);
    }
}
