//! `SegmentWriter`: the one way entries reach a segment file.
//!
//! Each segment file has a single writer: an OS thread (file I/O must never block the tokio
//! runtime) that owns the `File`, the next `seq`, and the knowledge of whether the file is still
//! trustworthy. Everyone else holds a cloneable `SegmentWriter` handle that sends commands over a
//! bounded channel and waits for the answer on a oneshot — the writer, not the caller, numbers and
//! timestamps entries, so concurrent appenders can never produce a gap or a duplicate `seq`.
//!
//! An `append` is answered only after its line is in the file (and synced, when asked for), so the
//! caller can fold the returned `Entry` into memory knowing disk already holds it (invariant 1).
//! The thread itself lives in `writer/worker.rs`.

mod worker;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use seedpod_protocol::{ENTRY_VERSION, Entry, EntryKind, EntrySeq, SegmentStart};
use tokio::sync::{mpsc, oneshot};

use crate::durable::sync_parent_dir;
use crate::error::StoreError;
use worker::Worker;

/// How many commands may wait for the writer thread before `append` itself waits. Large enough
/// that bursts (a model streaming many items, many notifies) group-commit in one fsync; bounded so
/// a stalled disk pushes back on the pod instead of growing memory without limit.
pub const WRITER_CHANNEL_CAPACITY: usize = 1024;

/// Name given to writer threads, so they are recognisable in a debugger or `top -H`.
const WRITER_THREAD_NAME: &str = "seedpod-segment-writer";

/// Whether an append must be on stable storage before it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// In the file (the page cache), not yet fsynced: survives the pod crashing, not the machine.
    Buffered,
    /// Fsynced before the answer: what a pod needs before it acknowledges a request (invariant 5).
    Sync,
}

/// A request to the writer thread.
enum Op {
    Append {
        /// Boxed: entries can be large (a segment start), and every command is moved through
        /// the channel.
        kind: Box<EntryKind>,
        durability: Durability,
        reply: oneshot::Sender<Result<Entry, StoreError>>,
    },
    /// An append answered in two steps: `written` once the line is in the file, `durable` once
    /// it is synced (at once for `Buffered`). The fsync runs beside the writer, so appends that
    /// arrive meanwhile are written without waiting for it and share the next one.
    AppendPipelined {
        kind: Box<EntryKind>,
        durability: Durability,
        written: oneshot::Sender<Result<Entry, StoreError>>,
        durable: oneshot::Sender<Result<(), StoreError>>,
    },
    Sync {
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
    Close {
        reply: oneshot::Sender<Result<(), StoreError>>,
    },
}

/// Handle to the single writer of one segment file. Clones share the same writer.
///
/// Dropping an `append` future after it was sent does not cancel the write; the entry may still
/// reach the log. When every handle is dropped without `close`, the thread syncs and exits.
#[derive(Debug, Clone)]
pub struct SegmentWriter {
    commands: mpsc::Sender<Op>,
}

impl SegmentWriter {
    /// Create a new segment file (it must not exist) and write `start` as entry 0, synced.
    pub async fn create(
        path: PathBuf,
        start: SegmentStart,
    ) -> Result<(SegmentWriter, Entry), StoreError> {
        let (writer, mut entries) = Self::create_with(path, start, Vec::new()).await?;
        let first = entries.pop().ok_or(StoreError::Closed)?;
        Ok((writer, first))
    }

    /// Create a new segment file (it must not exist) holding `start` and then `carried`, all
    /// synced by one fsync: a segment switch carries the old segment's open run, queue and
    /// reports, and one fsync per entry made the switch wait on the disk once per entry.
    /// Returns the entries in file order (the start first).
    pub async fn create_with(
        path: PathBuf,
        start: SegmentStart,
        carried: Vec<EntryKind>,
    ) -> Result<(SegmentWriter, Vec<Entry>), StoreError> {
        let (writer, entries, unsynced) = Self::create_unsynced(path, start, carried).await?;
        unsynced.sync().await?;
        Ok((writer, entries))
    }

    /// `create_with` without its sync: the entries are in the file, not yet on stable storage,
    /// and neither is the file's name. Nothing may be acknowledged, and the segment may not be
    /// named anywhere durable, before `UnsyncedSegment::sync` returns — it is how a new pod
    /// writes its metadata while its first segment syncs.
    pub async fn create_unsynced(
        path: PathBuf,
        start: SegmentStart,
        carried: Vec<EntryKind>,
    ) -> Result<(SegmentWriter, Vec<Entry>, UnsyncedSegment), StoreError> {
        let (writer, opened) = Self::spawn(path.clone(), EntrySeq::new(0), create_segment_file)?;
        opened.await.map_err(|_| StoreError::Closed)??;
        let mut entries = Vec::with_capacity(1 + carried.len());
        let kinds = std::iter::once(EntryKind::SegmentStart(start)).chain(carried);
        for kind in kinds {
            entries.push(writer.append(kind, Durability::Buffered).await?);
        }
        let unsynced = UnsyncedSegment {
            writer: writer.clone(),
            path,
        };
        Ok((writer, entries, unsynced))
    }

    /// Open an existing segment, already read and validated, for appending. `next_seq` is the
    /// number of entries in it. The open itself (no fsync) happens on the calling thread, so
    /// errors such as a missing file are returned here rather than on the first append.
    pub fn open_append(path: PathBuf, next_seq: EntrySeq) -> Result<SegmentWriter, StoreError> {
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, "open for appending", e))?;
        let (writer, _opened) = Self::spawn(path, next_seq, move |_| Ok(file))?;
        Ok(writer)
    }

    /// Append one entry; the writer assigns its `seq` and `ts`. Answered once the line is written
    /// (and synced, for `Durability::Sync`). After any failed write or sync, every later append
    /// fails with `StoreError::Broken`.
    pub async fn append(
        &self,
        kind: EntryKind,
        durability: Durability,
    ) -> Result<Entry, StoreError> {
        self.request(|reply| Op::Append {
            kind: Box::new(kind),
            durability,
            reply,
        })
        .await
    }

    /// Append one entry and return it as soon as its line is in the file, with a `Durable` that
    /// resolves once the line is synced. A caller that must not answer anyone before the entry
    /// is on stable storage waits for the `Durable` — on a task of its own, so what it is doing
    /// meanwhile (folding the entry, broadcasting it, the next append) goes on.
    ///
    /// The entry is in the file when this returns (it survives the pod crashing); only a
    /// machine crash before the fsync can lose it, and nobody was told it was durable then.
    pub async fn append_pipelined(
        &self,
        kind: EntryKind,
        durability: Durability,
    ) -> Result<(Entry, Durable), StoreError> {
        let (written, written_rx) = oneshot::channel();
        let (durable, durable_rx) = oneshot::channel();
        self.commands
            .send(Op::AppendPipelined {
                kind: Box::new(kind),
                durability,
                written,
                durable,
            })
            .await
            .map_err(|_| StoreError::Closed)?;
        let entry = written_rx.await.map_err(|_| StoreError::Closed)??;
        Ok((entry, Durable(durable_rx)))
    }

    /// Fsync everything appended so far.
    pub async fn sync(&self) -> Result<(), StoreError> {
        self.request(|reply| Op::Sync { reply }).await
    }

    /// Fsync and stop the writer thread; every later call on any clone returns
    /// `StoreError::Closed`.
    pub async fn close(&self) -> Result<(), StoreError> {
        self.request(|reply| Op::Close { reply }).await
    }

    async fn request<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<T, StoreError>>) -> Op,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(command(reply))
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    /// Start the writer thread. `open` runs on that thread; the receiver says whether it worked.
    fn spawn(
        path: PathBuf,
        next_seq: EntrySeq,
        open: impl FnOnce(&Path) -> Result<File, StoreError> + Send + 'static,
    ) -> Result<(SegmentWriter, oneshot::Receiver<Result<(), StoreError>>), StoreError> {
        let (commands, inbox) = mpsc::channel(WRITER_CHANNEL_CAPACITY);
        let (opened_tx, opened_rx) = oneshot::channel();
        let thread_path = path.clone();
        std::thread::Builder::new()
            .name(WRITER_THREAD_NAME.to_owned())
            .spawn(move || match open(&thread_path) {
                Ok(file) => {
                    let _ = opened_tx.send(Ok(()));
                    Worker::new(file, thread_path, next_seq).run(inbox);
                }
                Err(err) => {
                    let _ = opened_tx.send(Err(err));
                }
            })
            .map_err(|e| StoreError::io(&path, "start the writer thread for", e))?;
        Ok((SegmentWriter { commands }, opened_rx))
    }
}

/// Resolves once a pipelined append is on stable storage, or says why it never will be.
#[derive(Debug)]
#[must_use = "a Durable says whether the entry reached stable storage"]
pub struct Durable(oneshot::Receiver<Result<(), StoreError>>);

impl Durable {
    pub async fn wait(self) -> Result<(), StoreError> {
        self.0.await.map_err(|_| StoreError::Closed)?
    }
}

/// A segment just created whose entries and name are not yet on stable storage.
#[derive(Debug)]
#[must_use = "a new segment is not durable until it is synced"]
pub struct UnsyncedSegment {
    writer: SegmentWriter,
    path: PathBuf,
}

impl UnsyncedSegment {
    /// Fsync the entries, then the directory that names the file. The data first: on a
    /// journalling file system that one commit carries the new name too, and the directory's
    /// own sync then finds little or nothing left to write (`docs/storage.md`).
    pub async fn sync(self) -> Result<(), StoreError> {
        self.writer.sync().await?;
        let path = self.path;
        tokio::task::spawn_blocking(move || sync_parent_dir(&path))
            .await
            .map_err(|_| StoreError::Closed)
    }
}

/// Create a segment file that must not exist yet. Its name is made durable by
/// `UnsyncedSegment::sync`, after its first entries.
fn create_segment_file(path: &Path) -> Result<File, StoreError> {
    // Private whatever the umask: the log holds everything the model saw.
    let file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StoreError::io(path, "create", e))?;
    Ok(file)
}

/// The exact bytes an entry occupies in a segment file: its JSON and a newline.
pub fn entry_line(entry: &Entry) -> Result<String, StoreError> {
    let mut line = serde_json::to_string(entry).map_err(|source| StoreError::Encode {
        seq: entry.seq,
        cause: source,
    })?;
    line.push('\n');
    Ok(line)
}

/// Build the entry the writer is about to append.
fn new_entry(seq: EntrySeq, kind: EntryKind) -> Entry {
    Entry {
        v: ENTRY_VERSION,
        seq,
        ts: unix_ms(),
        kind,
    }
}

/// Wall-clock time in Unix milliseconds (0 if the clock is before 1970; `ts` is display-only).
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
