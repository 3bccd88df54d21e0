//! Resource exhaustion is survivable: silent connections are closed, a flood beyond
//! the connection limit is refused with a reason, and a pod out of file descriptors backs off
//! instead of spinning, then serves again once descriptors come back.

use std::os::unix::process::CommandExt;
use std::time::Duration;

use seedpod_e2e::TestHome;
use seedpod_protocol::{ErrorCode, PodName, ServerMsg};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

async fn connect(sb: &TestHome) -> UnixStream {
    UnixStream::connect(sb.home.socket_path(&PodName::new("p").unwrap()))
        .await
        .expect("connect")
}

async fn frames(stream: UnixStream) -> Vec<ServerMsg> {
    let mut lines = BufReader::new(stream).lines();
    let mut out = Vec::new();
    // Bounded by the pod: it closes the connection after what it has to say.
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await
    {
        out.push(serde_json::from_str(&line).expect("a frame"));
    }
    out
}

/// A connection that says nothing holds up nobody: the pod answers others while it waits for
/// that connection's hello. (That the silent one is told why and closed at the deadline is
/// `pod/src/connection.rs`'s test, on paused time.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_says_hello_holds_up_nobody() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let silent = connect(&sb).await;
    // Acknowledged while the silent connection is still open and still unanswered.
    sb.ok(&["notify", "p", "still here"]);
    sb.ok(&["ls"]);
    drop(silent);
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_limit_are_refused_with_a_reason() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let mut held = Vec::new();
    for _ in 0..MAX_CONNECTIONS {
        held.push(connect(&sb).await);
    }
    let over = connect(&sb).await;
    let said = frames(over).await;
    match said.as_slice() {
        [
            ServerMsg::Error {
                code: ErrorCode::Busy,
                message,
                ..
            },
        ] => {
            assert!(message.contains("close some"), "{message}");
        }
        other => panic!("expected one busy error, got {other:?}"),
    }
    // Close them, and wait until the pod has closed each one too: only then are their slots
    // free (dropping them and connecting at once could still find the pod full).
    for mut stream in held {
        stream.shutdown().await.unwrap();
        frames(stream).await;
    }
    sb.ok(&["notify", "p", "room again"]);
    sb.ok(&["stop", "p"]);
}

/// The pod's limit (`seedpod_pod::server::MAX_CONNECTIONS`, stated in docs/protocol.md).
const MAX_CONNECTIONS: usize = 256;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_out_of_descriptors_backs_off_and_serves_again() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    let mut start = sb.cmd();
    start.args([
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
    ]);
    // SAFETY: setrlimit is async-signal-safe; it only lowers the started process's own limit,
    // which the pod it launches inherits.
    unsafe {
        start.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = start.output().expect("run seedpod start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // More connections than the pod has descriptors: the rest wait in the backlog while every
    // accept fails with EMFILE.
    let mut held = Vec::new();
    for _ in 0..100 {
        let mut stream = connect(&sb).await;
        let hello = r#"{"id":0,"method":"hello","protocol":1,"client":"storm","mode":"control"}"#;
        stream
            .write_all(format!("{hello}\n").as_bytes())
            .await
            .unwrap();
        held.push(stream);
    }
    // Let the storm run for a while: the loop must back off, not spin.
    let log = sb.home.log_path(&PodName::new("p").unwrap());
    let failed_lines = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("accept_failed"))
            .count()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while failed_lines() == 0 && tokio::time::Instant::now() < deadline {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(failed_lines() > 0, "the pod never ran out of descriptors");
    // The storm's length, not a synchronisation: a loop without backoff logs thousands of
    // failures in a second, one with it a handful.
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop(held);
    // Descriptors are back: the pod answers again.
    sb.ok(&["notify", "p", "after the storm"]);
    let failed = failed_lines();
    assert!(failed < 50, "{failed} accept_failed lines: the loop spun");
    sb.ok(&["stop", "p"]);
}
