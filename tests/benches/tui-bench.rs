//! How the TUI feels over a big transcript: reattaching to a pod of `ENTRIES` entries until its
//! last answer is on screen, each keystroke until it is drawn in the composer, and PgUp until
//! the view has scrolled. The suite checks that all of these happen
//! (`tests/tests/e2e/tui.rs`).
//!
//! Run: `cargo bench -p seedpod-e2e --bench tui-bench`. Prints numbers; asserts none.

use std::time::{Duration, Instant};

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::json;

const ENTRIES: u64 = 10_000;
const TYPED: &str = "the quick brown fox";

fn main() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("l", &script);
    sb.ok(&["stop", "l"]);
    let last_answer = sb.append_turns("l", ENTRIES);
    sb.ok(&["start", "l"]);

    let started = Instant::now();
    let mut tui = Tui::spawn(&sb, &["attach", "l"]);
    tui.wait_for(&last_answer);
    let attach = started.elapsed();

    let mut samples: Vec<Duration> = Vec::new();
    let mut typed = String::new();
    for c in TYPED.chars() {
        typed.push(c);
        let sent = Instant::now();
        tui.send(&c.to_string());
        tui.wait_for(&format!("› {typed}"));
        samples.push(sent.elapsed());
    }
    samples.sort();

    let scroll = Instant::now();
    tui.send(keys::PAGE_UP);
    tui.wait_until("the view to scroll up", |screen| {
        !screen.contents().contains(&last_answer)
    });
    let page_up = scroll.elapsed();

    println!("{ENTRIES} entries: spawn and attach until the last answer is on screen {attach:?}");
    println!(
        "keystroke to frame over {} keys: median {:?}, max {:?}",
        samples.len(),
        samples[samples.len() / 2],
        samples[samples.len() - 1]
    );
    println!("PgUp to frame: {page_up:?}");
    tui.send(keys::CTRL_C);
    tui.send(keys::CTRL_D);
    tui.wait_exit();
}
