//! A pod that stops under an attached TUI (stopped from the CLI, or killed): the status line
//! says so and offers Ctrl-S, which starts it again from its log and reattaches in place.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

/// What the status line says (`seedpod_transcript::render::STOPPED`).
const STOPPED: &str = "pod stopped · Ctrl-S restores it";

/// Ctrl-S as a terminal sends it.
const CTRL_S: &str = "\x13";

#[test]
fn a_stopped_or_killed_pod_says_so_and_ctrl_s_restores_it() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "The answer before the stop."})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "hello"]);
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("The answer before the stop.");
    tui.wait_for("connected");

    // Stopped from the CLI.
    sb.ok(&["stop", "p"]);
    tui.wait_for(STOPPED);
    tui.wait_for("Ctrl-S restore the pod");
    assert!(!tui.contains("reconnecting"), "{}", tui.screen());
    tui.send(CTRL_S);
    tui.wait_until("the pod back, its transcript in place", |s| {
        let text = s.contents();
        text.contains("connected") && !text.contains(STOPPED)
    });
    tui.wait_for("The answer before the stop.");
    tui.wait_for("idle");

    // Killed.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(sb.kill9("p"));
    tui.wait_for(STOPPED);
    tui.send(CTRL_S);
    tui.wait_until("the pod back after the kill", |s| {
        let text = s.contents();
        text.contains("connected") && !text.contains(STOPPED)
    });
    tui.wait_for("The answer before the stop.");
    let listed = sb.ok(&["ls"]);
    assert!(listed.contains('p'), "{listed}");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}
