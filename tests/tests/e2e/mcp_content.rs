//! What MCP servers give besides tools' text, against the repository's MCP test server: an
//! image a tool returns reaches an Anthropic request as an `image` block in the tool's result,
//! and the request is byte for byte the same after a restart (the image is in the log); a call
//! that keeps reporting progress outlives its time limit, and one that stops reporting ends.

use seedpod_e2e::TestHome;
use seedpod_engine::testing::{MockServer, Reply};
use serde_json::{Value, json};

use super::mcp::{SERVER, call, toml_str, tool_results, wait_for_journal};

const ANTHROPIC_TEXT: &str =
    include_str!("../../../crates/engine/tests/fixtures/anthropic_text.sse");

/// An Anthropic stream in which the model calls `tool` with no arguments.
fn anthropic_tool_call(tool: &str) -> String {
    let events = [
        (
            "message_start",
            serde_json::json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            serde_json::json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_pic", "name": tool, "input": {}}}),
        ),
        (
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": "{}"}}),
        ),
        (
            "content_block_stop",
            serde_json::json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
                "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", serde_json::json!({"type": "message_stop"})),
    ];
    events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect()
}

/// A pod `a` on the Anthropic wire against `server`, with MCP server `t` allowed.
fn start_anthropic(sb: &TestHome, server: &MockServer) {
    // A window the tools fit in whole: the MCP tools are offered up front, not behind
    // `tool_search`.
    sb.user_config(&format!(
        "context_window = 200000\n[mcp.servers.t]\ncommand = {}\n\
         [approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER)
    ));
    // The mock answers every request with its next reply: no context-window probe.
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n").unwrap();
    let base = server.base_url();
    let out = sb
        .cmd()
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key")
        .args(["start", "a", "--provider", "anthropic", "--base-url"])
        .args([base.as_str(), "--model", "claude-test"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `tool_result` block for `id` in an Anthropic request body.
fn tool_result(body: &str, id: &str) -> Value {
    let request: Value = serde_json::from_str(body).unwrap();
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no tool_result {id} in {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_from_an_mcp_tool_reaches_an_anthropic_request_as_an_image_block_and_replays() {
    let server = MockServer::start(vec![
        Reply::sse(anthropic_tool_call("mcp__t__picture").into_bytes()),
        Reply::sse(ANTHROPIC_TEXT.as_bytes().to_vec()),
    ])
    .await;
    let sb = TestHome::new();
    start_anthropic(&sb, &server);
    sb.ok(&["send", "a", "show me the picture"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let result = tool_result(&requests[1].body, "toolu_pic");
    let content = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("content blocks: {result}"));
    assert_eq!(content[0]["type"], "text");
    assert_eq!(
        content[0]["text"], "a red dot\n[image: image/png, 8 bytes]",
        "{result}"
    );
    assert_eq!(
        content[1],
        serde_json::json!({"type": "image", "source": {"type": "base64",
            "media_type": "image/png", "data": "iVBORw0KGgo="}}),
        "{result}"
    );

    // The image is in the log: the next request is the same after a restart.
    let context = sb.ok(&["context", "a"]);
    assert!(context.contains(r#""data":"iVBORw0KGgo=""#), "{context}");
    let out = sb
        .cmd()
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key")
        .args(["restart", "a"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        sb.ok(&["context", "a"]),
        context,
        "byte-identical after restart"
    );
    sb.ok(&["stop", "a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_keeps_a_call_alive_past_its_timeout_and_a_call_that_stops_reporting_ends() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_JOURNAL = {} }}\ntool_timeout_secs = 2\n\
         [approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            // Eight reports, half a second apart: twice the time limit, never idle for it.
            call("mcp__t__progress", json!({"steps": 8, "interval_ms": 500})),
            json!({"text": "It kept going."}),
            call("mcp__t__stall", json!({})),
            json!({"text": "It went quiet."}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "go"]);
    sb.ok(&["send", "p", "and now wait"]);
    let results = tool_results(&sb.history("p").await);
    assert_eq!(
        results[0],
        ("progressed 8".to_string(), false),
        "{results:?}"
    );
    let (stalled, is_error) = &results[1];
    assert!(
        *is_error && stalled.contains("sent neither an answer nor progress for 2s"),
        "{stalled}"
    );
    // The server heard that the call was given up.
    wait_for_journal(&journal, "cancelled stall");
    let seen = std::fs::read_to_string(&journal).unwrap();
    assert!(seen.contains("progress 8/8"), "{seen}");
    sb.ok(&["stop", "p"]);
}
