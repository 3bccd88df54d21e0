//! The approval round trip end to end with the real binary and the real
//! `shell` tool: a client approves, another run is denied, `seedpod approve` answers a pod
//! nobody is attached to, and `kill -9` while waiting neither loses nor auto-approves the request.

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{
    ApprovalAnswer, ApprovalRequest, ClientMode, EntryKind, Method, PodState, Segment, ServerMsg,
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

async fn run(control: &mut seedpod_client::Connection, text: &str) {
    control
        .call(Method::Run {
            segments: vec![Segment::text(text)],
        })
        .await
        .expect("run accepted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_approves_one_call_and_denies_another() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            shell_step("echo ran > approved.txt"),
            json!({"text": "done"}),
            shell_step("echo ran > denied.txt"),
            json!({"text": "understood"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let mut control = sb.connect("p", ClientMode::Control).await;

    run(&mut control, "make a file").await;
    let request = wait_for(&mut events, &mut seen, approval_request).await;
    assert_eq!(request.tool, "shell");
    assert!(request.summary.contains("echo ran"), "{}", request.summary);
    assert!(
        !sb.path().join("approved.txt").exists(),
        "ran before approval"
    );
    control
        .call(Method::Approve {
            call_id: Some(request.call_id.clone()),
            answer: ApprovalAnswer::Approve,
            reason: None,
        })
        .await
        .expect("approval acknowledged");
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(
        sb.path().join("approved.txt").exists(),
        "the approved command ran"
    );

    run(&mut control, "make another").await;
    let request = wait_for(&mut events, &mut seen, approval_request).await;
    control
        .call(Method::Approve {
            call_id: None,
            answer: ApprovalAnswer::Deny,
            reason: Some("not in this directory".into()),
        })
        .await
        .expect("denial acknowledged");
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(
        !sb.path().join("denied.txt").exists(),
        "a denied command ran"
    );
    let requests = sb.requests("p");
    let last = requests.last().expect("the model was asked again");
    assert!(
        last.contains("not in this directory") && last.contains(request.call_id.as_str()),
        "the model reads the reason as the call's result: {last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_answers_later_and_a_kill_while_waiting_loses_nothing() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[shell_step("echo ran > later.txt"), json!({"text": "done"})],
    );
    sb.start_scripted("p", &script);
    {
        let mut events = sb.connect("p", ClientMode::Attach).await;
        let mut seen = Vec::new();
        sb.ok(&["send", "p", "do it", "--no-wait"]);
        wait_for(&mut events, &mut seen, approval_request).await;
    }
    // Nobody attached: the pod waits, and says so.
    let ls = sb.ok(&["ls"]);
    assert!(ls.contains("waiting_for_approval"), "{ls}");
    let context_before = sb.context("p").await;

    sb.kill9("p").await;
    sb.start_scripted("p", &script);
    let mut control = sb.connect("p", ClientMode::Control).await;
    let status = match control.call(Method::Status).await.expect("status") {
        ServerMsg::StatusReply { status, .. } => status,
        other => panic!("{other:?}"),
    };
    assert_eq!(status.state, PodState::WaitingForApproval);
    let pending = status
        .pending_approval
        .expect("still pending after kill -9");
    assert!(pending.summary.contains("later.txt"));
    assert!(!sb.path().join("later.txt").exists(), "auto-approved");
    assert_eq!(sb.context("p").await, context_before, "restored exactly");

    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let out = sb.ok(&["approve", "p"]);
    assert!(out.contains("approved"), "{out}");
    wait_for(&mut events, &mut seen, is_run_end).await;
    assert!(
        sb.path().join("later.txt").exists(),
        "the approved command ran"
    );
    let requests_in_log = sb
        .history("p")
        .await
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::ApprovalRequest(_)))
        .count();
    assert_eq!(requests_in_log, 1, "asked once, across the restart");

    let out = sb.run(&["approve", "p"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing"));
}
