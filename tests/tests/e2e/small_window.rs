//! A pod on a server whose window is small (4,096 tokens) and cannot be probed (no `/props`,
//! no window in `/v1/models`): the first request carries the full prompt and is refused as too
//! long; the pod learns the window from the refusal, moves the conversation to a new segment
//! with the compact prompt (docs/agent-loop.md §The system prompt's share) and sends it again —
//! so the person's first "hello" is answered, and a restart sends the same bytes.

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{LimitConfig, LimitServer, Wire};
use serde_json::Value;

const WINDOW: u64 = 4_096;

fn start(server: &LimitServer) -> TestHome {
    let sb = TestHome::new();
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
    sb
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
