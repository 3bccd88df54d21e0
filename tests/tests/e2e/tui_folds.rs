//! What a person folded stays folded: the pinned task list folded with Ctrl-T and the cells
//! expanded with Enter (thinking, a tool call) look the same after detaching and reattaching,
//! so the list does not reopen and take five rows on every attach. A view file that is broken
//! or hostile is ignored: the TUI attaches with the defaults.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

const BACK_TAB: &str = "\x1b[Z";
const THOUGHT_TAIL: &str = "the second line shows only when expanded";

fn pod_with_tasks_and_thinking(sb: &TestHome) {
    let plan = json!({"tasks": [
        {"content": "read the failing test", "status": "done"},
        {"content": "find the cause", "status": "in_progress"},
        {"content": "fix it", "status": "pending"},
    ]});
    let script = sb.script(
        "s.jsonl",
        &[
            json!({
                "thinking": format!("Start from the failing test.\n{THOUGHT_TAIL}"),
                "tool_calls": [{"name": "update_tasks", "arguments": plan.to_string()}],
            }),
            json!({"text": "Working on the cause now."}),
        ],
    );
    sb.start_scripted("p", &script);
}

#[test]
fn folds_and_expansions_survive_a_reattach() {
    let sb = TestHome::new();
    pod_with_tasks_and_thinking(&sb);

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("fix the test");
    tui.send(keys::ENTER);
    tui.wait_for("Working on the cause now.");
    tui.wait_for("tasks 1/3 done  (Ctrl-T folds)");
    tui.send(keys::CTRL_T);
    tui.wait_for("(Ctrl-T shows)");
    // Tab focuses the answer; two steps back is the thinking above the tool call.
    tui.send(keys::TAB);
    tui.send(BACK_TAB);
    tui.send(BACK_TAB);
    tui.send(keys::ENTER);
    tui.wait_for(THOUGHT_TAIL);
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    let mut again = Tui::spawn(&sb, &["attach", "p"]);
    again.wait_for("Working on the cause now.");
    again.wait_for("tasks 1/3 · now: find the cause  (Ctrl-T shows)");
    again.wait_for("▾ thinking");
    again.wait_for(THOUGHT_TAIL);
    assert!(!again.contains("(Ctrl-T folds)"), "{}", again.screen());
    // Folding back is remembered too.
    again.send(keys::CTRL_T);
    again.wait_for("(Ctrl-T folds)");
    again.send(keys::CTRL_D);
    assert!(again.wait_exit());

    let mut third = Tui::spawn(&sb, &["attach", "p"]);
    third.wait_for("Working on the cause now.");
    third.wait_for("tasks 1/3 done  (Ctrl-T folds)");
    third.send(keys::CTRL_D);
    assert!(third.wait_exit());
}

#[test]
fn a_broken_or_hostile_view_file_is_ignored() {
    let sb = TestHome::new();
    pod_with_tasks_and_thinking(&sb);
    sb.ok(&["send", "p", "fix the test"]);
    let path = sb.path().join("data/pods/p/tui-view.json");
    let outside = sb.path().join("outside.txt");
    std::fs::write(&outside, "not the TUI's").unwrap();
    let huge = format!(
        "{{\"version\":1,\"tasks_folded\":true,\"expanded\":[{}[0,0]]}}",
        "[1,2],".repeat(50_000)
    );
    for case in [
        "{ not json",
        "{\"version\":99,\"tasks_folded\":true}",
        &huge,
        "link",
    ] {
        let _ = std::fs::remove_file(&path);
        if case == "link" {
            std::os::unix::fs::symlink(&outside, &path).unwrap();
        } else {
            std::fs::write(&path, case).unwrap();
        }
        let mut tui = Tui::spawn(&sb, &["attach", "p"]);
        tui.wait_for("Working on the cause now.");
        tui.wait_for("tasks 1/3 done  (Ctrl-T folds)");
        // Folding writes the file anew, through no link.
        tui.send(keys::CTRL_T);
        tui.wait_for("(Ctrl-T shows)");
        tui.send(keys::CTRL_D);
        assert!(tui.wait_exit());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not the TUI's");
    }
}
