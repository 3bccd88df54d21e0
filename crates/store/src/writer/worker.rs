//! The writer thread: group commit over one segment file.
//!
//! It waits for one command, then takes everything else already queued as a batch, writes each
//! entry as a single `write_all` of its whole line, fsyncs once if anything in the batch asked for
//! durability, and only then answers. One fsync thus covers a burst of appends, and no append is
//! answered before the bytes it reports are where it promised.
//!
//! Pipelined appends (`SegmentWriter::append_pipelined`) are answered as soon as their line is
//! written; their fsync runs on a second thread, the syncer, which owns a clone of the file
//! handle. While it syncs, the writer goes on writing, and everything written meanwhile shares
//! the syncer's next fsync: that is what lets a burst of durable acks cost a few fsyncs instead
//! of one each, without the appender waiting for any of them.
//!
//! A failed write may leave a partial line at the end of the file, and after a failed fsync the
//! kernel may have dropped the unsynced pages. Either way the file no longer matches what the
//! writer has reported, so the writer marks itself broken and refuses every later append and
//! sync: memory must never hold what disk does not. Restore recovers from the log (a partial
//! line is a torn tail).

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, mpsc as std_mpsc};
use std::thread::JoinHandle;

use seedpod_protocol::{Entry, EntryKind, EntrySeq};
use tokio::sync::{mpsc, oneshot};

use super::{Durability, Op, WRITER_CHANNEL_CAPACITY, entry_line, new_entry};
use crate::error::StoreError;
use crate::validate::check_position;

/// Most commands committed as one group: enough to drain a full channel, and a bound so a steady
/// stream of appends cannot postpone the fsync (and the answers) indefinitely.
const MAX_BATCH: usize = WRITER_CHANNEL_CAPACITY;

/// What the worker needs from a file; a seam so tests can observe writes and fsyncs and inject
/// failures.
pub(super) trait LogFile {
    /// Write one whole line with a single `write_all`.
    fn append_line(&mut self, line: &[u8]) -> io::Result<()>;
    fn sync_data(&mut self) -> io::Result<()>;
    /// A second handle on the same file that the syncer thread fsyncs through.
    fn sync_handle(&self) -> io::Result<SyncFn>;
}

/// Fsyncs the file it was made from.
pub(super) type SyncFn = Box<dyn FnMut() -> io::Result<()> + Send>;

impl LogFile for File {
    fn append_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.write_all(line)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn sync_handle(&self) -> io::Result<SyncFn> {
        // A clone shares the open file description: its fsync covers the writer's writes.
        let clone = self.try_clone()?;
        Ok(Box::new(move || clone.sync_data()))
    }
}

/// Why the file can no longer be trusted, once a write or an fsync failed; shared by the
/// writer and the syncer, either of which may find out first.
#[derive(Clone, Default)]
struct Broken(Arc<Mutex<Option<String>>>);

impl Broken {
    fn reason(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, reason: String) {
        let mut broken = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        // The first failure is the cause; later ones follow from it.
        broken.get_or_insert(reason);
    }

    fn error(&self, path: &std::path::Path) -> Option<StoreError> {
        self.reason().map(|reason| StoreError::Broken {
            path: path.to_path_buf(),
            reason,
        })
    }
}

/// The syncer thread and the way to hand it the replies that wait for its next fsync.
/// Dropping it lets the thread answer what it holds and waits for it to end.
struct Syncer {
    tx: Option<std_mpsc::SyncSender<Vec<Reply<()>>>>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    fn start(mut sync: SyncFn, path: PathBuf, broken: Broken) -> io::Result<Syncer> {
        let (tx, rx) = std_mpsc::sync_channel::<Vec<Reply<()>>>(WRITER_CHANNEL_CAPACITY);
        let thread = std::thread::Builder::new()
            .name(format!("{}-sync", super::WRITER_THREAD_NAME))
            .spawn(move || {
                while let Ok(mut waiting) = rx.recv() {
                    // Everything handed over while the last fsync ran shares this one.
                    while let Ok(more) = rx.try_recv() {
                        waiting.extend(more);
                    }
                    let result = match broken.error(&path) {
                        Some(err) => Err(err),
                        None => sync().map_err(|err| {
                            broken.set(format!("fsync failed: {err}"));
                            StoreError::io(&path, "fsync", err)
                        }),
                    };
                    for reply in waiting {
                        let _ = reply.send(copy(&result));
                    }
                }
            })?;
        Ok(Syncer {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Hand `replies` to the syncer; gives them back if the thread is gone.
    fn hand_over(&self, replies: Vec<Reply<()>>) -> Result<(), Vec<Reply<()>>> {
        match &self.tx {
            Some(tx) => tx.send(replies).map_err(|returned| returned.0),
            None => Err(replies),
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One result for many waiters: `StoreError` holds an `io::Error`, which does not clone.
fn copy(result: &Result<(), StoreError>) -> Result<(), StoreError> {
    match result {
        Ok(()) => Ok(()),
        Err(StoreError::Io { path, op, cause }) => Err(StoreError::Io {
            path: path.clone(),
            op,
            cause: io::Error::new(cause.kind(), cause.to_string()),
        }),
        Err(StoreError::NoSpace { path, op, device }) => Err(StoreError::NoSpace {
            path: path.clone(),
            op,
            device: device.clone(),
        }),
        Err(StoreError::Broken { path, reason }) => Err(StoreError::Broken {
            path: path.clone(),
            reason: reason.clone(),
        }),
        Err(other) => Err(StoreError::Broken {
            path: PathBuf::new(),
            reason: other.to_string(),
        }),
    }
}

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// A `close` request's reply and the result it will carry.
type CloseAnswer = (Reply<()>, Result<(), StoreError>);

/// The answers a batch owes once its writes are done and (if needed) synced.
#[derive(Default)]
struct Batch {
    written: Vec<(Entry, Reply<Entry>)>,
    /// Pipelined `Sync` appends, already answered as written, waiting to be durable.
    durables: Vec<Reply<()>>,
    syncs: Vec<Reply<()>>,
    close: Option<Reply<()>>,
    needs_sync: bool,
}

pub(super) struct Worker<F: LogFile> {
    file: F,
    /// For error messages only.
    path: PathBuf,
    next_seq: EntrySeq,
    /// Whether bytes may have been written since the last successful fsync. Starts true: a
    /// reopened file may hold a previous process's unsynced appends.
    dirty: bool,
    broken: Broken,
    /// Started by the first pipelined append that asks for durability.
    syncer: Option<Syncer>,
}

impl<F: LogFile> Worker<F> {
    pub(super) fn new(file: F, path: PathBuf, next_seq: EntrySeq) -> Self {
        Worker {
            file,
            path,
            next_seq,
            dirty: true,
            broken: Broken::default(),
            syncer: None,
        }
    }

    /// Serve commands until `close` or until every handle is gone.
    pub(super) fn run(mut self, mut inbox: mpsc::Receiver<Op>) {
        while let Some(first) = inbox.blocking_recv() {
            let mut commands = vec![first];
            while commands.len() < MAX_BATCH {
                match inbox.try_recv() {
                    Ok(command) => commands.push(command),
                    Err(_) => break,
                }
            }
            if let Some((reply, result)) = self.commit(commands) {
                // No command is taken from here on, so a caller that has seen `close` answered
                // finds the writer closed at once. One already on its way (a sender that won a
                // slot before this) is refused below: tokio keeps a message pushed after the
                // receiver is dropped for as long as any handle lives, and its caller would
                // wait forever.
                inbox.close();
                // Releasing the file before answering: `close` returns once the fd is gone.
                drop(self);
                let _ = reply.send(result);
                // After `close`, this ends once every sender holding a slot has sent.
                while let Some(command) = inbox.blocking_recv() {
                    refuse_closed(command);
                }
                return;
            }
        }
        // What the syncer holds is answered before the last fsync.
        self.syncer.take();
        if self.dirty
            && self.broken.reason().is_none()
            && let Err(err) = self.file.sync_data()
        {
            tracing::error!(
                event = "segment_fsync_failed",
                path = %self.path.display(),
                error = %err,
            );
        }
    }

    /// Write and answer one batch. If the batch asked to close, returns that request's reply and
    /// its result, unsent, so the caller can answer after releasing the file.
    fn commit(&mut self, commands: Vec<Op>) -> Option<CloseAnswer> {
        let mut batch = Batch::default();
        for command in commands {
            if batch.close.is_some() {
                refuse_closed(command);
                continue;
            }
            match command {
                Op::Append {
                    kind,
                    durability,
                    reply,
                } => match self.write(*kind) {
                    Ok(entry) => {
                        batch.needs_sync |= durability == Durability::Sync;
                        batch.written.push((entry, reply));
                    }
                    Err(err) => {
                        let _ = reply.send(Err(err));
                    }
                },
                Op::AppendPipelined {
                    kind,
                    durability,
                    written,
                    durable,
                } => match self.write(*kind) {
                    Ok(entry) => {
                        let _ = written.send(Ok(entry));
                        match durability {
                            Durability::Sync => batch.durables.push(durable),
                            Durability::Buffered => {
                                let _ = durable.send(Ok(()));
                            }
                        }
                    }
                    Err(err) => {
                        let _ = written.send(Err(err));
                    }
                },
                Op::Sync { reply } => {
                    batch.needs_sync = true;
                    batch.syncs.push(reply);
                }
                Op::Close { reply } => {
                    batch.needs_sync = true;
                    batch.close = Some(reply);
                }
            }
        }
        self.answer(batch)
    }

    /// Sync if the batch needs it, then answer everything in it except a `close`.
    fn answer(&mut self, batch: Batch) -> Option<CloseAnswer> {
        let synced = if batch.needs_sync {
            self.sync()
        } else {
            Ok(())
        };
        if batch.needs_sync {
            // This batch's own fsync covers its pipelined appends too.
            let result = match &synced {
                Ok(()) => self.broken.error(&self.path).map_or(Ok(()), Err),
                Err(err) => Err(StoreError::io(
                    &self.path,
                    "fsync",
                    io::Error::new(err.kind(), err.to_string()),
                )),
            };
            for reply in batch.durables {
                let _ = reply.send(copy(&result));
            }
        } else if !batch.durables.is_empty() {
            self.sync_later(batch.durables);
        }
        match synced {
            Ok(()) => {
                for (entry, reply) in batch.written {
                    let _ = reply.send(Ok(entry));
                }
                for reply in batch.syncs {
                    let _ = reply.send(self.broken_error().map_or(Ok(()), Err));
                }
                let closed = self.broken_error().map_or(Ok(()), Err);
                batch.close.map(|reply| (reply, closed))
            }
            Err(err) => {
                // The kernel may have dropped any of this batch's pages: acknowledge none of it.
                let failed = || {
                    let copy = io::Error::new(err.kind(), err.to_string());
                    StoreError::io(&self.path, "fsync", copy)
                };
                for (_, reply) in batch.written {
                    let _ = reply.send(Err(failed()));
                }
                for reply in batch.syncs {
                    let _ = reply.send(Err(failed()));
                }
                batch.close.map(|reply| (reply, Err(failed())))
            }
        }
    }

    /// Have the syncer answer `replies` after its next fsync; sync here when it cannot.
    fn sync_later(&mut self, replies: Vec<Reply<()>>) {
        if self.syncer.is_none() {
            match self
                .file
                .sync_handle()
                .and_then(|handle| Syncer::start(handle, self.path.clone(), self.broken.clone()))
            {
                Ok(syncer) => self.syncer = Some(syncer),
                Err(err) => tracing::warn!(
                    event = "segment_syncer_unavailable",
                    path = %self.path.display(),
                    error = %err,
                ),
            }
        }
        let replies = match &self.syncer {
            Some(syncer) => match syncer.hand_over(replies) {
                Ok(()) => return,
                Err(replies) => replies,
            },
            None => replies,
        };
        let result = self
            .sync()
            .map_err(|err| StoreError::io(&self.path, "fsync", err));
        for reply in replies {
            let _ = reply.send(copy(&result));
        }
    }

    /// Append one entry's line, numbering it. Nothing is written (and the writer stays usable) if
    /// the entry could not be read back or cannot be encoded.
    fn write(&mut self, kind: EntryKind) -> Result<Entry, StoreError> {
        if let Some(err) = self.broken_error() {
            return Err(err);
        }
        let entry = new_entry(self.next_seq, kind);
        check_position(&entry, entry.seq).map_err(|misplaced| StoreError::Refused {
            seq: entry.seq,
            reason: misplaced.to_string(),
        })?;
        let line = entry_line(&entry)?;
        self.dirty = true;
        if let Err(err) = self.file.append_line(line.as_bytes()) {
            self.broken
                .set(format!("appending entry {} failed: {err}", entry.seq));
            return Err(StoreError::io(&self.path, "append to", err));
        }
        self.next_seq = self.next_seq.next();
        Ok(entry)
    }

    /// Fsync if anything may be unsynced; a failure breaks the writer.
    fn sync(&mut self) -> io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        match self.file.sync_data() {
            Ok(()) => {
                self.dirty = false;
                Ok(())
            }
            Err(err) => {
                self.broken.set(format!("fsync failed: {err}"));
                Err(err)
            }
        }
    }

    fn broken_error(&self) -> Option<StoreError> {
        self.broken.error(&self.path)
    }
}

/// Answer a command that arrived after `close` in the same batch.
fn refuse_closed(command: Op) {
    match command {
        Op::Append { reply, .. } => {
            let _ = reply.send(Err(StoreError::Closed));
        }
        Op::AppendPipelined { written, .. } => {
            let _ = written.send(Err(StoreError::Closed));
        }
        Op::Sync { reply } | Op::Close { reply } => {
            let _ = reply.send(Err(StoreError::Closed));
        }
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
