//! The pod archiving its own earlier segments by the `[storage]` rule (docs/storage.md,
//! "Archived segments"): once when it starts and then every `ARCHIVE_INTERVAL`, on a blocking
//! thread, never on the controller's loop. It reads `pod.json` afresh each time, so a segment
//! that became earlier since is considered, and the active one never is.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use seedpod_store::{ArchiveReport, ArchiveRule, StoreError, archive_segments, load_meta};
use tokio_util::sync::CancellationToken;

/// How often the rule is applied again: segments age while a pod idles, and an hour is far
/// below the granularity of a rule in days. One wake-up an hour is all an idle pod pays.
pub const ARCHIVE_INTERVAL: Duration = Duration::from_secs(3600);

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
    match load_meta(pod_dir)? {
        Some(meta) => archive_segments(pod_dir, &meta, rule, SystemTime::now()),
        None => Ok(ArchiveReport::default()),
    }
}
