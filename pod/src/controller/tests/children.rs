//! Child pods through the controller: what `spawn` refuses before any process starts, how a
//! parent's input is marked, and which reports change what the pod believes about children.

use super::*;
use seedpod_protocol::{PodEvent, ReportId, SpawnRequest};
use seedpod_tools::{Access, Scope};

fn spawn(name: &str, task: &str, write: &[&str]) -> Method {
    Method::Spawn(SpawnRequest {
        name: name.parse().unwrap(),
        task: task.into(),
        read: Vec::new(),
        write: write.iter().map(|w| w.to_string()).collect(),
        model: None,
        instructions: None,
        mcp_servers: None,
    })
}

fn refusal(reply: ServerMsg) -> String {
    match reply {
        ServerMsg::Error {
            code: ErrorCode::InvalidRequest,
            message,
            ..
        } => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A pod whose file tools may write its directory, as the CLI builds it.
async fn pod_with_scope() -> (Pod, Arc<Scope>, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let scope = Arc::new(Scope::for_cwd(&cwd).unwrap());
    let session = crate::session::SessionSettings {
        scope: Some(scope.clone()),
        ..Default::default()
    };
    let pod = Pod::start_with(dir, vec![text("ok")], ToolRegistry::new(), session).await;
    (pod, scope, cwd)
}

#[tokio::test]
async fn spawn_refuses_what_it_cannot_grant_before_starting_anything() {
    let (mut pod, _scope, cwd) = pod_with_scope().await;
    let cases = [
        (spawn(POD, "t", &[]), "own name"),
        (spawn("kid", "  ", &[]), "task is empty"),
        (spawn("kid", "t", &["/etc"]), "cannot delegate write access"),
        (
            spawn("kid", "t", &["../.."]),
            "cannot delegate write access",
        ),
    ];
    for (method, expected) in cases {
        let message = refusal(pod.call(method).await);
        assert!(message.contains(expected), "{expected}: {message}");
    }
    // A record is saved to pod.json before a child starts; this test pod has none on disk, so
    // any record would have written one.
    assert!(
        !cwd.join("pod.json").exists(),
        "nothing recorded for a refusal"
    );
}

#[tokio::test]
async fn input_from_the_parent_queues_behind_a_turn_and_starts_a_parent_run() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let steps = vec![gate.step("busy for a while"), text("done")];
    let mut pod = Pod::start(dir, steps, ToolRegistry::new()).await;
    pod.run("first").await;
    pod.streaming().await;
    let queued = pod
        .call(Method::Delegate {
            segments: vec![Segment::text("from the parent")],
        })
        .await;
    let ServerMsg::Ack {
        outcome: AckOutcome::Queued,
        queue_id: Some(_),
        ..
    } = queued
    else {
        panic!("queued behind the running turn: {queued:?}");
    };
    gate.open();
    pod.run_end().await;
    pod.run_end().await;
    let triggers: Vec<RunTrigger> = pod
        .history()
        .await
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::RunStart { trigger } => Some(*trigger),
            _ => None,
        })
        .collect();
    assert_eq!(triggers, [RunTrigger::User, RunTrigger::Parent]);
    pod.assert_replay_matches_live().await;
}

#[tokio::test]
async fn a_report_from_a_stranger_is_committed_but_adds_no_descendant() {
    let (mut pod, scope, cwd) = pod_with_scope().await;
    let report = PodEvent::ScopeSubDelegated {
        pod: "stranger".into(),
        event_id: ReportId::new("x/1"),
        child: "grand".into(),
        scope: vec![cwd.join("src").display().to_string()],
    };
    let reply = pod
        .call(Method::PodEvent {
            event: report,
            wake: false,
        })
        .await;
    assert!(matches!(reply, ServerMsg::Ack { .. }), "{reply:?}");
    assert!(!cwd.join("pod.json").exists(), "no record saved");
    assert!(
        scope.check("src/a.txt", Access::Write).is_ok(),
        "nothing was lent on a stranger's word"
    );
}
