//! The pod archiving its own earlier segments by the `[storage]` rule (docs/storage.md,
//! "Archived segments"): once when it starts and then every `ARCHIVE_INTERVAL`, on a blocking
//! thread, never on the controller's loop. It reads `pod.json` afresh each time, so a segment
//! that became earlier since is considered, and the active one never is. After each pass the
//! file checkpoints only archived segments named are pruned with them (`prune_checkpoints`).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use seedpod_store::{ArchiveReport, ArchiveRule, StoreError, archive_segments, load_meta};
use tokio_util::sync::CancellationToken;

/// How often the rule is applied again: segments age while a pod idles, and an hour is far
/// below the granularity of a rule in days. One wake-up an hour is all an idle pod pays.
pub const ARCHIVE_INTERVAL: Duration = Duration::from_secs(3600);

/// How long a new checkpoint is safe from pruning whatever names it: a file tool keeps its
/// blob just before the `tool_result` that names it is committed.
pub const CHECKPOINT_SETTLE: Duration = Duration::from_secs(3600);

/// Apply `rule` to the pod in `pod_dir` now and every `ARCHIVE_INTERVAL` until `shutdown`.
/// Nothing is started when the rule is off.
pub fn spawn(pod_dir: PathBuf, rule: ArchiveRule, shutdown: CancellationToken) {
    if rule.is_off() {
        return;
    }
    tokio::spawn(async move {
        loop {
            let dir = pod_dir.clone();
            match tokio::task::spawn_blocking(move || pass(&dir, &rule)).await {
                Ok(Ok(report)) if !report.archived.is_empty() => {
                    tracing::info!(event = "archive_pass", archived = report.archived.len());
                }
                Ok(Ok(_)) => {}
                // Someone else (`seedpod archive`) is at it; the next pass catches up.
                Ok(Err(StoreError::ArchiveBusy { .. })) => {}
                Ok(Err(err)) => tracing::warn!(event = "archive_failed", error = %err),
                Err(err) => tracing::warn!(event = "archive_failed", error = %err),
            }
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(ARCHIVE_INTERVAL) => {}
            }
        }
    });
}

fn pass(pod_dir: &std::path::Path, rule: &ArchiveRule) -> Result<ArchiveReport, StoreError> {
    let Some(meta) = load_meta(pod_dir)? else {
        return Ok(ArchiveReport::default());
    };
    let report = archive_segments(pod_dir, &meta, rule, SystemTime::now())?;
    match prune_checkpoints(pod_dir, SystemTime::now()) {
        Ok(removed) if !removed.is_empty() => {
            tracing::info!(event = "checkpoints_pruned", removed = removed.len());
        }
        Ok(_) => {}
        Err(err) => tracing::warn!(event = "checkpoints_not_pruned", error = %err),
    }
    Ok(report)
}

/// Why checkpoints were not pruned.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot prune the checkpoints in {}: {source}", dir.display())]
    Io {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// Remove the pod's file checkpoints that no live segment names any more (docs/storage.md
/// §Checkpoints): those of archived segments, and any a crash left unnamed — except the ones
/// kept within `CHECKPOINT_SETTLE` of `now`. Returns the blobs removed. A live segment that
/// cannot be read stops it before anything is removed.
pub fn prune_checkpoints(
    pod_dir: &std::path::Path,
    now: SystemTime,
) -> Result<Vec<String>, PruneError> {
    let Some(meta) = load_meta(pod_dir)? else {
        return Ok(Vec::new());
    };
    let in_use = seedpod_store::checkpoint_refs::checkpoints_in_use(pod_dir, &meta)?;
    let dir = pod_dir.join(seedpod_store::CHECKPOINTS_DIR);
    let store = seedpod_tools::CheckpointStore::new(dir.clone(), u64::MAX);
    let settled = now
        .checked_sub(CHECKPOINT_SETTLE)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    store
        .prune_unused(&in_use, settled)
        .map_err(|source| PruneError::Io { dir, source })
}
