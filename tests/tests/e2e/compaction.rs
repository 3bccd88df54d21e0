//! Compaction against the real binary at the moments that can lose something: a `kill -9` while
//! the summary streams leaves the pod exactly as it was before (the old segment active, the same
//! next request), and compacting again afterwards works; input sent during a compaction is
//! queued and answered after it, in the new segment.

use seedpod_e2e::{TestHome, is_run_end, is_state, wait_for};
use seedpod_protocol::{
    ClientMode, EntryKind, Method, Origin, PodCommand, PodName, PodState, Segment,
};
use serde_json::json;

fn compact() -> Method {
    Method::Command {
        name: PodCommand::Compact,
        args: String::new(),
    }
}

fn active_origin(history: &[seedpod_protocol::Entry]) -> Origin {
    match history.first().map(|e| &e.kind) {
        Some(EntryKind::SegmentStart(start)) => start.origin.clone(),
        other => panic!("the segment has no start: {other:?}"),
    }
}

#[tokio::test]
async fn kill_9_while_the_summary_streams_changes_nothing_and_compacting_again_works() {
    let sb = TestHome::new();
    let gate = sb.gate("summary-gate");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "first answer"}),
            json!({"text": "second answer"}),
            json!({"text": "third answer"}),
            // The first summary: held after its first chunk until the gate opens (never).
            json!({"text": "SUMMARY that never finishes", "chunk_chars": 4, "gate": gate}),
            // After the restart, the second summary.
            json!({"text": "SUMMARY: three answers"}),
        ],
    );
    sb.start_scripted("p", &script);
    for input in ["one", "two", "three"] {
        sb.ok(&["send", "p", input]);
    }
    let before = sb.context("p").await;
    let segments_before = sb.segment_files("p");

    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let mut control = sb.connect("p", ClientMode::Control).await;
    control.send(compact()).await.expect("send /compact");
    wait_for(&mut events, &mut seen, is_state(PodState::Compacting)).await;
    // The state is published before the summary request reaches the scripted server; killed
    // in between, the restarted pod's /compact would be answered by the held step. The
    // server's record file is the only channel from that other process.
    wait_for_requests(&sb, "p", 4);
    sb.kill9("p").await;

    sb.start_scripted("p", &script);
    assert_eq!(
        sb.context("p").await,
        before,
        "the next request is what it was"
    );
    let history = sb.history("p").await;
    assert_eq!(
        active_origin(&history),
        Origin::New,
        "still the first segment"
    );
    // A new segment file may have been started, but pod.json never pointed at it.
    let meta = seedpod_store::load_meta(&sb.home.pod_dir(&PodName::new("p").unwrap()))
        .unwrap()
        .unwrap();
    assert_eq!(meta.segments.len(), 1, "{:?}", meta.segments);
    assert!(sb.segment_files("p").len() <= segments_before.len() + 1);

    let reply = sb.ok(&["send", "p", "/compact"]);
    assert!(reply.contains("compacted"), "{reply}");
    let history = sb.history("p").await;
    assert!(matches!(
        active_origin(&history),
        Origin::CompactedFrom { .. }
    ));
}

#[tokio::test]
async fn input_sent_while_compacting_is_queued_and_answered_in_the_new_segment() {
    let sb = TestHome::new();
    let gate = sb.gate("summary-gate");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "first answer"}),
            json!({"text": "second answer"}),
            json!({"text": "SUMMARY: two answers", "chunk_chars": 4, "gate": gate}),
            json!({"text": "answered after the compaction"}),
        ],
    );
    sb.start_scripted("p", &script);
    for input in ["one", "two"] {
        sb.ok(&["send", "p", input]);
    }
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let mut compactor = sb.connect("p", ClientMode::Control).await;
    compactor.send(compact()).await.expect("send /compact");
    wait_for(&mut events, &mut seen, is_state(PodState::Compacting)).await;

    let mut control = sb.connect("p", ClientMode::Control).await;
    let ack = control
        .call(Method::Run {
            segments: vec![Segment::text("three")],
        })
        .await
        .expect("run");
    assert!(
        matches!(
            ack,
            seedpod_protocol::ServerMsg::Ack {
                outcome: seedpod_protocol::AckOutcome::Queued,
                ..
            }
        ),
        "{ack:?}"
    );
    sb.open_gate("summary-gate");
    wait_for(&mut events, &mut seen, is_run_end).await;
    let history = sb.history("p").await;
    assert!(matches!(
        active_origin(&history),
        Origin::CompactedFrom { .. }
    ));
    let texts: Vec<&str> = history
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::UserInput { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["three"], "the queued input ran in the new segment");
}

#[tokio::test]
async fn a_tool_left_out_of_a_compact_prompt_cannot_be_called_anyway() {
    let sb = TestHome::new();
    std::fs::create_dir_all(sb.path().join(".seedpod")).unwrap();
    std::fs::write(
        sb.path().join(".seedpod/config.toml"),
        "context_window = 4096\n",
    )
    .unwrap();
    let script = sb.script(
        "s.jsonl",
        &[
            // The compact prompt does not offer spawn_pod; the model calls it all the same.
            json!({"tool_calls": [{"name": "spawn_pod", "arguments": "{\"name\":\"kid\",\"task\":\"escape\"}"}]}),
            json!({"text": "ok"}),
        ],
    );
    sb.start_scripted("p", &script);
    let context = sb.context("p").await;
    assert!(!context.contains("\"spawn_pod\""), "not offered: {context}");
    sb.ok(&["send", "p", "go"]);
    let history = sb.history("p").await;
    let result = history
        .iter()
        .find_map(|e| match &e.kind {
            EntryKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } if name == "spawn_pod" => Some((content.clone(), *is_error)),
            _ => None,
        })
        .expect("the call was answered");
    assert!(result.1, "an error result");
    assert!(result.0.contains("no tool named spawn_pod"), "{}", result.0);
    assert!(
        !sb.home.pod_dir(&PodName::new("kid").unwrap()).exists(),
        "no child was started"
    );
}

/// Wait until the scripted server has recorded `count` requests of pod `name`.
fn wait_for_requests(sb: &TestHome, name: &str, count: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while sb.requests(name).len() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "the scripted server recorded {} requests, not {count}",
            sb.requests(name).len()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
