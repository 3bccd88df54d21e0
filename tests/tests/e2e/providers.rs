//! Real provider wire formats end to end: `seedpod start --provider openai|anthropic --base-url`
//! against a loopback server replaying recorded SSE streams. `send` streams the answer; the
//! next request carries tool-call arguments exactly as streamed (and Anthropic thinking with its
//! signature); `context` after a restart is byte-identical.

use seedpod_e2e::TestHome;
use seedpod_engine::testing::{MockServer, Reply};
use seedpod_protocol::PodName;

const OPENAI_TOOLS: &str =
    include_str!("../../../crates/engine/tests/fixtures/openai_tool_calls.sse");
const OPENAI_TEXT: &str = include_str!("../../../crates/engine/tests/fixtures/openai_text.sse");
const ANTHROPIC_THINKING_TOOL: &str =
    include_str!("../../../crates/engine/tests/fixtures/anthropic_thinking_tool_use.sse");
const ANTHROPIC_TEXT: &str =
    include_str!("../../../crates/engine/tests/fixtures/anthropic_text.sse");

fn start(sb: &TestHome, name: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    // The mock answers every request with its next reply, so a pod asking it for its context
    // window (Ollama, llama.cpp, vLLM and LM Studio endpoints) would take the test's replies;
    // the probes have their own tests in the engine.
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).expect("project config dir");
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n")
        .expect("project config");
    let mut cmd = sb.cmd();
    cmd.args(["start", name]).args(args);
    cmd.env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd.output().expect("run seedpod start")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_compatible_server_round_trip_and_identical_context_after_restart() {
    let server = MockServer::start(vec![
        Reply::sse_in_pieces(OPENAI_TOOLS.as_bytes().to_vec(), &[7, 64, 3]),
        Reply::sse_in_pieces(OPENAI_TEXT.as_bytes().to_vec(), &[5]),
    ])
    .await;
    let sb = TestHome::new();
    let base = format!("{}/v1", server.base_url());
    let out = start(
        &sb,
        "p",
        &[
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "gpt-test",
            "--temperature",
            "0.25",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let reply = sb.ok(&["send", "p", "echo twice"]);
    assert!(reply.contains("Hello, żółć 🎉 world."), "{reply}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert!(
        requests[0].header("authorization").is_none(),
        "no key, no bearer header"
    );
    assert!(
        requests[0].body.contains(r#""temperature":0.25"#),
        "{}",
        requests[0].body
    );
    // The second request carries the tool calls with their arguments exactly as streamed.
    assert!(
        requests[1].body.contains(r#"{\"n\": 1.50}"#),
        "{}",
        requests[1].body
    );
    assert!(
        requests[1].body.contains(r#"\"say\": \"hi there\""#),
        "{}",
        requests[1].body
    );

    let context = sb.ok(&["context", "p"]);
    assert_eq!(sb.ok(&["restart", "p"]).trim(), "p");
    assert_eq!(
        sb.ok(&["context", "p"]),
        context,
        "byte-identical after restart"
    );
    let history = sb.ok(&["history", "p"]);
    assert!(history.contains("usage: "), "{history}");
    // The temperature is part of the logged model, so it survives the restart too.
    assert!(context.contains(r#""temperature":0.25"#), "{context}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_thinking_signature_and_tool_arguments_survive_restart() {
    let server = MockServer::start(vec![
        Reply::sse_in_pieces(ANTHROPIC_THINKING_TOOL.as_bytes().to_vec(), &[11, 2, 97]),
        Reply::sse(ANTHROPIC_TEXT.as_bytes().to_vec()),
    ])
    .await;
    let sb = TestHome::new();
    let key = [("ANTHROPIC_API_KEY", "sk-ant-test-key")];
    let base = server.base_url();
    let args = [
        "--provider",
        "anthropic",
        "--base-url",
        base.as_str(),
        "--model",
        "claude-test",
    ];
    let out = start(&sb, "a", &args, &key);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply = sb.ok(&["send", "a", "think, then echo"]);
    assert!(!reply.trim().is_empty());

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test-key"));
    assert!(requests[0].header("anthropic-version").is_some());
    let signature = "ErUBCkYIBxgCIkB0ZXN0LXNpZ25hdHVyZS1ieXRlcy8rPQ==";
    assert!(
        requests[1].body.contains(signature),
        "thinking sent back with its signature"
    );

    let context = sb.ok(&["context", "a"]);
    assert!(context.contains(signature));
    // Restart with the key in the environment of the one who restarts it.
    let out = sb
        .cmd()
        .args(["restart", "a"])
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        sb.ok(&["context", "a"]),
        context,
        "byte-identical after restart"
    );
    // The key never reaches the pod's log.
    let log = std::fs::read_to_string(sb.home.log_path(&PodName::new("a").unwrap())).unwrap();
    assert!(!log.contains("sk-ant-test-key"));
}

#[test]
fn anthropic_without_a_key_names_the_variable_to_set() {
    let sb = TestHome::new();
    let out = start(&sb, "a", &["--provider", "anthropic"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
}
