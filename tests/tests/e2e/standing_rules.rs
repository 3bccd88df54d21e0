//! A standing approval means what the person saw. After "always" on
//! `git status` in a real repository, the attacks it must not let through (a comment hiding a second line, `-c`
//! config, `GIT_CONFIG_*` and `PATH` assignments, `--output`, a list) are each asked about again
//! and, denied, leave no payload behind; a plain `git status --short` runs without asking.

use std::process::Command;

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{
    ApprovalAnswer, ApprovalDecision, ApprovalRequest, ClientMode, CommandRule, EntryKind, Method,
    ServerMsg,
};
use serde_json::json;

fn shell_step(command: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "shell", "arguments": json!({"command": command}).to_string()}]})
}

fn approval_request(msg: &ServerMsg) -> Option<ApprovalRequest> {
    match msg {
        ServerMsg::Committed { entry, .. } => match &entry.kind {
            EntryKind::ApprovalRequest(request) => Some(request.clone()),
            _ => None,
        },
        _ => None,
    }
}

const ATTACKS: &[&str] = &[
    "git status #\ntouch PWNED1",
    "git -c alias.x='!touch PWNED2' x",
    "git -c core.fsmonitor='touch PWNED3' status",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch PWNED4' git status",
    "PATH=./evil:$PATH git status",
    "git diff --output=PWNED6",
    "git status; touch PWNED7",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_always_on_git_status_every_attack_is_asked_about_again() {
    let sb = TestHome::new();
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(sb.path())
        .status()
        .expect("this test needs git installed (`git init` could not start)");
    assert!(init.success(), "git init failed in {}", sb.path().display());

    let mut steps = vec![shell_step("git status"), shell_step("git status --short")];
    steps.extend(ATTACKS.iter().map(|attack| shell_step(attack)));
    steps.push(json!({"text": "done"}));
    let script = sb.script("s.jsonl", &steps);
    // Seven denials in a row would stop the run (the loop brakes); this test wants every attack
    // asked about in one run.
    sb.user_config("[loop]\nfailures_in_a_row = 0\n");
    sb.start_scripted("p", &script);
    let mut pod = sb.drive("p").await;
    pod.run("look at the repo").await;

    let first = pod.wait_for(approval_request).await;
    assert_eq!(first.summary, "shell: git status");
    assert_eq!(
        first.always,
        Some(CommandRule::Prefix(vec!["git".into(), "status".into()])),
        "always offers program and subcommand"
    );
    pod.control
        .call(Method::Approve {
            call_id: Some(first.call_id.clone()),
            answer: ApprovalAnswer::ApproveAlways,
            reason: None,
        })
        .await
        .expect("approve always acknowledged");

    let mut asked = Vec::new();
    for _ in ATTACKS {
        let request = pod.wait_for(approval_request).await;
        assert!(
            request.always.is_none(),
            "no standing rule may be offered for {:?}",
            request.arguments
        );
        asked.push(request.arguments.clone());
        pod.control
            .call(Method::Approve {
                call_id: Some(request.call_id),
                answer: ApprovalAnswer::Deny,
                reason: Some("not covered".into()),
            })
            .await
            .expect("denial acknowledged");
    }
    pod.wait_for(is_run_end).await;

    for (attack, arguments) in ATTACKS.iter().zip(&asked) {
        let command: serde_json::Value = serde_json::from_str(arguments).expect("arguments");
        assert_eq!(command["command"], *attack, "asked in order");
    }
    for n in 1..=7 {
        let payload = sb.path().join(format!("PWNED{n}"));
        assert!(!payload.exists(), "{} exists", payload.display());
    }

    // The log: one approve_always for `git status`, the covered call ran without a request,
    // and every attack has its request and its denial.
    let history = sb.history("p").await;
    let requests: Vec<&ApprovalRequest> = history
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ApprovalRequest(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(requests.len(), 1 + ATTACKS.len());
    assert!(
        !requests.iter().any(|r| r.summary.contains("--short")),
        "the covered call was asked about"
    );
    // The covered call says which rule let it through, and only it does.
    let standing: Vec<String> = history
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ApprovalStanding { standing, .. } => Some(standing.display()),
            _ => None,
        })
        .collect();
    assert_eq!(standing, vec!["shell: git status …".to_string()]);
    let denials = history
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EntryKind::ApprovalAnswer {
                    decision: ApprovalDecision::Deny { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(denials, ATTACKS.len());
    let short_ran = history.iter().any(|e| {
        matches!(&e.kind, EntryKind::ToolResult { content, is_error: false, .. }
            if content.contains("?? s.jsonl"))
    });
    assert!(
        short_ran,
        "git status --short ran and printed its short format"
    );
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `seedpod approvals`: lists what "always" made, revokes it (the log says so and the same call
/// asks again), refuses a bad number, and reads a stopped pod's rules from its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_lists_and_revokes_standing_rules() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            shell_step("cargo test -p x"),
            json!({"text": "tested"}),
            shell_step("cargo test --release"),
            json!({"text": "tested again"}),
            shell_step("cargo test"),
            json!({"text": "and again"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    assert!(
        sb.ok(&["approvals", "p"]).contains("no standing approvals"),
        "an empty list says how rules are made"
    );

    sb.ok(&["send", "p", "test", "--no-wait"]);
    wait_for(&mut events, &mut seen, approval_request).await;
    let answered = sb.ok(&["approve", "p", "--always"]);
    assert!(answered.contains("cargo test …"), "{answered}");
    wait_for(&mut events, &mut seen, is_run_end).await;

    // Covered: the second run asks nothing.
    sb.ok(&["send", "p", "again"]);
    let listed = sb.ok(&["approvals", "p"]);
    assert_eq!(listed.trim(), "1  shell: cargo test …");
    let json: serde_json::Value =
        serde_json::from_str(&sb.ok(&["approvals", "p", "--json"])).expect("json list");
    assert_eq!(json, json!([{"tool": "shell", "prefix": "cargo test"}]));

    let bad = sb.run(&["approvals", "p", "--revoke", "2"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("has 1 standing approval"),
        "{}",
        stderr(&bad)
    );

    let revoked = sb.ok(&["approvals", "p", "--revoke", "1"]);
    assert!(revoked.contains("revoked shell: cargo test …"), "{revoked}");
    assert!(sb.ok(&["approvals", "p"]).contains("no standing approvals"));
    let history = sb.history("p").await;
    assert!(history.iter().any(|e| matches!(
        &e.kind,
        EntryKind::ApprovalRevoked { standing } if standing.display() == "shell: cargo test …"
    )));

    // Revoked: the same kind of call asks again.
    sb.ok(&["send", "p", "once more", "--no-wait"]);
    let again = wait_for(&mut events, &mut seen, approval_request).await;
    assert_eq!(again.summary, "shell: cargo test");
    sb.ok(&["approve", "p", "--always"]);
    wait_for(&mut events, &mut seen, is_run_end).await;

    // Stopped: the list comes from the log; revoking needs the pod.
    sb.ok(&["stop", "p"]);
    assert_eq!(
        stdout(&sb.run(&["approvals", "p"])).trim(),
        "1  shell: cargo test …"
    );
    let refused = sb.run(&["approvals", "p", "--revoke-all"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("is stopped; start it"),
        "{}",
        stderr(&refused)
    );
}

/// `[approvals] write_file = "ask"`: the request carries what the file holds now, so the modal
/// shows the write as a diff; a new file carries nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asked_write_carries_the_current_content_for_the_diff() {
    let sb = TestHome::new();
    std::fs::create_dir_all(&sb.home.config).expect("config dir");
    std::fs::write(
        sb.home.config.join("config.toml"),
        "[approvals]\nwrite_file = \"ask\"\n",
    )
    .expect("config");
    std::fs::write(sb.path().join("notes.txt"), "one\nold\n").expect("file");
    let write = |path: &str| {
        json!({"tool_calls": [{"name": "write_file",
            "arguments": json!({"path": path, "content": "one\ntwo\n"}).to_string()}]})
    };
    let script = sb.script(
        "s.jsonl",
        &[
            write("notes.txt"),
            write("new.txt"),
            write("/etc/hostname"),
            json!({"text": "done"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "write", "--no-wait"]);
    let first = wait_for(&mut events, &mut seen, approval_request).await;
    assert_eq!(
        first.replaces,
        Some(seedpod_protocol::Replaces::Text {
            content: "one\nold\n".into()
        })
    );
    sb.ok(&["approve", "p"]);
    let second = wait_for(&mut events, &mut seen, approval_request).await;
    assert_eq!(second.replaces, None, "a new file has nothing to replace");
    sb.ok(&["approve", "p"]);
    // A path outside the scope: the pod does not read it for the diff (nor will the tool write).
    let third = wait_for(&mut events, &mut seen, approval_request).await;
    assert_eq!(third.replaces, None, "the pod read outside its scope");
    sb.ok(&["approve", "p", "--deny", "outside"]);
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert_eq!(
        std::fs::read_to_string(sb.path().join("notes.txt")).expect("written"),
        "one\ntwo\n"
    );
}
