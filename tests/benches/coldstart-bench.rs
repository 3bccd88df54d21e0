//! A pod's cold path as a script meets it (docs/testing.md §Benchmarks): `seedpod start NAME`
//! for a new pod, the first `seedpod send NAME hi` until the answer is printed, and
//! `seedpod stop NAME`, each a process of its own, timed apart and together. Each round makes a
//! new pod, so every round creates one (log, `pod.json`, first segment) rather than restoring.
//!
//! Two providers: the scripted double, and the OpenAI-compatible provider against a loopback
//! model server that answers every chat request with "hi" (what a local Ollama or llama.cpp
//! costs, minus the model). With `--codex PATH`, `codex exec` is timed against the same server
//! (through its Responses API) for comparison: one `codex exec "hi"` is its whole cold path.
//! Codex is not needed otherwise, and nothing installs it.
//!
//! Run: `cargo bench -p seedpod-e2e --bench coldstart-bench` (`-- --rounds N --codex PATH`).
//! `SEEDPOD_BIN` picks a binary built elsewhere. Prints numbers; asserts none.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use seedpod_e2e::{TestHome, seedpod_bin};
use seedpod_engine::testing::{MockServer, Reply};
use serde_json::json;

const ROUNDS: usize = 20;

/// A chat-completions stream that answers "hi" and stops.
const CHAT_STREAM: &str = concat!(
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,",
    "\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,",
    "\"delta\":{},\"finish_reason\":\"stop\"}],",
    "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11}}\n\n",
    "data: [DONE]\n\n",
);

/// The same answer through the Responses API, which `codex exec` speaks.
const RESPONSES_STREAM: &str = concat!(
    "event: response.created\n",
    "data: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}\n\n",
    "event: response.output_item.done\n",
    "data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"message\",",
    "\"role\":\"assistant\",\"id\":\"m1\",\"content\":[{\"type\":\"output_text\",\"text\":\"hi\"}]}}\n\n",
    "event: response.completed\n",
    "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"usage\":{",
    "\"input_tokens\":10,\"input_tokens_details\":null,\"output_tokens\":1,",
    "\"output_tokens_details\":null,\"total_tokens\":11}}}\n\n",
);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let rounds = flag("--rounds")
        .and_then(|n| n.parse().ok())
        .unwrap_or(ROUNDS);
    let server = MockServer::routes(vec![
        ("POST", "/v1/chat/completions", Reply::sse(CHAT_STREAM)),
        ("POST", "/v1/responses", Reply::sse(RESPONSES_STREAM)),
    ])
    .await;
    let base_url = format!("{}/v1", server.base_url());
    println!("seedpod: {}", seedpod_bin().display());

    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    let script = script.to_str().expect("utf-8 path").to_owned();
    let scripted = ["--provider", "scripted", "--script", script.as_str()];
    let openai = [
        "--provider",
        "openai",
        "--base-url",
        base_url.as_str(),
        "--model",
        "mock",
    ];
    for (label, flags) in [
        ("scripted", &scripted[..]),
        ("openai, loopback", &openai[..]),
    ] {
        let mut steps = Steps::default();
        for round in 0..rounds {
            let name = format!("{}{round}", &label[..1]);
            let started = Instant::now();
            let mut start = sb.cmd();
            start.arg("start").arg(&name).args(flags);
            run(&mut start, None);
            let started_at = started.elapsed();
            run(sb.cmd().args(["send", &name, "hi"]), Some("hi"));
            let sent_at = started.elapsed();
            run(sb.cmd().args(["stop", &name]), None);
            let total = started.elapsed();
            steps.push(started_at, sent_at - started_at, total - sent_at, total);
        }
        steps.print(label, rounds);
    }

    if let Some(codex) = flag("--codex") {
        codex_exec(Path::new(&codex), &sb, &base_url, rounds);
    }
}

/// Run `cmd`; a failure (or an answer other than `expect`) stops the bench.
fn run(cmd: &mut Command, expect: Option<&str>) {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .expect("run a seedpod command");
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(expect) = expect {
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expect);
    }
}

/// `codex exec hi` against the loopback server, with a `CODEX_HOME` of its own that names the
/// server as its model provider.
fn codex_exec(codex: &Path, sb: &TestHome, base_url: &str, rounds: usize) {
    let home = sb.path().join("codex-home");
    let work = sb.path().join("codex-work");
    std::fs::create_dir_all(&home).expect("codex home");
    std::fs::create_dir_all(&work).expect("codex work dir");
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"mock\"\nmodel_provider = \"loopback\"\n\n[model_providers.loopback]\n\
             name = \"loopback\"\nbase_url = \"{base_url}\"\nwire_api = \"responses\"\n"
        ),
    )
    .expect("codex config");
    let mut times = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let out = Command::new(codex)
            .args(["exec", "--skip-git-repo-check", "hi"])
            .env("CODEX_HOME", &home)
            .current_dir(&work)
            .stdin(Stdio::null())
            .output()
            .expect("run codex");
        times.push(started.elapsed());
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("hi"),
            "codex exec failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    times.sort();
    println!(
        "codex exec hi (openai, loopback), n={rounds}: p50 {} p90 {}",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.9))
    );
}

/// The time of each step of every round.
#[derive(Default)]
struct Steps {
    start: Vec<Duration>,
    send: Vec<Duration>,
    stop: Vec<Duration>,
    total: Vec<Duration>,
}

impl Steps {
    fn push(&mut self, start: Duration, send: Duration, stop: Duration, total: Duration) {
        self.start.push(start);
        self.send.push(send);
        self.stop.push(stop);
        self.total.push(total);
    }

    fn print(mut self, label: &str, rounds: usize) {
        for times in [
            &mut self.start,
            &mut self.send,
            &mut self.stop,
            &mut self.total,
        ] {
            times.sort();
        }
        println!(
            "{label}, n={rounds}: start p50 {} | first send p50 {} | stop p50 {} | \
             start+send+stop p50 {} p90 {}",
            ms(percentile(&self.start, 0.5)),
            ms(percentile(&self.send, 0.5)),
            ms(percentile(&self.stop, 0.5)),
            ms(percentile(&self.total, 0.5)),
            ms(percentile(&self.total, 0.9)),
        );
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
