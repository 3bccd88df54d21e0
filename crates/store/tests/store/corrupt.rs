//! Damage that a crash cannot cause stops restore with `file:line` and a way out, and leaves the
//! file byte-for-byte as it was.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::support::{entry, file_bytes, realistic_entries, seg_path};
use seedpod_protocol::{EntryKind, EntrySeq, ModelItem};
use seedpod_store::{StoreError, read_segment, torn_side_file};

/// Write `bytes`, read, and return the error's line and reason — asserting the file is untouched.
fn corrupt_at(dir: &Path, bytes: &[u8]) -> (usize, String, String) {
    let path = seg_path(dir);
    std::fs::write(&path, bytes).unwrap();
    let err = read_segment(&path).unwrap_err();
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the log was modified");
    assert!(!torn_side_file(&path).exists());
    let message = err.to_string();
    match err {
        StoreError::Corrupt { file, line, reason } => {
            assert_eq!(file, path);
            (line, reason, message)
        }
        other => panic!("expected Corrupt, got {other}"),
    }
}

/// `lines` joined with newlines, each followed by one.
fn lines(lines: &[String]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

fn realistic_lines() -> Vec<String> {
    realistic_entries()
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect()
}

#[test]
fn a_corrupt_middle_line_names_its_line_and_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = realistic_lines();
    all[6] = all[6][..20].to_owned();
    let (line, reason, message) = corrupt_at(dir.path(), &lines(&all));
    assert_eq!(line, 7);
    assert!(reason.starts_with("not a valid log entry"), "{reason}");
    let path = seg_path(dir.path());
    assert!(
        message.starts_with(&format!("{}:7: ", path.display())),
        "{message}"
    );
    assert!(
        message.ends_with(
            "the log was not modified — move the segment aside or truncate it before line 7 \
             to restore from the entries before it"
        ),
        "{message}"
    );
}

#[test]
fn an_empty_middle_line_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = realistic_lines();
    all.insert(3, String::new());
    let (line, reason, _) = corrupt_at(dir.path(), &lines(&all));
    assert_eq!((line, reason.as_str()), (4, "empty line"));
}

#[test]
fn a_gap_in_seq_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = realistic_entries();
    entries.remove(4);
    let (line, reason, _) = corrupt_at(dir.path(), &file_bytes(&entries));
    assert_eq!(line, 5);
    assert!(reason.contains("expected seq 4, found seq 5"), "{reason}");
}

#[test]
fn a_repeated_last_entry_is_corruption_not_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = realistic_entries();
    entries.push(entries.last().unwrap().clone());
    let (line, reason, _) = corrupt_at(dir.path(), &file_bytes(&entries));
    assert_eq!(line, entries.len());
    assert!(reason.contains("missing or repeated"), "{reason}");
}

#[test]
fn an_entry_kind_from_a_newer_seedpod_asks_for_an_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = realistic_lines();
    let seq = all.len();
    all.push(format!(
        r#"{{"v":1,"seq":{seq},"ts":0,"kind":"teleport","to":"mars"}}"#
    ));
    let (line, reason, _) = corrupt_at(dir.path(), &lines(&all));
    assert_eq!(line, seq + 1);
    assert_eq!(
        reason,
        "entry kind \"teleport\" was written by a newer seedpod; upgrade seedpod"
    );
}

#[test]
fn a_system_item_from_a_newer_seedpod_asks_for_an_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = realistic_lines();
    let seq = all.len();
    all.push(format!(
        r#"{{"v":1,"seq":{seq},"ts":0,"kind":"system_item","item":{{"kind":"telepathy","body":"x"}}}}"#
    ));
    let (line, reason, _) = corrupt_at(dir.path(), &lines(&all));
    assert_eq!(line, seq + 1);
    assert!(reason.contains("\"telepathy\""), "{reason}");
    assert!(reason.contains("upgrade seedpod"), "{reason}");
}

#[test]
fn a_newer_entry_format_asks_for_an_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = realistic_entries();
    entries[2].v = 2;
    let (line, reason, _) = corrupt_at(dir.path(), &file_bytes(&entries));
    assert_eq!(line, 3);
    assert!(reason.contains("newer seedpod"), "{reason}");
}

#[test]
fn a_segment_must_begin_with_segment_start() {
    let dir = tempfile::tempdir().unwrap();
    let first = entry(
        0,
        EntryKind::AssistantItem {
            item: ModelItem::AssistantText { text: "hi".into() },
        },
    );
    let (line, reason, _) = corrupt_at(dir.path(), &file_bytes(&[first]));
    assert_eq!(line, 1);
    assert!(reason.contains("found assistant_item"), "{reason}");
}

#[test]
fn a_second_segment_start_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = realistic_entries();
    let mut again = entries[0].clone();
    again.seq = EntrySeq::new(entries.len() as u64);
    entries.push(again);
    let (line, reason, _) = corrupt_at(dir.path(), &file_bytes(&entries));
    assert_eq!(line, entries.len());
    assert!(reason.contains("only be the first"), "{reason}");
}

#[test]
fn an_empty_file_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (line, reason, _) = corrupt_at(dir.path(), b"");
    assert_eq!(line, 1);
    assert!(reason.contains("empty"), "{reason}");
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_segment(&seg_path(dir.path())).unwrap_err();
    assert!(matches!(err, StoreError::Io { op: "read", .. }), "{err}");
    assert!(err.to_string().contains("seg.jsonl"), "{err}");
}
