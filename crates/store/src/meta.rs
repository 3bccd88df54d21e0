//! `pod.json`: the thin pointer from a pod's name to its log (invariant 3).
//!
//! It records which segment is active, the pod's lineage and its provider configuration — nothing
//! that the log already knows. It is replaced atomically (temp file in the same directory, fsync,
//! rename, fsync the directory), so a reader sees either the old file or the new one, never half
//! of either. Unknown fields are ignored, so a pod.json written by a newer seedpod still loads.

use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use seedpod_protocol::{PodName, ProviderKind, SegmentId};
use serde::{Deserialize, Serialize};

use crate::durable::sync_parent_dir;
use crate::error::StoreError;

/// The metadata file's name inside a pod directory.
pub const META_FILE: &str = "pod.json";

/// Where a save writes before renaming over `pod.json`. A fixed name: only the pod that owns the
/// directory writes it, and a leftover from a crash is simply overwritten by the next save.
const META_TEMP_FILE: &str = "pod.json.tmp";

/// The directory inside a pod directory that holds its segment files.
pub const SEGMENTS_DIR: &str = "segments";

/// The directory inside a pod directory where file tools keep files before changing them
/// (content-addressed blobs; docs/storage.md §Checkpoints).
pub const CHECKPOINTS_DIR: &str = "checkpoints";

/// File extension of segment files.
const SEGMENT_EXTENSION: &str = "jsonl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodMeta {
    pub name: PodName,
    /// The working directory the pod's tools run in.
    pub cwd: PathBuf,
    /// The segment the pod appends to and restores from.
    pub active_segment: SegmentId,
    /// Every segment id of this pod, oldest first (compaction and rewind add new ones).
    pub segments: Vec<SegmentId>,
    /// The parent pod's name, for a child pod.
    #[serde(default)]
    pub parent: Option<PodName>,
    /// Child pods started by this pod, and descendants it learned of through them, in the
    /// order they were started. A record is kept whatever a liveness probe says (DESIGN §7).
    #[serde(default)]
    pub children: Vec<ChildRecord>,
    /// For a child pod: what its parent delegated to it. It replaces the configured scope's
    /// read and write roots, on every start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated: Option<ScopeGrant>,
    pub config: PodConfig,
    /// Unix milliseconds when the pod was created.
    pub created_ms: u64,
    /// Session instructions given at creation (`start --instructions`): a layer of every
    /// segment's system prompt, so a `/clear` keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// For a child pod: which of the configured MCP servers its parent passed on (`None`: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<String>>,
    /// For a fork (`seedpod fork`): the pod and the point of its log this pod's history was
    /// taken from. Listings show the fork under its source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkRecord>,
}

/// Where a fork's history came from: pod `pod`, segment `segment`, up to entry `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRecord {
    pub pod: PodName,
    pub segment: SegmentId,
    pub seq: seedpod_protocol::EntrySeq,
}

impl PodMeta {
    /// A pod with one segment, no lineage and no instructions: where creation starts.
    pub fn new(
        name: PodName,
        cwd: PathBuf,
        segment: SegmentId,
        config: PodConfig,
        created_ms: u64,
    ) -> PodMeta {
        PodMeta {
            name,
            cwd,
            active_segment: segment.clone(),
            segments: vec![segment],
            parent: None,
            children: Vec::new(),
            delegated: None,
            config,
            created_ms,
            instructions: None,
            mcp_servers: None,
            forked_from: None,
        }
    }
}

impl PodConfig {
    /// A provider and a model, with no script, endpoint or sampling settings.
    pub fn new(provider: ProviderKind, model: impl Into<String>) -> PodConfig {
        PodConfig {
            provider,
            model: model.into(),
            script: None,
            base_url: None,
            temperature: None,
            max_tokens: None,
            responses: None,
        }
    }
}

/// One child (or further descendant) of a pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRecord {
    pub name: PodName,
    /// The task it was started with, shortened for listings.
    pub task: String,
    /// What it may read and write. Its write roots are withheld from this pod while it lives.
    pub scope: ScopeGrant,
    /// Set for a grandchild or deeper: the direct child it was delegated through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<PodName>,
    /// Unix milliseconds when this pod recorded it.
    pub created_ms: u64,
    /// Where the next `read_pod_output` continues in its log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<OutputCursor>,
}

/// Canonical paths a child pod may read and write.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeGrant {
    #[serde(default)]
    pub read: Vec<PathBuf>,
    #[serde(default)]
    pub write: Vec<PathBuf>,
}

/// A position in a pod's log: entry `index` (0-based line) of segment `segment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputCursor {
    pub segment: SegmentId,
    pub index: u64,
}

impl std::fmt::Display for OutputCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.segment, self.index)
    }
}

impl std::str::FromStr for OutputCursor {
    type Err = String;

    /// `SEGMENT:INDEX`, as `Display` writes it.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (segment, index) = text
            .rsplit_once(':')
            .ok_or_else(|| format!("\"{text}\" is not a cursor; expected SEGMENT:INDEX"))?;
        let index = index
            .parse()
            .map_err(|_| format!("\"{text}\" is not a cursor; INDEX must be a number"))?;
        if segment.is_empty() {
            return Err(format!("\"{text}\" is not a cursor; SEGMENT is empty"));
        }
        Ok(OutputCursor {
            segment: SegmentId::new(segment),
            index,
        })
    }
}

/// How the pod reaches its model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PodConfig {
    pub provider: ProviderKind,
    pub model: String,
    /// The script a `scripted` provider plays.
    #[serde(default)]
    pub script: Option<PathBuf>,
    /// Overrides the provider's API endpoint (e.g. a local mock server).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Sampling temperature for new segments (recorded in their `segment_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Output token limit for new segments (recorded in their `segment_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The Responses API's options (`[responses]`) for new segments (recorded in their
    /// `segment_start`); absent when all default or for another provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<seedpod_protocol::ResponsesOptions>,
}

/// Read `pod_dir/pod.json`; `Ok(None)` if there is none (the pod does not exist yet).
pub fn load_meta(pod_dir: &Path) -> Result<Option<PodMeta>, StoreError> {
    let path = pod_dir.join(META_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(StoreError::io(&path, "read", err)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|err| StoreError::Meta {
            path,
            reason: format!("not valid pod metadata ({err})"),
        })
}

/// Replace `pod_dir/pod.json` atomically with `meta`.
pub fn save_meta(pod_dir: &Path, meta: &PodMeta) -> Result<(), StoreError> {
    stage_meta(pod_dir, meta)?.install()
}

/// `pod.json`'s next content, written and synced beside it but not yet in its place. A new
/// pod stages its metadata while its first segment is being synced, so the two fsyncs share
/// the disk's time instead of following each other (`docs/storage.md`, creating a pod).
#[derive(Debug)]
#[must_use = "staged metadata is not pod.json until it is installed"]
pub struct StagedMeta {
    temp: PathBuf,
    path: PathBuf,
}

/// Write `meta` to `pod_dir/pod.json.tmp` and sync it; `StagedMeta::install` puts it in place.
pub fn stage_meta(pod_dir: &Path, meta: &PodMeta) -> Result<StagedMeta, StoreError> {
    let path = pod_dir.join(META_FILE);
    let temp = pod_dir.join(META_TEMP_FILE);
    let mut json = serde_json::to_vec_pretty(meta).map_err(|err| StoreError::Meta {
        path: path.clone(),
        reason: format!("could not encode pod metadata ({err})"),
    })?;
    json.push(b'\n');
    // Private whatever the umask: it says where requests, and so the API key, are sent.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .map_err(|e| StoreError::io(&temp, "create", e))?;
    file.write_all(&json)
        .and_then(|()| file.sync_all())
        .map_err(|e| StoreError::io(&temp, "write", e))?;
    Ok(StagedMeta { temp, path })
}

impl StagedMeta {
    /// Rename the staged file over `pod.json` and make the new name durable.
    pub fn install(self) -> Result<(), StoreError> {
        std::fs::rename(&self.temp, &self.path)
            .map_err(|e| StoreError::io(&self.path, "replace", e))?;
        sync_parent_dir(&self.path);
        Ok(())
    }
}

/// `pod_dir/segments/<segment_id>.jsonl`.
pub fn segment_path(pod_dir: &Path, segment_id: &SegmentId) -> PathBuf {
    pod_dir
        .join(SEGMENTS_DIR)
        .join(format!("{segment_id}.{SEGMENT_EXTENSION}"))
}

/// A fresh segment id: a UUIDv7, so ids sort by creation time.
pub fn new_segment_id() -> SegmentId {
    SegmentId::new(uuid::Uuid::now_v7().to_string())
}
