//! The compaction cell's "context BEFORE → AFTER tokens" counts what the next request will send:
//! the new segment's own prompt (rendered afresh, here after AGENTS.md shrank) with the summary
//! and the kept messages — the very figure the status line's gauge shows for the new segment —
//! not the old segment's prompt.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

/// The word after `marker` on the screen, up to the next space.
fn word_after<'a>(screen: &'a str, marker: &str) -> Option<&'a str> {
    let at = screen.find(marker)? + marker.len();
    screen[at..].split_whitespace().next()
}

#[test]
fn the_context_after_a_compaction_is_the_next_requests_not_the_old_prompts() {
    let sb = TestHome::new();
    // A long project file: about 6k tokens of the first segment's prompt.
    let rule = "Rule: every function has a doc comment that says why it exists.\n";
    std::fs::write(sb.path().join("AGENTS.md"), rule.repeat(370)).unwrap();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Apples first."}),
            json!({"text": "Bananas second."}),
            json!({"text": "SUMMARY: apples, then bananas."}),
        ],
    );
    sb.start_scripted("c", &script);

    let mut tui = Tui::spawn(&sb, &["attach", "c"]);
    tui.wait_for("connected");
    for (question, answer) in [
        ("Which first?", "Apples first."),
        ("Which second?", "Bananas second."),
    ] {
        tui.send(question);
        tui.wait_for(question);
        tui.send(keys::ENTER);
        tui.wait_for(answer);
        tui.wait_for("idle");
    }
    // The project file shrinks: the next segment's prompt is rendered from the short one.
    std::fs::write(sb.path().join("AGENTS.md"), rule).unwrap();
    tui.send("/compact");
    tui.wait_for("/compact");
    tui.send(keys::ENTER);
    tui.wait_for("⇣ compacted");
    // The gauge reports the new segment once it is in place; the cell's figure must be the
    // gauge's (a wait that times out prints the screen).
    tui.wait_until("the cell's after figure to be the gauge's", |screen| {
        let text = screen.contents();
        let after = word_after(&text, "context ")
            .and_then(|before| word_after(&text, &format!("context {before} → ")));
        // `~` marks the gauge's figure as an estimate.
        let gauge = word_after(&text, "ctx ").map(|g| g.trim_start_matches('~'));
        after.is_some() && after == gauge
    });
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    // The record in the log says the same, and it is far below the old prompt's size.
    let log: Vec<serde_json::Value> = sb
        .segment_files("c")
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let compaction = log
        .iter()
        .find_map(|entry| entry.pointer("/compaction").filter(|c| !c.is_null()))
        .expect("the compacted segment records its compaction");
    let before = compaction["tokens_before"].as_u64().unwrap();
    let after = compaction["tokens_after"].as_u64().unwrap();
    assert!(
        after + 5_000 < before,
        "the old prompt's 6k tokens of project rules are not counted after: {compaction}"
    );
}
