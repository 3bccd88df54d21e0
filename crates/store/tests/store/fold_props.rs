//! Property: whatever entries the pod commits, folding them live (as the writer returns them)
//! equals replaying them from the file — the heart of invariant 2.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{fold_valid_kind, seg_path, segment_start};
use proptest::prelude::*;
use seedpod_protocol::{EntryKind, EntrySeq};
use seedpod_store::{Durability, SegmentState, SegmentWriter, read_segment};

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
        prop_assert_eq!(replayed.next_seq, EntrySeq::new(read.entries.len() as u64));
    }
}

/// The task list by its definition: the arguments of the last `update_tasks` call whose
/// result (matched by call id, after the call) was not an error and parsed.
fn expected_tasks(kinds: &[EntryKind]) -> Vec<seedpod_protocol::Task> {
    use seedpod_protocol::ModelItem;
    let mut calls = std::collections::HashMap::new();
    let mut tasks = Vec::new();
    for kind in kinds {
        match kind {
            EntryKind::AssistantItem {
                item:
                    ModelItem::ToolCall {
                        call_id,
                        name,
                        arguments,
                    },
            } if name == "update_tasks" => {
                calls.insert(call_id.clone(), arguments.clone());
            }
            EntryKind::ToolResult {
                call_id,
                name,
                is_error,
                ..
            } if name == "update_tasks" => {
                if let Some(arguments) = calls.remove(call_id)
                    && !is_error
                    && let Ok(list) = seedpod_protocol::tasks::parse_update(&arguments)
                {
                    tasks = list;
                }
            }
            _ => {}
        }
    }
    tasks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Tasks and reminders fold like everything else, and the list the fold keeps is the one
    /// its definition gives, whatever calls, results, turn ends and reminders interleave.
    #[test]
    fn the_task_list_is_the_last_successful_update(kinds in proptest::collection::vec(fold_valid_kind(), 0..60)) {
        let dir = tempfile::tempdir().unwrap();
        let path = seg_path(dir.path());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let live = runtime.block_on(commit_all(path.clone(), kinds.clone()));
        let replayed = SegmentState::replay(&read_segment(&path).unwrap().entries).unwrap();
        prop_assert_eq!(&replayed.tasks, &live.tasks);
        let expected = expected_tasks(&kinds);
        prop_assert_eq!(live.tasks.tasks(), expected.as_slice());
    }
}
