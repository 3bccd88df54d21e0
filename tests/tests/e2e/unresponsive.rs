//! A pod whose process is stopped (SIGSTOP) keeps its socket, so connecting works
//! and then nothing ever comes back. Clients give up with a clear message and exit 1 instead
//! of hanging, and work again once the process is resumed.

use std::time::Instant;

use seedpod_e2e::{TestHome, kill};
use serde_json::json;

#[tokio::test]
async fn clients_say_a_stopped_pod_is_not_answering_and_exit_1() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let pid = sb.pid("p").await;

    kill(pid, libc::SIGSTOP);
    for args in [
        &["notify", "p", "are you there?"][..],
        &["history", "p"][..],
        &["context", "p"][..],
    ] {
        let started = Instant::now();
        let out = sb
            .cmd()
            .env("SEEDPOD_CLIENT_TIMEOUT_MS", "300")
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("pod p (pid {pid}) is not answering")),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(&format!("kill -CONT {pid}")), "{stderr}");
        // Bounded by the deadline, not by the test's patience.
        assert!(
            started.elapsed().as_secs() < 20,
            "{args:?} took {:?}",
            started.elapsed()
        );
    }

    // Resumed, the same pod answers. (The notify written before it was stopped was never
    // acknowledged; the pod may still read and commit it now — unknown, not lost.)
    kill(pid, libc::SIGCONT);
    sb.ok(&["notify", "p", "back again"]);
    let history = sb.history("p").await;
    let text = serde_json::to_string(&history).unwrap();
    assert!(text.contains("back again"), "{text}");
}
