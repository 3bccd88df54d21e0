//! A long conversation with each kind of local model server, as they really behave past a
//! 2,048-token window the pod is not told about (the servers: docs/configuration.md §Context):
//! llama-cpp-python's (cuts a streamed answer, refuses properly unstreamed), Ollama's (drops
//! the start of the prompt without a word), vLLM's and LM Studio's (refuse in their own
//! words), and one that refuses without saying its window. Every turn must be answered; the
//! window the pod learned shows in `seedpod ls`; and a `kill -9` halfway changes nothing of
//! what the next request would send.
//!
//! The full forty turns per server run in CI (`heavy_scenario`); a shorter run, still past
//! the window and across the kill, runs everywhere.

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{Exchange, LimitConfig, LimitServer, Wording};
use seedpod_protocol::{PodState, ServerMsg};
use serde_json::Value;

use super::small_window::{log, start, start_in, start_pod};

/// The server's window, which the pod is never told.
const LIMIT: u64 = 2_048;
/// Characters of each person's message: three of them are most of the window.
const MESSAGE_CHARS: usize = 1_500;

/// How many turns: forty in CI, enough to pass the window twice otherwise.
fn turns(server: &str) -> usize {
    if seedpod_e2e::heavy_scenario(&format!("forty turns against a {server}-like server")) {
        40
    } else {
        10
    }
}

/// A message of about `MESSAGE_CHARS` characters, different each turn.
fn message(turn: usize) -> String {
    let mut text = format!("turn {turn}: ");
    let words = [
        "river", "stone", "lamp", "garden", "window", "north", "copper",
    ];
    let mut i = turn;
    while text.len() < MESSAGE_CHARS {
        text.push_str(words[i % words.len()]);
        text.push(' ');
        i += 1;
    }
    text
}

/// What a session left behind, for the per-server assertions.
struct Session {
    sb: TestHome,
    server: LimitServer,
    /// Everything the CLI wrote to stderr, turn after turn (alerts included).
    stderr: String,
}

/// Run `turns` turns of `MESSAGE_CHARS` against `config`, killing the pod with `kill -9` in
/// the middle and restoring it; asserts every turn answers and the next request replays
/// exactly across the kill.
fn session(config: LimitConfig, turns: usize) -> Session {
    let server = LimitServer::start(config);
    let sb = start(&server);
    let mut stderr = String::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for turn in 0..turns {
        if turn == turns / 2 {
            runtime.block_on(settle(&sb));
            let before = sb.ok(&["context", "p"]);
            runtime.block_on(sb.kill9("p"));
            start_pod(&sb, &server);
            let after = sb.ok(&["context", "p"]);
            assert_eq!(before, after, "the next request changed across kill -9");
        }
        let out = sb.run(&["send", "p", &message(turn)]);
        let err = String::from_utf8_lossy(&out.stderr);
        stderr.push_str(&err);
        assert!(
            out.status.success() && !String::from_utf8_lossy(&out.stdout).trim().is_empty(),
            "turn {turn} was not answered: {err}\nrequests (tokens, refused): {:?}",
            trace(&server.exchanges())
        );
    }
    let exchanges = server.exchanges();
    // The numbers the docs quote (docs/configuration.md §Context): how many requests a turn
    // cost against this server.
    eprintln!(
        "{turns} turns answered with {} requests ({} refused or cut, {} unstreamed, {} summaries)",
        exchanges.len(),
        exchanges.iter().filter(|e| e.refused()).count(),
        unstreamed(&exchanges),
        exchanges.iter().filter(|e| e.is_summary()).count(),
    );
    Session { sb, server, stderr }
}

/// Wait until the pod is idle and no segment is being written, so what `context` prints now
/// is what a restore must rebuild (a compaction after a run may still be under way).
async fn settle(sb: &TestHome) {
    let mut pod = sb.drive("p").await;
    pod.wait_for(|msg| match msg {
        ServerMsg::SnapshotBegin {
            state: PodState::Idle,
            ..
        }
        | ServerMsg::State {
            state: PodState::Idle,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    // Answered only once a segment switch under way is over.
    sb.history("p").await;
}

fn trace(exchanges: &[Exchange]) -> Vec<(u64, bool)> {
    exchanges.iter().map(|e| (e.tokens, e.refused())).collect()
}

/// The window `seedpod ls` and `ls --json` show, which must be one the pod learned.
fn assert_learned_in_ls(sb: &TestHome, tokens: u64) {
    let table = sb.ok(&["ls"]);
    assert!(
        table.contains(&format!("of {}k*", tokens / 1_024)),
        "ls shows the learned window: {table}"
    );
    let json: Value = sb
        .ok(&["ls", "--json"])
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|pod| pod["name"] == "p")
        .expect("p in ls --json");
    assert_eq!(json["context_window"], tokens, "{json}");
    assert_eq!(json["context_window_source"], "learned", "{json}");
}

/// The learned windows in the log, in order.
fn learned_windows(sb: &TestHome) -> Vec<u64> {
    log(sb)
        .iter()
        .filter(|e| e["kind"] == "context_window" && e["source"] == "learned")
        .filter_map(|e| e["tokens"].as_u64())
        .collect()
}

fn unstreamed(exchanges: &[Exchange]) -> usize {
    exchanges
        .iter()
        .filter(|e| e.body.contains("\"stream\":false"))
        .count()
}

#[test]
fn llama_cpp_python_that_cuts_streams_asks_once_per_learned_window() {
    let turns = turns("llama-cpp-python");
    let s = session(
        LimitConfig {
            cuts_streams: true,
            ..LimitConfig::new(LIMIT)
        },
        turns,
    );
    let exchanges = s.server.exchanges();
    let learned = learned_windows(&s.sb);
    assert_eq!(learned, vec![LIMIT], "requests: {:?}", trace(&exchanges));
    // One unstreamed question per window learned, not one per turn.
    assert_eq!(
        unstreamed(&exchanges),
        learned.len(),
        "requests: {:?}",
        trace(&exchanges)
    );
    let cut = exchanges.iter().filter(|e| e.refused()).count();
    assert!(
        cut <= 2 * learned.len(),
        "requests: {:?}",
        trace(&exchanges)
    );
    assert_learned_in_ls(&s.sb, LIMIT);
    s.sb.ok(&["stop", "p"]);
}

#[test]
fn ollama_that_truncates_silently_is_noticed_once_and_the_next_request_fits() {
    let turns = turns("Ollama");
    let s = session(
        LimitConfig {
            truncates_silently: true,
            ..LimitConfig::new(LIMIT)
        },
        turns,
    );
    let exchanges = s.server.exchanges();
    let warnings = s
        .stderr
        .matches("dropped the start of the conversation")
        .count();
    assert_eq!(warnings, 1, "requests: {:?}", trace(&exchanges));
    // The server drops what is over its window: such requests are the ones it cut. After the
    // one that taught the window (and the one before, already cut in part), all fit.
    let over: Vec<usize> = exchanges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.tokens > LIMIT)
        .map(|(i, _)| i)
        .collect();
    assert!(
        !over.is_empty() && over.len() <= 2,
        "requests: {:?}",
        trace(&exchanges)
    );
    let last_over = over[over.len() - 1];
    assert!(
        exchanges[last_over + 1..].iter().all(|e| e.tokens <= LIMIT),
        "the next requests fit: {:?}",
        trace(&exchanges)
    );
    assert_eq!(learned_windows(&s.sb), vec![LIMIT]);
    assert_learned_in_ls(&s.sb, LIMIT);
    s.sb.ok(&["stop", "p"]);
}

/// The refusal in `wording` states the window: it is learned once, and the conversation goes
/// on under it.
fn refusing_server(wording: Wording, name: &str) {
    let s = session(
        LimitConfig {
            wording,
            ..LimitConfig::new(LIMIT)
        },
        turns(name),
    );
    let exchanges = s.server.exchanges();
    assert_eq!(
        learned_windows(&s.sb),
        vec![LIMIT],
        "requests: {:?}",
        trace(&exchanges)
    );
    let refused = exchanges.iter().filter(|e| e.refused()).count();
    assert!(refused <= 2, "requests: {:?}", trace(&exchanges));
    assert_learned_in_ls(&s.sb, LIMIT);
    s.sb.ok(&["stop", "p"]);
}

#[test]
fn vllm_refusing_in_its_own_words_is_understood() {
    refusing_server(Wording::Vllm, "vLLM");
}

#[test]
fn lm_studio_refusing_in_its_own_words_and_inside_a_stream_is_understood() {
    refusing_server(Wording::LmStudio, "LM Studio");
}

/// A server that refuses without saying how much it holds: the pod halves its own window down
/// to the floor (2,048, here the server's real window), says so, and goes on.
#[test]
fn a_server_that_never_states_its_window_is_met_by_halving_the_pods_own() {
    let s = session(
        LimitConfig {
            wording: Wording::Unsized,
            ..LimitConfig::new(LIMIT)
        },
        turns("window-less"),
    );
    let exchanges = s.server.exchanges();
    let learned = learned_windows(&s.sb);
    assert_eq!(learned.last(), Some(&LIMIT), "{:?}", trace(&exchanges));
    assert!(
        learned.windows(2).all(|w| w[1] < w[0]),
        "it only shrinks: {learned:?}"
    );
    assert!(
        s.stderr.contains("without saying how much it holds")
            && s.stderr.contains("set context_window in the pod's config"),
        "{}",
        s.stderr
    );
    assert_learned_in_ls(&s.sb, LIMIT);
    s.sb.ok(&["stop", "p"]);
}

/// A server that cuts a stream over its window and drops the same request unstreamed without
/// a word: after the usual retries the pod takes it as "too long" with no window, halves its
/// own, says so, and every turn is answered.
#[test]
fn a_server_that_fails_both_ways_without_a_word_is_met_by_halving() {
    let server = LimitServer::start(LimitConfig {
        cuts_streams: true,
        drops_unstreamed: true,
        ..LimitConfig::new(LIMIT)
    });
    let sb = TestHome::new();
    // Retries of the cut are made as usual, without waiting a second each here.
    sb.user_config("[retry]\nbase_delay_ms = 1\nmax_delay_ms = 2\n");
    let sb = start_in(sb, &server);
    let mut stderr = String::new();
    for turn in 0..4 {
        let out = sb.run(&["send", "p", &message(turn)]);
        stderr.push_str(&String::from_utf8_lossy(&out.stderr));
        assert!(
            out.status.success(),
            "turn {turn}: {stderr}\nrequests: {:?}",
            trace(&server.exchanges())
        );
    }
    assert!(
        stderr.contains("without saying how much it holds"),
        "says the pod halved its window: {stderr}"
    );
    assert_eq!(learned_windows(&sb).last(), Some(&LIMIT));
    assert_learned_in_ls(&sb, LIMIT);
    sb.ok(&["stop", "p"]);
}

/// A server whose window is too small for even the compact prompt: the turn fails, saying
/// what the pod tried and what to set, without blaming the person's short message.
#[test]
fn a_turn_that_cannot_fit_says_what_was_tried_and_what_to_set() {
    let server = LimitServer::start(LimitConfig {
        wording: Wording::Unsized,
        ..LimitConfig::new(600)
    });
    let sb = start(&server);
    let out = sb.run(&["send", "p", "hello"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("context_window"),
        "names the setting: {stderr}"
    );
    assert!(
        stderr.contains("halving") || stderr.contains("fitted the request"),
        "says what the pod tried: {stderr}"
    );
    assert!(
        !stderr.contains("shorten it") && !stderr.contains("last message"),
        "never blames a short message: {stderr}"
    );
    sb.ok(&["stop", "p"]);
}
