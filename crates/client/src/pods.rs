//! Which pods exist and how each is doing: what `seedpod ls` prints and the TUI's pod picker
//! shows. Reads `pod.json` for every pod and asks the running ones for their status.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use seedpod_protocol::{
    ClientMode, ContextFill, Method, PodName, PodState, PodStatus, ServerMsg, Usage,
};

pub use seedpod_store::{PodConfig, PodMeta};
use seedpod_store::{load_meta, segment_path};

use crate::connection::Connection;
use crate::paths::Home;

/// How long one pod may take to answer `status` before the listing shows it as unresponsive;
/// a wedged pod must not hang `ls` or the picker.
pub const STATUS_TIMEOUT: Duration = Duration::from_secs(2);

/// Every pod with a readable `pod.json`, sorted by name.
pub fn known_pods(home: &Home) -> Vec<(PodName, PodMeta)> {
    let Ok(dir) = std::fs::read_dir(home.pods_dir()) else {
        return Vec::new();
    };
    let mut pods: Vec<(PodName, PodMeta)> = dir
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            // A directory whose name is not a pod name was not made by seedpod: skip it
            // rather than build paths or print terminal escapes from it.
            let name = PodName::new(entry.file_name().to_str()?).ok()?;
            let meta = load_meta(&entry.path()).ok().flatten()?;
            Some((name, meta))
        })
        .collect();
    pods.sort_by(|a, b| a.0.cmp(&b.0));
    pods
}

/// Whether a listed pod answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Liveness {
    /// It answered `status`.
    Running(Box<PodStatus>),
    /// Nothing listens on its socket: `seedpod start NAME` restores it.
    Stopped,
    /// Something listens but did not answer in time or refused (e.g. another protocol).
    Unresponsive(String),
}

/// One row of the listing.
#[derive(Debug, Clone, PartialEq)]
pub struct PodListing {
    pub name: PodName,
    pub meta: PodMeta,
    pub liveness: Liveness,
    /// When the pod's active segment last changed (Unix ms): its last committed activity.
    pub last_activity_ms: Option<u64>,
}

impl PodListing {
    /// `idle`, `running`, `paused`, `stopping`, `stopped` or `unresponsive`.
    pub fn state(&self) -> &'static str {
        match &self.liveness {
            // Up, but acknowledging nothing: what the person must know first.
            Liveness::Running(status) if status.log_broken.is_some() => "log broken",
            Liveness::Running(status) => status.state.as_str(),
            Liveness::Stopped => "stopped",
            Liveness::Unresponsive(_) => "unresponsive",
        }
    }

    pub fn pod_state(&self) -> Option<PodState> {
        match &self.liveness {
            Liveness::Running(status) => Some(status.state),
            Liveness::Stopped | Liveness::Unresponsive(_) => None,
        }
    }

    pub fn status(&self) -> Option<&PodStatus> {
        match &self.liveness {
            Liveness::Running(status) => Some(status),
            Liveness::Stopped | Liveness::Unresponsive(_) => None,
        }
    }

    /// The running pod's provider, else the configured one.
    pub fn provider(&self) -> String {
        self.status()
            .map(|s| s.provider.clone())
            .unwrap_or_else(|| self.meta.config.provider.as_str().to_string())
    }

    pub fn model(&self) -> String {
        self.status()
            .map(|s| s.model.clone())
            .unwrap_or_else(|| self.meta.config.model.clone())
    }

    pub fn usage(&self) -> Option<Usage> {
        self.status().map(|s| s.usage)
    }

    /// A running pod's totals over its whole life (every segment); `None` for a pod that did
    /// not answer or is older than the field.
    pub fn totals(&self) -> Option<seedpod_protocol::PodTotals> {
        self.status().and_then(|s| s.totals)
    }

    /// Tokens in and out over the pod's life when the pod reports them, else the active
    /// segment's (a pod older than the totals).
    pub fn lifetime_usage(&self) -> Option<Usage> {
        self.totals().map(|t| t.usage).or_else(|| self.usage())
    }

    /// How full a running pod's context is, as it reported in `status`; `None` for a pod that
    /// did not answer (a listing never reads logs).
    pub fn context(&self) -> Option<ContextFill> {
        self.status().map(|s| s.context)
    }

    pub fn cwd(&self) -> &PathBuf {
        &self.meta.cwd
    }
}

/// Every known pod with its liveness, sorted by name. Pods are asked one after another, each
/// bounded by `STATUS_TIMEOUT`.
pub async fn list_pods(home: &Home, client: &str) -> Vec<PodListing> {
    let mut out = Vec::new();
    for (name, meta) in known_pods(home) {
        let liveness = probe(home, &name, client).await;
        let last_activity_ms = last_activity(home, &name, &meta);
        out.push(PodListing {
            name,
            meta,
            liveness,
            last_activity_ms,
        });
    }
    out
}

/// Ask pod `name` for its status, bounded by `STATUS_TIMEOUT`.
pub async fn probe(home: &Home, name: &PodName, client: &str) -> Liveness {
    let asked = tokio::time::timeout(STATUS_TIMEOUT, async {
        let mut conn = Connection::connect(home, name, client, ClientMode::Control).await?;
        conn.call(Method::Status).await
    })
    .await;
    match asked {
        Ok(Ok(ServerMsg::StatusReply { status, .. })) => Liveness::Running(Box::new(status)),
        Ok(Ok(other)) => Liveness::Unresponsive(format!("answered status with {other:?}")),
        Ok(Err(crate::ClientError::NotRunning { .. })) => Liveness::Stopped,
        Ok(Err(err)) => Liveness::Unresponsive(err.to_string()),
        Err(_) => Liveness::Unresponsive(format!("no answer within {}s", STATUS_TIMEOUT.as_secs())),
    }
}

/// When `name`'s active segment last changed (Unix ms): its last committed activity.
pub fn last_activity(home: &Home, name: &PodName, meta: &PodMeta) -> Option<u64> {
    let path = segment_path(&home.pod_dir(name), &meta.active_segment);
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since_epoch = modified.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since_epoch.as_millis()).ok()
}

/// "12s ago", "5m ago", "3h ago", "2d ago" for a Unix-ms instant, relative to `now`.
pub fn ago(then_ms: u64, now: SystemTime) -> String {
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(then_ms);
    let secs = now_ms.saturating_sub(then_ms) / 1000;
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86_400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::SegmentId;

    #[test]
    fn ago_picks_a_readable_unit() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let at = |secs_before: u64| (1_000_000 - secs_before) * 1000;
        assert_eq!(ago(at(5), now), "5s ago");
        assert_eq!(ago(at(125), now), "2m ago");
        assert_eq!(ago(at(7200), now), "2h ago");
        assert_eq!(ago(at(3 * 86_400), now), "3d ago");
        assert_eq!(ago(2_000_000_000, now), "0s ago", "future instants clamp");
    }

    #[tokio::test]
    async fn lists_stopped_pods_from_their_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        assert!(list_pods(&home, "t").await.is_empty());
        let config = PodConfig::new(seedpod_protocol::ProviderKind::Scripted, "script");
        let meta = PodMeta::new(
            PodName::new("a").unwrap(),
            dir.path().to_path_buf(),
            SegmentId::new("s1"),
            config,
            1,
        );
        std::fs::create_dir_all(home.pod_dir(&PodName::new("a").unwrap())).unwrap();
        seedpod_store::save_meta(&home.pod_dir(&PodName::new("a").unwrap()), &meta).unwrap();
        let pods = list_pods(&home, "t").await;
        assert_eq!(pods.len(), 1);
        assert_eq!(pods[0].state(), "stopped");
        assert_eq!(pods[0].model(), "script");
        assert_eq!(pods[0].last_activity_ms, None, "no segment file yet");
    }
}
