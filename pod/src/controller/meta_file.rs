//! The one writer of `pod.json`. Saving renames an fsynced temp file, milliseconds of blocking
//! I/O, so the controller never does it: it hands each new `PodMeta` to this task, which writes
//! on a blocking thread. Saves are written in the order they were made, and saves that queue
//! up while one is being written collapse into one write of the newest (`pod.json` holds only
//! the latest state, so the ones in between would be overwritten at once anyway).
//!
//! Fire-and-forget saves (a child's read cursor) are for bookkeeping a restart can redo; a save
//! something depends on (a child recorded before it starts, a new segment listed before it is
//! written to) is awaited with `save`.

use std::path::PathBuf;
use std::sync::Arc;

use seedpod_store::{PodMeta, StoreError, save_meta};
use tokio::sync::{mpsc, oneshot};

/// Saves waiting for the writer. Each is a whole `PodMeta`, and saves only queue while a write
/// is in progress, so a few suffice; a full queue slows the controller, never grows memory.
const QUEUE: usize = 16;

type Done = oneshot::Sender<Result<(), Arc<StoreError>>>;

enum Save {
    Meta(Box<PodMeta>, Option<Done>),
    /// Answered once everything sent before it is on disk.
    Flush(Done),
}

/// The controller's handle on the writer task.
pub(super) struct MetaFile {
    tx: mpsc::Sender<Save>,
}

impl MetaFile {
    /// Start the writer for `pod_dir/pod.json`. It ends when the handle is dropped, after
    /// writing what it was given.
    pub(super) fn start(pod_dir: PathBuf) -> MetaFile {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(write_loop(pod_dir, rx));
        MetaFile { tx }
    }

    /// Save `meta` without waiting; a failure is logged.
    pub(super) async fn save_later(&self, meta: &PodMeta) {
        let save = Save::Meta(Box::new(meta.clone()), None);
        if self.tx.send(save).await.is_err() {
            tracing::warn!(
                event = "meta_save_failed",
                error = "the pod.json writer stopped"
            );
        }
    }

    /// Save `meta` and wait until it is on disk (or the write failed).
    pub(super) async fn save(&self, meta: &PodMeta) -> Result<(), Arc<StoreError>> {
        let (done, rx) = oneshot::channel();
        let save = Save::Meta(Box::new(meta.clone()), Some(done));
        self.tx.send(save).await.map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    /// Queue `meta` and return at once; the returned future resolves when it is on disk (or the
    /// write failed), for a task that must not act before then.
    pub(super) async fn save_queued(
        &self,
        meta: &PodMeta,
    ) -> impl std::future::Future<Output = Result<(), Arc<StoreError>>> + Send + 'static {
        let (done, rx) = oneshot::channel();
        let save = Save::Meta(Box::new(meta.clone()), Some(done));
        let queued = self.tx.send(save).await.map_err(|_| stopped());
        async move {
            queued?;
            rx.await.map_err(|_| stopped())?
        }
    }

    /// Wait until every save made so far is on disk.
    pub(super) async fn flush(&self) -> Result<(), Arc<StoreError>> {
        let (done, rx) = oneshot::channel();
        self.tx
            .send(Save::Flush(done))
            .await
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

fn stopped() -> Arc<StoreError> {
    Arc::new(StoreError::Closed)
}

async fn write_loop(pod_dir: PathBuf, mut rx: mpsc::Receiver<Save>) {
    while let Some(first) = rx.recv().await {
        let mut newest = None;
        let mut waiting = Vec::new();
        let mut take = |save: Save| match save {
            Save::Meta(meta, done) => {
                newest = Some(meta);
                waiting.extend(done);
            }
            Save::Flush(done) => waiting.push(done),
        };
        take(first);
        while let Ok(more) = rx.try_recv() {
            take(more);
        }
        let result = match newest {
            Some(meta) => {
                let dir = pod_dir.clone();
                let save = move || {
                    #[cfg(test)]
                    super::stall::point(&dir, super::stall::Step::MetaSave);
                    save_meta(&dir, &meta)
                };
                match tokio::task::spawn_blocking(save).await {
                    Ok(result) => result.map_err(Arc::new),
                    Err(_) => Err(stopped()),
                }
            }
            None => Ok(()),
        };
        if let Err(err) = &result {
            tracing::warn!(event = "meta_save_failed", error = %err);
        }
        for done in waiting {
            let _ = done.send(result.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::{PodName, SegmentId};
    use seedpod_store::{PodConfig, load_meta};

    fn meta(dir: &std::path::Path, model: &str) -> PodMeta {
        let mut config = PodConfig::new(seedpod_protocol::ProviderKind::Scripted, "script");
        config.model = model.into();
        PodMeta::new(
            PodName::new("p").unwrap(),
            dir.to_path_buf(),
            SegmentId::new("seg"),
            config,
            1,
        )
    }

    /// Many saves in a row end with the newest on disk, and an awaited save is on disk when it
    /// returns, whatever was queued before it.
    #[tokio::test]
    async fn the_newest_save_wins_and_awaited_saves_are_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let file = MetaFile::start(dir.path().to_path_buf());
        for n in 0..50 {
            file.save_later(&meta(dir.path(), &format!("m{n}"))).await;
        }
        file.flush().await.unwrap();
        assert_eq!(load_meta(dir.path()).unwrap().unwrap().config.model, "m49");
        file.save(&meta(dir.path(), "last")).await.unwrap();
        assert_eq!(load_meta(dir.path()).unwrap().unwrap().config.model, "last");
    }

    /// A save that cannot be written says so to whoever waits for it.
    #[tokio::test]
    async fn a_failed_save_is_reported_to_its_waiter() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone");
        let file = MetaFile::start(missing.clone());
        let err = file.save(&meta(&missing, "m")).await.unwrap_err();
        assert!(err.to_string().contains("gone"), "{err}");
    }
}
