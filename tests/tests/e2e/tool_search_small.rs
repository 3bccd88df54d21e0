//! `tool_search` in a segment on the small prompt: a loaded tool is shortened like every tool the
//! segment offered (docs/configuration.md §Context: windows, pruning and compaction), and replay
//! stays exact.

use seedpod_e2e::TestHome;
use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-test-server");

fn tool<'a>(request: &'a Value, name: &str) -> Option<&'a Value> {
    request["tools"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
}

/// Every `description` keyword anywhere under `schema`.
fn descriptions(schema: &Value) -> usize {
    match schema {
        Value::Object(map) => {
            usize::from(map.get("description").is_some_and(Value::is_string))
                + map.values().map(descriptions).sum::<usize>()
        }
        Value::Array(list) => list.iter().map(descriptions).sum(),
        _ => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_loaded_into_a_small_prompt_segment_is_shortened_like_the_rest_and_replays() {
    let sb = TestHome::new();
    sb.user_config(&format!(
        "context_window = 8192\n[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_TOOLS = \"55\" }}\n",
        serde_json::to_string(SERVER).unwrap(),
    ));
    let search = json!({"names": ["mcp__t__create_issue"]}).to_string();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"tool_calls": [{"name": "tool_search", "arguments": search}]}),
            json!({"text": "Loaded."}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "find the issue tool"]);

    let requests: Vec<Value> = sb
        .requests("p")
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    assert_eq!(requests.len(), 2);
    assert!(
        tool(&requests[0], "tool_search").is_some(),
        "the small prompt offers the search"
    );
    let loaded = tool(&requests[1], "mcp__t__create_issue").expect("the loaded tool");
    // The server's description has three sentences and each parameter one of its own.
    let description = loaded["description"].as_str().unwrap();
    assert_eq!(description, "Create a issue by its id.");
    assert_eq!(descriptions(&loaded["parameters"]), 0, "{loaded}");
    assert_eq!(loaded["parameters"]["required"], json!(["repository"]));

    let next_before = sb.context("p").await;
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, next_before);
    sb.ok(&["stop", "p"]);
}
