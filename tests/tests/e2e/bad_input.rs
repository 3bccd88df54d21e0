//! Garbage bytes, an oversized frame, an unknown method, a frame before `hello`, and
//! a client that never reads while the pod streams 100k events: the pod keeps serving everyone
//! else and its state is unchanged.

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{
    ClientMode, ErrorCode, MAX_FRAME_BYTES, Method, PodName, PodState, RequestId, ServerMsg,
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

const HELLO: &str = r#"{"id":0,"method":"hello","protocol":1,"client":"raw","mode":"control"}"#;

async fn raw(
    sb: &TestHome,
) -> (
    BufReader<tokio::net::unix::OwnedReadHalf>,
    tokio::net::unix::OwnedWriteHalf,
) {
    let stream = UnixStream::connect(sb.home.socket_path(&PodName::new("p").unwrap()))
        .await
        .expect("connect");
    let (r, w) = stream.into_split();
    (BufReader::new(r), w)
}

async fn read_frame(reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>) -> Option<ServerMsg> {
    let mut line = String::new();
    let n = tokio::time::timeout(seedpod_e2e::EVENT_TIMEOUT, reader.read_line(&mut line))
        .await
        .expect("pod answered")
        .expect("read");
    (n > 0).then(|| serde_json::from_str(&line).expect("pod frames are JSON"))
}

async fn status(sb: &TestHome) -> seedpod_protocol::PodStatus {
    let mut conn = sb.connect("p", ClientMode::Control).await;
    match conn.call(Method::Status).await.unwrap() {
        ServerMsg::StatusReply { status, .. } => status,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_frames_get_typed_errors_and_change_nothing() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "fine"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "hello"]);
    let history = sb.history("p").await;

    // A frame before hello: typed error, and the connection still accepts hello afterwards.
    let (mut r, mut w) = raw(&sb).await;
    w.write_all(b"{\"id\":1,\"method\":\"status\"}\n")
        .await
        .unwrap();
    match read_frame(&mut r).await {
        Some(ServerMsg::Error {
            code: ErrorCode::HandshakeRequired,
            id: Some(id),
            ..
        }) if id == RequestId::new(1) => {}
        other => panic!("expected handshake_required, got {other:?}"),
    }
    w.write_all(format!("{HELLO}\n").as_bytes()).await.unwrap();
    assert!(matches!(
        read_frame(&mut r).await,
        Some(ServerMsg::Welcome { .. })
    ));

    // A second hello: refused by the connection with its id; the connection stays open.
    w.write_all(format!("{}\n", HELLO.replace("\"id\":0", "\"id\":4")).as_bytes())
        .await
        .unwrap();
    match read_frame(&mut r).await {
        Some(ServerMsg::Error {
            code: ErrorCode::InvalidRequest,
            id: Some(id),
            message,
        }) if id == RequestId::new(4) => assert!(message.contains("already accepted"), "{message}"),
        other => panic!("expected a refused second hello, got {other:?}"),
    }

    // An unknown method: invalid_request with its id; the connection stays open.
    w.write_all(b"{\"id\":5,\"method\":\"teleport\"}\n")
        .await
        .unwrap();
    match read_frame(&mut r).await {
        Some(ServerMsg::Error {
            code: ErrorCode::InvalidRequest,
            id: Some(id),
            message,
        }) if id == RequestId::new(5) => {
            assert!(message.contains("teleport"), "{message}");
        }
        other => panic!("expected invalid_request, got {other:?}"),
    }
    w.write_all(b"{\"id\":6,\"method\":\"status\"}\n")
        .await
        .unwrap();
    assert!(matches!(
        read_frame(&mut r).await,
        Some(ServerMsg::StatusReply { id, .. }) if id == RequestId::new(6)
    ));

    // JSON that is not a request: malformed_frame, connection stays open.
    w.write_all(b"[1,2,3]\n").await.unwrap();
    assert!(matches!(
        read_frame(&mut r).await,
        Some(ServerMsg::Error {
            code: ErrorCode::MalformedFrame,
            ..
        })
    ));

    // Garbage bytes (not UTF-8): an error, then the connection is closed.
    let (mut r2, mut w2) = raw(&sb).await;
    w2.write_all(b"\xff\xfe\x00garbage\n").await.unwrap();
    assert!(matches!(
        read_frame(&mut r2).await,
        Some(ServerMsg::Error {
            code: ErrorCode::MalformedFrame,
            ..
        })
    ));
    assert!(matches!(
        read_frame(&mut r2).await,
        Some(ServerMsg::Goodbye { .. })
    ));
    assert!(read_frame(&mut r2).await.is_none(), "closed");

    // A frame over the limit: frame_too_large, goodbye, closed.
    let (mut r3, mut w3) = raw(&sb).await;
    w3.write_all(format!("{HELLO}\n").as_bytes()).await.unwrap();
    assert!(matches!(
        read_frame(&mut r3).await,
        Some(ServerMsg::Welcome { .. })
    ));
    let big = vec![b'x'; MAX_FRAME_BYTES + 1024];
    // The pod may close before it has read everything; a broken pipe here is fine.
    let _ = w3.write_all(&big).await;
    let _ = w3.write_all(b"\n").await;
    assert!(matches!(
        read_frame(&mut r3).await,
        Some(ServerMsg::Error {
            code: ErrorCode::FrameTooLarge,
            ..
        })
    ));

    // The pod is unaffected: same history, still idle, still serving.
    assert_eq!(sb.history("p").await, history);
    assert_eq!(status(&sb).await.state, PodState::Idle);
    // The first raw connection is still usable.
    w.write_all(b"{\"id\":7,\"method\":\"status\"}\n")
        .await
        .unwrap();
    assert!(matches!(
        read_frame(&mut r).await,
        Some(ServerMsg::StatusReply { id, .. }) if id == RequestId::new(7)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_cannot_stall_the_pod() {
    const EVENTS: usize = 100_000;
    let sb = TestHome::new();
    // Held after its first delta until the test has asked for the status: a reading client
    // lags the pod, so without the gate the whole stream may be over when it asks.
    let gate = sb.gate("stream-gate");
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "x".repeat(EVENTS), "chunk_chars": 1, "gate": gate})],
    );
    sb.start_scripted("p", &script);

    // Attach and never read a byte.
    let (_stuck_reader, mut stuck_writer) = raw(&sb).await;
    stuck_writer
        .write_all(br#"{"id":0,"method":"hello","protocol":1,"client":"stuck","mode":"attach"}"#)
        .await
        .unwrap();
    stuck_writer.write_all(b"\n").await.unwrap();

    let mut reader = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    wait_for(&mut reader, &mut seen, |m| {
        matches!(m, ServerMsg::SnapshotEnd { .. }).then_some(())
    })
    .await;
    let mut control = sb.connect("p", ClientMode::Control).await;
    control
        .call(Method::Run {
            segments: vec![seedpod_protocol::Segment::text("stream a lot")],
        })
        .await
        .unwrap();

    // Count deltas as a reading client; answer a status request mid-stream.
    let mut deltas = 0usize;
    let mut asked = false;
    // A reader that falls behind by a whole queue is resynced with a fresh snapshot (allowed);
    // only a reader that kept up must have seen every delta.
    let mut resynced = false;
    let mut ended = false;
    let mut recent: std::collections::VecDeque<String> = Default::default();
    while !ended {
        let msg = tokio::time::timeout(seedpod_e2e::EVENT_TIMEOUT, reader.recv())
            .await
            .unwrap_or_else(|_| panic!("the pod stopped streaming to the reading client after {deltas} deltas; last frames: {recent:?}"))
            .unwrap()
            .expect("pod kept the reading client");
        if recent.len() == 6 {
            recent.pop_front();
        }
        recent.push_back(seedpod_protocol::encode(&msg).chars().take(120).collect());
        match &msg {
            ServerMsg::TextDelta { .. } => {
                deltas += 1;
                if !asked {
                    asked = true;
                    assert_eq!(
                        status(&sb).await.state,
                        PodState::Running,
                        "the pod answers while streaming"
                    );
                    sb.open_gate("stream-gate");
                }
            }
            ServerMsg::SnapshotBegin { .. } => resynced = true,
            // A resync snapshot taken after the run ended carries its run_end as an entry.
            ServerMsg::SnapshotEntries { entries } => {
                ended = entries
                    .iter()
                    .any(|e| matches!(e.kind, seedpod_protocol::EntryKind::RunEnd { .. }));
            }
            _ => {}
        }
        ended = ended || is_run_end(&msg).is_some();
    }
    if !resynced {
        assert_eq!(deltas, EVENTS, "the reading client saw every event");
    }
    assert_eq!(status(&sb).await.state, PodState::Idle);
    let history = sb.history("p").await;
    let answer = history.iter().find_map(|e| match &e.kind {
        seedpod_protocol::EntryKind::AssistantItem {
            item: seedpod_protocol::ModelItem::AssistantText { text },
        } => Some(text.len()),
        _ => None,
    });
    assert_eq!(answer, Some(EVENTS));
}

/// Input over the frame limit is refused by the CLI with what happened and what to do, not a
/// bare "Broken pipe", and the pod keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_over_the_frame_limit_is_refused_with_a_way_out() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    let mut child = sb
        .cmd()
        .args(["send", "p", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("send");
    let big = "x".repeat(MAX_FRAME_BYTES + 1024);
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(big.as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("send ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("MiB a pod accepts in one message"),
        "{stderr}"
    );
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(status(&sb).await.state, PodState::Idle);
}
