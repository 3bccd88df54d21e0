//! Many tasks appending at once: the single writer numbers every entry exactly once, and the file
//! holds them in `seq` order.

use std::collections::HashMap;

use crate::support::{seg_path, segment_start};
use seedpod_protocol::{EntryKind, EntrySeq, ModelItem};
use seedpod_store::{Durability, SegmentWriter, StoreError, read_segment};

const TASKS: usize = 8;
const APPENDS_PER_TASK: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_appends_get_consecutive_seqs_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let (writer, _) = SegmentWriter::create(path.clone(), segment_start("s1"))
        .await
        .unwrap();

    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let writer = writer.clone();
        tasks.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for i in 0..APPENDS_PER_TASK {
                let durability = if i % 50 == 0 {
                    Durability::Sync
                } else {
                    Durability::Buffered
                };
                let kind = EntryKind::AssistantItem {
                    item: ModelItem::AssistantText {
                        text: format!("{task}:{i}"),
                    },
                };
                seqs.push(writer.append(kind, durability).await.unwrap().seq);
            }
            seqs
        }));
    }
    let mut seq_of = HashMap::new();
    for (task, handle) in tasks.into_iter().enumerate() {
        let seqs = handle.await.unwrap();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "a task's own appends keep their order"
        );
        for (i, seq) in seqs.into_iter().enumerate() {
            seq_of.insert(format!("{task}:{i}"), seq);
        }
    }
    writer.close().await.unwrap();

    let read = read_segment(&path).unwrap();
    let total = 1 + TASKS * APPENDS_PER_TASK;
    assert_eq!(read.entries.len(), total);
    for (line, entry) in read.entries.iter().enumerate() {
        assert_eq!(
            entry.seq,
            EntrySeq::new(line as u64),
            "line {} holds seq {}",
            line + 1,
            entry.seq
        );
        if let EntryKind::AssistantItem {
            item: ModelItem::AssistantText { text },
        } = &entry.kind
        {
            assert_eq!(seq_of[text], entry.seq, "the answer matches the file");
        }
    }
}

/// On a real file: an appender that never waits for durability between pipelined appends gets
/// every entry numbered in order, each `Durable` resolves, and the file holds them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_appends_are_written_in_order_and_all_become_durable() {
    let dir = tempfile::tempdir().unwrap();
    let path = seg_path(dir.path());
    let (writer, _) = SegmentWriter::create(path.clone(), segment_start("s1"))
        .await
        .unwrap();
    let mut durables = Vec::new();
    for i in 0..100u64 {
        let kind = EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: format!("n{i}"),
            },
        };
        let (entry, durable) = writer
            .append_pipelined(kind, Durability::Sync)
            .await
            .unwrap();
        assert_eq!(entry.seq, EntrySeq::new(i + 1));
        durables.push(durable);
    }
    for durable in durables {
        durable.wait().await.unwrap();
    }
    writer.close().await.unwrap();
    let read = read_segment(&path).unwrap();
    assert_eq!(read.entries.len(), 101);
    let closed = EntryKind::AssistantItem {
        item: ModelItem::AssistantText {
            text: "late".into(),
        },
    };
    assert!(
        writer
            .append_pipelined(closed, Durability::Sync)
            .await
            .is_err()
    );
}

/// A call that reaches the writer as it closes is refused, never left waiting: the writer
/// stops taking commands before it answers `close`, and refuses every one already on its way.
/// (A call sent between the answer and the thread's end used to sit in the channel for as
/// long as a handle lived, and its caller waited forever.) Many rounds, with appenders racing
/// the close from other tasks; the whole is bounded so a hang fails instead of stalling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_racing_close_is_refused_never_left_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let rounds = async {
        for round in 0..300 {
            let path = dir.path().join(format!("seg{round}.jsonl"));
            let (writer, _) = SegmentWriter::create(path, segment_start("s1"))
                .await
                .unwrap();
            let racers: Vec<_> = (0..3)
                .map(|i| {
                    let writer = writer.clone();
                    tokio::spawn(async move {
                        let kind = EntryKind::AssistantItem {
                            item: ModelItem::AssistantText {
                                text: format!("racer {i}"),
                            },
                        };
                        // Either written before the close or refused; both are fine.
                        let _ = writer.append_pipelined(kind, Durability::Sync).await;
                    })
                })
                .collect();
            writer.close().await.unwrap();
            let late = EntryKind::AssistantItem {
                item: ModelItem::AssistantText {
                    text: "late".into(),
                },
            };
            assert!(matches!(
                writer.append_pipelined(late, Durability::Sync).await,
                Err(StoreError::Closed)
            ));
            for racer in racers {
                racer.await.unwrap();
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), rounds)
        .await
        .expect("a call to a closing writer was left waiting");
}
