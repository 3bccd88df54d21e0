//! MCP servers that misbehave (docs/configuration.md §MCP servers): one that floods the pod
//! with notifications does not flood the pod's log; a process a server leaves behind in a
//! session of its own ends with the pod; an answer over the 16 MiB a message may be is cut,
//! not dropped, and the call ends with it.

use seedpod_e2e::TestHome;
use serde_json::json;

use crate::mcp::{SERVER, call, toml_str, tool_results};

/// How many notifications the server sends in one call: enough that logging each (as rmcp
/// does at `info`) would write megabytes. (100,000 passes too, in some 40 s of a debug build.)
const FLOOD: u64 = 10_000;
/// What the pod's log may grow by while they arrive: a few lines' worth, not megabytes.
const LOG_GROWTH_LIMIT: u64 = 256 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_notifications_does_not_flood_the_pods_log() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    // At debug, the level the notifications are logged at.
    sb.user_config(&format!(
        "[logging]\nlevel = \"debug\"\n[mcp.servers.t]\ncommand = {}\n\
         env = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_HOSTILE = \"1\" }}\n[approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__t__flood", json!({"n": FLOOD})),
            json!({"text": "Quiet."}),
        ],
    );
    sb.start_scripted("p", &script);
    let log = sb.home.logs_dir().join("p.log");
    let before = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let answer = sb.ok(&["send", "p", "flood"]);
    assert!(answer.contains("Quiet."), "{answer}");
    assert_eq!(
        tool_results(&sb.history("p").await),
        [(format!("flooded {FLOOD}"), false)]
    );
    sb.ok(&["stop", "p"]);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let grown = text.len() as u64 - before.min(text.len() as u64);
    // For a person reading a run (`--nocapture`): what the flood cost the log.
    eprintln!("the pod's log grew by {grown} bytes during {FLOOD} notifications");
    assert!(
        grown < LOG_GROWTH_LIMIT,
        "the pod's log grew by {grown} bytes while a server sent {FLOOD} notifications"
    );
    // Some were logged, at debug, and the rest counted rather than dropped in silence.
    assert!(
        text.contains("\"mcp_notification\""),
        "no notification logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_a_server_left_behind_under_setsid_ends_with_the_pod() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_HOSTILE = \"1\" }}\n\
         [approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    let script = sb.script(
        "s.jsonl",
        &[call("mcp__t__escape", json!({})), json!({"text": "Left."})],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "escape"]);
    let results = tool_results(&sb.history("p").await);
    let pid: u32 = results[0]
        .0
        .strip_prefix("escaped ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {results:?}"));
    // It is alive, out of the server's process group and session.
    // SAFETY: getpgid and getsid only read another process's ids.
    let (group, session) = unsafe { (libc::getpgid(pid as i32), libc::getsid(pid as i32)) };
    assert!(group > 0 && group == pid as i32, "group {group} of {pid}");
    assert!(session == pid as i32, "session {session} of {pid}");
    sb.ok(&["stop", "p"]);
    seedpod_e2e::wait_exit(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_sixteen_mib_is_cut_and_the_call_ends_with_it() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[mcp]\nmax_output = 4096\n[mcp.servers.t]\ncommand = {}\n\
         env = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_HOSTILE = \"1\" }}\n[approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__t__big", json!({"bytes": 17 * 1024 * 1024})),
            json!({"text": "Big."}),
        ],
    );
    sb.start_scripted("p", &script);
    // `send` waits for the run's end: the call did not wait for its timeout (300 s).
    let answer = sb.ok(&["send", "p", "big"]);
    assert!(answer.contains("Big."), "{answer}");
    let results = tool_results(&sb.history("p").await);
    let (text, is_error) = &results[0];
    assert!(!is_error, "{text}");
    assert!(text.starts_with("BEGIN zzz"), "{}", &text[..40]);
    assert!(text.ends_with("only its start is shown]"), "{text}");
    // `max_output` holds, and the note names the tool.
    assert!(text.len() < 4096 + 400, "{}", text.len());
    assert!(text.contains("ask mcp__t__big for less"), "{text}");
    sb.ok(&["stop", "p"]);
}
