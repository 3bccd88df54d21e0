//! Property: whatever entries the pod commits, folding them live (as the writer returns them)
//! equals replaying them from the file — the heart of invariant 2.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use proptest::prelude::*;
use seedpod_protocol::EntryKind;
use seedpod_store::{Durability, SegmentState, SegmentWriter, read_segment};
use support::{fold_valid_kind, seg_path, segment_start};

/// Append `kinds` through a real writer, folding each returned entry; return the live state.
async fn commit_all(path: std::path::PathBuf, kinds: Vec<EntryKind>) -> SegmentState {
    let (writer, first) = SegmentWriter::create(path, segment_start("prop"))
        .await
        .unwrap();
    let mut live = SegmentState::start(&first).unwrap();
    for (i, kind) in kinds.into_iter().enumerate() {
        let durability = if i % 7 == 0 {
            Durability::Sync
        } else {
            Durability::Buffered
        };
        let entry = writer.append(kind, durability).await.unwrap();
        live.apply(&entry).unwrap();
    }
    writer.close().await.unwrap();
    live
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn live_fold_equals_replay_from_disk(kinds in proptest::collection::vec(fold_valid_kind(), 0..40)) {
        let dir = tempfile::tempdir().unwrap();
        let path = seg_path(dir.path());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let live = runtime.block_on(commit_all(path.clone(), kinds));

        let read = read_segment(&path).unwrap();
        prop_assert_eq!(read.torn, None);
        let replayed = SegmentState::replay(&read.entries).unwrap();
        prop_assert_eq!(&replayed, &live);
        prop_assert_eq!(replayed.next_seq, read.entries.len() as u64);
    }
}
