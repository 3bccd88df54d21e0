//! The composer draws what the transcript draws: emoji sequences keep every glyph while typed,
//! in a real terminal at three widths, and reach the pod as typed.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

#[test]
fn emoji_sequences_keep_every_glyph_in_the_composer() {
    let typed = "A 👍🏽 B 👨\u{200D}👩\u{200D}👧 C END";
    for cols in [40u16, 67, 100] {
        let sb = TestHome::new();
        let script = sb.script("s.jsonl", &[json!({"text": "Got it."})]);
        sb.start_scripted("e", &script);
        let mut tui = Tui::spawn_sized(&sb, &["attach", "e"], 24, cols);
        tui.wait_for("connected");
        tui.send(typed);
        tui.wait_for("C END");
        let screen = tui.screen();
        let composer = screen
            .lines()
            .find(|l| l.contains("C END"))
            .unwrap_or_default()
            .to_string();
        for glyph in ['👍', '🏽', '👨', '👩', '👧'] {
            assert_eq!(
                composer.matches(glyph).count(),
                1,
                "{cols} columns, {glyph}: {composer:?}\n{screen}"
            );
        }
        tui.send(keys::ENTER);
        tui.wait_for("Got it.");
        tui.send(keys::CTRL_D);
        assert!(tui.wait_exit());
        let requests = sb.requests("e");
        assert!(
            requests[0].contains("A 👍🏽 B 👨\u{200D}👩\u{200D}👧 C END")
                || requests[0].contains(r"A 👍🏽 B 👨\u200d👩\u200d👧 C END"),
            "{}",
            requests[0]
        );
    }
}
