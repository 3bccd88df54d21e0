//! The TUI end to end: the real `seedpod` binary in a pseudo-terminal, read back through a
//! VT100 parser, against pods on the scripted provider.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use seedpod_protocol::{EntryKind, RunEndReason, Segment};
use serde_json::json;

/// Type, stream, interrupt, detach; a notification arrives while nobody is attached; a new
/// TUI shows the earlier reply, the notification banner and the turn it woke.
#[test]
fn type_stream_interrupt_detach_and_reattach_to_a_notification() {
    let sb = TestHome::new();
    let gate = sb.gate("hold");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Streaming reply number one, in small pieces.", "chunk_chars": 4, "chunk_delay_ms": 5}),
            json!({"text": "A long answer that the person interrupts.", "chunk_chars": 6, "gate": gate}),
            json!({"text": "Thanks, I saw the deploy notice.", "chunk_chars": 6}),
        ],
    );
    sb.start_scripted("p", &script);

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("hello pod");
    tui.wait_for("hello pod");
    tui.send(keys::ENTER);
    tui.wait_for("Streaming reply number one, in small pieces.");
    tui.wait_for("idle");

    // The second answer is held after its first chunk: Esc pauses it, Esc again cancels it.
    tui.send("second question");
    tui.send(keys::ENTER);
    tui.wait_for("A long");
    tui.wait_for("running");
    tui.send(keys::ESC);
    tui.wait_for("paused");
    tui.send(keys::ESC);
    tui.wait_for("cancelled");

    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit(), "the TUI exits 0 on detach");
    tui.wait_for("detached from pod p — seedpod attach p to return");

    sb.ok(&["notify", "p", "deploy finished"]);

    let mut again = Tui::spawn(&sb, &["attach", "p"]);
    again.wait_for("Streaming reply number one, in small pieces.");
    again.wait_for("deploy finished");
    again.wait_for("Thanks, I saw the deploy notice.");
    again.send(keys::CTRL_D);
    assert!(again.wait_exit());

    // What the screen showed is what the log holds.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let history = runtime.block_on(sb.history("p"));
    let reasons: Vec<RunEndReason> = history
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::RunEnd { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        vec![
            RunEndReason::Completed,
            RunEndReason::Cancelled,
            RunEndReason::Completed
        ]
    );
}

/// Two TUIs on one pod: a turn started in one shows in both.
#[test]
fn two_tuis_both_show_a_turn_started_by_one() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "Both of you can read this.", "chunk_chars": 5, "chunk_delay_ms": 5})],
    );
    sb.start_scripted("q", &script);
    let mut a = Tui::spawn(&sb, &["attach", "q"]);
    let mut b = Tui::spawn(&sb, &["attach", "q"]);
    a.wait_for("connected");
    b.wait_for("connected");
    a.send("from the first terminal");
    a.send(keys::ENTER);
    for tui in [&mut a, &mut b] {
        tui.wait_for("from the first terminal");
        tui.wait_for("Both of you can read this.");
    }
    for mut tui in [a, b] {
        tui.send(keys::CTRL_D);
        assert!(tui.wait_exit());
    }
}

/// A multi-line paste becomes a chip in the composer and a `paste` segment in the log.
#[test]
fn a_big_paste_is_a_chip_and_reaches_the_pod_whole() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "Got your log."})]);
    sb.start_scripted("r", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "r"]);
    tui.wait_for("connected");
    let log: String = (1..=40).map(|n| format!("line {n} of the log\n")).collect();
    tui.send("look: ");
    tui.paste(&log);
    tui.wait_for("[Paste #1 ·");
    tui.wait_for("40 lines]");
    tui.send(keys::ENTER);
    tui.wait_for("Got your log.");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let history = runtime.block_on(sb.history("r"));
    let segments = history
        .iter()
        .find_map(|e| match &e.kind {
            EntryKind::UserInput { segments, .. } => Some(segments.clone()),
            _ => None,
        })
        .expect("the input is in the log");
    assert_eq!(segments[0], Segment::text("look: "));
    assert!(
        matches!(&segments[1], Segment::Paste { lines: 40, content, .. } if *content == log),
        "{segments:?}"
    );
}

/// The pod restarts under an attached TUI: the TUI says so, reconnects by itself and resyncs
/// the transcript from the new process's snapshot.
#[test]
fn the_tui_reconnects_when_the_pod_restarts() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Before the restart."}),
            json!({"text": "After the restart."}),
        ],
    );
    sb.start_scripted("r", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "r"]);
    tui.wait_for("connected");
    tui.send("one");
    tui.send(keys::ENTER);
    tui.wait_for("Before the restart.");
    sb.ok(&["restart", "r"]);
    tui.wait_for("reconnected to the pod");
    tui.wait_for("Before the restart.");
    // The old process's goodbye does not stay on the status line.
    tui.wait_until(
        "the status line to forget the goodbye once reconnected",
        |screen| !screen.contents().contains("stopping"),
    );
    tui.send("two");
    tui.send(keys::ENTER);
    tui.wait_for("After the restart.");
    assert!(!tui.contains("stopping"), "{}", tui.screen());
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}

/// `seedpod` with no arguments attaches to this directory's pod, restoring it when it is
/// stopped; detaching leaves it running.
#[test]
fn bare_seedpod_restores_and_attaches_to_this_directorys_pod() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "Restored and answering."})]);
    sb.start_scripted("here", &script);
    sb.ok(&["stop", "here"]);
    let mut tui = Tui::spawn(&sb, &[]);
    tui.wait_for("here · idle");
    tui.send("are you back?");
    tui.send(keys::ENTER);
    tui.wait_for("Restored and answering.");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    tui.wait_for("detached from pod here — seedpod attach here to return");
    let listing = sb.ok(&["ls"]);
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("here") && l.contains("idle")),
        "the pod keeps running after a detach:\n{listing}"
    );
}

/// Entries in the pod `a_big_pod_reattaches_takes_keys_and_scrolls` attaches to.
const BIG_POD_ENTRIES: u64 = 10_000;

/// Reattaching to a pod of many entries shows its last answer; typed keys reach the composer,
/// PgUp scrolls the transcript, Ctrl-C clears the composer and Ctrl-D on an empty one detaches.
/// How long each of these takes is measured by `cargo bench -p seedpod-e2e --bench tui-bench`.
#[test]
fn a_big_pod_reattaches_takes_keys_and_scrolls() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("l", &script);
    sb.ok(&["stop", "l"]);
    let last_answer = sb.append_turns("l", BIG_POD_ENTRIES);
    sb.ok(&["start", "l"]);
    let mut tui = Tui::spawn(&sb, &["attach", "l"]);
    tui.wait_for(&last_answer);
    let mut typed = String::new();
    for c in "the quick brown fox".chars() {
        typed.push(c);
        tui.send(&c.to_string());
        tui.wait_for(&format!("› {typed}"));
    }
    tui.send(keys::PAGE_UP);
    tui.wait_until("the view to scroll up", |screen| {
        !screen.contents().contains(&last_answer)
    });
    // Ctrl-C clears the composer; Ctrl-D on an empty one detaches.
    tui.send(keys::CTRL_C);
    tui.wait_for("Message the pod");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}

/// A shell call waits for approval in the TUI; hiding the modal and reattaching shows the
/// request still pending; `y` runs it; `/clear` is carried out by the pod.
#[test]
fn the_approval_modal_survives_reattach_and_y_runs_the_call() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"tool_calls": [{"name": "shell", "arguments": json!({"command": "echo modal > tui-approved.txt"}).to_string()}]}),
            json!({"text": "The file is written."}),
        ],
    );
    sb.start_scripted("p", &script);

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("write the file");
    tui.send(keys::ENTER);
    tui.wait_for("approval needed");
    tui.wait_for("$ echo modal > tui-approved.txt");
    tui.wait_for("waiting for approval");
    // Keys typed in the first moments after the modal opens are not answers: wait until it
    // takes them.
    tui.wait_for("y approve · a approve always");
    // Hide the modal and leave: nothing answers for the person.
    tui.send(keys::ESC);
    // Wait for the modal to go before the next key: Esc then a key at once reads as Alt-key.
    tui.wait_for("Ctrl-A answers it");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit(), "the TUI exits 0 on detach");
    assert!(!sb.path().join("tui-approved.txt").exists());

    let mut again = Tui::spawn(&sb, &["attach", "p"]);
    again.wait_for("approval needed");
    again.wait_for("$ echo modal > tui-approved.txt");
    again.wait_for("y approve · a approve always");
    again.send("y");
    again.wait_for("The file is written.");
    again.wait_for("idle");
    assert!(
        sb.path().join("tui-approved.txt").exists(),
        "y ran the call"
    );

    again.send("/clear");
    again.send(keys::ENTER);
    again.wait_for("new segment");
    again.send(keys::CTRL_D);
    assert!(again.wait_exit());
}

/// Child pods in a real terminal: `/spawn` from the composer, the child's report as a banner,
/// the picker's tree, Ctrl-G into the child and Ctrl-O back.
#[test]
fn spawn_a_child_from_the_composer_jump_in_and_back() {
    let sb = TestHome::new();
    let script = sb.script(
        "family.jsonl",
        &[
            json!({"text": "Boss here."}),
            json!({"text": "Noted what the kid did."}),
            json!({"text": "Kid answer: counted to two.", "pod": "kid"}),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "boss"]);
    tui.wait_for("connected");
    tui.send("hello");
    tui.send(keys::ENTER);
    tui.wait_for("Boss here.");

    tui.send("/spawn kid count to two");
    tui.send(keys::ENTER);
    tui.wait_for("started child pod kid");
    // The kid's turn ends, its report wakes the boss: the banner, then the boss's answer.
    tui.wait_for("kid finished a turn");
    tui.wait_for("Noted what the kid did.");

    tui.send(keys::CTRL_P);
    tui.wait_for("└─ kid");
    tui.send(keys::ESC);
    tui.wait_until("the picker closes", |screen| {
        !screen.contents().contains("└─ kid")
    });

    tui.send(keys::CTRL_G);
    tui.wait_for("Kid answer: counted to two.");
    assert!(!tui.contains("Noted what the kid did."), "{}", tui.screen());
    tui.send(keys::CTRL_O);
    tui.wait_for("Noted what the kid did.");
    assert!(
        !tui.contains("Kid answer: counted to two."),
        "{}",
        tui.screen()
    );
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}

/// `[` or `]` typed first into an empty composer is text, not navigation, at
/// the bottom of the transcript: `[ ] todo` reaches the model whole.
#[test]
fn brackets_typed_first_are_text() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "First answer."}), json!({"text": "Noted."})],
    );
    sb.start_scripted("b", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "b"]);
    tui.wait_for("connected");
    // A turn above, so `[` would have somewhere to go.
    tui.send("hello");
    tui.send(keys::ENTER);
    tui.wait_for("First answer.");
    tui.wait_for("idle");
    tui.send("[ ] todo ]");
    tui.wait_for("[ ] todo ]");
    tui.send(keys::ENTER);
    tui.wait_for("Noted.");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    let requests = sb.requests("b");
    assert!(
        requests[1].contains(r#""text":"[ ] todo ]""#),
        "{}",
        requests[1]
    );
}

/// Text already shown never disappears. Esc pauses a streaming answer and
/// what was streamed stays on screen, marked interrupted; a second Esc cancels and it still
/// stays; the log holds it and the model reads it in its next request, before the note that
/// says anything not shown above was not done.
#[test]
fn streamed_text_stays_through_pause_and_cancel() {
    let sb = TestHome::new();
    let gate = sb.gate("hold");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Partial words the person saw, then more.", "chunk_chars": 25, "gate": gate}),
            json!({"text": "Fresh answer."}),
        ],
    );
    sb.start_scripted("i", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "i"]);
    tui.wait_for("connected");
    tui.send("tell me");
    tui.send(keys::ENTER);
    tui.wait_for("Partial words the person");
    tui.send(keys::ESC);
    tui.wait_for("paused");
    tui.wait_for("interrupted — the answer stopped here");
    assert!(tui.contains("Partial words the person"), "{}", tui.screen());
    tui.send(keys::ESC);
    tui.wait_for("cancelled");
    assert!(tui.contains("Partial words the person"), "{}", tui.screen());

    tui.send("and now?");
    tui.send(keys::ENTER);
    tui.wait_for("Fresh answer.");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let kept: Vec<String> = runtime
        .block_on(sb.history("i"))
        .into_iter()
        .filter_map(|e| match e.kind {
            EntryKind::AssistantInterrupted { text } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(kept, ["Partial words the person"], "trailing space trimmed");
    let requests = sb.requests("i");
    let next = requests.last().expect("a request after the cancel");
    let partial = next
        .find("Partial words the person")
        .expect("the model reads it");
    let note = next
        .find("Anything not shown above was not done")
        .expect("the note");
    assert!(partial < note, "{next}");
}

/// A paste far over the message cap is not cut silently and does not push
/// out what is typed after it. The model reads its head and tail, a line naming it, and the
/// typed text; the whole paste is in the log; `read_paste` reads any part of it.
#[test]
fn a_paste_over_the_cap_arrives_whole_and_the_typing_after_it_too() {
    let sb = TestHome::new();
    let log: String = (1..=3_500)
        .map(|n| format!("{n:05} a line of a long build log, fifty characters\n"))
        .collect();
    assert!(log.chars().count() > 175_000);
    let key = seedpod_pod::paste::paste_key(&log);
    let read = json!({"paste": key, "offset": 1700, "limit": 2}).to_string();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"tool_calls": [{"name": "read_paste", "arguments": read}]}),
            json!({"text": "Summarised."}),
        ],
    );
    sb.start_scripted("big", &script);
    let mut tui = Tui::spawn(&sb, &["attach", "big"]);
    tui.wait_for("connected");
    tui.paste(&log);
    tui.wait_for("[Paste #1 ·");
    // Before sending, the footer says the paste is over the cap and what happens to it.
    tui.wait_for("is 178,500 chars, over the 32,000 cap");
    tui.send(" summarize this");
    tui.send(keys::ENTER);
    tui.wait_for("Summarised.");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    let requests = sb.requests("big");
    let first = &requests[0];
    assert!(first.contains(" summarize this"), "the typed text arrives");
    assert!(
        first.contains(&format!("[paste {key}: ")),
        "the paste is named"
    );
    assert!(first.contains("00001 a line") && first.contains("03500 a line"));
    assert!(!first.contains("01700 a line"), "its middle is not inline");
    assert!(first.len() < 60_000, "{}", first.len());
    // The model read the middle with the tool.
    assert!(requests[1].contains("01700 a line") && requests[1].contains("01701 a line"));

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let whole = runtime
        .block_on(sb.history("big"))
        .into_iter()
        .find_map(|e| match e.kind {
            EntryKind::UserInput { segments, .. } => segments.into_iter().find_map(|s| match s {
                Segment::Paste { content, .. } => Some(content),
                _ => None,
            }),
            _ => None,
        })
        .expect("the paste is in the log");
    assert_eq!(whole, log, "whole, byte for byte");
}

/// Hear when it is done: while the terminal is not focused, a turn that ends or
/// an approval that waits sends a desktop notification (OSC 9 where the terminal shows one);
/// while it is focused, nothing; `[tui] notify = "bell"` rings the bell instead.
#[test]
fn an_unfocused_terminal_is_told_when_a_turn_ends() {
    use seedpod_e2e::pty::{COLS, ROWS};
    const FOCUS_OUT: &str = "\x1b[O";
    const FOCUS_IN: &str = "\x1b[I";
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "While you looked."}),
            json!({"text": "While you were away."}),
        ],
    );
    sb.start_scripted("n", &script);
    let mut tui = Tui::spawn_with(
        &sb,
        &["attach", "n"],
        ROWS,
        COLS,
        &[("TERM_PROGRAM", "WezTerm")],
    );
    tui.wait_for("connected");
    // Focused: the turn's end is on screen, and no notification.
    tui.send(FOCUS_IN);
    sb.ok(&["send", "n", "one"]);
    tui.wait_for("While you looked.");
    assert!(!tui.wrote(b"\x1b]9;"), "nothing while focused");
    // Away: a notification naming the pod.
    tui.send(FOCUS_OUT);
    sb.ok(&["send", "n", "two"]);
    tui.wait_for("While you were away.");
    tui.wait_for_output(b"\x1b]9;seedpod n: the turn is done\x07");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    // The bell, when the person asks for it.
    std::fs::create_dir_all(&sb.home.config).expect("config dir");
    std::fs::write(
        sb.home.config.join("config.toml"),
        "[tui]\nnotify = \"bell\"\n",
    )
    .expect("config");
    let script = sb.script("t.jsonl", &[json!({"text": "Ding."})]);
    sb.start_scripted("b", &script);
    let mut tui = Tui::spawn_with(
        &sb,
        &["attach", "b"],
        ROWS,
        COLS,
        &[("TERM_PROGRAM", "WezTerm")],
    );
    tui.wait_for("connected");
    tui.send(FOCUS_OUT);
    let bells = tui.count(b"\x07");
    sb.ok(&["send", "b", "ring"]);
    tui.wait_for("Ding.");
    tui.wait_for_count(b"\x07", bells + 1);
    assert!(!tui.wrote(b"\x1b]9;"), "the bell only");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}

/// Search: Ctrl-F finds text in the transcript, n goes to the older match, and the
/// footer says where the search stands.
#[test]
fn ctrl_f_searches_the_transcript() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "A zebra crossed early."}),
            json!({"text": "Nothing striped here."}),
            json!({"text": "Another zebra, later."}),
        ],
    );
    sb.start_scripted("f", &script);
    for ask in ["one", "two", "three"] {
        sb.ok(&["send", "f", ask]);
    }
    let mut tui = Tui::spawn(&sb, &["attach", "f"]);
    tui.wait_for("Another zebra, later.");
    tui.send(keys::CTRL_F);
    tui.send("zebra");
    tui.wait_for("find: zebra_  2 of 2");
    tui.send(keys::ENTER);
    tui.send("n");
    tui.wait_for("find: zebra  1 of 2");
    assert!(tui.contains("A zebra crossed early."), "{}", tui.screen());
    tui.send(keys::ESC);
    tui.wait_until("the search to close", |s| {
        !s.contents().contains("find: zebra")
    });
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}

/// Emoji sequences keep every glyph in a real terminal at three widths. A
/// skin-tone modifier and the parts of a ZWJ sequence are separate glyphs to the terminal (as
/// to tmux and xterm); drawn as one cell, the next cell covered them ("👍" without its tone, a
/// family cut to its first member). Flags, combining marks and wide CJK stay as they are.
#[test]
fn emoji_sequences_keep_every_glyph() {
    let answer = "A 👍🏽 B 🇫🇷🇯🇵 C 👨\u{200D}👩\u{200D}👧 D e\u{301} E 日本 F END";
    for cols in [40u16, 67, 100] {
        let sb = TestHome::new();
        let script = sb.script(
            "s.jsonl",
            &[json!({"text": answer}), json!({"text": "more"})],
        );
        sb.start_scripted("e", &script);
        let mut tui = Tui::spawn_sized(&sb, &["attach", "e"], 24, cols);
        tui.wait_for("connected");
        tui.send("go");
        tui.send(keys::ENTER);
        tui.wait_for("END");
        let screen = tui.screen();
        for part in ["A 👍🏽 B", "🇫🇷🇯🇵 C", "👨👩👧 D", "e\u{301} E", "日本 F"]
        {
            assert!(
                screen.contains(part),
                "{cols} columns: {part:?} in\n{screen}"
            );
        }
        // A second turn scrolls the first: nothing of it is left behind on other rows.
        tui.send("again");
        tui.send(keys::ENTER);
        tui.wait_for("more");
        let screen = tui.screen();
        assert_eq!(screen.matches('🏽').count(), 1, "{cols} columns:\n{screen}");
        tui.send(keys::CTRL_D);
        assert!(tui.wait_exit());
        // The log keeps what the model wrote.
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let history = runtime.block_on(sb.history("e"));
        assert!(history.iter().any(|e| matches!(&e.kind,
            EntryKind::AssistantItem { item: seedpod_protocol::ModelItem::AssistantText { text } } if text == answer)));
    }
}
