//! Append → reopen → append → read → replay: restore sees exactly what the live pod folded.

use crate::support::{realistic_run, seg_path, segment_start};
use seedpod_protocol::{EntryKind, EntrySeq};
use seedpod_store::{Durability, SegmentState, SegmentWriter, StoreError, read_segment};

#[tokio::test]
async fn replay_after_reopen_equals_the_live_fold() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let run = realistic_run();
    let (first_half, second_half) = run.split_at(run.len() / 2);

    let (writer, first) = SegmentWriter::create(path.clone(), segment_start("s1"))
        .await
        .unwrap();
    assert_eq!(first.seq, EntrySeq::new(0));
    let mut live = SegmentState::start(&first).unwrap();
    let mut written = vec![first];
    for kind in first_half {
        let entry = writer
            .append(kind.clone(), Durability::Buffered)
            .await
            .unwrap();
        live.apply(&entry).unwrap();
        written.push(entry);
    }
    writer.close().await.unwrap();

    let read = read_segment(&path).unwrap();
    assert_eq!(read.torn, None);
    assert_eq!(read.entries, written);
    assert_eq!(SegmentState::replay(&read.entries).unwrap(), live);

    let writer = SegmentWriter::open_append(path.clone(), live.next_seq).unwrap();
    for kind in second_half {
        let entry = writer.append(kind.clone(), Durability::Sync).await.unwrap();
        live.apply(&entry).unwrap();
        written.push(entry);
    }
    writer.close().await.unwrap();

    let read = read_segment(&path).unwrap();
    assert_eq!(read.torn, None);
    assert_eq!(read.entries, written);
    let replayed = SegmentState::replay(&read.entries).unwrap();
    assert_eq!(replayed, live);
    assert_eq!(replayed.next_seq, EntrySeq::new(written.len() as u64));
}

#[tokio::test]
async fn create_refuses_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    std::fs::write(&path, b"keep me\n").unwrap();
    let err = SegmentWriter::create(path.clone(), segment_start("s1"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Io { op: "create", .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me\n");
}

#[tokio::test]
async fn open_append_reports_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = SegmentWriter::open_append(seg_path(dir.path()), EntrySeq::new(1)).unwrap_err();
    assert!(err.to_string().contains("open for appending"), "{err}");
}

#[tokio::test]
async fn every_call_after_close_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, _) = SegmentWriter::create(seg_path(dir.path()), segment_start("s1"))
        .await
        .unwrap();
    let clone = writer.clone();
    writer.close().await.unwrap();
    let append = clone.append(EntryKind::Unknown, Durability::Buffered).await;
    assert!(matches!(append, Err(StoreError::Closed)), "{append:?}");
    assert!(matches!(clone.sync().await, Err(StoreError::Closed)));
    assert!(matches!(writer.close().await, Err(StoreError::Closed)));
}

#[tokio::test]
async fn entries_get_wall_clock_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let (writer, first) = SegmentWriter::create(seg_path(dir.path()), segment_start("s1"))
        .await
        .unwrap();
    assert!(first.ts >= before);
    writer.close().await.unwrap();
}
