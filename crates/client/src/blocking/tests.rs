//! The blocking client against a fake pod on a real socket: a thread that accepts one
//! connection, records the lines it read and answers with the frames a test gives it.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::thread::JoinHandle;

use seedpod_protocol::{AckOutcome, ErrorCode};

use super::*;

const WELCOME: &str = r#"{"type":"welcome","protocol":1,"pod":"p","server_version":"0.1.0","state":"idle","instance":"i","seq":0}"#;
const ACK: &str = r#"{"type":"ack","id":2,"outcome":"done"}"#;

fn name() -> PodName {
    PodName::new("p").unwrap()
}

fn notify() -> Method {
    Method::Notify {
        message: "hello".into(),
        wake: false,
    }
}

/// A fake pod: reads `reads` lines, then writes `answer`, then holds the connection until the
/// client closes it. Joins to the lines it read.
struct FakePod {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    thread: JoinHandle<Vec<String>>,
}

impl FakePod {
    fn start(reads: usize, answer: Vec<String>) -> FakePod {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("p.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let thread = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut lines = Vec::new();
            for _ in 0..reads {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                lines.push(line.trim_end().to_string());
            }
            let mut writer = stream;
            for frame in answer {
                writer.write_all(frame.as_bytes()).unwrap();
                writer.write_all(b"\n").unwrap();
            }
            // Until the client hangs up (or forever, for a pod that never answers: the test
            // does not join then).
            let mut rest = String::new();
            let _ = reader.read_line(&mut rest);
            lines
        });
        FakePod {
            _dir: dir,
            socket,
            thread,
        }
    }

    fn call(&self, quick: Duration, method: Method) -> Result<ServerMsg, ClientError> {
        call_at(&self.socket, &name(), Some(42), quick, "test", method)
    }

    fn lines(self) -> Vec<String> {
        self.thread.join().unwrap()
    }
}

fn quick() -> Duration {
    Duration::from_secs(10)
}

#[test]
fn hello_and_the_request_go_in_one_write_and_the_ack_comes_back() {
    let pod = FakePod::start(2, vec![WELCOME.into(), ACK.into()]);
    let reply = pod.call(quick(), notify()).unwrap();
    assert!(
        matches!(
            reply,
            ServerMsg::Ack {
                outcome: AckOutcome::Done,
                ..
            }
        ),
        "{reply:?}"
    );
    let lines = pod.lines();
    let hello: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(hello["method"], "hello");
    assert_eq!(hello["id"], 1);
    assert_eq!(hello["mode"], "control");
    let request: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(request["method"], "notify");
    assert_eq!(request["id"], 2);
    assert_eq!(request["message"], "hello");
}

#[test]
fn events_before_the_reply_are_skipped_and_parts_are_joined() {
    let ack = r#"{"type":"ack","id":2,"outcome":"queued"}"#;
    let mut frames = vec![
        WELCOME.to_string(),
        r#"{"type":"state","seq":1,"state":"running"}"#.to_string(),
    ];
    // Parts as a pod sends a long message, here for a short one split by hand.
    let (head, tail) = ack.split_at(10);
    // Written by hand: a part frame must begin with exactly `{"type":"part"`.
    let part = |more: bool, data: &str| {
        let data = serde_json::Value::from(data);
        format!(r#"{{"type":"part","more":{more},"data":{data}}}"#)
    };
    frames.push(part(true, head));
    frames.push(part(false, tail));
    let pod = FakePod::start(2, frames);
    let reply = pod.call(quick(), notify()).unwrap();
    assert!(
        matches!(
            reply,
            ServerMsg::Ack {
                outcome: AckOutcome::Queued,
                ..
            }
        ),
        "{reply:?}"
    );
}

#[test]
fn an_error_reply_is_a_refusal_and_a_goodbye_is_a_close() {
    let refused = r#"{"type":"error","id":2,"code":"not_running","message":"nothing runs"}"#;
    let pod = FakePod::start(2, vec![WELCOME.into(), refused.into()]);
    match pod.call(quick(), Method::Pause) {
        Err(ClientError::Refused { code, message }) => {
            assert_eq!(code, ErrorCode::NotRunning);
            assert_eq!(message, "nothing runs");
        }
        other => panic!("{other:?}"),
    }
    let bye = r#"{"type":"goodbye","reason":"shutdown","message":"the pod is stopping"}"#;
    let pod = FakePod::start(2, vec![WELCOME.into(), bye.into()]);
    let err = pod.call(quick(), notify()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pod \"p\" closed the connection: the pod is stopping"
    );
}

#[test]
fn an_incompatible_pod_says_which_side_is_older() {
    let incompatible = r#"{"type":"incompatible","supported":0,"reason":"the pod is older; run `seedpod restart NAME`"}"#;
    let pod = FakePod::start(2, vec![incompatible.into()]);
    let err = pod.call(quick(), notify()).unwrap_err();
    assert_eq!(err.to_string(), "the pod is older; run `seedpod restart p`");
}

#[test]
fn a_pod_that_never_answers_is_reported_with_its_pid() {
    let pod = FakePod::start(2, Vec::new());
    let started = Instant::now();
    let err = pod.call(Duration::from_millis(100), notify()).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(100));
    let text = err.to_string();
    assert!(
        text.starts_with("pod p (pid 42) is not answering: no reply to the handshake in 100 ms"),
        "{text}"
    );
}

#[test]
fn no_socket_means_not_running() {
    let dir = tempfile::tempdir().unwrap();
    let err = call_at(
        &dir.path().join("p.sock"),
        &name(),
        None,
        quick(),
        "test",
        notify(),
    )
    .unwrap_err();
    assert!(matches!(err, ClientError::NotRunning { .. }), "{err:?}");
}

#[test]
fn a_request_over_the_frame_limit_is_not_sent() {
    let pod = FakePod::start(1, vec![WELCOME.into()]);
    let big = Method::Notify {
        message: "x".repeat(MAX_FRAME_BYTES),
        wake: true,
    };
    let err = pod.call(quick(), big).unwrap_err();
    assert!(
        err.to_string().contains("MiB a pod accepts in one message"),
        "{err}"
    );
    // The client hung up after the welcome; nothing followed hello.
    assert_eq!(pod.lines().len(), 1);
}

#[test]
fn a_pod_that_hangs_up_before_the_welcome_closed_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("p.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    // Reads both lines (so closing is an orderly end, not a reset), then hangs up.
    let closer = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream);
        for _ in 0..2 {
            reader.read_line(&mut String::new()).unwrap();
        }
    });
    let err = call_at(&socket, &name(), None, quick(), "test", notify()).unwrap_err();
    closer.join().unwrap();
    assert_eq!(
        err.to_string(),
        "pod \"p\" closed the connection: during the handshake"
    );
}
