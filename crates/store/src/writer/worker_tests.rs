//! The worker's group commit and failure rules, observed through a fake file: which lines were
//! written, where the fsyncs fell, and what each command was answered.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use seedpod_protocol::{Entry, EntryKind, EntrySeq, RunEndReason, RunTrigger};
use tokio::sync::{mpsc, oneshot};

use super::{LogFile, Worker};
use crate::error::StoreError;
use crate::writer::{Durability, Op};

#[derive(Debug, Clone, PartialEq)]
enum FileOp {
    Line(String),
    Sync,
    /// An fsync through the syncer's handle.
    SyncBeside,
}

/// Records every call; fails the `fail_write`-th write (0-based) or every sync, when asked.
#[derive(Clone, Default)]
struct FakeFile {
    ops: Arc<Mutex<Vec<FileOp>>>,
    writes: Arc<Mutex<usize>>,
    fail_write: Option<usize>,
    fail_sync: bool,
    /// The failed write says the disk is full instead of refusing.
    disk_full: bool,
}

impl FakeFile {
    fn ops(&self) -> Vec<FileOp> {
        self.ops.lock().unwrap().clone()
    }
}

impl LogFile for FakeFile {
    fn append_line(&mut self, line: &[u8]) -> io::Result<()> {
        let mut writes = self.writes.lock().unwrap();
        let index = *writes;
        *writes += 1;
        if Some(index) == self.fail_write {
            let kind = if self.disk_full {
                io::ErrorKind::StorageFull
            } else {
                io::ErrorKind::PermissionDenied
            };
            return Err(io::Error::from(kind));
        }
        let line = String::from_utf8(line.to_vec()).unwrap();
        self.ops.lock().unwrap().push(FileOp::Line(line));
        Ok(())
    }

    fn sync_data(&mut self) -> io::Result<()> {
        if self.fail_sync {
            return Err(io::Error::other("injected fsync failure"));
        }
        self.ops.lock().unwrap().push(FileOp::Sync);
        Ok(())
    }

    fn sync_handle(&self) -> io::Result<super::SyncFn> {
        let ops = self.ops.clone();
        let fail = self.fail_sync;
        Ok(Box::new(move || {
            if fail {
                return Err(io::Error::other("injected fsync failure"));
            }
            ops.lock().unwrap().push(FileOp::SyncBeside);
            Ok(())
        }))
    }
}

type Answer<T> = oneshot::Receiver<Result<T, StoreError>>;

/// Commands queued before the worker starts, so they all arrive as one batch.
struct Queue {
    tx: mpsc::Sender<Op>,
    rx: mpsc::Receiver<Op>,
}

impl Queue {
    fn new() -> Self {
        let (tx, rx) = mpsc::channel(64);
        Queue { tx, rx }
    }

    fn append(&self, kind: EntryKind, durability: Durability) -> Answer<Entry> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .try_send(Op::Append {
                kind: Box::new(kind),
                durability,
                reply,
            })
            .unwrap();
        answer
    }

    fn append_pipelined(
        &self,
        kind: EntryKind,
        durability: Durability,
    ) -> (Answer<Entry>, Answer<()>) {
        let (written, written_rx) = oneshot::channel();
        let (durable, durable_rx) = oneshot::channel();
        self.tx
            .try_send(Op::AppendPipelined {
                kind: Box::new(kind),
                durability,
                written,
                durable,
            })
            .unwrap();
        (written_rx, durable_rx)
    }

    fn sync(&self) -> Answer<()> {
        let (reply, answer) = oneshot::channel();
        self.tx.try_send(Op::Sync { reply }).unwrap();
        answer
    }

    fn close(&self) -> Answer<()> {
        let (reply, answer) = oneshot::channel();
        self.tx.try_send(Op::Close { reply }).unwrap();
        answer
    }

    /// Run the worker on this thread until the queue is drained and closed.
    fn run(self, file: FakeFile, next_seq: u64) {
        let Queue { tx, rx } = self;
        drop(tx);
        let mut worker = Worker::new(file, PathBuf::from("seg.jsonl"), EntrySeq::new(next_seq));
        worker.dirty = false;
        worker.run(rx);
    }
}

fn run_start() -> EntryKind {
    EntryKind::RunStart {
        trigger: RunTrigger::User,
    }
}

fn run_end() -> EntryKind {
    EntryKind::RunEnd {
        reason: RunEndReason::Completed,
        message: None,
    }
}

fn answer<T>(mut answer: Answer<T>) -> Result<T, StoreError> {
    answer.try_recv().unwrap()
}

#[test]
fn one_batch_writes_every_line_then_syncs_once() {
    let queue = Queue::new();
    let mut answers = Vec::new();
    for i in 0..9 {
        let durability = if i == 4 {
            Durability::Sync
        } else {
            Durability::Buffered
        };
        answers.push(queue.append(run_start(), durability));
    }
    let file = FakeFile::default();
    queue.run(file.clone(), 5);

    let ops = file.ops();
    assert_eq!(ops.len(), 10, "{ops:?}");
    assert!(ops[..9].iter().all(|op| matches!(op, FileOp::Line(_))));
    assert_eq!(ops[9], FileOp::Sync);
    for (i, a) in answers.into_iter().enumerate() {
        let entry = answer(a).unwrap();
        assert_eq!(entry.seq, EntrySeq::new(5 + i as u64));
        let FileOp::Line(line) = &ops[i] else {
            unreachable!()
        };
        assert_eq!(line, &crate::entry_line(&entry).unwrap());
        assert!(line.ends_with('\n'));
    }
}

#[test]
fn buffered_appends_are_not_synced_until_the_last_handle_goes() {
    let queue = Queue::new();
    let a = queue.append(run_start(), Durability::Buffered);
    let b = queue.append(run_end(), Durability::Buffered);
    let file = FakeFile::default();
    queue.run(file.clone(), 1);
    assert_eq!(answer(a).unwrap().seq, EntrySeq::new(1));
    assert_eq!(answer(b).unwrap().seq, EntrySeq::new(2));
    let ops = file.ops();
    // Two lines, then the single sync the worker does when every handle is gone.
    assert_eq!(ops.len(), 3, "{ops:?}");
    assert_eq!(ops[2], FileOp::Sync);
}

#[test]
fn a_failed_write_fails_that_append_and_breaks_the_writer() {
    let queue = Queue::new();
    let ok = queue.append(run_start(), Durability::Buffered);
    let failed = queue.append(run_start(), Durability::Sync);
    let after = queue.append(run_end(), Durability::Buffered);
    let sync = queue.sync();
    let file = FakeFile {
        fail_write: Some(1),
        ..FakeFile::default()
    };
    queue.run(file.clone(), 1);

    assert_eq!(answer(ok).unwrap().seq, EntrySeq::new(1));
    let err = answer(failed).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Io {
                op: "append to",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        matches!(answer(after), Err(StoreError::Broken { .. })),
        "later appends are refused"
    );
    assert!(matches!(answer(sync), Err(StoreError::Broken { .. })));
    assert_eq!(
        file.ops().len(),
        2,
        "one line written, one sync for the batch"
    );
}

#[test]
fn a_full_disk_is_reported_as_such_to_the_append_that_hit_it() {
    let queue = Queue::new();
    let failed = queue.append(run_start(), Durability::Sync);
    let file = FakeFile {
        fail_write: Some(0),
        disk_full: true,
        ..FakeFile::default()
    };
    queue.run(file, 1);

    let err = answer(failed).unwrap_err();
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
    assert!(err.to_string().contains("no space left"), "{err}");
}

#[test]
fn a_failed_fsync_acknowledges_nothing_in_the_batch() {
    let queue = Queue::new();
    let buffered = queue.append(run_start(), Durability::Buffered);
    let synced = queue.append(run_end(), Durability::Sync);
    let file = FakeFile {
        fail_sync: true,
        ..FakeFile::default()
    };
    queue.run(file, 1);
    for err in [answer(buffered).unwrap_err(), answer(synced).unwrap_err()] {
        assert!(matches!(err, StoreError::Io { op: "fsync", .. }), "{err}");
    }
}

#[test]
fn close_syncs_answers_and_refuses_what_follows() {
    let queue = Queue::new();
    let before = queue.append(run_start(), Durability::Buffered);
    let close = queue.close();
    let after = queue.append(run_end(), Durability::Buffered);
    let file = FakeFile::default();
    queue.run(file.clone(), 1);
    assert_eq!(answer(before).unwrap().seq, EntrySeq::new(1));
    answer(close).unwrap();
    assert!(matches!(answer(after), Err(StoreError::Closed)));
    let ops = file.ops();
    assert_eq!(ops.len(), 2, "{ops:?}");
    assert_eq!(ops[1], FileOp::Sync);
}

#[test]
fn entries_a_restore_would_refuse_are_not_written() {
    let queue = Queue::new();
    let unknown = queue.append(EntryKind::Unknown, Durability::Sync);
    let after = queue.append(run_start(), Durability::Buffered);
    let file = FakeFile::default();
    queue.run(file.clone(), 1);
    let err = answer(unknown).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Refused { seq, .. } if seq == EntrySeq::new(1)
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "refused to append entry 1, nothing was written: its entry kind is unknown"
    );
    assert_eq!(
        answer(after).unwrap().seq,
        EntrySeq::new(1),
        "the writer stays usable"
    );
    assert_eq!(file.ops().len(), 2, "{:?}", file.ops());
}

/// Pipelined appends are answered as written, and their durability comes from one fsync on the
/// syncer's handle for the whole batch; the writer itself never waited for it.
#[test]
fn pipelined_appends_share_one_fsync_beside_the_writer() {
    let queue = Queue::new();
    let answers: Vec<_> = (0..3)
        .map(|_| queue.append_pipelined(run_start(), Durability::Sync))
        .collect();
    let file = FakeFile::default();
    queue.run(file.clone(), 1);
    for (i, (written, durable)) in answers.into_iter().enumerate() {
        assert_eq!(answer(written).unwrap().seq, EntrySeq::new(1 + i as u64));
        answer(durable).unwrap();
    }
    let ops = file.ops();
    let beside = ops.iter().filter(|op| **op == FileOp::SyncBeside).count();
    assert_eq!(beside, 1, "{ops:?}");
    assert!(
        ops[..3].iter().all(|op| matches!(op, FileOp::Line(_))),
        "{ops:?}"
    );
    assert_eq!(
        ops[3],
        FileOp::SyncBeside,
        "the lines were synced beside the writer"
    );
}

/// A batch that syncs for an ordinary `Sync` append makes its pipelined appends durable with
/// the same fsync; a buffered pipelined append is durable as soon as it is written.
#[test]
fn a_batch_fsync_covers_its_pipelined_appends() {
    let queue = Queue::new();
    let (p_written, p_durable) = queue.append_pipelined(run_start(), Durability::Sync);
    let (b_written, b_durable) = queue.append_pipelined(run_start(), Durability::Buffered);
    let synced = queue.append(run_end(), Durability::Sync);
    let file = FakeFile::default();
    queue.run(file.clone(), 1);
    assert_eq!(answer(p_written).unwrap().seq, EntrySeq::new(1));
    assert_eq!(answer(b_written).unwrap().seq, EntrySeq::new(2));
    answer(p_durable).unwrap();
    answer(b_durable).unwrap();
    assert_eq!(answer(synced).unwrap().seq, EntrySeq::new(3));
    let ops = file.ops();
    assert!(!ops.contains(&FileOp::SyncBeside), "{ops:?}");
    assert_eq!(
        ops.iter().filter(|op| **op == FileOp::Sync).count(),
        1,
        "{ops:?}"
    );
}

/// An fsync failure on the syncer fails every pipelined append it held: none of them is
/// durable, and the writer is broken for whatever follows.
#[test]
fn a_failed_fsync_beside_the_writer_makes_nothing_durable() {
    let queue = Queue::new();
    let answers: Vec<_> = (0..2)
        .map(|_| queue.append_pipelined(run_start(), Durability::Sync))
        .collect();
    let file = FakeFile {
        fail_sync: true,
        ..FakeFile::default()
    };
    queue.run(file, 1);
    for (written, durable) in answers {
        assert!(answer(written).is_ok(), "written before the fsync");
        let err = answer(durable).unwrap_err();
        assert!(matches!(err, StoreError::Io { op: "fsync", .. }), "{err}");
    }
}
