//! An MCP call's progress (docs/protocol.md §Tool progress, docs/configuration.md §MCP
//! servers): the reports show on the call's cell in the TUI while it runs and are gone when it
//! ends, and none of them is written to the log; a call that reports progress forever ends at
//! its total limit (`tool_max_secs`) with an error the model can read; a server that floods
//! reports written to steer a terminal neither reaches the terminal raw, nor floods the
//! pod's clients, nor grows its logs.

use std::time::Instant;

use seedpod_e2e::pty::Tui;
use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{
    ClientMode, EntryKind, MAX_PROGRESS_MESSAGE_CHARS, ServerMsg, ToolProgress,
    printable::is_control,
};
use serde_json::json;

use crate::mcp::{SERVER, call, toml_str, tool_results, wait_for_journal};

/// A user config with server `t` (stdio) journaling to `journal`, its tools allowed; `extra`
/// goes into the server's table, `env` into its environment.
fn config(sb: &TestHome, journal: &std::path::Path, extra: &str, env: &str) {
    sb.user_config(&format!(
        "[logging]\nlevel = \"debug\"\n[mcp.servers.t]\ncommand = {}\n\
         env = {{ MCP_TEST_JOURNAL = {}{env} }}\n{extra}[approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
}

/// Every segment file of pod `name`, as one text.
fn segment_text(sb: &TestHome, name: &str) -> String {
    sb.segment_files(name)
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect()
}

fn progress_of(msg: &ServerMsg) -> Option<ToolProgress> {
    match msg {
        ServerMsg::ToolProgress { progress, .. } => Some(progress.clone()),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_progress_shows_on_its_cell_while_it_runs_and_is_gone_when_it_ends() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "", "");
    let counted = sb.gate("counted");
    let uncounted = sb.gate("uncounted");
    let script = sb.script(
        "s.jsonl",
        &[
            call(
                "mcp__t__progress",
                json!({"steps": 3, "interval_ms": 20, "until": counted.display().to_string()}),
            ),
            call(
                "mcp__t__progress",
                json!({
                    "steps": 2, "interval_ms": 20, "total": false,
                    "until": uncounted.display().to_string()
                }),
            ),
            json!({"text": "Indexed."}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    sb.ok(&["send", "p", "index", "--no-wait"]);
    // With a total: a full bar, the count and the message, under the running call.
    tui.wait_for("⋯ ████████████ 3/3 · step 3");
    assert!(tui.contains("mcp__t__progress"), "{}", tui.screen());
    sb.open_gate("counted");
    // Its result replaces it; the next call reports without a total: no bar.
    tui.wait_for("progressed 3");
    tui.wait_for("⋯ 2 · step 2");
    assert!(!tui.contains("3/3 · step 3"), "{}", tui.screen());
    sb.open_gate("uncounted");
    tui.wait_for("Indexed.");
    tui.wait_until("no progress line left", |screen| {
        !screen.contents().contains('⋯')
    });
    // Display state only: the log holds the results and none of the reports.
    let results = tool_results(&sb.history("p").await);
    assert_eq!(
        results,
        [
            ("progressed 3".to_string(), false),
            ("progressed 2".to_string(), false)
        ]
    );
    let log = segment_text(&sb, "p");
    assert!(
        !log.contains("step 3") && !log.contains("tool_progress"),
        "a report reached the log:\n{log}"
    );
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_reports_progress_forever_ends_at_its_total_limit() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    // Reports every 200 ms keep the one-second idle limit from ever passing.
    config(
        &sb,
        &journal,
        "tool_timeout_secs = 1\ntool_max_secs = 3\n",
        "",
    );
    let script = sb.script(
        "s.jsonl",
        &[
            call(
                "mcp__t__progress",
                json!({"steps": 1_000_000, "interval_ms": 200}),
            ),
            json!({"text": "It was stopped."}),
        ],
    );
    sb.start_scripted("p", &script);
    let answer = sb.ok(&["send", "p", "go on forever"]);
    assert!(answer.contains("It was stopped."), "{answer}");
    let entries = sb.history("p").await;
    let (text, is_error, timed_out) = entries
        .iter()
        .find_map(|e| match &e.kind {
            EntryKind::ToolResult {
                content,
                is_error,
                meta,
                ..
            } => Some((content.clone(), *is_error, meta.timed_out)),
            _ => None,
        })
        .expect("a tool result");
    assert!(is_error && timed_out, "{text}");
    assert!(
        text.contains("mcp__t__progress was still running after 3s")
            && text.contains("tool_max_secs")
            && text.contains("kept reporting progress"),
        "{text}"
    );
    // It outlived its idle limit on its reports, and the server heard it was cancelled.
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("progress 6/1000000"), "{seen}");
    wait_for_journal(&journal, "cancelled progress");
    sb.ok(&["stop", "p"]);
}

/// Reports the server sends as fast as it can.
const FLOOD: u64 = 10_000;
/// What the pod's log may grow by meanwhile: a few lines' worth, not megabytes.
const LOG_GROWTH_LIMIT: u64 = 256 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_hostile_progress_reaches_neither_the_terminal_raw_nor_clients_nor_the_log() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "", ", MCP_TEST_HOSTILE = \"1\"");
    let gate = sb.gate("flooded");
    let script = sb.script(
        "s.jsonl",
        &[
            call(
                "mcp__t__progress_flood",
                json!({"n": FLOOD, "until": gate.display().to_string()}),
            ),
            json!({"text": "Survived."}),
        ],
    );
    sb.start_scripted("p", &script);
    let pod_log = sb.home.logs_dir().join("p.log");
    let log_before = std::fs::metadata(&pod_log).map(|m| m.len()).unwrap_or(0);
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let started = Instant::now();
    sb.ok(&["send", "p", "flood", "--no-wait"]);
    let last = format!("last of {FLOOD}");
    wait_for(&mut events, &mut seen, |msg| {
        progress_of(msg).filter(|p| p.message.as_deref() == Some(last.as_str()))
    })
    .await;
    let elapsed = started.elapsed();
    let reports: Vec<ToolProgress> = seen.iter().filter_map(progress_of).collect();
    // For a person reading a run (`--nocapture`): what the flood became.
    eprintln!(
        "{FLOOD} reports became {} frames in {elapsed:?}",
        reports.len()
    );
    // Ten a second per call at most, the latest winning: whatever the server sent.
    let most = elapsed.as_millis() / 100 + 2;
    assert!(
        (reports.len() as u128) <= most && (reports.len() as u64) < FLOOD / 10,
        "{} progress frames in {elapsed:?}",
        reports.len()
    );
    for report in &reports {
        let message = report.message.as_deref().unwrap_or_default();
        assert!(
            message.chars().count() <= MAX_PROGRESS_MESSAGE_CHARS
                && !message.chars().any(is_control)
                && !message.contains("pwned"),
            "{message:?}"
        );
    }
    // The terminal shows the words and was sent none of the sequences.
    tui.wait_for(&last);
    assert!(
        !tui.wrote(b"\x1b]0;pwned") && !tui.wrote(b"pwned\x07"),
        "an escape sequence of the server's reached the terminal"
    );
    sb.open_gate("flooded");
    wait_for(&mut events, &mut seen, is_run_end).await;
    tui.wait_for("flooded progress 10000");
    // No report in the segment log; the pod's own log grew by a few lines.
    let log = segment_text(&sb, "p");
    assert!(
        !log.contains("pwned") && !log.contains("noise"),
        "a report reached the segment log"
    );
    sb.ok(&["stop", "p"]);
    let text = std::fs::read_to_string(&pod_log).unwrap_or_default();
    let grown = text.len() as u64 - log_before.min(text.len() as u64);
    eprintln!("the pod's log grew by {grown} bytes during {FLOOD} reports");
    assert!(
        grown < LOG_GROWTH_LIMIT,
        "the pod's log grew by {grown} bytes"
    );
    assert!(
        !text.contains("pwned"),
        "a report's message reached the pod's log"
    );
}
