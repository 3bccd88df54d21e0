//! Steps 4 and 5: wrappers around the answer, and markers of ours the model echoed.

use super::tags;

/// Step 4: `<final>`/`<answer>` wrappers go, their content stays.
pub fn strip_final_tags(prose: &str) -> String {
    let mut text = prose.to_string();
    for tag in ["<final>", "</final>", "<answer>", "</answer>"] {
        text = tags::remove_all(&text, tag);
    }
    text
}

/// What the pod itself writes in front of things it shows the model; a paragraph of the
/// model's that starts with one is the model repeating us, not saying something.
const MARKERS: [&str; 6] = [
    "[System Message]",
    "[System]",
    "[notification]",
    "[File: ",
    "<system-reminder>",
    "[pod event]",
];

/// Step 5: a paragraph starting with one of our markers goes, up to the next blank line.
pub fn strip_echoed_markers(prose: &str) -> String {
    let mut out = String::with_capacity(prose.len());
    let mut skipping = false;
    for line in prose.split_inclusive('\n') {
        let start = line.trim_start();
        if !skipping && MARKERS.iter().any(|m| start.starts_with(m)) {
            skipping = true;
        }
        if skipping {
            if line.trim().is_empty() {
                skipping = false;
            } else {
                continue;
            }
        }
        out.push_str(line);
    }
    out
}
