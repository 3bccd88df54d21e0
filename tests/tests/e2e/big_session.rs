//! A session far bigger than a frame (a segment of several frames' worth, with one entry over
//! the frame limit) attaches, and `events`, `history` and `context` work on the running pod —
//! with every frame on the wire at most `MAX_FRAME_BYTES`, checked by a client that reads raw
//! lines and refuses any longer one (the frame limit and parts: `docs/protocol.md`).
//!
//! The size is the smallest that shows it: every reply that lists the session is bigger than a
//! frame even without the big entry. How long attaching to a big pod takes is for the benches
//! (`seedpod-bench`, `tui-bench`) to measure, not for this test.

use std::path::Path;

use futures::{SinkExt, StreamExt};
use seedpod_e2e::events::EventsProcess;
use seedpod_e2e::pty::Tui;
use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{
    ClientMode, FrameCodec, MAX_FRAME_BYTES, Method, PodName, Request, RequestId, Segment,
    ServerMsg, encode,
};
use serde_json::json;
use tokio::net::UnixStream;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, Framed, LinesCodec};

/// Few requests with many calls each: every request body is built (and recorded by the
/// scripted provider), so fewer, fuller steps build the same session faster.
const STEPS: usize = 2;
const CALLS_PER_STEP: usize = 20;
/// Longer than the frame limit: this entry can only travel in parts.
const BIG_ANSWER_BYTES: usize = MAX_FRAME_BYTES + 1024 * 1024;
const BUILD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);
const LAST_WORDS: &str = "That was the end of a very big session.";

/// A raw client: reads lines with a codec that refuses any over the limit, and joins parts
/// itself, so a frame over the limit fails the test instead of being absorbed.
struct RawClient {
    lines: Framed<UnixStream, LinesCodec>,
    joiner: FrameCodec,
    frames: usize,
    parts: usize,
}

impl RawClient {
    async fn connect(sb: &TestHome, name: &str, mode: ClientMode) -> RawClient {
        let socket = sb
            .home
            .socket_path(&PodName::new(name.to_string()).unwrap());
        let stream = UnixStream::connect(socket).await.expect("connect");
        let mut client = RawClient {
            lines: Framed::new(stream, LinesCodec::new_with_max_length(MAX_FRAME_BYTES)),
            joiner: FrameCodec::for_client(),
            frames: 0,
            parts: 0,
        };
        client
            .send(
                RequestId::new(0),
                Method::Hello {
                    protocol: seedpod_protocol::PROTOCOL_VERSION,
                    client: "raw".into(),
                    mode,
                },
            )
            .await;
        match client.next().await {
            ServerMsg::Welcome { .. } => client,
            other => panic!("expected welcome, got {other:?}"),
        }
    }

    async fn send(&mut self, id: RequestId, method: Method) {
        let line = encode(&Request {
            id: Some(id),
            method,
        });
        self.lines.send(line).await.expect("send");
    }

    /// The next whole message; panics on a frame over the limit.
    async fn next(&mut self) -> ServerMsg {
        loop {
            let line = tokio::time::timeout(seedpod_e2e::EVENT_TIMEOUT, self.lines.next())
                .await
                .expect("a frame in time")
                .expect("the pod closed the connection")
                .expect("every frame is within the limit");
            self.frames += 1;
            if line.starts_with(seedpod_protocol::frames::PART_PREFIX) {
                self.parts += 1;
            }
            let mut buf = BytesMut::from(line.as_bytes());
            buf.extend_from_slice(b"\n");
            if let Some(message) = self.joiner.decode(&mut buf).expect("parts join") {
                return serde_json::from_str(&message).expect("a server message");
            }
        }
    }

    async fn call(&mut self, id: RequestId, method: Method) -> ServerMsg {
        self.send(id, method).await;
        loop {
            let msg = self.next().await;
            if seedpod_client::reply_id(&msg) == Some(id) {
                return msg;
            }
        }
    }
}

fn big_file(dir: &Path) {
    let line = "x".repeat(199);
    let text: String = (0..2_000).map(|i| format!("{i:05}{line}\n")).collect();
    std::fs::write(dir.join("big.txt"), text).unwrap();
}

fn script(sb: &TestHome) -> std::path::PathBuf {
    let read = json!({"path": "big.txt"}).to_string();
    let mut steps: Vec<serde_json::Value> = (0..STEPS)
        .map(|_| {
            let calls: Vec<_> = (0..CALLS_PER_STEP)
                .map(|_| json!({"name": "read_file", "arguments": read}))
                .collect();
            json!({"tool_calls": calls})
        })
        .collect();
    let big = "All work and no play. ".repeat(BIG_ANSWER_BYTES / 22 + 1);
    steps.push(json!({"text": big, "chunk_chars": 1_000_000}));
    steps.push(json!({"text": LAST_WORDS}));
    sb.script("s.jsonl", &steps)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_many_frames_attaches_and_every_frame_is_within_the_limit() {
    if !seedpod_e2e::heavy_scenario("a session of many frames: half a minute of a debug build") {
        return;
    }
    let sb = TestHome::new();
    std::fs::create_dir_all(sb.path().join(".seedpod")).unwrap();
    // A window big enough that the session is pruned in the request, never compacted away.
    std::fs::write(
        sb.path().join(".seedpod/config.toml"),
        // Reading one file 40 times is what the loop brakes stop; this test wants the bytes.
        "context_window = 10000000\n[context]\ncompact_at = 0.95\n[loop]\nrepeat_limit = 0\n",
    )
    .unwrap();
    big_file(sb.path());
    let script = script(&sb);
    sb.start_scripted("p", &script);

    // One turn builds the session: 40 file reads, then an answer longer than a frame.
    let mut conn = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    conn.send(Method::Subscribe { since_seq: None })
        .await
        .unwrap();
    wait_for(&mut conn, &mut seen, |m| {
        matches!(m, ServerMsg::SnapshotEnd { .. }).then_some(())
    })
    .await;
    let mut longest_live = 0;
    for ask in ["read big.txt many times", "and now?"] {
        conn.send(Method::Run {
            segments: vec![Segment::text(ask)],
        })
        .await
        .unwrap();
        // Building the session is slow in a debug build (hundreds of megabytes of request
        // bodies); wait for the run's end on its own deadline rather than the per-event one.
        tokio::time::timeout(BUILD_TIMEOUT, async {
            loop {
                let msg = conn.recv().await.unwrap().expect("the pod stays up");
                if let ServerMsg::Committed { entry, .. } = &msg {
                    longest_live = longest_live.max(encode(entry).len());
                }
                if is_run_end(&msg).is_some() {
                    break;
                }
            }
        })
        .await
        .expect("the run ends");
    }
    assert!(
        longest_live > MAX_FRAME_BYTES,
        "the big answer was committed live"
    );
    let segment_bytes: u64 = sb
        .segment_files("p")
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(
        segment_bytes > 2 * MAX_FRAME_BYTES as u64,
        "segment of {segment_bytes} bytes"
    );

    // Attach's snapshot, on a client that would fail on any frame over the limit.
    let mut raw = RawClient::connect(&sb, "p", ClientMode::Attach).await;
    raw.send(RequestId::new(1), Method::Subscribe { since_seq: None })
        .await;
    let mut snapshot_entries = 0;
    let mut announced = 0;
    loop {
        match raw.next().await {
            ServerMsg::SnapshotBegin { entries, .. } => announced = entries,
            ServerMsg::SnapshotEntries { entries } => snapshot_entries += entries.len() as u64,
            ServerMsg::SnapshotEnd { .. } => break,
            _ => {}
        }
    }
    assert_eq!(snapshot_entries, announced);
    assert!(raw.parts >= 2, "the big entry came in parts");

    // history and context, and a replay of the live events from the start.
    let mut control = RawClient::connect(&sb, "p", ClientMode::Control).await;
    let history = match control.call(RequestId::new(2), Method::GetHistory).await {
        ServerMsg::History { entries, .. } => entries,
        other => panic!("{other:?}"),
    };
    assert_eq!(history.len() as u64, announced);
    match control.call(RequestId::new(3), Method::GetContext).await {
        ServerMsg::Context { body, .. } => assert!(body.contains(LAST_WORDS)),
        other => panic!("{other:?}"),
    }
    let mut replay = RawClient::connect(&sb, "p", ClientMode::Attach).await;
    replay
        .send(
            RequestId::new(4),
            Method::Subscribe {
                since_seq: Some(seedpod_protocol::EventSeq::new(0)),
            },
        )
        .await;
    let mut replayed_big = false;
    while !replayed_big {
        match replay.next().await {
            ServerMsg::Committed { entry, .. } => {
                replayed_big = encode(&entry).len() > MAX_FRAME_BYTES;
            }
            ServerMsg::SnapshotEntries { entries } => {
                replayed_big = entries.iter().any(|e| encode(e).len() > MAX_FRAME_BYTES);
            }
            _ => {}
        }
    }

    // The command-line clients on the running pod.
    let out = sb.ok(&["history", "p"]);
    assert!(
        out.contains(LAST_WORDS),
        "{}",
        &out[out.len().saturating_sub(2000)..]
    );
    let out = sb.ok(&["context", "p"]);
    assert!(out.contains(LAST_WORDS));
    let mut events = EventsProcess::spawn(&sb, "p", &[]);
    let mut frames = Vec::new();
    events
        .wait_for(&mut frames, |m| {
            matches!(m, ServerMsg::SnapshotEnd { .. }).then_some(())
        })
        .await;
    let listed: usize = frames
        .iter()
        .map(|m| match m {
            ServerMsg::SnapshotEntries { entries } => entries.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(listed as u64, announced);
    events.stop().await;

    // And the TUI: the end of the session is on the first screen.
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for(LAST_WORDS);
    tui.send(seedpod_e2e::pty::keys::CTRL_D);
    assert!(tui.wait_exit(), "the TUI detaches cleanly");
}
