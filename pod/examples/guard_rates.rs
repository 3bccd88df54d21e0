//! Detection and false-positive rates of the injection guard on its corpus
//! (`pod/src/guard/corpus/`). `cargo run -p seedpod-pod --example guard_rates`.

use std::collections::BTreeMap;

use seedpod_pod::guard::scan;

fn texts(jsonl: &str) -> Vec<String> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("text").and_then(|t| t.as_str()).map(str::to_owned))
        .collect()
}

fn main() {
    let attacks = texts(include_str!("../src/guard/corpus/attacks.jsonl"));
    let benign = texts(include_str!("../src/guard/corpus/benign.jsonl"));
    let mut families: BTreeMap<&str, usize> = BTreeMap::new();
    let mut detected = 0;
    for text in &attacks {
        let found = scan(text);
        if !found.is_empty() {
            detected += 1;
        }
        for d in found {
            *families.entry(d.pattern.as_str()).or_default() += 1;
        }
    }
    let flagged: Vec<&String> = benign.iter().filter(|t| !scan(t).is_empty()).collect();
    println!(
        "attacks detected: {detected}/{} ({:.0}%)",
        attacks.len(),
        100.0 * detected as f64 / attacks.len().max(1) as f64
    );
    println!(
        "benign flagged:   {}/{} ({:.0}%)",
        flagged.len(),
        benign.len(),
        100.0 * flagged.len() as f64 / benign.len().max(1) as f64
    );
    println!("families matched (an attack can match several):");
    for (family, count) in families {
        println!("  {family:<22} {count}");
    }
    for text in flagged {
        println!("false positive: {text:?}");
    }
}
