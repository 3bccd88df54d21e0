//! A slow disk never holds the controller: while a segment switch renders its prompt, an
//! approval request reads the file it would change, or a spawn writes `pod.json`, a `notify`
//! is acknowledged and every client hears of it. Each test holds one of those steps
//! (`stall.rs`) and checks what happens meanwhile, then lets it go and checks the outcome.

use super::*;
use crate::controller::stall::{self, Step};
use crate::policy::{Policies, Policy};
use crate::session::SessionSettings;
use seedpod_protocol::{ApprovalAnswer, PodCommand, SpawnRequest};

/// Send `method` and return where its reply will come, without waiting for it.
async fn send(pod: &mut Pod, method: Method) -> oneshot::Receiver<ServerMsg> {
    pod.next_id += 1;
    let (reply, answer) = oneshot::channel();
    let request = ControllerMsg::Request {
        id: pod.next_id,
        method: for_controller(method),
        reply,
    };
    pod.handle.tx.send(request).await.expect("controller runs");
    answer
}

async fn reply_to(answer: oneshot::Receiver<ServerMsg>) -> ServerMsg {
    tokio::time::timeout(WAIT, answer)
        .await
        .expect("answered in time")
        .expect("answered")
}

/// A notification is acknowledged (`outcome`), and its entry — queued, or committed at once
/// to an idle pod — reaches the subscribed client.
async fn notify_goes_through(pod: &mut Pod, message: &str, outcome: AckOutcome) {
    let (acked, _, _) = ack(&pod.notify(message, false).await);
    assert_eq!(acked, outcome, "acknowledged while the step waits");
    pod.wait_for(|msg| match msg {
        ServerMsg::Committed { entry, .. } => match &entry.kind {
            EntryKind::Queued {
                item: QueuedItem::Notify { message: m, .. },
                ..
            } if m == message => Some(()),
            EntryKind::SystemItem {
                item: SystemItem::Notification { message: m, .. },
                ..
            } if m == message => Some(()),
            _ => None,
        },
        _ => None,
    })
    .await;
}

#[tokio::test]
async fn a_segment_switch_rendering_its_prompt_does_not_hold_a_notify() {
    let dir = tempfile::tempdir().unwrap();
    let pod_dir = dir.path().to_path_buf();
    let mut pod = Pod::start(dir, vec![text("woken")], ToolRegistry::new()).await;
    let old = pod.status().await.segment_id;
    let held = stall::hold(&pod_dir, Step::Render);
    let clear = send(
        &mut pod,
        Method::Command {
            name: PodCommand::Clear,
            args: String::new(),
        },
    )
    .await;
    held.reached().await;

    notify_goes_through(&mut pod, "build finished", AckOutcome::Queued).await;
    assert_eq!(
        pod.status().await.segment_id,
        old,
        "still on the old segment"
    );

    drop(held);
    match reply_to(clear).await {
        ServerMsg::CommandDone { message, .. } => {
            assert!(message.contains(old.as_str()), "{message}")
        }
        other => panic!("expected /clear to be done, got {other:?}"),
    }
    // The notification queued meanwhile is carried into the new segment and, the pod being
    // idle, committed for the model's next request.
    pod.wait_for(|msg| match msg {
        ServerMsg::Committed { entry, .. } => {
            matches!(entry.kind, EntryKind::SystemItem { .. }).then_some(())
        }
        _ => None,
    })
    .await;
    let status = pod.status().await;
    assert_ne!(status.segment_id, old);
    let new = read_segment(&segment_path(&pod_dir, &status.segment_id))
        .expect("the new segment reads back")
        .entries;
    assert_eq!(names(&new), ["segment_start", "queued", "system_item"]);
    let meta = seedpod_store::load_meta(&pod_dir).unwrap().unwrap();
    assert_eq!(meta.active_segment, status.segment_id);
    pod.stop().await;
}

#[tokio::test]
async fn an_approval_reading_the_file_it_changes_does_not_hold_a_notify() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_path_buf();
    std::fs::write(cwd.join("a.txt"), "old text\n").unwrap();
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("write_file")));
    let session = SessionSettings {
        policies: Policies::new([("write_file".to_string(), Policy::Ask)]),
        ..SessionSettings::default()
    };
    let write = ScriptStep {
        tool_calls: vec![ScriptToolCall {
            id: None,
            name: "write_file".into(),
            arguments: serde_json::json!({"path": "a.txt", "content": "new text\n"}).to_string(),
        }],
        ..ScriptStep::default()
    };
    let mut pod = Pod::start_with(dir, vec![write, text("written")], tools, session).await;
    let held = stall::hold(&cwd, Step::Preview);
    pod.run("change a.txt").await;
    held.reached().await;

    notify_goes_through(&mut pod, "tests green", AckOutcome::Queued).await;

    drop(held);
    pod.state(PodState::WaitingForApproval).await;
    let request = pod
        .history()
        .await
        .into_iter()
        .find_map(|e| match e.kind {
            EntryKind::ApprovalRequest(request) => Some(request),
            _ => None,
        })
        .expect("the request is logged");
    assert_eq!(
        request.replaces,
        Some(seedpod_protocol::Replaces::Text {
            content: "old text\n".into()
        }),
        "the request shows what the write replaces"
    );
    let approve = Method::Approve {
        call_id: None,
        answer: ApprovalAnswer::Approve,
        reason: None,
    };
    pod.acked(approve).await;
    pod.run_end().await;
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn a_spawn_writing_pod_json_does_not_hold_a_notify() {
    let dir = tempfile::tempdir().unwrap();
    let pod_dir = dir.path().to_path_buf();
    let mut pod = Pod::start(dir, vec![text("ok")], ToolRegistry::new()).await;
    let held = stall::hold(&pod_dir, Step::MetaSave);
    let spawn = send(
        &mut pod,
        Method::Spawn(SpawnRequest {
            name: "kid".parse().unwrap(),
            task: "look around".into(),
            read: Vec::new(),
            write: Vec::new(),
            model: None,
            instructions: None,
            mcp_servers: None,
        }),
    )
    .await;
    held.reached().await;

    notify_goes_through(&mut pod, "deploy done", AckOutcome::Done).await;

    // The disk then fails the write: the child is not started, and the pod says so.
    std::fs::create_dir(pod_dir.join("pod.json.tmp")).unwrap();
    drop(held);
    match reply_to(spawn).await {
        ServerMsg::Error { message, .. } => {
            assert!(message.contains("could not be recorded"), "{message}");
        }
        other => panic!("expected the spawn to fail, got {other:?}"),
    }
    pod.stop().await;
}
