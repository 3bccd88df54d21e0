//! The guard against its corpus (`corpus/attacks.jsonl`, `corpus/benign.jsonl`): injection
//! attempts, each with the published technique or collection it follows, and developer texts
//! that come close (commit messages, code, docs with "system prompt" or `curl | sh`). Every
//! benign text must pass clean; `cargo run -p seedpod-pod --example guard_rates` prints the
//! rates per family.

use serde::Deserialize;

use super::scan;

#[derive(Deserialize)]
struct Attack {
    text: String,
    source: String,
}

#[derive(Deserialize)]
struct Benign {
    text: String,
}

fn lines<T: for<'de> Deserialize<'de>>(jsonl: &str) -> Vec<T> {
    jsonl
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("a corpus line is valid JSON"))
        .collect()
}

#[test]
fn no_benign_developer_text_is_flagged() {
    let benign: Vec<Benign> = lines(include_str!("corpus/benign.jsonl"));
    assert!(benign.len() >= 40, "{} benign texts", benign.len());
    let flagged: Vec<String> = benign
        .iter()
        .filter_map(|b| {
            let found = scan(&b.text);
            (!found.is_empty()).then(|| format!("{:?} → {found:?}", b.text))
        })
        .collect();
    assert!(flagged.is_empty(), "false positives: {flagged:#?}");
}

#[test]
fn the_attacks_are_detected() {
    let attacks: Vec<Attack> = lines(include_str!("corpus/attacks.jsonl"));
    assert!(attacks.len() >= 40, "{} attacks", attacks.len());
    let missed: Vec<String> = attacks
        .iter()
        .filter(|a| scan(&a.text).is_empty())
        .map(|a| format!("{:?} ({})", a.text, a.source))
        .collect();
    let detected = attacks.len() - missed.len();
    eprintln!(
        "guard: {detected}/{} attacks detected; missed: {missed:#?}",
        attacks.len()
    );
    // Every attack in the corpus is one the guard should know; a miss is a regression.
    assert!(missed.is_empty(), "missed: {missed:#?}");
}

#[test]
fn the_prefilter_never_hides_a_match() {
    let attacks: Vec<Attack> = lines(include_str!("corpus/attacks.jsonl"));
    let benign: Vec<Benign> = lines(include_str!("corpus/benign.jsonl"));
    let texts = attacks
        .iter()
        .map(|a| a.text.as_str())
        .chain(benign.iter().map(|b| b.text.as_str()));
    for text in texts {
        assert_eq!(
            scan(text),
            super::tests::scan_unfiltered(text),
            "the prefilter hid a match in {text:?}"
        );
    }
}
