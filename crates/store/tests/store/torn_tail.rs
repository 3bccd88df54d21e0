//! A crash mid-append leaves a torn last line: it is moved to `<segment>.torn`, the segment is cut
//! back to its valid prefix, and the entries before it restore.

use crate::support::{file_bytes, realistic_entries, seg_path};
use seedpod_protocol::{EntryKind, RunEndReason};
use seedpod_store::{
    Durability, SegmentState, SegmentWriter, StoreError, read_segment, torn_side_file,
};

#[test]
fn a_line_cut_mid_write_is_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = realistic_entries();
    let bytes = file_bytes(&entries);
    let valid = file_bytes(&entries[..entries.len() - 1]);
    let cut = valid.len() + 25;
    std::fs::write(&path, &bytes[..cut]).unwrap();

    let read = read_segment(&path).unwrap();
    assert_eq!(read.entries, entries[..entries.len() - 1]);
    let torn = read.torn.expect("a torn tail is reported");
    assert_eq!(torn.line, entries.len());
    assert_eq!(torn.bytes, 25);
    assert_eq!(torn.side_file, torn_side_file(&path));
    assert_eq!(torn.side_file.file_name().unwrap(), "seg.jsonl.torn");

    let mut expected_side = bytes[valid.len()..cut].to_vec();
    expected_side.push(b'\n');
    assert_eq!(std::fs::read(&torn.side_file).unwrap(), expected_side);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        valid,
        "cut to the valid prefix"
    );

    let again = read_segment(&path).unwrap();
    assert_eq!(again.torn, None, "the second read is clean");
    assert_eq!(again.entries, read.entries);
}

#[test]
fn a_complete_but_unreadable_last_line_is_torn_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = realistic_entries();
    let mut bytes = file_bytes(&entries);
    bytes.extend_from_slice(b"\0\0\0\0\n");
    std::fs::write(&path, &bytes).unwrap();

    let read = read_segment(&path).unwrap();
    assert_eq!(read.entries, entries);
    assert_eq!(read.torn.unwrap().bytes, 5);
    assert_eq!(std::fs::read(&path).unwrap(), file_bytes(&entries));
}

#[test]
fn a_complete_entry_missing_only_its_newline_is_torn() {
    // Appending after it would glue the next entry onto this line.
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = realistic_entries();
    let bytes = file_bytes(&entries);
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();

    let read = read_segment(&path).unwrap();
    assert_eq!(read.entries, entries[..entries.len() - 1]);
    assert_eq!(read.torn.unwrap().line, entries.len());
}

#[test]
fn torn_tails_from_several_crashes_accumulate() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let valid = file_bytes(&realistic_entries());
    for tail in [&b"{\"v\":1,\"se"[..], &b"{\"v\""[..]] {
        let mut bytes = valid.clone();
        bytes.extend_from_slice(tail);
        std::fs::write(&path, &bytes).unwrap();
        read_segment(&path).unwrap().torn.unwrap();
    }
    assert_eq!(
        std::fs::read(torn_side_file(&path)).unwrap(),
        b"{\"v\":1,\"se\n{\"v\"\n"
    );
}

#[test]
fn a_torn_first_line_stops_restore_without_touching_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let bytes = file_bytes(&realistic_entries()[..1]);
    std::fs::write(&path, &bytes[..10]).unwrap();

    let err = read_segment(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { line: 1, .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), &bytes[..10]);
    assert!(!torn_side_file(&path).exists());
}

#[tokio::test]
async fn appends_after_recovery_continue_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let entries = realistic_entries();
    let mut bytes = file_bytes(&entries);
    bytes.extend_from_slice(b"{\"v\":1,\"seq\":");
    std::fs::write(&path, &bytes).unwrap();

    let read = read_segment(&path).unwrap();
    let mut state = SegmentState::replay(&read.entries).unwrap();
    let writer = SegmentWriter::open_append(path.clone(), state.next_seq).unwrap();
    let entry = writer
        .append(
            EntryKind::RunEnd {
                reason: RunEndReason::Cancelled,
                message: None,
            },
            Durability::Sync,
        )
        .await
        .unwrap();
    state.apply(&entry).unwrap();
    writer.close().await.unwrap();

    let read = read_segment(&path).unwrap();
    assert_eq!(read.torn, None);
    assert_eq!(SegmentState::replay(&read.entries).unwrap(), state);
}
