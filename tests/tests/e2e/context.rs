//! A pod that lives long in a small window, end to end (`docs/configuration.md` on windows,
//! pruning and compaction): the real
//! binary against a loopback fake (`support/limit_server.rs`) that enforces a 16,000-token
//! window with the real OpenAI and Anthropic "too long" errors and counts tokens by its own
//! rule, not the pod's estimate.
//!
//! 1. Configured for the window it has: 50 turns of ~2,000 characters and a turn that reads a
//!    70 KB file all succeed; the model saw the big file's head and tail; the pod ends in a
//!    compacted segment whose summary kept a fact from turn 1; `ls` shows the fill within the
//!    window; the small window got the compact prompt (the base request leaves three quarters
//!    of it free).
//! 2. Configured for 200,000 against the same fake: 25 long turns all succeed — the pod learns
//!    the real window from the refusal, records it, compacts and retries — and `ls` shows the
//!    learned window.

use std::path::Path;

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{Answer, Exchange, LimitConfig, LimitServer, Wire};
use seedpod_protocol::PodName;
use serde_json::Value;

const WINDOW: u64 = 16_000;
/// A fact stated in turn 1 that every summary must carry on.
const FACT: &str = "FACT: the launch code is tangerine-42";
/// First and last lines of the big file, so a request body shows which ends the model saw.
const HEAD_MARK: &str = "HEAD-OF-THE-BIG-FILE";
const TAIL_MARK: &str = "TAIL-OF-THE-BIG-FILE";
/// Words the turns are made of: nothing the fake treats specially (`read`, `FACT:`, summary).
const WORDS: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
];

/// A sandbox with the window configured in the user's `config.toml`, and a pod in it talking
/// to `server` over `wire`.
fn start(server: &LimitServer, wire: Wire, window: u64) -> TestHome {
    let sb = TestHome::new();
    std::fs::create_dir_all(&sb.home.config).unwrap();
    std::fs::write(
        sb.home.config.join("config.toml"),
        format!("context_window = {window}\n"),
    )
    .unwrap();
    let mut cmd = sb.cmd();
    cmd.args(["start", "p"]).args(server.start_args(wire));
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "SEEDPOD_PROVIDER",
        "SEEDPOD_MODEL",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("ANTHROPIC_API_KEY", "test");
    let out = cmd.output().expect("run seedpod start");
    assert!(
        out.status.success(),
        "start failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    sb
}

/// Turn `n`'s message: about `chars` characters, different in every turn.
fn turn_text(n: usize, chars: usize) -> String {
    let mut text = format!("Turn {n}. Please keep this in mind.");
    let mut word = n * 7;
    while text.len() < chars {
        text.push(' ');
        text.push_str(WORDS[word % WORDS.len()]);
        word += 1;
    }
    text
}

/// `seedpod send`, which must succeed with the fake's answer and say nothing about an error.
fn send(sb: &TestHome, text: &str, expect: &str) {
    let out = sb.run(&["send", "p", text]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!("{stdout}\n{stderr}").to_lowercase();
    assert!(
        out.status.success()
            && stdout.contains(expect)
            && !said.contains("error")
            && !said.contains("fail"),
        "send of {:?}… ({}): \nstdout: {stdout}\nstderr: {stderr}",
        text.chars().take(40).collect::<String>(),
        out.status
    );
}

/// A ~70 KB file whose first and last lines are marked.
fn write_big_file(dir: &Path) -> &'static str {
    let mut text = format!("{HEAD_MARK} first line\n");
    let mut line = 2;
    while text.len() < 70 * 1024 {
        text.push_str(&format!(
            "line {line:04}: {}\n",
            WORDS[line % WORDS.len()].repeat(10)
        ));
        line += 1;
    }
    text.push_str(&format!("{TAIL_MARK} last line\n"));
    std::fs::write(dir.join("big.txt"), text).unwrap();
    "big.txt"
}

/// Every entry of every segment of pod `p`, oldest segment first.
fn log(sb: &TestHome) -> Vec<Value> {
    sb.segment_files("p")
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            text.lines()
                .map(|line| serde_json::from_str::<Value>(line).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The first entry of the segment `pod.json` names active.
fn active_segment_start(sb: &TestHome) -> Value {
    let dir = sb.home.pod_dir(&PodName::new("p").unwrap());
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("pod.json")).unwrap()).unwrap();
    let active = meta["active_segment"].as_str().expect("an active segment");
    let file = dir.join("segments").join(format!("{active}.jsonl"));
    let text = std::fs::read_to_string(&file).unwrap();
    serde_json::from_str(text.lines().next().expect("a first entry")).unwrap()
}

/// Pod `p`'s line of `seedpod ls --json`.
fn ls_json(sb: &TestHome) -> Value {
    sb.ok(&["ls", "--json"])
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|pod| pod["name"] == "p")
        .expect("pod p in ls --json")
}

/// The outcomes a scenario must show, all checked before the test fails, so one run says
/// everything that is missing (the turns before them take most of a test's time).
struct Checks {
    failed: Vec<String>,
    /// What the fake saw, for the failure message.
    trace: String,
}

impl Checks {
    fn new(exchanges: &[Exchange]) -> Checks {
        let trace = trace(exchanges);
        // Shown with `--nocapture`: how the pod kept inside the window.
        eprintln!("requests: {trace}");
        Checks {
            failed: Vec::new(),
            trace,
        }
    }

    fn that(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.failed.push(what.into());
        }
    }

    fn finish(self) {
        assert!(
            self.failed.is_empty(),
            "{} check(s) failed:\n- {}\nrequests the fake saw (tokens, R refused, S summary, \
             F read_file call, T after the tool): {}",
            self.failed.len(),
            self.failed.join("\n- "),
            self.trace
        );
    }

    /// The pod knows the window, and the fill `ls` reports is inside it.
    fn fill(&mut self, sb: &TestHome, window: u64) {
        let pod = ls_json(sb);
        self.that(
            pod["context_window"].as_u64() == Some(window),
            format!("ls --json has context_window {window}: {pod}"),
        );
        self.that(
            pod["context_tokens"]
                .as_u64()
                .is_some_and(|t| t > 0 && t <= window),
            format!("ls --json has 0 < context_tokens <= {window}: {pod}"),
        );
    }

    /// A refused request is never sent again unchanged: the pod compacts or trims first.
    fn no_blind_retry(&mut self, exchanges: &[Exchange]) {
        for (i, refused) in exchanges.iter().enumerate().filter(|(_, e)| e.refused()) {
            let next = exchanges[i + 1..].iter().find(|e| !e.is_summary());
            self.that(
                next.is_some_and(|next| next.body != refused.body),
                format!(
                    "request {i} ({} tokens) was refused, then sent again unchanged or never",
                    refused.tokens
                ),
            );
        }
    }

    /// The active segment is a compaction.
    fn compacted(&mut self, sb: &TestHome) {
        let start = active_segment_start(sb);
        self.that(
            start["kind"] == "segment_start" && start["origin"]["type"] == "compacted_from",
            format!("the active segment is a compaction: {}", start["origin"]),
        );
    }

    /// Turn 1's fact survived every compaction: in the active summary and in what the model
    /// is sent next.
    fn fact_kept(&mut self, sb: &TestHome) {
        let start = active_segment_start(sb);
        let summary = start["compaction"]["summary"].as_str().unwrap_or_default();
        self.that(
            summary.contains(FACT),
            format!("turn 1's fact is in the active summary: {summary:?}"),
        );
        self.that(
            sb.ok(&["context", "p"]).contains(FACT),
            "turn 1's fact is in what the model is sent next (`seedpod context`)",
        );
    }
}

/// The fake's requests in one line: tokens, and a letter for each special answer.
fn trace(exchanges: &[Exchange]) -> String {
    exchanges
        .iter()
        .map(|e| {
            let mark = match &e.answer {
                Answer::Refused => "R",
                Answer::Summary { .. } => "S",
                Answer::ReadFile { .. } => "F",
                Answer::Shell { .. } => "X",
                Answer::AfterTool => "T",
                Answer::Call { .. } => "C",
                Answer::Malformed(_) => "M",
                Answer::Text => "",
            };
            format!("{}{mark}", e.tokens)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Scenario 1 of this file's header, for one provider.
fn fifty_turns_and_a_big_file_in_a_configured_window(wire: Wire) {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = start(&server, wire, WINDOW);
    let big = write_big_file(sb.path());
    let mut first_turn = String::new();
    for n in 1..=50 {
        let mut text = turn_text(n, 2_000);
        if n == 1 {
            text.insert_str(text.len() / 2, &format!("\n{FACT}\n"));
            first_turn = text.clone();
        }
        send(&sb, &text, "Reply ");
        if n == 25 {
            send(&sb, &format!("read {big}"), "read the file");
        }
    }

    let exchanges = server.exchanges();
    let mut checks = Checks::new(&exchanges);
    checks.that(
        exchanges
            .iter()
            .any(|e| !e.refused() && e.body.contains(HEAD_MARK) && e.body.contains(TAIL_MARK)),
        "a request the model answered showed both ends of the big file",
    );
    checks.no_blind_retry(&exchanges);
    // A small window gets the compact prompt: the first request without its one message is
    // the base request, which must leave the window three quarters free (by the fake's count,
    // which is stricter than the pod's estimate).
    let config = server.config();
    let base = exchanges
        .first()
        .map_or(0, |e| e.tokens.saturating_sub(config.count(&first_turn)));
    checks.that(
        base <= WINDOW / 4,
        format!("the base request takes at most a quarter of the window: {base} tokens"),
    );
    checks.compacted(&sb);
    checks.fact_kept(&sb);
    checks.fill(&sb, WINDOW);
    let first = log(&sb).into_iter().next().unwrap_or_default();
    checks.that(
        first["context_window"] == serde_json::json!({"tokens": WINDOW, "source": "config"}),
        format!(
            "the first segment starts knowing the configured window: {}",
            first["context_window"]
        ),
    );
    checks.finish();
}

#[test]
fn openai_fifty_turns_and_a_big_file_in_a_16k_window() {
    fifty_turns_and_a_big_file_in_a_configured_window(Wire::OpenAi);
}

#[test]
fn anthropic_fifty_turns_and_a_big_file_in_a_16k_window() {
    fifty_turns_and_a_big_file_in_a_configured_window(Wire::Anthropic);
}

/// Scenario 2 of this file's header, for one provider.
fn a_window_configured_too_large_is_learned_from_the_refusal(wire: Wire) {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = start(&server, wire, 200_000);
    for n in 1..=25 {
        send(&sb, &turn_text(n, 4_000), "Reply ");
    }

    let exchanges = server.exchanges();
    let mut checks = Checks::new(&exchanges);
    checks.that(
        exchanges.iter().any(Exchange::refused),
        "the fake refused a request (else the test did not exercise learning)",
    );
    checks.no_blind_retry(&exchanges);
    checks.that(
        log(&sb).iter().any(|entry| {
            entry["kind"] == "context_window"
                && entry["source"] == "learned"
                && entry["tokens"] == WINDOW
        }),
        "the log has a context_window entry: 16000, learned",
    );
    checks.compacted(&sb);
    checks.fill(&sb, WINDOW);
    let pod = ls_json(&sb);
    checks.that(
        pod["context_window_source"] == "learned",
        format!("ls --json says the window was learned: {pod}"),
    );
    let table = sb.ok(&["ls"]);
    checks.that(
        table.contains("16k"),
        format!("ls shows the learned window:\n{table}"),
    );
    checks.finish();
}
#[test]
fn openai_learns_a_smaller_window_than_configured() {
    a_window_configured_too_large_is_learned_from_the_refusal(Wire::OpenAi);
}

#[test]
fn anthropic_learns_a_smaller_window_than_configured() {
    a_window_configured_too_large_is_learned_from_the_refusal(Wire::Anthropic);
}

/// The scripted provider in the same window (the model `context-bench` drives for a thousand
/// turns, measuring): thirty turns of ~2,000 characters all complete while the pod prunes and
/// compacts by its own estimate, with no server refusing anything.
#[test]
fn thirty_scripted_turns_in_a_16k_window_all_complete() {
    const TURNS: usize = 30;
    let sb = TestHome::new();
    sb.user_config(&format!("context_window = {WINDOW}\n"));
    // An answer for every turn and a summary for every compaction, with room to spare.
    let steps: Vec<Value> = (0..TURNS * 2 + 16)
        .map(|i| serde_json::json!({"text": format!("Reply {i}: {}", turn_text(i, 200))}))
        .collect();
    let script = sb.script("s.jsonl", &steps);
    sb.start_scripted("p", &script);
    for n in 1..=TURNS {
        send(&sb, &turn_text(n, 2_000), "Reply ");
    }
}
