//! `kill -9` mid-turn loses nothing committed or acknowledged; a torn last
//! line restores with an alert; a corrupt middle line refuses to start with `file:line`.

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{AckOutcome, ClientMode, EntryKind, Method, PodState, ServerMsg};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_mid_turn_restores_byte_identical_and_delivers_acknowledged_notify() {
    let sb = TestHome::new();
    let gate = sb.gate("never-opened");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "a long answer that is cut off", "chunk_chars": 3, "gate": gate.to_str().unwrap()}),
            json!({"text": "resumed answer"}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut pod = sb.drive("p").await;
    pod.run("question").await;
    pod.wait_for(|m| matches!(m, ServerMsg::TextDelta { .. }).then_some(()))
        .await;
    let ack = pod
        .control
        .call(Method::Notify {
            message: "survives-the-crash".into(),
            wake: true,
        })
        .await
        .unwrap();
    assert!(matches!(
        ack,
        ServerMsg::Ack {
            outcome: AckOutcome::Queued,
            ..
        }
    ));

    let history_before = sb.ok(&["history", "p", "--json"]);
    let context_before = sb.ok(&["context", "p"]);
    assert!(
        !context_before.contains("survives-the-crash"),
        "not yet committed to history"
    );

    sb.kill9("p").await;
    let out = sb.run(&["send", "p", "hello"]);
    assert_eq!(out.status.code(), Some(2), "a stopped pod is exit 2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("seedpod start p"));

    sb.start_scripted("p", &script);
    // The restore adds one line: a notice for the person, which the model never reads.
    let restored = sb.ok(&["history", "p", "--json"]);
    let (kept, added) = restored.split_at(history_before.len().min(restored.len()));
    assert_eq!(kept, history_before);
    assert_eq!(added.lines().count(), 1, "{added}");
    assert!(
        added.contains(r#""kind":"notice""#) && added.contains("middle of a turn"),
        "{added}"
    );
    assert_eq!(sb.ok(&["context", "p"]), context_before);

    // The interrupted turn comes back paused; resuming delivers the acknowledged notify.
    let mut pod = sb.drive("p").await;
    let state = pod
        .wait_for(|m| match m {
            ServerMsg::SnapshotBegin { state, .. } => Some(*state),
            _ => None,
        })
        .await;
    assert_eq!(state, PodState::Paused);
    pod.wait_for(|m| matches!(m, ServerMsg::SnapshotEnd { .. }).then_some(()))
        .await;
    let said = |m: &ServerMsg| {
        match m {
        ServerMsg::SnapshotEntries { entries } => entries.iter().any(|e| {
            matches!(&e.kind, EntryKind::Notice { message, .. } if message.contains("middle of a turn"))
        }),
        _ => false,
    }
    };
    assert!(
        pod.seen.iter().any(said),
        "the snapshot tells why the pod is paused: {:?}",
        pod.seen
    );
    sb.ok(&["resume", "p"]);
    pod.wait_for(is_run_end).await;
    let requests = sb.requests("p");
    assert_eq!(requests.len(), 2);
    assert!(requests[1].contains("[notification] survives-the-crash"));
    assert!(requests[1].contains("question"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn torn_tail_restores_with_an_alert_and_a_side_file() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "one"}), json!({"text": "two"})]);
    sb.start_scripted("p", &script);
    assert_eq!(sb.ok(&["send", "p", "first"]).trim(), "one");
    let entries_before = sb.history("p").await;
    sb.ok(&["stop", "p"]);

    // A crash mid-write leaves half a line at the end of the segment.
    let segment = sb.segment_files("p").pop().expect("segment file");
    let intact = std::fs::read(&segment).unwrap();
    let torn_line = br#"{"v":1,"seq":99,"ts":1,"kind":"assistant_item","item":{"type":"assist"#;
    let mut bytes = intact.clone();
    bytes.extend_from_slice(torn_line);
    std::fs::write(&segment, &bytes).unwrap();

    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let alert = wait_for(&mut events, &mut seen, |m| match m {
        ServerMsg::Alert { message, .. } => Some(message.clone()),
        _ => None,
    })
    .await;
    assert!(alert.contains("torn"), "{alert}");
    assert_eq!(sb.history("p").await, entries_before);
    assert_eq!(
        std::fs::read(&segment).unwrap(),
        intact,
        "truncated to the valid prefix"
    );
    let side = segment.with_extension("jsonl.torn");
    // Each torn tail is kept as one record ending in a newline.
    let mut expected = torn_line.to_vec();
    expected.push(b'\n');
    assert_eq!(
        std::fs::read(&side).unwrap(),
        expected,
        "torn bytes kept aside"
    );
    // The pod keeps working and appends after the valid prefix.
    assert_eq!(sb.ok(&["send", "p", "second"]).trim(), "two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_middle_line_refuses_to_start_with_file_and_line() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "one"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "first"]);
    sb.ok(&["stop", "p"]);

    let segment = sb.segment_files("p").pop().expect("segment file");
    let text = std::fs::read_to_string(&segment).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines.len() > 3);
    lines[2] = "{not json at all".into();
    let corrupted = lines.join("\n") + "\n";
    std::fs::write(&segment, &corrupted).unwrap();

    let out = sb.run(&["start", "p"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let location = format!("{}:3", segment.display());
    assert!(
        stderr.contains(&location),
        "expected {location} in:\n{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&segment).unwrap(),
        corrupted,
        "never rewritten in place"
    );
}
