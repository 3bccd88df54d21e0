//! Nothing the sandbox runs can speak for the person (DESIGN invariant 6). A scripted model in
//! `shell = "sandboxed"` mode — its confined commands run unasked — tries every way a real one
//! could to answer its own approval: a socket client for its own pod's socket, the same for
//! another pod's, and the `seedpod` CLI itself (`approve`, `send`, and `notify`, which the front
//! binary would run on its own fast path). None reaches a pod, the
//! unconfined call that follows still waits for a person, nothing reaches the other pod, and
//! the person is alerted to the attempt.

use seedpod_e2e::{TestHome, is_approval_request, seedpod_bin, tool_results, wait_for};
use seedpod_protocol::{ClientMode, EntryKind, ServerMsg};
use serde_json::{Value, json};

fn shell(arguments: Value) -> Value {
    json!({"tool_calls": [{"name": "shell", "arguments": arguments.to_string()}]})
}

/// A 5-line socket client, as a model would write it: connect, say hello, approve.
fn client(socket: &std::path::Path) -> String {
    format!(
        r#"perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n"; connect($s, pack_sockaddr_un($ARGV[0])) or die "connect: $!\n"; syswrite($s, qq({{"type":"hello","protocol":1,"client":"x","mode":"control"}}\n{{"type":"request","id":1,"method":"approve","params":{{"answer":"approve"}}}}\n)); print "connected\n"' '{}'"#,
        socket.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_cannot_answer_for_the_person() {
    let sb = TestHome::new();
    let bin = seedpod_bin();
    let bin_dir = bin.parent().expect("the binary's directory");
    sb.user_config(&format!(
        "[approvals]\nshell = \"sandboxed\"\n\n[scope]\nread = [\"{}\"]\n",
        bin_dir.display()
    ));
    let outside = tempfile::tempdir().expect("outside dir");
    let escaped = outside.path().join("UNCONFINED_RAN");
    let other_script = sb.script("other.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("other", &other_script);
    let home = sb.path().display().to_string();
    let cli = |args: &str| format!("SEEDPOD_HOME={home} {} {args}", bin.display());
    let script = sb.script(
        "s.jsonl",
        &[
            shell(json!({"command": client(&sb.home.socket_path(&"p".parse().expect("name")))})),
            shell(
                json!({"command": client(&sb.home.socket_path(&"other".parse().expect("name")))}),
            ),
            shell(json!({"command": format!(
                "{}; {}; {}",
                cli("approve p"),
                cli("send other 'hello from the model'"),
                cli("notify other 'a note from the model'")
            )})),
            shell(json!({
                "command": format!("touch '{}'", escaped.display()),
                "sandbox": false
            })),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "go", "--no-wait"]);

    // The unconfined call asks, and nobody has answered it.
    let request = wait_for(&mut events, &mut seen, is_approval_request).await;
    assert!(
        request.arguments.contains("\"sandbox\":false"),
        "{request:?}"
    );
    let history = sb.history("p").await;
    assert!(
        !history
            .iter()
            .any(|e| matches!(e.kind, EntryKind::ApprovalAnswer { .. })),
        "an approval was answered by the model's command"
    );
    assert!(
        !escaped.exists(),
        "the unconfined call ran without a person"
    );

    let results = tool_results(&history);
    assert_eq!(results.len(), 3, "{results:#?}");
    for result in &results[..2] {
        assert!(
            !result.contains("connected") && result.contains("socket: Permission denied"),
            "{result}"
        );
    }
    assert_eq!(
        results[2].matches(seedpod_tools::CLI_REFUSAL).count(),
        3,
        "each of the three commands says where it is: {}",
        results[2]
    );
    for result in &results {
        assert!(result.contains(seedpod_tools::REACH_NOTE), "{result}");
    }

    // The person heard about it.
    let alerts: Vec<String> = seen
        .iter()
        .filter_map(|msg| match msg {
            ServerMsg::Alert { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert!(
        alerts
            .iter()
            .any(|a| a.starts_with(seedpod_tools::REACH_NOTE)),
        "{alerts:#?}"
    );

    // Nothing reached the other pod.
    let other = sb.history("other").await;
    assert!(
        !other.iter().any(|e| matches!(
            e.kind,
            EntryKind::UserInput { .. }
                | EntryKind::RunStart { .. }
                | EntryKind::SystemItem {
                    item: seedpod_protocol::SystemItem::Notification { .. },
                    ..
                }
        )),
        "the other pod got input or a notification from the model: {other:#?}"
    );
}

/// The provider key the pod was started with never reaches a command: not in its environment,
/// and not readable from the pod's `/proc` entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_key_is_not_in_a_commands_environment() {
    const KEY: &str = "sk-test-7f3a9c-never-show-me";
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"sandboxed\"\n");
    let script = sb.script(
        "s.jsonl",
        &[
            shell(json!({"command": "env; cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; echo end"})),
            shell(json!({"command": "env; echo end", "sandbox": false})),
            json!({"text": "done"}),
        ],
    );
    let out = sb
        .cmd()
        .env("OPENAI_API_KEY", KEY)
        .env("GITHUB_TOKEN", KEY)
        .args(["start", "p", "--provider", "scripted", "--script"])
        .arg(&script)
        .output()
        .expect("start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "look", "--no-wait"]);
    let request = wait_for(&mut events, &mut seen, is_approval_request).await;
    assert!(
        request.summary.starts_with("shell (leaves the sandbox):"),
        "{}",
        request.summary
    );
    let mut control = sb.connect("p", ClientMode::Control).await;
    control
        .call(seedpod_protocol::Method::Approve {
            call_id: Some(request.call_id),
            answer: seedpod_protocol::ApprovalAnswer::Approve,
            reason: None,
        })
        .await
        .expect("approved");
    wait_for(&mut events, &mut seen, seedpod_e2e::is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 2, "{results:#?}");
    for result in &results {
        assert!(result.contains("end"), "{result}");
        assert!(
            result.contains("PATH="),
            "the command had an environment: {result}"
        );
        assert!(!result.contains(KEY), "the key reached a command: {result}");
    }
}
