//! MCP tool schemas providers refuse (docs/configuration.md §MCP servers, "Tool schemas"): an
//! `array` without `items` is filled in, so an OpenAI endpoint that checks schemas as OpenAI
//! does accepts the request; a schema that cannot be fixed leaves its tool out and says why;
//! the server's other tools go as the server wrote them.

use seedpod_e2e::TestHome;
use seedpod_e2e::openai_fake::{OpenAiFake, schema_problem};
use serde_json::{Value, json};

use crate::mcp::{SERVER, mcp_ls_json, toml_str};

fn offered<'a>(request: &'a Value, name: &str) -> Option<&'a Value> {
    request["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_array_without_items_is_filled_so_openai_accepts_and_other_tools_are_as_written() {
    let fake = OpenAiFake::start().await;
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[context]\nprobe = false\n[mcp.servers.t]\ncommand = {}\n\
         env = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_LOOSE_SCHEMA = \"1\" }}\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    // As the server writes it, the fake (as OpenAI) refuses the schema.
    let as_written = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "description": "The tags."}},
        "required": ["tags"]
    });
    assert_eq!(
        schema_problem(&as_written).as_deref(),
        Some("In context=(, 'properties', 'tags'), array schema missing items.")
    );

    let out = sb
        .cmd()
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .args(["start", "p", "--provider", "openai", "--base-url"])
        .arg(fake.base_url())
        .args(["--model", "gpt-test"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply = sb.ok(&["send", "p", "tag something"]);
    assert!(reply.contains("Schemas accepted."), "{reply}");

    let seen = fake.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].refused, None);
    let request: Value = serde_json::from_str(&seen[0].body).unwrap();
    let tag = offered(&request, "mcp__t__tag").expect("mcp__t__tag offered");
    assert_eq!(
        tag["function"]["parameters"],
        json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "description": "The tags.", "items": {}}},
            "required": ["tags"]
        })
    );
    // The other tools go exactly as the server wrote them.
    let echo = offered(&request, "mcp__t__echo").expect("mcp__t__echo offered");
    assert_eq!(
        echo["function"]["parameters"],
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to say back."}},
            "required": ["text"]
        })
    );
    // The schema nothing can fix leaves its tool out, and `mcp ls` says why.
    assert!(offered(&request, "mcp__t__knotted").is_none());
    let status = mcp_ls_json(&sb, "p");
    assert_eq!(status[0]["state"], "ready", "{status}");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(
        why.contains("mcp__t__knotted") && why.contains("`properties`"),
        "{status}"
    );

    // Replay sends the same bytes.
    let context = sb.ok(&["context", "p"]);
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.ok(&["context", "p"]), context);
    sb.ok(&["stop", "p"]);
}
