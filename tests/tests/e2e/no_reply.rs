//! A turn woken by a notification that the model answers with
//! `NO_REPLY` is shown as a dim "noted" line, not as an answer, and `send` prints only its own
//! answer; a person's own `NO_REPLY` turn is shown as the text it is.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

#[tokio::test]
async fn no_reply_to_a_notification_is_noted_and_to_a_person_is_text() {
    let sb = TestHome::new();
    let gate = sb.gate("typed");
    let script = sb.script(
        "s.jsonl",
        &[
            // The notification's turn: nothing to say.
            json!({"text": "NO_REPLY"}),
            // The person's turn, answered with the same words.
            json!({"text": "NO_REPLY", "gate": gate.to_str().unwrap()}),
        ],
    );
    sb.start_scripted("p", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");

    sb.ok(&["notify", "p", "deploy finished"]);
    tui.wait_for("noted, no reply needed");
    assert!(!tui.contains("NO_REPLY"), "{}", tui.screen());

    sb.open_gate("typed");
    let out = sb.ok(&["send", "p", "reply with NO_REPLY please"]);
    assert_eq!(
        out.trim(),
        "NO_REPLY",
        "a person's turn is answered as typed"
    );
    tui.wait_until("the person's NO_REPLY shown as text", |screen| {
        screen.contents().matches("NO_REPLY").count() >= 2
    });
    // Once in the person's message and once as the answer; the notification's stays noted.
    assert_eq!(tui.screen().matches("noted, no reply needed").count(), 1);
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}
