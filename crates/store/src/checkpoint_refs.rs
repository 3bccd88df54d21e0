//! Which file checkpoints a pod's live segments still name (docs/storage.md §Checkpoints).
//!
//! A checkpoint is kept for a rewind to put a file back. Once the segment that recorded it is
//! archived, the checkpoint goes with it (`seedpod_pod::archiver::prune_checkpoints`); one that a
//! live segment — a plain `<id>.jsonl`, the active one always among them — names is never
//! removed.

use std::collections::BTreeSet;
use std::path::Path;

use seedpod_protocol::{Before, EntryKind};

use crate::error::StoreError;
use crate::meta::{PodMeta, segment_path};
use crate::read::read_segment_entries;

/// The blob names (`sha256`, lowercase hex) the pod's live segments name.
pub fn checkpoints_in_use(pod_dir: &Path, meta: &PodMeta) -> Result<BTreeSet<String>, StoreError> {
    let mut in_use = BTreeSet::new();
    let segments = meta
        .segments
        .iter()
        .chain(std::iter::once(&meta.active_segment));
    for segment in segments {
        let plain = segment_path(pod_dir, segment);
        // Archived (only `<id>.jsonl.gz` left): what it names is no longer kept. The active
        // segment is never archived, so it is always read.
        if segment != &meta.active_segment && !plain.exists() {
            continue;
        }
        for entry in read_segment_entries(&plain)? {
            if let EntryKind::ToolResult { meta, .. } = &entry.kind {
                for checkpoint in &meta.checkpoints {
                    if let Before::Blob { sha256, .. } = &checkpoint.before {
                        in_use.insert(sha256.to_ascii_lowercase());
                    }
                }
            }
        }
    }
    Ok(in_use)
}

/// Whether segment `segment` of the pod in `pod_dir` is archived (its plain file is gone).
pub fn is_archived(pod_dir: &Path, segment: &seedpod_protocol::SegmentId) -> bool {
    let plain = segment_path(pod_dir, segment);
    !plain.exists() && crate::archive::archived_path(&plain).exists()
}
