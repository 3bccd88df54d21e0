//! Approvals through the controller: a call whose policy is `ask` waits, durably, for a person.

use super::*;
use crate::policy::{Policies, Policy};
use crate::session::SessionSettings;
use seedpod_protocol::{ApprovalAnswer, ApprovalDecision, CommandRule, StandingApproval};

/// A response calling a tool named `shell` with `command`.
fn shell(command: &str) -> ScriptStep {
    ScriptStep {
        tool_calls: vec![ScriptToolCall {
            id: None,
            name: "shell".into(),
            arguments: serde_json::json!({ "command": command }).to_string(),
        }],
        ..ScriptStep::default()
    }
}

/// An echo tool standing in for `shell`, whose policy is `ask`.
async fn asking_pod(steps: Vec<ScriptStep>) -> Pod {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("shell")));
    let session = SessionSettings {
        policies: Policies::new([("shell".to_string(), Policy::Ask)]),
        ..SessionSettings::default()
    };
    Pod::start_with(tempfile::tempdir().unwrap(), steps, tools, session).await
}

fn approve(answer: ApprovalAnswer, reason: Option<&str>) -> Method {
    Method::Approve {
        call_id: None,
        answer,
        reason: reason.map(str::to_string),
    }
}

fn results(entries: &[Entry]) -> Vec<(String, bool)> {
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

#[tokio::test]
async fn an_asking_call_waits_durably_and_runs_once_approved() {
    let mut pod = asking_pod(vec![shell("cargo test"), text("done")]).await;
    pod.run("test it").await;
    pod.state(PodState::WaitingForApproval).await;

    let log = pod.log();
    let request = log
        .iter()
        .find_map(|e| match &e.kind {
            EntryKind::ApprovalRequest(r) => Some(r.clone()),
            _ => None,
        })
        .expect("the request is in the log before anyone is told");
    assert_eq!(request.tool, "shell");
    let words = ["cargo".to_string(), "test".to_string()];
    assert!(
        request
            .always
            .as_ref()
            .is_some_and(|rule| rule.covers(&words)),
        "\"always\" would cover this command: {:?}",
        request.always
    );
    assert!(
        request.summary.contains("cargo test"),
        "{}",
        request.summary
    );
    assert!(results(&log).is_empty(), "the tool ran before approval");
    assert_eq!(pod.requests().len(), 1, "no request while waiting");
    assert_eq!(
        pod.status().await.pending_approval.map(|r| r.call_id),
        Some(request.call_id.clone())
    );
    pod.assert_replay_matches_live().await;

    assert_eq!(
        pod.acked(approve(ApprovalAnswer::Approve, None)).await,
        AckOutcome::Done
    );
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let log = pod.log();
    assert_eq!(
        results(&log),
        [(r#"{"command":"cargo test"}"#.to_string(), false)]
    );
    let answer = names(&log)
        .iter()
        .position(|n| *n == "approval_answer")
        .expect("the answer is committed");
    let result = names(&log)
        .iter()
        .position(|n| *n == "tool_result")
        .unwrap();
    assert!(answer < result, "the answer precedes the result it allowed");
    // Answered: a second answer has nothing to answer.
    assert_eq!(
        refused(&pod.call(approve(ApprovalAnswer::Approve, None)).await),
        ErrorCode::NothingPending
    );
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn a_denied_call_becomes_an_error_result_with_the_reason() {
    let mut pod = asking_pod(vec![shell("rm -rf target"), text("ok, I won't")]).await;
    pod.run("clean up").await;
    pod.state(PodState::WaitingForApproval).await;
    pod.acked(approve(ApprovalAnswer::Deny, Some("not on this machine")))
        .await;
    assert_eq!(pod.run_end().await, RunEndReason::Completed);

    let results = results(&pod.log());
    assert_eq!(results.len(), 1);
    assert!(results[0].1, "a denial is an error result");
    assert!(
        results[0].0.contains("not on this machine"),
        "{}",
        results[0].0
    );
    // The model saw the denial in its next request.
    let requests = pod.requests();
    assert!(requests[1].contains("not on this machine"));
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

fn request_summaries(log: &[seedpod_protocol::Entry]) -> Vec<String> {
    log.iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ApprovalRequest(r) => Some(r.summary.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn approve_always_covers_the_program_and_subcommand_only() {
    let steps = vec![
        shell("cargo test"),
        shell("cargo test --release -p x"),
        shell("cargo build"),
        text("done"),
    ];
    let mut pod = asking_pod(steps).await;
    pod.run("build").await;
    pod.state(PodState::WaitingForApproval).await;
    pod.acked(approve(ApprovalAnswer::ApproveAlways, None))
        .await;
    // `cargo test --release` runs without asking; `cargo build` asks.
    pod.state(PodState::WaitingForApproval).await;
    let log = pod.log();
    let requests = request_summaries(&log);
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[1].contains("cargo build"), "{requests:?}");
    let cargo_test = vec!["cargo".to_string(), "test".to_string()];
    assert!(log.iter().any(|e| matches!(
        &e.kind,
        EntryKind::ApprovalAnswer {
            decision: ApprovalDecision::ApproveAlways(StandingApproval { tool, rule }),
            ..
        } if tool == "shell" && *rule == Some(CommandRule::Prefix(cargo_test.clone()))
    )));
    pod.acked(approve(ApprovalAnswer::Deny, None)).await;
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn a_revoked_standing_approval_asks_again_and_stays_revoked() {
    let steps = vec![
        shell("cargo test"),
        text("tested"),
        shell("cargo test"),
        text("tested again"),
    ];
    let mut pod = asking_pod(steps).await;
    pod.run("test").await;
    pod.state(PodState::WaitingForApproval).await;
    pod.acked(approve(ApprovalAnswer::ApproveAlways, None))
        .await;
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let standing = match pod.call(Method::ListApprovals).await {
        ServerMsg::Approvals { standing, .. } => standing,
        other => panic!("expected approvals, got {other:?}"),
    };
    assert_eq!(standing.len(), 1, "{standing:?}");

    // Revoking something not in force is refused and changes nothing.
    let stranger = StandingApproval {
        tool: "shell".into(),
        rule: Some(CommandRule::Prefix(vec!["rm".into()])),
    };
    assert_eq!(
        refused(
            &pod.call(Method::RevokeApproval {
                standing: Some(stranger)
            })
            .await
        ),
        ErrorCode::NothingPending
    );
    match pod
        .call(Method::RevokeApproval {
            standing: Some(standing[0].clone()),
        })
        .await
    {
        ServerMsg::Approvals { standing, .. } => assert!(standing.is_empty(), "{standing:?}"),
        other => panic!("expected approvals, got {other:?}"),
    }
    assert!(pod.log().iter().any(|e| matches!(
        &e.kind,
        EntryKind::ApprovalRevoked { standing: s } if *s == standing[0]
    )));

    // The same command asks again.
    pod.run("again").await;
    pod.state(PodState::WaitingForApproval).await;
    assert_eq!(request_summaries(&pod.log()).len(), 2);
    pod.acked(approve(ApprovalAnswer::Approve, None)).await;
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn cancelling_a_waiting_run_closes_the_request_without_running_the_call() {
    let mut pod = asking_pod(vec![shell("make deploy"), text("never sent")]).await;
    pod.run("deploy").await;
    pod.state(PodState::WaitingForApproval).await;
    pod.acked(Method::Cancel).await;
    pod.state(PodState::Idle).await;

    let results = results(&pod.log());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0], (render::orphan_result(), true));
    assert_eq!(pod.status().await.pending_approval, None);
    assert_eq!(
        refused(&pod.call(approve(ApprovalAnswer::Approve, None)).await),
        ErrorCode::NothingPending
    );
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn an_answer_while_paused_continues_the_turn() {
    let mut pod = asking_pod(vec![shell("cargo fmt"), text("formatted")]).await;
    pod.run("format").await;
    pod.state(PodState::WaitingForApproval).await;
    pod.acked(Method::Pause).await;
    // Paused at a pending request: the pod says what it waits for.
    assert_eq!(pod.status().await.state, PodState::WaitingForApproval);
    assert_eq!(
        pod.acked(approve(ApprovalAnswer::Approve, None)).await,
        AckOutcome::Started
    );
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let log = pod.log();
    assert_eq!(
        names(&log)
            .iter()
            .filter(|n| **n == "approval_request")
            .count(),
        1,
        "the resumed run found the answer instead of asking again"
    );
    assert_eq!(results(&log).len(), 1);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}
