//! `/compact` typed in the TUI, end to end: the real `seedpod` binary in a pseudo-terminal on
//! the scripted provider. The compaction cell appears; after detaching and reattaching, the
//! snapshot holds only the new segment, and the first screen pages back into the one the
//! summary replaced, so the turns before the compaction cell are shown with it.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use seedpod_protocol::{EntryKind, Origin};
use serde_json::json;

#[test]
fn compact_in_the_tui_then_reattach_and_scroll_back_to_the_turns_it_summarised() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Apples are the first fruit we talked about."}),
            json!({"text": "Bananas came second."}),
            json!({"text": "Cherries came third."}),
            json!({"text": "Dates came fourth."}),
            // The summary request of `/compact`.
            json!({"text": "SUMMARY: four fruits, one per turn: apples, bananas, cherries, dates."}),
        ],
    );
    sb.start_scripted("c", &script);

    let mut tui = Tui::spawn(&sb, &["attach", "c"]);
    tui.wait_for("connected");
    for (question, answer) in [
        (
            "Which fruit first?",
            "Apples are the first fruit we talked about.",
        ),
        ("Which second?", "Bananas came second."),
        ("Which third?", "Cherries came third."),
        ("Which fourth?", "Dates came fourth."),
    ] {
        tui.send(question);
        tui.wait_for(question);
        tui.send(keys::ENTER);
        tui.wait_for(answer);
        tui.wait_for("idle");
    }

    tui.send("/compact the fruits");
    tui.wait_for("/compact the fruits");
    tui.send(keys::ENTER);
    tui.wait_for("⇣ compacted");
    tui.wait_for("new segment (compacted)");
    tui.wait_for("focus: the fruits");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit(), "the TUI exits 0 on detach");

    // The log agrees: the active segment was made by the compaction.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let history = runtime.block_on(sb.history("c"));
    let Some(EntryKind::SegmentStart(start)) = history.first().map(|e| &e.kind) else {
        panic!("the active segment has no start: {history:?}");
    };
    assert!(matches!(start.origin, Origin::CompactedFrom { .. }));

    // Reattached, the snapshot is the new segment: the compaction cell alone would leave the
    // screen empty, so the page before it (where the turns the model kept are) is loaded at
    // once: all four turns are on this screen with the compaction cell.
    let mut again = Tui::spawn(&sb, &["attach", "c"]);
    again.wait_for("⇣ compacted");
    again.wait_for("Dates came fourth.");
    again.wait_for("Apples are the first fruit we talked about.");
    again.send(keys::CTRL_D);
    assert!(again.wait_exit());

    // On a short screen the first one shows the last turns and the compaction cell; Home at
    // the top of what was loaded reaches the first turn.
    let mut again = Tui::spawn_sized(&sb, &["attach", "c"], 14, 100);
    again.wait_for("⇣ compacted");
    again.wait_for("Dates came fourth.");
    assert!(
        !again.contains("Apples are the first fruit"),
        "{}",
        again.screen()
    );
    again.send(keys::HOME);
    again.wait_for("Apples are the first fruit we talked about.");
    again.wait_for("— beginning of the pod's log —");
    // Back down to the live segment, still there under its separator.
    again.send(keys::END);
    again.wait_until("the end of the transcript", |screen| {
        let text = screen.contents();
        !text.contains("— beginning of the pod's log —") && text.contains("⇣ compacted")
    });
    again.send(keys::CTRL_D);
    assert!(again.wait_exit());
}
