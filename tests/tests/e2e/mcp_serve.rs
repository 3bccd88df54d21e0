//! `seedpod mcp serve NAME`: another pod, configured with it as a stdio MCP server, sends the
//! first pod a message and gets its answer; `answer_approval` refuses until the person's own
//! config turns it on (a project's file cannot), and then answers once; the tools are listed
//! with their descriptions. The client in the approval test speaks MCP's JSON-RPC lines
//! itself over the real server's stdio.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;

use seedpod_e2e::{
    EVENT_TIMEOUT, TestHome, is_approval_request, is_run_end, seedpod_bin, wait_for,
};
use seedpod_protocol::{ClientMode, EntryKind, ModelItem};
use serde_json::{Value, json};

use crate::mcp::toml_str;

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": arguments.to_string()}]})
}

/// `(content, is_error)` of every tool result in `entries`.
fn results(entries: &[seedpod_protocol::Entry]) -> Vec<(String, bool)> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_pod_sends_through_mcp_serve_and_the_first_pod_answers() {
    let sb = TestHome::new();
    let first = sb.script("first.jsonl", &[json!({"text": "first got it"})]);
    // Started before the config below exists, so it does not serve itself to itself.
    sb.start_scripted("first", &first);
    sb.user_config(&format!(
        "[mcp.servers.first]\ncommand = {}\nargs = [\"mcp\", \"serve\", \"first\"]\n\
         env = {{ SEEDPOD_HOME = {} }}\n[approvals]\n\"mcp__first__*\" = \"allow\"\n",
        toml_str(&seedpod_bin().display().to_string()),
        toml_str(&sb.path().display().to_string()),
    ));
    let second = sb.script(
        "second.jsonl",
        &[
            call(
                "mcp__first__send_message",
                json!({"text": "hello from second"}),
            ),
            call(
                "mcp__first__answer_approval",
                json!({"call_id": "call_1_0", "decision": "approve"}),
            ),
            json!({"text": "relayed"}),
        ],
    );
    sb.start_scripted("second", &second);
    assert_eq!(sb.ok(&["send", "second", "relay it"]).trim(), "relayed");

    let first_history = sb.history("first").await;
    assert!(
        first_history.iter().any(|e| matches!(
            &e.kind,
            EntryKind::UserInput { text, .. } if text == "hello from second"
        )),
        "the first pod received the message"
    );
    assert!(first_history.iter().any(|e| matches!(
        &e.kind,
        EntryKind::AssistantItem { item: ModelItem::AssistantText { text } } if text == "first got it"
    )));
    let results = results(&sb.history("second").await);
    assert_eq!(results.len(), 2, "{results:?}");
    let (answer, failed) = &results[0];
    assert!(!failed && answer.contains("first got it"), "{answer}");
    assert!(answer.contains("[run completed]"), "{answer}");
    let (refusal, failed) = &results[1];
    assert!(*failed, "{refusal}");
    assert!(
        refusal.contains("[mcp_serve] answer_approvals = true"),
        "{refusal}"
    );
}

/// An MCP client over a `seedpod mcp serve` process's stdio.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Client {
    fn start(sb: &TestHome, pod: &str) -> Client {
        let mut child = Command::new(seedpod_bin())
            .args(["mcp", "serve", pod])
            .env("SEEDPOD_HOME", sb.path())
            .env_remove("SEEDPOD_LOG")
            .current_dir(sb.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mcp serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "e2e", "version": "1"}
            }),
        );
        assert_eq!(init["serverInfo"]["name"], "seedpod", "{init}");
        client.write(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn write(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// Send a request and return its `result` (panics on an error answer).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(EVENT_TIMEOUT)
                .expect("the server answers");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    /// Call `tool`; returns its text and whether it is an error result.
    fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (text, result["isError"] == true)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_approval_refuses_until_the_persons_own_config_allows_it() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            call("shell", json!({"command": "echo ran > approved.txt"})),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("first", &script);
    let mut events = sb.connect("first", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "first", "make a file", "--no-wait"]);
    let request = wait_for(&mut events, &mut seen, is_approval_request).await;
    let call_id = request.call_id.to_string();

    let mut client = Client::start(&sb, "first");
    let listed = client.request("tools/list", json!({}));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            assert!(
                tool["description"].as_str().is_some_and(|d| d.len() > 40),
                "{tool}"
            );
            tool["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        names,
        [
            "send_message",
            "read_history",
            "pod_status",
            "list_pending_approvals",
            "answer_approval"
        ]
    );
    let (pending, _) = client.call("list_pending_approvals", json!({}));
    let pending: Value = serde_json::from_str(&pending).unwrap();
    assert_eq!(pending[0]["call_id"], call_id.as_str());
    assert!(pending[0]["summary"].as_str().unwrap().contains("echo ran"));
    let (status, _) = client.call("pod_status", json!({}));
    let status: Value = serde_json::from_str(&status).unwrap();
    assert!(
        status["waiting_for_approval"]
            .as_str()
            .is_some_and(|s| s.contains("echo ran")),
        "{status}"
    );
    let approve = json!({"call_id": call_id, "decision": "approve"});
    let (refused, is_error) = client.call("answer_approval", approve.clone());
    assert!(
        is_error && refused.contains("answer_approvals"),
        "{refused}"
    );
    drop(client);

    // A project's file cannot turn it on: it is the project's, not the person's.
    std::fs::create_dir_all(sb.path().join(".seedpod")).unwrap();
    std::fs::write(
        sb.path().join(".seedpod/config.toml"),
        "[mcp_serve]\nanswer_approvals = true\n",
    )
    .unwrap();
    let mut client = Client::start(&sb, "first");
    let (refused, is_error) = client.call("answer_approval", approve.clone());
    assert!(is_error, "{refused}");
    drop(client);
    assert!(!sb.path().join("approved.txt").exists(), "nothing ran");

    // The person's own config does.
    sb.user_config("[mcp_serve]\nanswer_approvals = true\n");
    let mut client = Client::start(&sb, "first");
    let (odd, is_error) = client.call(
        "answer_approval",
        json!({"call_id": call_id, "decision": "always"}),
    );
    assert!(is_error, "no standing approvals through MCP: {odd}");
    let (answer, is_error) = client.call("answer_approval", approve);
    assert!(!is_error, "{answer}");
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(
        sb.path().join("approved.txt").exists(),
        "the approved call ran"
    );
    let (history, _) = client.call("read_history", json!({"limit": 6}));
    assert!(history.contains("done"), "{history}");
    assert_eq!(history.lines().count(), 6, "{history}");
    assert!(
        !history.contains("make a file"),
        "only the latest entries: {history}"
    );
}
