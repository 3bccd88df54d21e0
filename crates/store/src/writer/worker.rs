//! The writer thread: group commit over one segment file.
//!
//! It waits for one command, then takes everything else already queued as a batch, writes each
//! entry as a single `write_all` of its whole line, fsyncs once if anything in the batch asked for
//! durability, and only then answers. One fsync thus covers a burst of appends, and no append is
//! answered before the bytes it reports are where it promised.
//!
//! A failed write may leave a partial line at the end of the file, and after a failed fsync the
//! kernel may have dropped the unsynced pages. Either way the file no longer matches what the
//! writer has reported, so the writer marks itself broken and refuses every later append and
//! sync: memory must never hold what disk does not. Restore recovers from the log (a partial
//! line is a torn tail).

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use seedpod_protocol::{Entry, EntryKind, EntrySeq};
use tokio::sync::{mpsc, oneshot};

use super::{Command, Durability, WRITER_CHANNEL_CAPACITY, entry_line, new_entry};
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
}

impl LogFile for File {
    fn append_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.write_all(line)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
}

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// A `close` request's reply and the result it will carry.
type CloseAnswer = (Reply<()>, Result<(), StoreError>);

/// The answers a batch owes once its writes are done and (if needed) synced.
#[derive(Default)]
struct Batch {
    written: Vec<(Entry, Reply<Entry>)>,
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
    /// Why the file can no longer be trusted, once a write or fsync failed.
    broken: Option<String>,
}

impl<F: LogFile> Worker<F> {
    pub(super) fn new(file: F, path: PathBuf, next_seq: EntrySeq) -> Self {
        Worker {
            file,
            path,
            next_seq,
            dirty: true,
            broken: None,
        }
    }

    /// Serve commands until `close` or until every handle is gone.
    pub(super) fn run(mut self, mut inbox: mpsc::Receiver<Command>) {
        while let Some(first) = inbox.blocking_recv() {
            let mut commands = vec![first];
            while commands.len() < MAX_BATCH {
                match inbox.try_recv() {
                    Ok(command) => commands.push(command),
                    Err(_) => break,
                }
            }
            if let Some((reply, result)) = self.commit(commands) {
                // Releasing the file before answering: `close` returns once the fd is gone.
                drop(self);
                let _ = reply.send(result);
                return;
            }
        }
        if self.dirty
            && self.broken.is_none()
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
    fn commit(&mut self, commands: Vec<Command>) -> Option<CloseAnswer> {
        let mut batch = Batch::default();
        for command in commands {
            if batch.close.is_some() {
                refuse_closed(command);
                continue;
            }
            match command {
                Command::Append {
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
                Command::Sync { reply } => {
                    batch.needs_sync = true;
                    batch.syncs.push(reply);
                }
                Command::Close { reply } => {
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
            self.broken = Some(format!("appending entry {} failed: {err}", entry.seq));
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
                self.broken = Some(format!("fsync failed: {err}"));
                Err(err)
            }
        }
    }

    fn broken_error(&self) -> Option<StoreError> {
        self.broken.as_ref().map(|reason| StoreError::Broken {
            path: self.path.clone(),
            reason: reason.clone(),
        })
    }
}

/// Answer a command that arrived after `close` in the same batch.
fn refuse_closed(command: Command) {
    match command {
        Command::Append { reply, .. } => {
            let _ = reply.send(Err(StoreError::Closed));
        }
        Command::Sync { reply } | Command::Close { reply } => {
            let _ = reply.send(Err(StoreError::Closed));
        }
    }
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
