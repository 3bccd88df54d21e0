//! Pod-side commands through the controller.

use super::*;
use seedpod_protocol::{ModelConfig, PodCommand};

fn done_message(reply: &ServerMsg) -> String {
    match reply {
        ServerMsg::CommandDone { message, .. } => message.clone(),
        other => panic!("expected command_done, got {other:?}"),
    }
}

#[tokio::test]
async fn clear_starts_a_new_segment_with_an_empty_history() {
    let dir = tempfile::tempdir().unwrap();
    let pod_dir = dir.path().to_path_buf();
    let mut pod = Pod::start(dir, vec![text("one"), text("two")], ToolRegistry::new()).await;
    pod.run("first").await;
    pod.run_end().await;
    let old_segment = pod.status().await.segment_id;

    // Typed text is the command, as `seedpod send NAME /clear` sends it.
    let message = done_message(&pod.run("/clear").await);
    assert!(message.contains("new segment"), "{message}");
    let status = pod.status().await;
    assert_ne!(status.segment_id, old_segment);
    let history = pod.history().await;
    assert_eq!(names(&history), ["segment_start"]);
    match &history[0].kind {
        EntryKind::SegmentStart(start) => {
            assert_eq!(
                start.origin,
                Origin::ClearedFrom {
                    segment_id: old_segment.clone()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    // pod.json points at the new segment and lists both.
    let meta = seedpod_store::load_meta(&pod_dir).unwrap().unwrap();
    assert_eq!(meta.active_segment, status.segment_id);
    assert_eq!(
        meta.segments,
        [old_segment.clone(), status.segment_id.clone()]
    );
    // The old segment is untouched on disk and the next request carries no old history.
    pod.run("second").await;
    pod.run_end().await;
    let requests = pod.requests();
    assert!(requests[1].contains("second") && !requests[1].contains("first"));
    pod.stop().await;
}

#[tokio::test]
async fn clear_is_refused_while_a_turn_runs() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let mut pod = Pod::start(dir, vec![gate.step("slow answer")], ToolRegistry::new()).await;
    pod.run("go").await;
    pod.streaming().await;
    let reply = pod
        .call(Method::Command {
            name: PodCommand::Clear,
            args: String::new(),
        })
        .await;
    assert_eq!(refused(&reply), ErrorCode::Busy);
    gate.open();
    pod.run_end().await;
    pod.stop().await;
}

#[tokio::test]
async fn model_commits_config_changed_and_the_next_request_uses_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut pod = Pod::start(dir, vec![text("hi")], ToolRegistry::new()).await;
    let message = done_message(
        &pod.call(Method::Command {
            name: PodCommand::Model,
            args: "bigger-model".into(),
        })
        .await,
    );
    assert!(message.contains("bigger-model"), "{message}");
    assert!(pod.log().iter().any(|e| matches!(
        &e.kind,
        EntryKind::ConfigChanged { model: ModelConfig { model, .. } } if model == "bigger-model"
    )));
    pod.run("hello").await;
    pod.run_end().await;
    assert!(pod.requests()[0].contains("\"bigger-model\""));
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn memory_appends_to_agents_md_and_help_lists_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_path_buf();
    let mut pod = Pod::start(dir, vec![], ToolRegistry::new()).await;
    let message = done_message(&pod.run("/memory always run cargo fmt").await);
    assert!(message.contains("AGENTS.md"), "{message}");
    let agents = std::fs::read_to_string(cwd.join("AGENTS.md")).unwrap();
    assert!(agents.contains("* always run cargo fmt"), "{agents}");
    assert_eq!(
        refused(&pod.run("/memory").await),
        ErrorCode::InvalidRequest
    );
    let help = done_message(&pod.run("/help").await);
    for command in ["/clear", "/memory", "/model", "/help"] {
        assert!(help.contains(command), "{help}");
    }
    // None of these was a turn.
    assert!(pod.requests().is_empty());
    pod.stop().await;
}
