//! A soak of context management (docs/testing.md §Benchmarks): a real pod in a 16k window
//! (`context_window = 16000`) runs many turns of ~2,000 characters; the pod must fail none, and
//! its memory must stay bounded while pruning and compaction keep the context inside the window.
//!
//! Prints, every `--every` turns: the pod's RSS (`VmRSS` of `/proc/PID/status`), how many
//! segments the log has (each compaction adds one), and the mean time per turn over the last
//! stretch; at the end, the time per turn (p50, p90, max), the RSS at turn 200 against the
//! RSS at the last turn (memory must not grow with the pod's life: docs/storage.md, "Memory")
//! and, against the fake, how many requests it refused and how many summaries it wrote. With
//! the scripted model every answer reports a usage of its own, and the bench checks that the
//! pod's lifetime totals (`seedpod ls --json`) equal the sum of the usage of the answers it
//! committed, across every compaction. A turn is timed from `run` to its
//! committed `run_end`, through an in-process client (no CLI process start in the number).
//!
//! The model is the scripted provider (the default: a script long enough for every turn and
//! every summary) or, with `--provider openai|anthropic`, the loopback fake of
//! `support/limit_server.rs`, which enforces the window with the real "too long" errors.
//!
//! Run: `cargo bench -p seedpod-e2e --bench context-bench -- --turns 1000 --every 100` (the
//! defaults; `--turns 20` for a smoke run). Prints numbers; asserts none, except that no turn
//! failed (the exit code says so). The suite checks the same pod's turns in a small window
//! (`tests/tests/e2e/context.rs`).

use std::time::{Duration, Instant};

use seedpod_e2e::limit_server::{LimitConfig, LimitServer, Wire};
use seedpod_e2e::{TestHome, rss_kb};
use seedpod_protocol::{
    ClientMode, EntryKind, Method, ModelItem, RunEndReason, Segment, ServerMsg,
};
use serde_json::json;

const USAGE: &str = "context-bench [--turns N] [--every N] [--provider scripted|openai|anthropic] \
[--turn-chars N] [--window TOKENS]";
/// Words the turns are made of.
const WORDS: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
];
/// Characters of each scripted answer (the fake's answers are of the same length).
const REPLY_CHARS: usize = 200;
/// Upper bound on one turn; only reached when the pod is stuck.
const TURN_TIMEOUT: Duration = Duration::from_secs(120);
/// The turn whose RSS the last turn's is compared with: past start-up and the first
/// compactions, so what grows after it grows with the pod's life.
const BASELINE_TURN: usize = 200;

/// The usage scripted answer `step` reports: distinct per step, so a lost or doubled one
/// shows in the sums. Output tokens only: an input count would become the pod's fill estimate
/// (docs/agent-loop.md), and made-up small ones would stop it from ever compacting.
fn step_usage(step: usize) -> (u64, u64) {
    (0, 20 + step as u64)
}

#[derive(Debug)]
struct Options {
    turns: usize,
    every: usize,
    provider: Model,
    turn_chars: usize,
    window: u64,
}

#[derive(Debug, Clone, Copy)]
enum Model {
    Scripted,
    Fake(Wire),
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        turns: 1_000,
        every: 100,
        provider: Model::Scripted,
        turn_chars: 2_000,
        window: 16_000,
    };
    // `cargo bench` adds `--bench` to the arguments of every benchmark it runs.
    let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(USAGE.to_owned());
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = || {
            value
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag} takes a positive number, not {value:?}"))
        };
        match flag.as_str() {
            "--turns" => options.turns = number()?,
            "--every" => options.every = number()?,
            "--turn-chars" => options.turn_chars = number()?,
            "--window" => options.window = number()? as u64,
            "--provider" => {
                options.provider = match value.as_str() {
                    "scripted" => Model::Scripted,
                    "openai" => Model::Fake(Wire::OpenAi),
                    "anthropic" => Model::Fake(Wire::Anthropic),
                    other => return Err(format!("unknown provider {other:?}\n{USAGE}")),
                }
            }
            other => return Err(format!("unknown flag {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

fn turn_text(n: usize, chars: usize) -> String {
    let mut text = format!("Turn {n}.");
    let mut word = n;
    while text.len() < chars {
        text.push(' ');
        text.push_str(WORDS[word % WORDS.len()]);
        word += 1;
    }
    text
}

/// Start pod `bench` on the chosen model; the fake, when there is one, lives as long as the
/// returned server.
fn start(sb: &TestHome, options: &Options) -> Option<LimitServer> {
    std::fs::create_dir_all(&sb.home.config).expect("create the config directory");
    std::fs::write(
        sb.home.config.join("config.toml"),
        format!("context_window = {}\n", options.window),
    )
    .expect("write config.toml");
    match options.provider {
        Model::Scripted => {
            // Every turn, and a summary for every compaction, with room to spare.
            let steps: Vec<_> = (0..options.turns * 2 + 16)
                .map(|i| {
                    let (input, output) = step_usage(i);
                    json!({
                        "text": turn_text(i, REPLY_CHARS).replace("Turn", "Answer"),
                        "usage": {"input_tokens": input, "output_tokens": output},
                    })
                })
                .collect();
            let script = sb.script("soak.jsonl", &steps);
            sb.start_scripted("bench", &script);
            None
        }
        Model::Fake(wire) => {
            let server = LimitServer::start(LimitConfig {
                reply_chars: REPLY_CHARS,
                ..LimitConfig::new(options.window)
            });
            let mut cmd = sb.cmd();
            cmd.args(["start", "bench"])
                .args(server.start_args(wire))
                .env("ANTHROPIC_API_KEY", "test");
            let out = cmd.output().expect("run seedpod start");
            assert!(
                out.status.success(),
                "seedpod start failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(server)
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let sb = TestHome::new();
    let server = start(&sb, &options);
    let pid = sb.pid("bench").await;
    println!(
        "soak: {} turns of {} characters, window {} tokens, model {:?}; pod pid {pid}, RSS at start {} kB",
        options.turns,
        options.turn_chars,
        options.window,
        options.provider,
        rss_kb(pid)
    );
    println!(
        "{:>6} {:>10} {:>9} {:>14}",
        "turn", "RSS kB", "segments", "mean ms/turn"
    );

    let mut conn = sb.connect("bench", ClientMode::Control).await;
    let since = conn.welcome.seq;
    conn.send(Method::Subscribe {
        since_seq: Some(since),
    })
    .await
    .expect("subscribe");
    let mut times = Vec::with_capacity(options.turns);
    let mut failed = Vec::new();
    let (mut refused, mut summaries, mut requests) = (0, 0, 0);
    let mut answered = Vec::new();
    let mut baseline_rss = None;
    for n in 1..=options.turns {
        let started = Instant::now();
        let text = turn_text(n, options.turn_chars);
        let id = conn
            .send(Method::Run {
                segments: vec![Segment::Text { text }],
            })
            .await
            .expect("send run");
        match tokio::time::timeout(TURN_TIMEOUT, run_end(&mut conn, id, &mut answered)).await {
            Ok(Ok((RunEndReason::Completed, _))) => {}
            Ok(Ok((reason, message))) => failed.push(format!("turn {n}: {reason:?} {message:?}")),
            Ok(Err(refusal)) => failed.push(format!("turn {n}: refused: {refusal}")),
            Err(_) => {
                failed.push(format!("turn {n}: no run_end within {TURN_TIMEOUT:?}"));
                break;
            }
        }
        times.push(started.elapsed());
        if n == BASELINE_TURN {
            baseline_rss = Some(rss_kb(pid));
        }
        if let Some(server) = &server {
            for exchange in server.take_exchanges() {
                requests += 1;
                refused += usize::from(exchange.refused());
                summaries += usize::from(exchange.is_summary());
            }
        }
        if n % options.every == 0 || n == options.turns {
            let stretch = &times[times.len().saturating_sub(options.every)..];
            let mean = stretch.iter().sum::<Duration>() / stretch.len() as u32;
            println!(
                "{n:>6} {:>10} {:>9} {:>14.2}",
                rss_kb(pid),
                sb.segment_files("bench").len(),
                mean.as_secs_f64() * 1000.0
            );
        }
    }

    times.sort();
    if !times.is_empty() {
        println!(
            "time per turn (run to committed run_end), n={}: p50 {} p90 {} max {}",
            times.len(),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.9)),
            ms(*times.last().expect("not empty"))
        );
    }
    let last_rss = rss_kb(pid);
    match baseline_rss {
        Some(base) => println!(
            "RSS at turn {BASELINE_TURN}: {base} kB; at turn {}: {last_rss} kB ({:+} kB)",
            options.turns,
            last_rss as i64 - base as i64
        ),
        None => println!("RSS at turn {}: {last_rss} kB", options.turns),
    }
    if server.is_some() {
        println!(
            "fake model: {requests} requests, {refused} refused as too long, {summaries} summaries"
        );
    } else if !totals_match(&sb, &answered) {
        failed.push("the pod's totals differ from the model's usage".into());
    }
    println!("failed turns: {}", failed.len());
    for failure in failed.iter().take(10) {
        println!("  {failure}");
    }
    if !failed.is_empty() {
        std::process::exit(1);
    }
}

/// Compare the pod's lifetime totals in `seedpod ls --json` with the sum of the usage the
/// scripted steps in `answered` reported; prints both.
fn totals_match(sb: &TestHome, answered: &[usize]) -> bool {
    let (input, output) = answered
        .iter()
        .map(|step| step_usage(*step))
        .fold((0, 0), |(i, o), (a, b)| (i + a, o + b));
    let listing = sb.ok(&["ls", "--json"]);
    let pod = listing
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|pod| pod["name"] == "bench")
        .unwrap_or_default();
    let usage = &pod["totals"]["usage"];
    let (got_input, got_output) = (
        usage["input_tokens"].as_u64().unwrap_or(0),
        usage["output_tokens"].as_u64().unwrap_or(0),
    );
    let same = (got_input, got_output) == (input, output);
    println!(
        "token totals (ls --json): {got_input} in / {got_output} out; the model's usage over {} \
         answers: {input} in / {output} out — {}",
        answered.len(),
        if same { "equal" } else { "DIFFERENT" }
    );
    same
}

/// Wait for the next committed `run_end` (its reason and message), or the pod's refusal of
/// request `id`. Each committed answer's scripted step (`Answer N.`) goes to `answered`.
async fn run_end(
    conn: &mut seedpod_client::Connection,
    id: seedpod_protocol::RequestId,
    answered: &mut Vec<usize>,
) -> Result<(RunEndReason, Option<String>), String> {
    loop {
        let msg = conn
            .recv()
            .await
            .expect("read from the pod")
            .expect("the pod closed the connection during the soak");
        match msg {
            ServerMsg::Committed { entry, .. } => match entry.kind {
                EntryKind::RunEnd { reason, message } => return Ok((reason, message)),
                EntryKind::AssistantItem {
                    item: ModelItem::AssistantText { text },
                } => answered.extend(answer_step(&text)),
                _ => {}
            },
            ServerMsg::Error {
                id: Some(refused),
                message,
                ..
            } if refused == id => return Err(message),
            _ => {}
        }
    }
}

/// The scripted step an answer came from: its text begins `Answer N.`.
fn answer_step(text: &str) -> Option<usize> {
    text.strip_prefix("Answer ")?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
