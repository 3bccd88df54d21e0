//! MCP servers' tools in a pod, against a real MCP server built on the official SDK
//! (`src/bin/mcp-test-server.rs`) over stdio and Streamable HTTP. The tools are offered in the
//! segment (`context`), a call asks by default and runs under `[approvals] "mcp__t__*"`, its
//! result is committed and shown in the TUI, replay is exact after a restart; a server killed
//! mid-call gives an error result and an alert and is started again; a pause cancels the call
//! at the server; a server that cannot start leaves the pod running and `mcp ls` says why.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use seedpod_e2e::pty::{Tui, keys};
use seedpod_e2e::{TestHome, is_run_end, kill, wait_for};
use seedpod_protocol::{AlertLevel, ClientMode, EntryKind, ServerMsg};
use serde_json::{Value, json};

pub(crate) const SERVER: &str = env!("CARGO_BIN_EXE_mcp-test-server");

pub(crate) fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": arguments.to_string()}]})
}

/// A user config with server `t` (stdio) journaling to `journal`, plus `extra`.
fn config_with_stdio_server(sb: &TestHome, journal: &Path, extra: &str) {
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_JOURNAL = {} }}\n{extra}",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
}

pub(crate) fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Wait until the server's journal has a line equal to `line` (the server is another process
/// with no channel to the test but this file).
pub(crate) fn wait_for_journal(journal: &Path, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(journal).unwrap_or_default();
        if text.lines().any(|l| l == line) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the MCP server never wrote {line:?}; its journal:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub(crate) fn tool_results(entries: &[seedpod_protocol::Entry]) -> Vec<(String, bool)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ToolResult {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

pub(crate) fn approval_tool(msg: &ServerMsg) -> Option<String> {
    match msg {
        ServerMsg::Committed { entry, .. } => match &entry.kind {
            EntryKind::ApprovalRequest(request) => Some(request.tool.clone()),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn alert_containing(
    needle: &'static str,
) -> impl FnMut(&ServerMsg) -> Option<(AlertLevel, String)> {
    move |msg| match msg {
        ServerMsg::Alert { level, message, .. } if message.contains(needle) => {
            Some((*level, message.clone()))
        }
        _ => None,
    }
}

pub(crate) fn mcp_ls_json(sb: &TestHome, pod: &str) -> Value {
    serde_json::from_str(&sb.ok(&["mcp", "ls", pod, "--json"])).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_servers_tools_ask_by_default_run_when_allowed_show_in_the_tui_and_replay() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config_with_stdio_server(&sb, &journal, "");
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__t__echo", json!({"text": "hello from the model"})),
            json!({"text": "It said hello."}),
            call("mcp__t__count", json!({})),
            json!({"text": "Counted."}),
        ],
    );
    sb.start_scripted("p", &script);

    // The tools are in the segment, with the server's description and schema.
    let context: Value = serde_json::from_str(&sb.context("p").await).unwrap();
    let names: Vec<&str> = context["tools"]
        .as_array()
        .expect("tools in the request")
        .iter()
        .filter_map(|t| t["name"].as_str().or(t["function"]["name"].as_str()))
        .collect();
    for tool in ["mcp__t__echo", "mcp__t__count", "mcp__t__slow"] {
        assert!(names.contains(&tool), "{tool} not offered: {names:?}");
    }
    // The description goes once, in the tool's schema; the system prompt only names the tool.
    assert_eq!(
        context.to_string().matches("Say the text back.").count(),
        1,
        "{context}"
    );
    assert!(context.to_string().contains("- t: mcp__t__"), "{context}");

    // Ask by default: nothing reaches the server before a person says yes.
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "say hello", "--no-wait"]);
    let tool = wait_for(&mut events, &mut seen, approval_tool).await;
    assert_eq!(tool, "mcp__t__echo");
    let before = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!before.contains("called echo"), "{before}");
    sb.ok(&["approve", "p"]);
    wait_for(&mut events, &mut seen, is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results, [("echo: hello from the model".to_string(), false)]);
    let listing = sb.ok(&["mcp", "ls", "p"]);
    assert!(
        listing.contains("t (stdio): ready") && listing.contains("mcp__t__echo (ask) read-only"),
        "{listing}"
    );

    // The TUI shows the call and its result.
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("echo: hello from the model");
    tui.wait_for("mcp__t__echo");
    // `/mcp` lists the servers in a popup.
    tui.send("/mcp");
    tui.send(keys::ENTER);
    tui.wait_for("t (stdio): ready");
    tui.wait_for("mcp__t__count (ask)");
    // Any other key closes it, and is not typed.
    tui.send("q");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    // Replay is exact: the next request is byte for byte the same after a restart, with the
    // server started again.
    let next_before = sb.context("p").await;
    drop(events);
    config_with_stdio_server(&sb, &journal, "[approvals]\n\"mcp__t__*\" = \"allow\"\n");
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, next_before);

    // `mcp__t__*` = allow: no approval this time.
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "count", "--no-wait"]);
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(
        seen.iter().all(|m| approval_tool(m).is_none()),
        "an allowed MCP tool asked"
    );
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.last(), Some(&("count 1".to_string(), false)));
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_gives_an_error_result_and_an_alert_and_comes_back() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config_with_stdio_server(&sb, &journal, "[approvals]\n\"mcp__t__*\" = \"allow\"\n");
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__t__slow", json!({})),
            json!({"text": "The server died."}),
            call("mcp__t__count", json!({})),
            json!({"text": "It is back."}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "wait a while", "--no-wait"]);
    wait_for_journal(&journal, "called slow");
    let first_pid = mcp_ls_json(&sb, "p")[0]["pid"].as_u64().expect("a pid") as u32;
    kill(first_pid, libc::SIGKILL);

    let (level, message) = wait_for(
        &mut events,
        &mut seen,
        alert_containing("MCP server t stopped"),
    )
    .await;
    assert_eq!(level, AlertLevel::Warn);
    assert!(message.contains("signal 9"), "{message}");
    // The call's end and the alert race: look back first.
    if !seen.iter().any(|m| is_run_end(m).is_some()) {
        wait_for(&mut events, &mut seen, is_run_end).await;
    }
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "the interrupted call is an error result");
    assert!(
        results[0].0.contains("stopped during the call"),
        "{}",
        results[0].0
    );

    // The restart may beat the run's end (its backoff is a second): look back first.
    let mut back = alert_containing("is running again");
    if !seen.iter().any(|m| back(m).is_some()) {
        wait_for(&mut events, &mut seen, back).await;
    }
    let status = mcp_ls_json(&sb, "p");
    assert_eq!(status[0]["state"], "ready");
    assert_eq!(status[0]["restarts"], 1);
    assert_ne!(status[0]["pid"].as_u64(), Some(u64::from(first_pid)));

    sb.ok(&["send", "p", "count", "--no-wait"]);
    wait_for(&mut events, &mut seen, is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert_eq!(
        results.last(),
        Some(&("count 1".to_string(), false)),
        "a fresh server process answered"
    );
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_a_call_cancels_it_at_the_server_and_stopping_the_pod_stops_the_server() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config_with_stdio_server(&sb, &journal, "[approvals]\n\"mcp__t__*\" = \"allow\"\n");
    let script = sb.script("s.jsonl", &[call("mcp__t__slow", json!({}))]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "wait", "--no-wait"]);
    wait_for_journal(&journal, "called slow");
    let pid = mcp_ls_json(&sb, "p")[0]["pid"].as_u64().expect("a pid") as u32;
    sb.ok(&["pause", "p"]);
    wait_for_journal(&journal, "cancelled slow");

    sb.ok(&["stop", "p"]);
    seedpod_e2e::wait_exit(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_leaves_the_pod_running_and_mcp_ls_says_why() {
    let sb = TestHome::new();
    let missing = sb.path().join("no-such-mcp-server");
    sb.user_config(&format!(
        "[mcp.servers.gone]\ncommand = {}\n[mcp.servers.off]\ncommand = \"x\"\nenabled = false\n",
        toml_str(&missing.display().to_string())
    ));
    let script = sb.script("s.jsonl", &[json!({"text": "Still here."})]);
    sb.start_scripted("p", &script);
    let out = sb.ok(&["send", "p", "hello"]);
    assert!(out.contains("Still here."), "{out}");
    let listing = sb.ok(&["mcp", "ls", "p"]);
    assert!(listing.contains("gone (stdio): failed"), "{listing}");
    assert!(listing.contains("cannot start"), "{listing}");
    assert!(listing.contains("No such file"), "{listing}");
    assert!(
        listing.contains("off (stdio): disabled") && listing.contains("enabled = false"),
        "{listing}"
    );
    // A client that attaches later is still told.
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let (_, told) = wait_for(
        &mut events,
        &mut seen,
        alert_containing("MCP server gone failed"),
    )
    .await;
    assert!(told.contains("cannot start"), "{told}");
    let one = sb.ok(&["mcp", "ls", "p", "--server", "gone"]);
    assert!(!one.contains("off (stdio)"), "{one}");
    let unknown = sb.run(&["mcp", "ls", "p", "--server", "nope"]);
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("servers: gone, off"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    sb.ok(&["stop", "p"]);
}

/// The server on Streamable HTTP, as a process of the test's own; it prints its URL first.
pub(crate) struct HttpServer {
    child: std::process::Child,
    pub(crate) url: String,
}

impl HttpServer {
    fn start(journal: &Path, key: &str) -> HttpServer {
        HttpServer::start_with(journal, key, &[])
    }

    /// With more of the server's flags (`--port`, `--lost-session`, `--no-get-stream`).
    pub(crate) fn start_with(journal: &Path, key: &str, flags: &[&str]) -> HttpServer {
        HttpServer::start_with_env(journal, key, flags, &[])
    }

    /// With flags and more of the server's environment (`MCP_TEST_RESOURCES`, …).
    pub(crate) fn start_with_env(
        journal: &Path,
        key: &str,
        flags: &[&str],
        env: &[(&str, &str)],
    ) -> HttpServer {
        let mut child = std::process::Command::new(SERVER)
            .arg("--http")
            .args(flags)
            .envs(env.iter().copied())
            .env("MCP_TEST_JOURNAL", journal)
            .env("MCP_TEST_KEY", key)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the MCP test server");
        let stdout = child.stdout.take().expect("its stdout");
        let mut url = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut url)
            .expect("its URL");
        HttpServer {
            child,
            url: url.trim().to_owned(),
        }
    }
}

impl HttpServer {
    /// Its port, to start it again at the same address.
    pub(crate) fn port(&self) -> String {
        self.url
            .trim_end_matches("/mcp")
            .rsplit(':')
            .next()
            .expect("a port in the URL")
            .to_owned()
    }

    /// Kill it (SIGKILL, as a crash) and wait until it is gone.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files_under(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_gets_its_header_from_the_environment_and_answers() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let secret = "k3y-that-must-never-be-written";
    let server = HttpServer::start(&journal, secret);
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\nheaders = {{ \"X-Test-Key\" = \"WEB_KEY\" }}\n\
         [approvals]\n\"mcp__web__*\" = \"allow\"\n",
        toml_str(&server.url)
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__web__echo", json!({"text": "over http"})),
            call("mcp__web__picture", json!({})),
            call("mcp__web__fail", json!({})),
            // A model that sends arguments that are not an object, and one that invents a tool.
            call("mcp__web__echo", json!(["not", "an", "object"])),
            call("mcp__web__nope", json!({})),
            json!({"text": "Done."}),
        ],
    );
    let out = sb
        .cmd()
        .env("WEB_KEY", secret)
        .args([
            "start",
            "p",
            "--provider",
            "scripted",
            "--script",
            script.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = sb.ok(&["send", "p", "use the web server"]);
    assert!(answer.contains("Done."), "{answer}");
    let history = sb.history("p").await;
    let results = tool_results(&history);
    assert_eq!(results[0], ("echo: over http".to_string(), false));
    assert_eq!(
        results[1],
        ("a red dot\n[image: image/png, 8 bytes]".to_string(), false)
    );
    assert_eq!(results[2], ("it broke".to_string(), true));
    assert!(
        results[3].1 && results[3].0.contains("must be one JSON object"),
        "{results:?}"
    );
    assert!(
        results[4].1 && results[4].0.contains("mcp__web__nope"),
        "{results:?}"
    );
    let calls = std::fs::read_to_string(&journal).unwrap();
    assert_eq!(calls.matches("called echo").count(), 1, "{calls}");
    let attachments = history.iter().find_map(|e| match &e.kind {
        EntryKind::ToolResult { meta, .. } if !meta.attachments.is_empty() => {
            Some(meta.attachments.clone())
        }
        _ => None,
    });
    assert_eq!(
        attachments,
        Some(vec![seedpod_protocol::ToolAttachment::Image {
            mime_type: "image/png".into(),
            bytes: 8,
            data: Some("iVBORw0KGgo=".into()),
            left_out: None,
        }])
    );
    let seen = std::fs::read_to_string(&journal).unwrap();
    assert!(seen.contains("key ok"), "{seen}");
    assert!(!seen.contains("key missing"), "{seen}");
    sb.ok(&["stop", "p"]);
    // The header's value lives only in the environment: no file seedpod wrote holds it.
    for file in files_under(sb.path()) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the secret",
            file.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_starts_its_parents_servers_unless_told_otherwise() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config_with_stdio_server(&sb, &journal, "");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "ok"}),
            json!({"text": "ok"}),
            json!({"text": "ok"}),
        ],
    );
    sb.start_scripted("boss", &script);
    sb.ok(&["spawn", "boss", "kid", "look around"]);
    let kid = mcp_ls_json(&sb, "kid");
    assert_eq!(kid[0]["state"], "ready", "{kid}");

    sb.ok(&["spawn", "boss", "bare", "nothing", "--mcp-servers", ""]);
    let bare = mcp_ls_json(&sb, "bare");
    assert_eq!(bare[0]["state"], "disabled", "{bare}");
    assert!(
        bare[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("not passed on"),
        "{bare}"
    );
    // Kept across a restart: it is in the child's pod.json.
    sb.ok(&["restart", "bare"]);
    assert_eq!(mcp_ls_json(&sb, "bare")[0]["state"], "disabled");

    let refused = sb.run(&["spawn", "boss", "odd", "x", "--mcp-servers", "t,nope"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("\"nope\"") && err.contains("servers (t)"),
        "{err}"
    );
    sb.ok(&["stop", "boss", "--with-children"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_description_written_to_steer_the_model_raises_an_alert_every_client_sees() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_EVIL = \"1\" }}\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    for _ in 0..2 {
        let mut events = sb.connect("p", ClientMode::Attach).await;
        let mut seen = Vec::new();
        let (level, message) = wait_for(
            &mut events,
            &mut seen,
            alert_containing("mcp__t__helper (server t) reads like instructions"),
        )
        .await;
        assert_eq!(level, AlertLevel::Warn);
        assert!(message.contains("ignore_instructions"), "{message}");
    }
    sb.ok(&["stop", "p"]);
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .expect("tools in the request")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Tool search (docs/agent-loop.md §Tool search): with 60 MCP tools the first request offers
/// the built-in tools and `tool_search` only; a search loads the tools it found, from the next
/// request on and after the up-front ones; a loaded tool still asks before it runs; and a
/// restart rebuilds exactly the request the pod would have sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_mcp_tools_wait_behind_tool_search_which_loads_them_and_replays_exactly() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_JOURNAL = {}, MCP_TEST_TOOLS = \"53\" }}\n",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            call("tool_search", json!({"query": "create an issue"})),
            call(
                "mcp__t__create_issue",
                json!({"repository": "o/r", "id": "7"}),
            ),
            json!({"text": "Created."}),
            json!({"text": "Still here."}),
        ],
    );
    sb.start_scripted("p", &script);
    assert_eq!(
        mcp_ls_json(&sb, "p")[0]["tools"].as_array().unwrap().len(),
        60
    );

    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "open an issue", "--no-wait"]);
    // The loaded tool asks, as every MCP tool does by default: loading widened nothing.
    let tool = wait_for(&mut events, &mut seen, approval_tool).await;
    assert_eq!(tool, "mcp__t__create_issue");
    sb.ok(&["approve", "p"]);
    wait_for(&mut events, &mut seen, is_run_end).await;

    let requests: Vec<Value> = sb
        .requests("p")
        .iter()
        .map(|r| serde_json::from_str(r).unwrap())
        .collect();
    assert_eq!(requests.len(), 3);
    let first = tool_names(&requests[0]);
    assert_eq!(first.len(), 16, "{first:?}");
    assert_eq!(first.last().map(String::as_str), Some("tool_search"));
    assert!(first.iter().all(|n| !n.starts_with("mcp__")), "{first:?}");
    let system = requests[0]["system"].as_str().unwrap();
    assert!(system.contains("60 more are not loaded"), "{system}");
    assert!(system.contains("mcp__t__create_issue"), "{system}");
    assert!(
        !system.contains("Create a issue by its id"),
        "descriptions wait for the search"
    );

    // From the next request on, the loaded tools follow the up-front ones: the prefix of the
    // tools array, and so the provider's cache of it, is unchanged.
    let second = tool_names(&requests[1]);
    assert_eq!(second[..16], first[..]);
    let loaded = &second[16..];
    assert!((1..=5).contains(&loaded.len()), "{loaded:?}");
    assert_eq!(loaded[0], "mcp__t__create_issue");
    assert_eq!(tool_names(&requests[2]), second);
    assert_eq!(requests[1]["system"], requests[0]["system"]);

    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].0.starts_with("Loaded ") && results[0].0.contains("mcp__t__create_issue: "),
        "{:?}",
        results[0]
    );
    assert_eq!(
        results[1],
        (
            r#"create_issue: {"id":"7","repository":"o/r"}"#.to_string(),
            false
        )
    );

    // Replay is exact: after a restart the next request is byte for byte what it was.
    let next_before = sb.context("p").await;
    drop(events);
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, next_before);
    sb.ok(&["send", "p", "are you there?"]);
    let after: Value = serde_json::from_str(&sb.requests("p")[3]).unwrap();
    assert_eq!(after["tools"], requests[2]["tools"]);
    assert_eq!(after["system"], requests[2]["system"]);
    sb.ok(&["stop", "p"]);
}
