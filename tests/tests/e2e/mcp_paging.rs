//! A server whose tool list never ends (docs/configuration.md §MCP servers, "Lists"): the pod
//! asks for at most 100 pages, stops at a cursor the server already handed out, keeps what was
//! listed, and says so — in `mcp ls`, and in an alert to the clients attached when it lists
//! (here: at a reconnect asked for over the protocol, as `/mcp` does).

use serde_json::{Value, json};

use seedpod_e2e::{TestHome, wait_for};
use seedpod_protocol::{AlertLevel, ClientMode, McpAction, Method};

use crate::mcp::{SERVER, alert_containing, mcp_ls_json, toml_str};

fn pod_with_paging_server(sb: &TestHome, mode: &str) -> std::path::PathBuf {
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\n\
         env = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_PAGES = {} }}\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
        toml_str(mode),
    ));
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    journal
}

/// The pages the server was asked for, in order.
fn pages_asked(journal: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(journal)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("listed tools page "))
        .map(str::to_owned)
        .collect()
}

/// Attach, reconnect server `t` over the protocol, and wait for the alert containing `words`.
async fn alert_at_reconnect(sb: &TestHome, words: &'static str) -> (AlertLevel, String) {
    let mut control = sb.connect("p", ClientMode::Control).await;
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    control
        .call(Method::McpControl {
            server: "t".into(),
            action: McpAction::Reconnect,
        })
        .await
        .expect("reconnect");
    wait_for(&mut events, &mut seen, alert_containing(words)).await
}

fn tool_names(status: &Value) -> Vec<String> {
    status[0]["tools"]
        .as_array()
        .expect("tools in mcp ls")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_tool_list_stops_at_100_pages_keeps_what_was_listed_and_says_so() {
    let sb = TestHome::new();
    let journal = pod_with_paging_server(&sb, "endless");
    let asked = pages_asked(&journal);
    assert_eq!(asked.len(), 100, "{asked:?}");
    assert_eq!(asked.first().map(String::as_str), Some("-"));
    assert_eq!(asked.last().map(String::as_str), Some("p99"));
    let status = mcp_ls_json(&sb, "p");
    assert_eq!(status[0]["state"], "ready", "{status}");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("did not end after 100 pages"), "{status}");
    let names = tool_names(&status);
    assert!(names.iter().any(|n| n.ends_with("echo")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with("paged_99")), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("paged_100")), "{names:?}");
    let (level, message) = alert_at_reconnect(&sb, "did not end after 100 pages").await;
    assert_eq!(level, AlertLevel::Warn);
    assert!(message.contains("MCP server t"), "{message}");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_that_loops_back_ends_at_the_repeated_cursor() {
    let sb = TestHome::new();
    let journal = pod_with_paging_server(&sb, "loop");
    // First page, p1, p2 — whose next cursor is p1 again: not asked for.
    assert_eq!(pages_asked(&journal), ["-", "p1", "p2"]);
    let status = mcp_ls_json(&sb, "p");
    assert_eq!(status[0]["state"], "ready", "{status}");
    let names = tool_names(&status);
    assert!(names.iter().any(|n| n.ends_with("paged_2")), "{names:?}");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("pointed back"), "{status}");
    let (_, message) = alert_at_reconnect(&sb, "pointed back").await;
    assert!(message.contains("MCP server t"), "{message}");
    sb.ok(&["stop", "p"]);
}
