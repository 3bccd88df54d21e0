//! Pod-supplied text never reaches the terminal raw: a model name carrying an
//! escape sequence is listed escaped by `ls`, and model output with one is escaped by `send`.

use serde_json::json;

use seedpod_e2e::TestHome;

#[test]
fn control_characters_from_pods_and_models_are_shown_escaped() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "done\u{1b}]0;owned\u{7} and more"})],
    );
    let model = "m\u{1b}[2J";
    let out = sb.ok(&[
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
        "--model",
        model,
    ]);
    assert_eq!(out.trim(), "p");
    let listing = sb.ok(&["ls"]);
    assert!(!listing.contains('\u{1b}'), "{listing:?}");
    assert!(listing.contains("m\\u{1b}[2J"), "{listing}");

    let answer = sb.ok(&["send", "p", "go"]);
    assert!(
        !answer.contains('\u{1b}') && !answer.contains('\u{7}'),
        "{answer:?}"
    );
    assert!(
        answer.contains("done\\u{1b}]0;owned\\u{7} and more"),
        "{answer}"
    );
    let history = sb.ok(&["history", "p"]);
    assert!(!history.contains('\u{1b}'), "{history:?}");
    sb.ok(&["stop", "p"]);
}
