//! The pod process's life as people and scripts meet it: SIGTERM and SIGINT take the graceful
//! path and the pod restores exactly; `kill -9` leaves only a stale socket that the next start
//! clears; `events --since` resumes a stream with nothing missing or repeated; `notify` returns
//! only once the pod durably queued the message; a second `start` reuses the running pod.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::process::Stdio;

use seedpod_client::{ClientError, Connection};
use seedpod_e2e::{EVENT_TIMEOUT, TestHome, is_run_end, kill, wait_exit, wait_for};
use seedpod_protocol::{
    ClientMode, Entry, EntryKind, EventSeq, Method, PodName, PodState, QueuedItem, Segment,
    ServerMsg, SystemItem,
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

fn text_delta(msg: &ServerMsg) -> Option<()> {
    matches!(msg, ServerMsg::TextDelta { .. }).then_some(())
}

/// Lines of `history --json`, decoded.
fn entries(json_lines: &str) -> Vec<Entry> {
    json_lines
        .lines()
        .map(|line| serde_json::from_str(line).expect("history --json prints entries"))
        .collect()
}

/// Occurrences of a pod log event (`"event":"NAME"` in its JSON lines). The log is written in
/// the background, so only count once the pod process has exited.
fn log_events(sb: &TestHome, name: &str, event: &str) -> usize {
    let log = std::fs::read_to_string(sb.home.log_path(&PodName::new(name.to_string()).unwrap()))
        .unwrap_or_default();
    let needle = format!("\"event\":\"{event}\"");
    log.lines().filter(|line| line.contains(&needle)).count()
}

/// A pod `p` with one finished turn and a second held mid-stream at gate `held`.
async fn pod_mid_turn(sb: &TestHome) -> Connection {
    let gate = sb.gate("held");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "first answer"}),
            json!({"text": "an answer held mid-stream", "chunk_chars": 3,
                   "gate": gate.to_str().unwrap()}),
            json!({"text": "answer after the restart"}),
        ],
    );
    sb.start_scripted("p", &script);
    assert_eq!(sb.ok(&["send", "p", "one"]).trim(), "first answer");
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut control = sb.connect("p", ClientMode::Control).await;
    control
        .call(Method::Run {
            segments: vec![Segment::text("two")],
        })
        .await
        .expect("run");
    wait_for(&mut events, &mut Vec::new(), text_delta).await;
    events
}

async fn signal_takes_the_graceful_path(signal: i32, signal_name: &str) {
    let sb = TestHome::new();
    let _events = pod_mid_turn(&sb).await;
    let history = sb.ok(&["history", "p", "--json"]);
    let context = sb.ok(&["context", "p"]);
    let socket = sb.home.socket_path(&PodName::new("p").unwrap());
    assert!(socket.exists());
    let pid = sb.pid("p").await;

    kill(pid, signal);
    wait_exit(pid).await;
    assert!(
        !socket.exists(),
        "{signal_name}: the graceful path removes the socket"
    );
    assert_eq!(
        log_events(&sb, "p", "signal_shutdown"),
        1,
        "{signal_name} was handled"
    );
    assert_eq!(log_events(&sb, "p", "server_exit"), 1, "{signal_name}");

    // The log ends with whole lines: exactly the entries the live pod reported, then what the
    // held answer had streamed, kept by the graceful stop: text a person was shown is never lost.
    let segment = sb.segment_files("p").pop().expect("a segment file");
    let on_disk = std::fs::read_to_string(&segment).unwrap();
    assert!(
        on_disk.starts_with(&history),
        "{signal_name}: the log is intact"
    );
    let mut written = entries(&on_disk);
    let last = written.pop().unwrap();
    assert!(
        matches!(&last.kind, EntryKind::AssistantInterrupted { text } if text == "an"),
        "{signal_name}: the streamed text is the last entry: {last:?}"
    );
    let before = written.pop().unwrap();
    assert!(
        matches!(&before.kind, EntryKind::UserInput { text, .. } if text == "two"),
        "{signal_name}: the held turn's input comes just before: {before:?}"
    );

    assert_eq!(sb.ok(&["start", "p"]).trim(), "p");
    let restored = sb.ok(&["context", "p"]);
    assert_ne!(
        restored, context,
        "{signal_name}: the model now reads what it said"
    );
    assert!(
        restored.contains(r#""text":"an""#),
        "{signal_name}: {restored}"
    );
    // Restoring added a notice for the person (never model-visible) after the intact log.
    let restored = sb.ok(&["history", "p", "--json"]);
    assert!(restored.starts_with(&on_disk), "{signal_name}");
    let added = &restored[on_disk.len()..];
    assert_eq!(added.lines().count(), 1, "{signal_name}: {added}");
    assert!(
        added.contains(r#""kind":"notice""#),
        "{signal_name}: {added}"
    );
    let conn = sb.connect("p", ClientMode::Control).await;
    assert_eq!(
        conn.welcome.state,
        PodState::Paused,
        "{signal_name}: the interrupted turn comes back paused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_gracefully_and_restores_identically() {
    signal_takes_the_graceful_path(libc::SIGTERM, "SIGTERM").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_gracefully_and_restores_identically() {
    signal_takes_the_graceful_path(libc::SIGINT, "SIGINT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_leaves_a_stale_socket_that_start_removes() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "served again"})]);
    sb.start_scripted("p", &script);
    let old_pid = sb.pid("p").await;
    sb.kill9("p").await;

    let socket = sb.home.socket_path(&PodName::new("p").unwrap());
    let stale = std::fs::symlink_metadata(&socket).expect("kill -9 leaves the socket file");
    assert!(stale.file_type().is_socket());
    let refused = Connection::connect(
        &sb.home,
        &PodName::new("p").unwrap(),
        "e2e",
        ClientMode::Control,
    )
    .await;
    assert!(
        matches!(refused, Err(ClientError::NotRunning { .. })),
        "nothing listens on the stale socket"
    );

    // A second name for the stale file keeps its inode alive, so the inode cannot be reused and
    // its link count shows whether the pod unlinked the socket path.
    let witness = sb.path().join("stale-socket");
    std::fs::hard_link(&socket, &witness).expect("link the stale socket");

    assert_eq!(sb.ok(&["start", "p"]).trim(), "p");
    let fresh = std::fs::symlink_metadata(&socket).expect("the new pod's socket");
    assert!(fresh.file_type().is_socket());
    assert_ne!(fresh.ino(), stale.ino(), "a new socket file was bound");
    let witness = std::fs::symlink_metadata(&witness).unwrap();
    assert_eq!(
        witness.nlink(),
        1,
        "the stale file was removed from the socket path"
    );
    assert_ne!(sb.pid("p").await, old_pid, "a new process serves");
    assert_eq!(sb.ok(&["send", "p", "hello"]).trim(), "served again");
}

/// The seq of the committed entry `pick` matches, from an attached client's frames.
fn committed_seq(pick: impl Fn(&EntryKind) -> bool) -> impl FnMut(&ServerMsg) -> Option<EventSeq> {
    move |msg| match msg {
        ServerMsg::Committed { seq, entry } if pick(&entry.kind) => Some(*seq),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_since_prints_exactly_the_events_after_seq() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "an answer in several chunks", "chunk_chars": 5})],
    );
    sb.start_scripted("p", &script);
    let mut attached = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    wait_for(&mut attached, &mut seen, |m| {
        matches!(m, ServerMsg::SnapshotEnd { .. }).then_some(())
    })
    .await;
    sb.ok(&["send", "p", "go"]);
    let since = wait_for(
        &mut attached,
        &mut seen,
        committed_seq(|k| matches!(k, EntryKind::UserInput { .. })),
    )
    .await;
    wait_for(&mut attached, &mut seen, is_run_end).await;

    let mut follower = tokio::process::Command::from(sb.cmd())
        .args(["events", "p", "--json", "--since", &since.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn seedpod events");
    // One more event after the follower started: it must arrive live, after the replayed ones.
    sb.ok(&["notify", "p", "marker", "--no-wake"]);
    let marker = wait_for(
        &mut attached,
        &mut seen,
        committed_seq(|k| {
            matches!(k, EntryKind::SystemItem { item: SystemItem::Notification { message, .. }, .. } if message == "marker")
        }),
    )
    .await;

    let stdout = follower.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut printed = Vec::new();
    tokio::time::timeout(EVENT_TIMEOUT, async {
        while let Some(line) = lines.next_line().await.expect("read events output") {
            let msg: ServerMsg = serde_json::from_str(&line).expect("events --json prints frames");
            let done = msg.seq() == Some(marker);
            printed.push(msg);
            if done {
                return;
            }
        }
        panic!("seedpod events ended before the marker: {printed:?}");
    })
    .await
    .expect("seedpod events printed up to the marker");
    follower.start_kill().expect("stop seedpod events");
    let _ = follower.wait().await;

    let expected: Vec<&ServerMsg> = seen
        .iter()
        .filter(|m| m.seq().is_some_and(|seq| seq > since && seq <= marker))
        .collect();
    assert!(expected.len() > 3, "the run produced events after {since}");
    assert_eq!(printed.iter().collect::<Vec<_>>(), expected);
    assert_eq!(printed.first().and_then(ServerMsg::seq), Some(since + 1));
}

fn is_queued_notify(entry: &Entry, text: &str) -> bool {
    matches!(&entry.kind, EntryKind::Queued { item: QueuedItem::Notify { message, wake: true }, .. } if message == text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_while_running_reports_queued_and_returns_after_the_durable_ack() {
    let sb = TestHome::new();
    let _events = pod_mid_turn(&sb).await;

    let out = sb.run(&["notify", "p", "note while running"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("notified p: queued (durable)"),
        "says it was queued: {stderr}"
    );
    let history = entries(&sb.ok(&["history", "p", "--json"]));
    assert!(
        history
            .iter()
            .any(|e| is_queued_notify(e, "note while running")),
        "the queued entry is in the log when notify returns"
    );
    assert!(
        !sb.ok(&["context", "p"]).contains("note while running"),
        "queued, not yet history"
    );

    // Acknowledged means durable: it survives kill -9.
    sb.kill9("p").await;
    let offline = entries(&sb.ok(&["history", "p", "--json"]));
    assert!(
        offline
            .iter()
            .any(|e| is_queued_notify(e, "note while running"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_start_of_a_running_pod_reuses_it() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let pid = sb.pid("p").await;
    let instance = sb.connect("p", ClientMode::Control).await.welcome.instance;

    let script_arg = script.to_str().unwrap();
    for args in [
        vec!["start", "p"],
        vec![
            "start",
            "p",
            "--provider",
            "scripted",
            "--script",
            script_arg,
        ],
    ] {
        assert_eq!(sb.ok(&args).trim(), "p", "{args:?} prints the name");
        assert_eq!(sb.pid("p").await, pid, "{args:?}: the same process");
        let conn = sb.connect("p", ClientMode::Control).await;
        assert_eq!(conn.welcome.instance, instance, "{args:?}: the same pod");
    }
    // No second pod process was spawned, not even one that failed on the lock. The pod log is
    // written in the background and flushed when the process exits.
    sb.ok(&["stop", "p"]);
    wait_exit(pid).await;
    assert_eq!(log_events(&sb, "p", "server_start"), 1);
    assert_eq!(log_events(&sb, "p", "server_failed"), 0);
    assert!(stderr_is_empty(&sb.home.logs_dir().join("p.stderr")));
}

fn stderr_is_empty(path: &Path) -> bool {
    std::fs::read_to_string(path).unwrap_or_default().is_empty()
}
