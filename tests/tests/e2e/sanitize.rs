//! A model that writes its reasoning into its answer
//! (`<think>plan</think>Hello`) is shown a folded thinking cell and "Hello"; `send` prints
//! "Hello"; the next request carries only the cleaned answer; `history --json` keeps the raw
//! text in an `assistant_raw` entry, and a restored pod sends the same bytes.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use serde_json::{Value, json};

#[tokio::test]
async fn a_think_block_is_moved_out_of_the_answer_and_kept_raw_in_the_log() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "<think>plan the greeting</think>\n\nHello", "chunk_chars": 4}),
            json!({"text": "Second answer."}),
        ],
    );
    sb.start_scripted("p", &script);

    let out = sb.ok(&["send", "p", "hi"]);
    assert_eq!(
        out.trim(),
        "Hello",
        "send prints the answer, not the reasoning"
    );

    let history = sb.ok(&["history", "p", "--json"]);
    let entries: Vec<Value> = history
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = entries.iter().filter_map(|e| e["kind"].as_str()).collect();
    let raw = entries
        .iter()
        .find(|e| e["kind"] == "assistant_raw")
        .expect("the raw answer is in the log");
    assert_eq!(raw["text"], "<think>plan the greeting</think>\n\nHello");
    let items: Vec<&Value> = entries
        .iter()
        .filter(|e| e["kind"] == "assistant_item")
        .map(|e| &e["item"])
        .collect();
    assert_eq!(items[0]["type"], "reasoning", "{kinds:?}");
    assert_eq!(items[0]["text"], "plan the greeting");
    assert_eq!(items[1]["type"], "assistant_text");
    assert_eq!(items[1]["text"], "Hello");

    // The next request: the cleaned answer, and the reasoning as a reasoning item (which the
    // real providers do not send back without a signature), never inside the answer.
    sb.ok(&["send", "p", "again"]);
    let requests = sb.requests("p");
    let second: Value = serde_json::from_str(&requests[1]).unwrap();
    assert!(!requests[1].contains("<think>"));
    let items = second["items"].as_array().unwrap();
    assert_eq!(
        items[1],
        json!({"type": "reasoning", "text": "plan the greeting"})
    );
    assert_eq!(items[2], json!({"type": "assistant_text", "text": "Hello"}));

    // Exact after a restore.
    let before = sb.context("p").await;
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, before);

    // The TUI: a folded thinking line, then the answer.
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("Second answer.");
    let screen = tui.screen();
    assert!(screen.contains("▸ thinking"), "{screen}");
    assert!(screen.contains("Hello"), "{screen}");
    assert!(!screen.contains("<think>"), "{screen}");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
}

/// A decoder that stutters streams the same paragraph twice; the pod keeps it once, and `send`
/// prints what the pod kept — not the stream, which had it twice.
#[test]
fn send_prints_the_cleaned_answer_not_the_stuttered_stream() {
    let sb = TestHome::new();
    let paragraph = "The build passes and the tests are green.";
    let script = sb.script(
        "s.jsonl",
        &[json!({
            "text": format!("{paragraph}\n\n{paragraph}\n\nAnything else?"),
            "chunk_chars": 5
        })],
    );
    sb.start_scripted("p", &script);
    let out = sb.ok(&["send", "p", "status?"]);
    assert_eq!(out.matches(paragraph).count(), 1, "{out}");
    assert!(out.contains("Anything else?"), "{out}");
    // What was streamed did carry the repeat: the cleaning is the pod's, not the script's.
    let history = sb.ok(&["history", "p", "--json"]);
    let raw = history
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["kind"] == "assistant_raw")
        .expect("the raw answer is in the log");
    assert_eq!(raw["text"].as_str().unwrap().matches(paragraph).count(), 2);
}
