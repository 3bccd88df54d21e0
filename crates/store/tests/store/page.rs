//! `read_segment_tail`, the page reader of `earlier`: it parses only a page's lines, and must
//! give exactly what the full read gives for that page — at every point and size, through a
//! torn last line, and with the full read's error when the page itself is damaged.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use seedpod_protocol::{Entry, EntrySeq};
use seedpod_store::{read_segment_entries, read_segment_tail};

use crate::support::{entry, file_bytes, realistic_entries, realistic_run, seg_path};

/// A segment of three realistic runs after its start.
fn long_segment() -> Vec<Entry> {
    let mut entries = realistic_entries();
    for _ in 0..2 {
        for kind in realistic_run() {
            let seq = entries.len() as u64;
            entries.push(entry(seq, kind));
        }
    }
    entries
}

/// What the full read makes of the page: its last `max` entries before `before`.
fn expected(all: &[Entry], before: u64, max: usize) -> Vec<Entry> {
    let end = (before as usize).min(all.len());
    all[end.saturating_sub(max)..end].to_vec()
}

#[test]
fn every_page_is_what_the_full_read_gives_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = long_segment();
    std::fs::write(&path, file_bytes(&entries)).unwrap();
    let all = read_segment_entries(&path).unwrap();
    assert_eq!(all, entries);
    let n = all.len() as u64;
    for before in (0..=n + 2).chain([u64::MAX]) {
        for max in [1, 2, 5, 17, all.len(), all.len() + 3] {
            let page = read_segment_tail(&path, EntrySeq::new(before), max).unwrap();
            assert_eq!(
                page,
                expected(&all, before, max),
                "before {before}, at most {max}"
            );
        }
    }
}

#[test]
fn a_torn_last_line_is_left_out_as_the_full_read_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = long_segment();
    let whole = file_bytes(&entries);
    // An append cut short, and an append whose line ended but whose bytes did not all land.
    for tail in [&b"{\"v\":1,\"seq\":"[..], b"{\"v\":1,\"seq\":99,\"ts\n"] {
        let mut bytes = whole.clone();
        bytes.extend_from_slice(tail);
        std::fs::write(&path, &bytes).unwrap();
        let all = read_segment_entries(&path).unwrap();
        assert_eq!(all, entries, "the full read leaves the torn line out");
        for max in [1, 4, all.len() + 1] {
            assert_eq!(
                read_segment_tail(&path, EntrySeq::new(u64::MAX), max).unwrap(),
                expected(&all, u64::MAX, max),
                "at most {max}, after {tail:?}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing was repaired");
    }
}

#[test]
fn a_damaged_line_in_the_page_fails_as_the_full_read_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = long_segment();
    let mut lines: Vec<String> = String::from_utf8(file_bytes(&entries))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let damaged = lines.len() - 3;
    lines[damaged] = "{\"v\":1,\"not\":\"an entry\"}".to_owned();
    let bytes: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, bytes).unwrap();
    let full = read_segment_entries(&path).unwrap_err().to_string();
    let page = read_segment_tail(&path, EntrySeq::new(u64::MAX), 5)
        .unwrap_err()
        .to_string();
    assert_eq!(page, full);
    assert!(full.contains(&format!(":{}", damaged + 1)), "{full}");

    // A page that ends before the damage is read from its own lines.
    let before = damaged as u64;
    assert_eq!(
        read_segment_tail(&path, EntrySeq::new(before), 4).unwrap(),
        expected(&entries, before, 4)
    );
}

#[test]
fn an_empty_segment_fails_as_the_full_read_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    std::fs::write(&path, b"").unwrap();
    assert_eq!(
        read_segment_tail(&path, EntrySeq::new(u64::MAX), 10)
            .unwrap_err()
            .to_string(),
        read_segment_entries(&path).unwrap_err().to_string()
    );
}
