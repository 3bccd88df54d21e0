//! A Streamable HTTP MCP server that restarts or dies (docs/configuration.md §MCP servers):
//! a server restarted between calls answers the old session id with 404, or with a 400 whose
//! JSON-RPC error has `id: null`, or with a text/plain 400 — the next call starts a new session
//! and succeeds; a server killed mid-call ends the call at once with a clear error, `mcp ls`
//! says it is down and why, and it is reconnected when it returns; one killed while idle, with
//! no stream open, is found dead by the pod's health ping; one that wants OAuth fails at once
//! and says what to do.
//!
//! "Within 5 s" is a test deadline on the events the pod sends, not a measured budget.

use std::time::Duration;

use seedpod_e2e::{TestHome, heavy_scenario, is_run_end, wait_for};
use seedpod_protocol::{AlertLevel, ClientMode};
use serde_json::json;

use crate::mcp::{
    HttpServer, alert_containing, call, mcp_ls_json, toml_str, tool_results, wait_for_journal,
};

/// How long a test gives the pod to recover or to end a call.
const DEADLINE: Duration = Duration::from_secs(5);

fn config_with_http_server(sb: &TestHome, url: &str) {
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n[approvals]\n\"mcp__web__*\" = \"allow\"\n",
        toml_str(url)
    ));
}

/// Restart the server between two calls, its new process answering the old session as
/// `mode` says; the second call must succeed against the new process.
async fn a_restart_between_calls_is_recovered(mode: &str) {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    // No event stream: nothing tells the pod of the restart but the next call's answer.
    let flags = ["--lost-session", mode, "--no-get-stream"];
    let server = HttpServer::start_with(&journal, "", &flags);
    config_with_http_server(&sb, &server.url);
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__web__count", json!({})),
            json!({"text": "Once."}),
            call("mcp__web__count", json!({})),
            json!({"text": "Twice."}),
        ],
    );
    sb.start_scripted("p", &script);
    let answer = sb.ok(&["send", "p", "count"]);
    assert!(answer.contains("Once."), "{answer}");
    assert_eq!(
        tool_results(&sb.history("p").await),
        [("count 1".to_string(), false)]
    );

    let port = server.port();
    server.kill();
    let _server = HttpServer::start_with(&journal, "", &[&flags[..], &["--port", &port]].concat());

    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "count again", "--no-wait"]);
    tokio::time::timeout(DEADLINE, wait_for(&mut events, &mut seen, is_run_end))
        .await
        .unwrap_or_else(|_| panic!("the call after a restart ({mode}) did not end within 5 s"));
    let results = tool_results(&sb.history("p").await);
    // A new process: its count starts again, and the answer is not an error.
    assert_eq!(
        results.last(),
        Some(&("count 1".to_string(), false)),
        "{results:?}"
    );
    wait_for_journal(&journal, &format!("unknown session answered {mode}"));
    assert_eq!(mcp_ls_json(&sb, "p")[0]["state"], "ready");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_between_calls_answering_404_gets_a_new_session() {
    a_restart_between_calls_is_recovered("404").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_between_calls_answering_400_with_a_null_id_gets_a_new_session() {
    a_restart_between_calls_is_recovered("400-null-id").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_between_calls_answering_a_plain_text_400_gets_a_new_session() {
    a_restart_between_calls_is_recovered("400-text").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_killed_mid_call_ends_the_call_shows_down_and_is_reconnected() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &[]);
    config_with_http_server(&sb, &server.url);
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__web__slow", json!({})),
            json!({"text": "The server died."}),
            call("mcp__web__count", json!({})),
            json!({"text": "It is back."}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "wait a while", "--no-wait"]);
    wait_for_journal(&journal, "called slow");
    let port = server.port();
    server.kill();

    tokio::time::timeout(DEADLINE, wait_for(&mut events, &mut seen, is_run_end))
        .await
        .expect("the call in flight did not end within 5 s of its server dying");
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].1, "the interrupted call is an error result");
    assert!(
        results[0].0.contains("MCP server web") && !results[0].0.contains("rmcp::"),
        "{}",
        results[0].0
    );
    // The alert comes with the state change; `mcp ls` says it is down, and why.
    let mut stopped = alert_containing("MCP server web stopped");
    if !seen.iter().any(|m| stopped(m).is_some()) {
        wait_for(&mut events, &mut seen, stopped).await;
    }
    let status = mcp_ls_json(&sb, "p");
    assert_ne!(status[0]["state"], "ready", "{status}");
    let listing = sb.ok(&["mcp", "ls", "p"]);
    assert!(listing.contains("web (http): restarting"), "{listing}");

    // Back at the same address: reconnected, and calls work again.
    let _server = HttpServer::start_with(&journal, "", &["--port", &port]);
    let (level, _) = wait_for(
        &mut events,
        &mut seen,
        alert_containing("MCP server web is running again"),
    )
    .await;
    assert_eq!(level, AlertLevel::Info);
    assert_eq!(mcp_ls_json(&sb, "p")[0]["state"], "ready");
    sb.ok(&["send", "p", "count", "--no-wait"]);
    wait_for(&mut events, &mut seen, is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.last(), Some(&("count 1".to_string(), false)));
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_wants_oauth_fails_at_once_and_says_what_to_do() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--unauthorized"]);
    config_with_http_server(&sb, &server.url);
    let script = sb.script("s.jsonl", &[json!({"text": "Here."})]);
    sb.start_scripted("p", &script);
    let status = mcp_ls_json(&sb, "p");
    // Failed for good at its first start: no retries that cannot help.
    assert_eq!(status[0]["state"], "failed", "{status}");
    assert_eq!(status[0]["restarts"], 0, "{status}");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(
        why.contains("401")
            && why.contains("no OAuth metadata")
            && why.contains("bearer_token_env"),
        "{why}"
    );
    assert!(
        !why.contains("rmcp::") && !why.contains("Transport ["),
        "{why}"
    );
    let tries = std::fs::read_to_string(&journal).unwrap_or_default();
    // One initialize; the rest were the OAuth metadata lookups that found none.
    assert_eq!(
        tries.matches("answered 401 to POST /mcp").count(),
        1,
        "{tries}"
    );
    sb.ok(&["stop", "p"]);
}

/// The health ping runs every 15 s, so this takes that long: a heavy scenario.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http_server_without_a_stream_is_found_dead_by_the_health_ping() {
    if !heavy_scenario("an idle HTTP server found dead by its health ping") {
        return;
    }
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--no-get-stream"]);
    config_with_http_server(&sb, &server.url);
    let script = sb.script("s.jsonl", &[json!({"text": "Here."})]);
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    assert_eq!(mcp_ls_json(&sb, "p")[0]["state"], "ready");
    server.kill();
    let (level, message) = wait_for(
        &mut events,
        &mut seen,
        alert_containing("MCP server web stopped"),
    )
    .await;
    assert_eq!(level, AlertLevel::Warn);
    assert!(message.contains("could not connect"), "{message}");
    assert_eq!(mcp_ls_json(&sb, "p")[0]["state"], "restarting");
    sb.ok(&["stop", "p"]);
}
