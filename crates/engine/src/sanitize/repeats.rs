//! Step 6: a decoder that stutters repeats whole paragraphs; each run of identical paragraphs
//! is kept once.

pub fn collapse_repeated_paragraphs(prose: &str) -> String {
    let mut out = String::with_capacity(prose.len());
    let mut last: Option<&str> = None;
    for block in prose.split_inclusive("\n\n") {
        let key = block.trim();
        if !key.is_empty() && last == Some(key) {
            continue;
        }
        if !key.is_empty() {
            last = Some(key);
        }
        out.push_str(block);
    }
    out
}
