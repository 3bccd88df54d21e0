//! The `pre_compact` hook end to end (docs/hooks.md): a compaction runs the person's hooks with
//! the event on stdin (`trigger` saying why), a failing one is reported while the compaction
//! goes on, and one that hangs never holds the compaction up — it only observes.

use std::io::Read as _;
use std::path::Path;

use seedpod_e2e::{EVENT_TIMEOUT, TestHome, wait_for};
use seedpod_protocol::{ClientMode, EntryKind, Origin, ServerMsg};
use serde_json::{Value, json};

/// Make a named pipe: a hook writing to it blocks until the test reads, so the test waits for
/// the hook's event, not for time to pass.
fn fifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path we own.
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_runs_the_pre_compact_hooks_and_never_waits_for_them() {
    let sb = TestHome::new();
    let events_pipe = sb.path().join("pre_compact.fifo");
    fifo(&events_pipe);
    // The first hook fails; the second hands its event to the test, and hangs until the test
    // reads it — after the compaction is over.
    sb.user_config(&format!(
        "[[hooks.pre_compact]]\ncommand = \"cat > /dev/null; exit 7\"\n\n\
         [[hooks.pre_compact]]\ncommand = \"cat > '{}'\"\ntimeout_secs = 600\n",
        events_pipe.display()
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "first answer"}),
            json!({"text": "second answer"}),
            json!({"text": "SUMMARY: two answers"}),
        ],
    );
    sb.start_scripted("p", &script);
    for input in ["one", "two"] {
        sb.ok(&["send", "p", input]);
    }
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();

    let compacted = sb.ok(&["send", "p", "/compact"]);
    assert!(compacted.contains("compacted"), "{compacted}");
    let history = sb.history("p").await;
    assert!(
        matches!(
            history.first().map(|e| &e.kind),
            Some(EntryKind::SegmentStart(start)) if matches!(start.origin, Origin::CompactedFrom { .. })
        ),
        "the compaction finished while a pre_compact hook still hung"
    );
    let alert = wait_for(&mut events, &mut seen, |msg| match msg {
        ServerMsg::Alert { message, .. } if message.contains("pre_compact") => {
            Some(message.clone())
        }
        _ => None,
    })
    .await;
    assert!(
        alert.contains("exited with status 7") && alert.contains("nothing waited for it"),
        "{alert}"
    );

    let read = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::fs::File::open(&events_pipe)
            .and_then(|mut pipe| pipe.read_to_string(&mut text))
            .map(|_| text)
    });
    let text = tokio::time::timeout(EVENT_TIMEOUT, read)
        .await
        .expect("the hook wrote its event")
        .unwrap()
        .expect("read the pipe");
    let event: Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(event["event"], "pre_compact");
    assert_eq!(event["trigger"], "command");
    assert_eq!(event["pod"], "p");
    assert_eq!(
        event["cwd"].as_str().map(Path::new),
        Some(sb.path().canonicalize().unwrap().as_path())
    );
    sb.ok(&["stop", "p"]);
}
