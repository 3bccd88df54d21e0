//! Typing never answers the approval modal. In a real terminal, keys typed while a turn runs
//! and while its approval request arrives answer nothing and land in the composer, also when
//! typing goes on steadily for longer than the pause the modal waits for; once the person
//! pauses (the modal's "waiting for a pause" line gone from the screen), `a` asks to confirm the
//! standing rule and a second `a` grants it, and a single `y` approves once. The pod's log says
//! which answer each request got.

use std::time::Duration;

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use seedpod_protocol::{
    ApprovalDecision, ApprovalRequest, CallId, Entry, EntryKind, StandingApproval,
};
use serde_json::json;

/// The modal's line while it waits for a pause in typing before it takes answers.
const WAITING: &str = "waiting for a pause in typing";
/// The footer once the modal takes keys (drawn below the modal, so the frame is complete).
const ANSWER_KEYS: &str = "y approve · a approve always";

fn history(sb: &TestHome) -> Vec<Entry> {
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

/// Wait until the modal shows and takes keys: the pause under test is wall-clock time, so the
/// test waits for the modal to stop saying it waits rather than sleeping.
fn wait_until_the_modal_takes_keys(tui: &mut Tui) {
    tui.wait_until("the modal to take keys", |screen| {
        let text = screen.contents();
        text.contains("approval needed") && text.contains(ANSWER_KEYS) && !text.contains(WAITING)
    });
}

#[test]
fn type_ahead_does_not_answer_and_always_needs_a_confirmation() {
    let sb = TestHome::new();
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
    // The request arrives mid-typing: answer keys keep coming, each one waiting for its echo in
    // the composer.
    sb.open_gate("hold");
    let mut typed = 0;
    while !tui.contains("approval needed") {
        assert!(typed < 10_000, "the approval request never came");
        let before = tui.screen();
        tui.send(if typed % 2 == 0 { "a" } else { "y" });
        typed += 1;
        tui.wait_until("the key to show", |screen| screen.contents() != before);
    }
    // And a few more, as the modal opens: typing, so they are the composer's.
    tui.send("aay");

    wait_until_the_modal_takes_keys(&mut tui);
    tui.wait_for("aay");
    assert!(tui.contains("› ya "), "the typing is in the composer");
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
    // The confirmation waits for its own pause: wait until it takes keys.
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

/// A steady typist: eight keys a second.
const STEADY: Duration = Duration::from_millis(125);

#[test]
fn steady_typing_as_the_modal_opens_answers_nothing_and_lands_in_the_composer() {
    let sb = TestHome::new();
    let gate = sb.gate("hold");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Looking at it.", "gate": gate,
                   "tool_calls": [{"name": "shell", "arguments": json!({"command": "touch TYPEAHEAD_RAN"}).to_string()}]}),
            json!({"text": "Not run, then."}),
            json!({"text": "Read your message."}),
        ],
    );
    sb.start_scripted("p", &script);

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("check the tests");
    tui.send(keys::ENTER);
    tui.wait_for("Looking at it.");

    // The person types at eight keys a second, one key at a time; the request arrives a few
    // keys in, and the typing goes on after the modal shows for twice the pause it waits for.
    // The words are full of answer keys.
    let phrase = "ok so my tests say yes and any answer is nay ";
    let mut typed = String::new();
    let mut keys_while_shown = 0;
    for c in phrase.chars().cycle() {
        if keys_while_shown >= 16 {
            break;
        }
        assert!(typed.len() < 400, "the approval request never came");
        if tui.contains("approval needed") {
            keys_while_shown += 1;
        }
        tui.send(&c.to_string());
        typed.push(c);
        if typed.len() == 4 {
            sb.open_gate("hold");
        }
        tui.pause(STEADY);
    }
    assert!(
        tui.contains(WAITING),
        "while typing goes on the modal says it waits:\n{}",
        tui.screen()
    );
    assert!(
        answers(&history(&sb)).is_empty(),
        "typing answered the modal"
    );

    // The person stops; the modal takes keys, and still nothing was answered or run.
    wait_until_the_modal_takes_keys(&mut tui);
    assert!(tui.contains("$ touch TYPEAHEAD_RAN"));
    assert!(
        answers(&history(&sb)).is_empty(),
        "typing answered the modal"
    );
    assert!(
        !sb.path().join("TYPEAHEAD_RAN").exists(),
        "typing ran the command"
    );

    // Deny it; then the composer still holds every key typed: Enter sends exactly that.
    tui.send("n");
    tui.wait_for("Why deny it?");
    tui.send(keys::ENTER);
    tui.wait_for("Not run, then.");
    tui.wait_for("idle");
    tui.send(keys::ENTER);
    tui.wait_for("Read your message.");
    let sent: Vec<String> = history(&sb)
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::UserInput { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        sent.last().map(|text| text.trim_end()),
        Some(typed.trim_end()),
        "every key typed reached the composer, in order"
    );
    assert!(!sb.path().join("TYPEAHEAD_RAN").exists());
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit(), "the TUI exits 0 on detach");
}
