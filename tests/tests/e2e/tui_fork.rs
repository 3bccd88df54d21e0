//! `/fork` and `/rewind` in the TUI, with the real binary in a real pty: the TUI runs
//! `seedpod fork` / `seedpod rewind` for the person (docs/storage.md §Fork and rewind), shows a
//! rewind's plan before anything changes, and moves to the fork or the rewound pod.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

/// A row of the screen that starts with `text` (the status line starts with the pod's name).
fn row_starts_with(screen: &vt100::Screen, text: &str) -> bool {
    screen
        .contents()
        .lines()
        .any(|row| row.trim_start().starts_with(text))
}

#[test]
fn slash_fork_makes_a_fork_and_moves_the_tui_onto_it() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "Answer one."})]);
    sb.start_scripted("p", &script);
    assert_eq!(sb.ok(&["send", "p", "first"]).trim(), "Answer one.");

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("Answer one.");
    // Not a turn number: said, and nothing is made.
    tui.send("/fork one");
    tui.send(keys::ENTER);
    tui.wait_for("no turn number");
    tui.send("/fork 1");
    tui.send(keys::ENTER);
    tui.wait_for("attached to p-fork-1");
    tui.wait_until("the status line to name the fork", |screen| {
        row_starts_with(screen, "p-fork-1")
    });
    // The fork's conversation is the source's up to that turn (the TUI shows the fork's own
    // segment; what came before is the source's log).
    let listed = sb.ok(&["ls"]);
    assert!(listed.contains("p-fork-1"), "{listed}");
    let context = sb.ok(&["context", "p-fork-1"]);
    assert!(context.contains("Answer one."), "{context}");

    // The CLI's refusal is one line on the screen, and the TUI stays where it is: the fork
    // numbers turns from the start of the conversation (turn 1 is the source's), so it has no
    // turn 2 yet.
    tui.send("/fork 2");
    tui.send(keys::ENTER);
    tui.wait_for("cannot fork p-fork-1: turn 2 does not exist");
    assert!(!sb.ok(&["ls"]).contains("p-fork-1-fork-1"));
    // A fork of the fork takes the next free name, at turn 1 as the person saw it.
    tui.send("/fork 1");
    tui.send(keys::ENTER);
    tui.wait_for("attached to p-fork-1-fork-1");
    assert_eq!(sb.ok(&["context", "p-fork-1-fork-1"]), context);
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    for name in ["p", "p-fork-1", "p-fork-1-fork-1"] {
        let _ = sb.run(&["stop", name]);
    }
}

#[test]
fn slash_rewind_shows_the_plan_esc_keeps_everything_and_enter_rewinds() {
    let sb = TestHome::new();
    let notes = sb.path().join("notes.txt");
    std::fs::write(&notes, "original\n").unwrap();
    let write = json!({"path": "notes.txt", "content": "changed in turn two\n"}).to_string();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Answer one."}),
            json!({"tool_calls": [{"name": "write_file", "arguments": write}]}),
            json!({"text": "Answer two."}),
        ],
    );
    sb.start_scripted("p", &script);
    assert_eq!(sb.ok(&["send", "p", "first"]).trim(), "Answer one.");
    assert!(sb.ok(&["send", "p", "second"]).contains("Answer two."));
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "changed in turn two\n"
    );
    let history_before = sb.ok(&["history", "p"]);

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("Answer two.");
    tui.send("/rewind 1");
    tui.send(keys::ENTER);
    tui.wait_for("rewind to the end of turn 1?");
    // The plan names the file it will put back.
    tui.wait_for("notes.txt");
    tui.send(keys::ESC);
    tui.wait_for("nothing was rewound");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "changed in turn two\n"
    );
    assert_eq!(sb.ok(&["history", "p"]), history_before);

    // Picked from the list this time: the newest message is chosen first, Up goes to turn 1.
    tui.send("/rewind");
    tui.send(keys::ENTER);
    tui.wait_for("rewind to the end of which turn?");
    tui.send("\x1b[A");
    tui.send(keys::ENTER);
    tui.wait_for("rewind to the end of turn 1?");
    tui.send(keys::ENTER);
    tui.wait_for("rewound p to the end of turn 1");
    // Attached again: the new segment, its turns before it in the log, turn 2's answer gone.
    tui.wait_until("the rewound conversation", |screen| {
        let text = screen.contents();
        text.contains("new segment (rewound)") && !text.contains("Answer two.")
    });
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "original\n");
    let history = sb.ok(&["history", "p"]);
    assert!(!history.contains("Answer two."), "{history}");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    let _ = sb.run(&["stop", "p"]);
}

#[test]
fn after_a_rewind_the_picker_numbers_turns_from_the_start_of_the_conversation() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Answer one."}),
            json!({"text": "Answer two."}),
            json!({"text": "Answer three."}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "first"]);
    sb.ok(&["send", "p", "second"]);
    sb.ok(&["rewind", "p", "--to", "1", "--conversation", "--yes"]);
    assert!(sb.ok(&["send", "p", "third"]).contains("Answer three."));

    // The screen shows the rewound segment (only "third" is its own); the picker numbers the
    // turns from the log: "first" from the older segment is turn 1, "third" turn 2.
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("Answer three.");
    tui.send("/fork");
    tui.send(keys::ENTER);
    tui.wait_for("fork after which turn?");
    tui.wait_until("turns numbered across the rewind", |screen| {
        let text = screen.contents();
        text.contains("1  first") && text.contains("2  third") && !text.contains("  second")
    });
    tui.send(keys::ENTER);
    tui.wait_for("attached to p-fork-1");
    assert_eq!(
        sb.ok(&["context", "p-fork-1"]),
        sb.ok(&["context", "p"]),
        "the fork after turn 2 is p as it is now"
    );

    // The fork's rewind picker starts at the turn it was made at: nothing before is its own.
    tui.send("/rewind");
    tui.send(keys::ENTER);
    tui.wait_for("rewind to the end of which turn?");
    tui.wait_until("only the fork's own turns", |screen| {
        let text = screen.contents();
        text.contains("2  third") && !text.contains("1  first")
    });
    // Esc closes the picker; Ctrl-D only once it is gone (sent together they read as
    // Alt-Ctrl-D).
    tui.send(keys::ESC);
    tui.wait_until("the picker to close", |screen| {
        !screen
            .contents()
            .contains("rewind to the end of which turn?")
    });
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    for name in ["p", "p-fork-1"] {
        let _ = sb.run(&["stop", name]);
    }
}
