//! Issue 13 must-show 4: type-ahead never answers the approval modal. In a real terminal, keys
//! typed while a turn runs and while its approval request arrives answer nothing; once the
//! modal's grace period is over (its countdown gone from the screen), `a` asks to confirm the
//! standing rule and a second `a` grants it, and a single `y` approves once. The pod's log says
//! which answer each request got.

use seedpod_e2e::Sandbox;
use seedpod_e2e::pty::{Tui, keys};
use seedpod_protocol::{
    ApprovalDecision, ApprovalRequest, CallId, Entry, EntryKind, StandingApproval,
};
use serde_json::json;

/// The modal's line while it still ignores keys.
const COUNTDOWN: &str = "keys typed as it opened are ignored";
/// The footer once the modal takes keys (drawn below the modal, so the frame is complete).
const ANSWER_KEYS: &str = "y approve · a approve always";

fn history(sb: &Sandbox) -> Vec<Entry> {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(sb.history("p"))
}

fn requests(entries: &[Entry]) -> Vec<ApprovalRequest> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ApprovalRequest(request) => Some(request.clone()),
            _ => None,
        })
        .collect()
}

fn answers(entries: &[Entry]) -> Vec<(CallId, ApprovalDecision)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ApprovalAnswer { call_id, decision } => {
                Some((call_id.clone(), decision.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Wait until the modal shows and takes keys: the grace period under test is wall-clock time,
/// so the test waits for its countdown to leave the screen rather than sleeping.
fn wait_until_the_modal_takes_keys(tui: &mut Tui) {
    tui.wait_until("the modal to take keys", |screen| {
        let text = screen.contents();
        text.contains("approval needed") && text.contains(ANSWER_KEYS) && !text.contains(COUNTDOWN)
    });
}

#[test]
fn type_ahead_does_not_answer_and_always_needs_a_confirmation() {
    let sb = Sandbox::new();
    let gate = sb.gate("hold");
    let script = sb.script(
        "s.jsonl",
        &[
            // The first words stream, then the reply is held until the test opens the gate.
            json!({"text": "Looking at it.", "chunk_chars": 8, "gate": gate,
                   "tool_calls": [{"name": "shell", "arguments": json!({"command": "mkdir made-always"}).to_string()}]}),
            json!({"text": "Made the directory."}),
            json!({"tool_calls": [{"name": "shell", "arguments": json!({"command": "touch once.txt"}).to_string()}]}),
            json!({"text": "Touched once.txt."}),
        ],
    );
    sb.start_scripted("p", &script);

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("write the file");
    tui.send(keys::ENTER);
    tui.wait_for("Looking");

    // The person keeps typing while the turn runs: these keys are the composer's.
    tui.send("ya ");
    tui.wait_for("ya ");
    // The request arrives mid-typing: answer keys keep coming, each one waiting for its effect
    // on the screen (an echo in the composer, or the modal's countdown moving).
    sb.open_gate("hold");
    let mut typed = 0;
    while !tui.contains("approval needed") {
        assert!(typed < 10_000, "the approval request never came");
        let before = tui.screen();
        tui.send(if typed % 2 == 0 { "a" } else { "y" });
        typed += 1;
        tui.wait_until("the key to show", |screen| screen.contents() != before);
    }
    // And a few more, as the modal opens.
    tui.send("aay");

    wait_until_the_modal_takes_keys(&mut tui);
    let entries = history(&sb);
    let asked = requests(&entries);
    assert_eq!(asked.len(), 1, "one request so far");
    assert!(
        answers(&entries).is_empty(),
        "type-ahead answered the modal: {:?}",
        answers(&entries)
    );
    assert!(!sb.path().join("made-always").exists(), "ran unanswered");

    // `a` alone grants nothing: the modal says what the rule would cover and waits.
    tui.send("a");
    tui.wait_for("Approve always? That sets a standing rule:");
    tui.wait_for("`mkdir");
    assert!(answers(&history(&sb)).is_empty(), "a alone answered");
    // The confirmation has its own grace: wait until it takes keys.
    tui.wait_for("a/Enter approve always");
    tui.send("a");
    tui.wait_for("Made the directory.");
    tui.wait_for("idle");
    assert!(
        sb.path().join("made-always").exists(),
        "the approved call ran"
    );
    let first = &asked[0];
    let rule = first
        .always
        .clone()
        .expect("a plain mkdir may have a standing rule");
    assert_eq!(
        answers(&history(&sb)),
        vec![(
            first.call_id.clone(),
            ApprovalDecision::ApproveAlways(StandingApproval {
                tool: "shell".into(),
                rule: Some(rule),
            })
        )],
        "the log holds one approve_always, for the mkdir rule"
    );

    // The typed-ahead keys stayed in the composer; clear them, then a command the rule does
    // not cover is asked about, and a single `y` approves it once.
    tui.send(keys::CTRL_C);
    tui.wait_for("Message the pod");
    tui.send("now touch it");
    tui.send(keys::ENTER);
    tui.wait_for("$ touch once.txt");
    wait_until_the_modal_takes_keys(&mut tui);
    tui.send("y");
    tui.wait_for("Touched once.txt.");
    tui.wait_for("idle");
    assert!(sb.path().join("once.txt").exists(), "y ran the call");
    let entries = history(&sb);
    let second = requests(&entries).pop().expect("the second request");
    assert!(
        second.always.is_some(),
        "a plain touch may have a standing rule"
    );
    assert_eq!(
        answers(&entries).pop(),
        Some((second.call_id, ApprovalDecision::Approve)),
        "y approves once"
    );

    // `/approvals` lists the rule `a` made; `d` revokes it, and the log says so.
    tui.send("/approvals");
    tui.send(keys::ENTER);
    tui.wait_for("standing approvals");
    tui.wait_for("1  shell: mkdir");
    tui.send("d");
    tui.wait_for("No standing approvals.");
    assert!(
        history(&sb)
            .iter()
            .any(|e| matches!(e.kind, EntryKind::ApprovalRevoked { .. })),
        "the revocation is in the log"
    );
    tui.wait_for("standing approval revoked: shell: mkdir");
    // `q` closes it (a lone Esc followed at once by Ctrl-D can be read as one Alt key).
    tui.send("q");
    tui.wait_until("the popup to close", |screen| {
        !screen.contents().contains("d revoke")
    });

    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit(), "the TUI exits 0 on detach");
}
