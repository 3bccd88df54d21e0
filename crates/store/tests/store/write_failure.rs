//! A write the disk refuses fails that append with a message naming the file, and the writer
//! refuses everything after it (memory never holds what disk does not).

#![cfg(target_os = "linux")]

use std::path::PathBuf;

use seedpod_protocol::{EntryKind, EntrySeq, RunTrigger};
use seedpod_store::{Durability, SegmentWriter, StoreError};

fn run_start() -> EntryKind {
    EntryKind::RunStart {
        trigger: RunTrigger::User,
    }
}

#[tokio::test]
async fn a_full_disk_fails_the_append_and_breaks_the_writer() {
    // /dev/full accepts the open and fails every write with ENOSPC.
    let writer = SegmentWriter::open_append(PathBuf::from("/dev/full"), EntrySeq::new(3)).unwrap();
    let err = writer
        .append(run_start(), Durability::Buffered)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NoSpace {
                op: "append to",
                ..
            }
        ),
        "{err}"
    );
    let message = err.to_string();
    assert!(message.starts_with("no space left on "), "{message}");
    assert!(
        message.contains("could not append to /dev/full; free some space there"),
        "{message}"
    );

    let later = writer
        .append(run_start(), Durability::Sync)
        .await
        .unwrap_err();
    assert!(matches!(later, StoreError::Broken { .. }), "{later}");
    assert!(later.to_string().contains("/dev/full"), "{later}");
}
