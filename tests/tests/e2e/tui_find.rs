//! `/find` in a real terminal: a match is one occurrence, the view moves to the line that
//! holds it (not to the top of its answer), and every occurrence on screen is highlighted.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

/// Where `text` starts on screen, as (row, column); ASCII text only.
fn position(screen: &vt100::Screen, text: &str) -> Option<(u16, u16)> {
    let (_, cols) = screen.size();
    screen
        .rows(0, cols.get())
        .enumerate()
        .find_map(|(row, line)| {
            let col = line.find(text)?;
            Some((u16::try_from(row).ok()?, u16::try_from(col).ok()?))
        })
}

fn highlighted(screen: &vt100::Screen, text: &str) -> bool {
    position(screen, text)
        .and_then(|(row, col)| screen.cell(row, col))
        .is_some_and(vt100::Cell::inverse)
}

/// Sixty paragraphs in one answer: `/find END47` shows paragraph 47 (some ninety lines below
/// the answer's first line), "END4" counts eleven occurrences, and `n` steps through them,
/// each highlighted where it stands, at three widths.
#[test]
fn find_moves_to_the_matching_line_and_counts_occurrences() {
    let answer: Vec<String> = (0..60)
        .map(|n| format!("Paragraph {n} says END{n} here."))
        .collect();
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": answer.join("\n\n")})]);
    sb.start_scripted("f", &script);
    sb.ok(&["send", "f", "a long answer please"]);
    for cols in [50u16, 80, 120] {
        let mut tui = Tui::spawn_sized(&sb, &["attach", "f"], 24, cols);
        tui.wait_for("says END59 here.");
        tui.send("/find END47");
        tui.send(keys::ENTER);
        tui.wait_for("find: END47  1 of 1  ");
        tui.wait_until("paragraph 47 on screen, highlighted", |s| {
            highlighted(s, "END47")
        });

        tui.send(keys::ESC);
        tui.wait_until("the search to close", |s| !s.contents().contains("find:"));
        tui.send("/find END4");
        tui.send(keys::ENTER);
        tui.wait_for("find: END4  11 of 11  ");
        tui.wait_until("END49 highlighted", |s| highlighted(s, "END49"));
        tui.send("n");
        tui.wait_for("find: END4  10 of 11  ");
        tui.wait_until("END48 highlighted", |s| highlighted(s, "END48"));
        for _ in 0..9 {
            tui.send("n");
        }
        tui.wait_for("find: END4  1 of 11  ");
        tui.wait_until("END4 of paragraph 4 highlighted", |s| {
            highlighted(s, "END4 here")
        });
        assert!(
            !tui.contains("says END47 here."),
            "{cols} columns: paragraph 4 is far above 47:\n{}",
            tui.screen()
        );
        tui.send(keys::ESC);
        tui.wait_until("the search to close", |s| !s.contents().contains("find:"));
        tui.send(keys::CTRL_D);
        assert!(tui.wait_exit());
    }
}
