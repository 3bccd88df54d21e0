//! `seedpod restart` while a turn runs: the CLI says it interrupted the turn and what happens
//! now (the restored pod holds the turn paused), and the pod commits a notice saying so where it
//! happened — so a TUI that reconnects, and one attached later, show it from the log. The notice
//! is for the person: the model never reads it, and a replay sends the same bytes.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

const NOTICE: &str = "the pod stopped in the middle of a turn";

#[test]
fn a_restart_mid_turn_is_said_on_the_cli_and_stays_in_the_transcript() {
    let sb = TestHome::new();
    let gate = sb.gate("held");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "First answer."}),
            json!({"text": "Zebras cross here, slowly.", "chunk_chars": 4,
                   "gate": gate.to_str().unwrap()}),
            json!({"text": "Answer after the restart."}),
        ],
    );
    sb.start_scripted("p", &script);
    assert_eq!(sb.ok(&["send", "p", "one"]).trim(), "First answer.");

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("two");
    tui.wait_for("two");
    tui.send(keys::ENTER);
    tui.wait_for("Zebr");

    let out = sb.run(&["restart", "p"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("the restart interrupted a running turn"),
        "{said}"
    );
    assert!(
        said.contains("paused") && said.contains("seedpod resume p"),
        "{said}"
    );

    // The TUI that was attached reconnects and reads the notice from the log.
    tui.wait_for(NOTICE);
    tui.wait_for("paused");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    // So does one attached later, with the notice where it happened: after the cut answer.
    let mut later = Tui::spawn(&sb, &["attach", "p"]);
    later.wait_for(NOTICE);
    let screen = later.screen();
    let cut = screen.find("Zebr").expect("the streamed text is kept");
    assert!(cut < screen.find(NOTICE).unwrap(), "{screen}");
    later.send(keys::CTRL_D);
    assert!(later.wait_exit());

    let history = sb.ok(&["history", "p"]);
    assert!(history.contains(NOTICE), "{history}");
    // Never model-visible; a second restart says nothing new and replays the same bytes.
    let context = sb.ok(&["context", "p"]);
    assert!(!context.contains("middle of a turn"), "{context}");
    let out = sb.run(&["restart", "p"]);
    assert!(out.status.success());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("interrupted"),
        "a paused pod had no running turn to interrupt"
    );
    assert_eq!(sb.ok(&["context", "p"]), context);
    assert_eq!(
        sb.ok(&["history", "p"]).matches(NOTICE).count(),
        1,
        "said once"
    );

    // Resuming goes on from where the turn stopped.
    sb.open_gate("held");
    sb.ok(&["resume", "p"]);
}
