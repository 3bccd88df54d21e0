//! A pod on a server whose window is small (4,096 tokens) and cannot be probed (no `/props`,
//! no window in `/v1/models`): the first request carries the full prompt and is refused as too
//! long; the pod learns the window from the refusal, moves the conversation to a new segment
//! with the compact prompt (docs/agent-loop.md §The system prompt's share) and sends it again —
//! so the person's first "hello" is answered, and a restart sends the same bytes.

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{LimitConfig, LimitServer, Wire};
use serde_json::Value;

const WINDOW: u64 = 4_096;

pub(crate) fn start(server: &LimitServer) -> TestHome {
    start_in(TestHome::new(), server)
}

/// `start` in a home prepared by the caller (a config file written first).
pub(crate) fn start_in(sb: TestHome, server: &LimitServer) -> TestHome {
    start_pod(&sb, server);
    sb
}

/// `seedpod start p` against `server`, for a new pod or a restore, with nothing from the
/// environment choosing another provider.
pub(crate) fn start_pod(sb: &TestHome, server: &LimitServer) {
    let mut cmd = sb.cmd();
    cmd.args(["start", "p"])
        .args(server.start_args(Wire::OpenAi));
    for var in ["OPENAI_BASE_URL", "SEEDPOD_PROVIDER", "SEEDPOD_MODEL"] {
        cmd.env_remove(var);
    }
    cmd.env("OPENAI_API_KEY", "test");
    let out = cmd.output().expect("run seedpod start");
    assert!(
        out.status.success(),
        "start failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every entry of every segment of pod `p`, oldest segment first.
pub(crate) fn log(sb: &TestHome) -> Vec<Value> {
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

#[test]
fn a_first_hello_on_an_unprobed_small_window_is_answered_and_replays_exactly() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = start(&server);

    let out = sb.run(&["send", "p", "hello"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let exchanges = server.exchanges();
    let trace: Vec<(u64, bool)> = exchanges.iter().map(|e| (e.tokens, e.refused())).collect();
    assert!(
        out.status.success() && !stderr.to_lowercase().contains("shorten"),
        "hello failed ({}):\nstdout: {stdout}\nstderr: {stderr}\nrequests: {trace:?}",
        out.status
    );
    // The full prompt was refused once; the retry fits and still carries the message.
    assert_eq!(exchanges.len(), 2, "requests: {trace:?}");
    assert!(exchanges[0].refused(), "requests: {trace:?}");
    assert!(!exchanges[1].refused(), "requests: {trace:?}");
    assert!(exchanges[1].body.contains("hello"), "{}", exchanges[1].body);
    assert!(
        exchanges[1].body.len() < exchanges[0].body.len(),
        "the retry is smaller: {trace:?}"
    );

    // The move is in the log: a second segment, recomposed from the first, that knows the
    // window and seeds the person's message (committed once, in the first segment).
    let entries = log(&sb);
    let starts: Vec<&Value> = entries
        .iter()
        .filter(|e| e["kind"] == "segment_start")
        .collect();
    assert_eq!(starts.len(), 2, "{entries:#?}");
    let first_id = starts[0]["segment_id"].as_str().unwrap();
    assert_eq!(starts[1]["origin"]["type"], "recomposed_from");
    assert_eq!(starts[1]["origin"]["segment_id"], first_id);
    assert_eq!(starts[1]["context_window"]["tokens"], WINDOW);
    assert_eq!(starts[1]["context_window"]["source"], "learned");
    assert!(
        starts[1]["seed"].to_string().contains("hello"),
        "{}",
        starts[1]
    );
    let prompt = |s: &Value| s["system_prompt"].as_str().unwrap().len();
    assert!(prompt(starts[1]) < prompt(starts[0]));

    // Replay is exact: the next request is the same bytes after a restart.
    let before = sb.ok(&["context", "p"]);
    assert!(before.contains("hello"), "{before}");
    sb.ok(&["restart", "p"]);
    let after = sb.ok(&["context", "p"]);
    assert_eq!(before, after, "the next request changed across a restart");

    // And the pod goes on working in the small window without another refusal.
    sb.ok(&["send", "p", "and again"]);
    let exchanges = server.exchanges();
    assert_eq!(exchanges.len(), 3);
    assert!(!exchanges[2].refused());
    sb.ok(&["stop", "p"]);
}

/// A server that cuts a streamed answer instead of refusing an over-long prompt (llama-cpp-
/// python's, which answers the same request unstreamed with a proper 400): the pod asks once
/// without streaming, learns the window from that answer and fits the request to it, instead
/// of retrying the cut request blindly and failing every turn from then on.
#[test]
fn a_server_that_cuts_the_stream_when_the_prompt_is_too_long_is_understood() {
    let server = LimitServer::start(LimitConfig {
        cuts_streams: true,
        ..LimitConfig::new(WINDOW)
    });
    let sb = start(&server);

    for turn in ["hello", "and again"] {
        let out = sb.run(&["send", "p", turn]);
        let trace: Vec<(u64, bool, bool)> = server
            .exchanges()
            .iter()
            .map(|e| (e.tokens, e.refused(), e.body.contains("\"stream\":true")))
            .collect();
        assert!(
            out.status.success(),
            "{turn:?} failed: {}\nrequests (tokens, refused, streamed): {trace:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let exchanges = server.exchanges();
    let unstreamed: Vec<_> = exchanges
        .iter()
        .filter(|e| e.body.contains("\"stream\":false"))
        .collect();
    assert_eq!(unstreamed.len(), 1, "one question, no blind retries");
    assert!(unstreamed[0].refused());
    let learned = log(&sb)
        .iter()
        .any(|e| e.to_string().contains("\"learned\""));
    assert!(learned, "the window is recorded as learned");
}

/// A server that drops the start of a prompt over its window and answers anyway, reporting
/// only the tokens it read (Ollama past its `num_ctx`): the pod notices the count fall far
/// below what this server's earlier counts predict, learns the window, warns once, and the
/// next request fits.
#[test]
fn a_server_that_truncates_silently_is_noticed_once_and_the_next_request_fits() {
    const LIMIT: u64 = 12_000;
    let server = LimitServer::start(LimitConfig {
        truncates_silently: true,
        ..LimitConfig::new(LIMIT)
    });
    let sb = start(&server);
    let paragraph = "The quick brown fox jumps over the lazy dog; ".repeat(34);
    let mut warnings = 0;
    for turn in 0..16 {
        let out = sb.run(&["send", "p", &format!("turn {turn}: {paragraph}")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "turn {turn}: {stderr}");
        warnings += stderr
            .matches("dropped the start of the conversation")
            .count();
    }
    let exchanges = server.exchanges();
    let over: Vec<usize> = exchanges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.tokens > LIMIT)
        .map(|(i, _)| i)
        .collect();
    let tokens: Vec<u64> = exchanges.iter().map(|e| e.tokens).collect();
    let windows: Vec<String> = log(&sb)
        .iter()
        .filter(|e| e["kind"] == "context_window" || e["kind"] == "segment_start")
        .map(|e| format!("{} {} {}", e["kind"], e["tokens"], e["context_window"]))
        .collect();
    assert!(
        !over.is_empty(),
        "the conversation outgrew the server: {tokens:?} {windows:?}"
    );
    assert_eq!(warnings, 1, "warned once; requests {tokens:?}; {windows:?}");
    // A prompt that outgrows the window a little at a time is cut a little at a time: the
    // count stops growing with the request on the first request cut whole (the one before was
    // cut by part of one message). After it, every request fits.
    assert!(
        over.len() <= 2 && over.windows(2).all(|w| w[1] == w[0] + 1),
        "requests over the limit: {over:?} of {tokens:?}"
    );
    let last_over = over[over.len() - 1];
    assert!(
        tokens[last_over + 1..].iter().all(|t| *t <= LIMIT),
        "{tokens:?}"
    );
    assert!(tokens.len() > last_over + 3, "turns went on: {tokens:?}");
    let learned = log(&sb)
        .iter()
        .any(|e| e["kind"] == "context_window" && e["tokens"] == LIMIT);
    assert!(learned, "the window it read is recorded as learned");
}
