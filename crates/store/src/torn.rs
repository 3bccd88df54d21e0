//! Moving a torn last line out of a segment.
//!
//! A crash in the middle of an append leaves an incomplete line at the end of the file. Before
//! the pod appends again, those bytes must go — otherwise the next entry would be glued onto them
//! and the damage would move into the middle of the log. They are never thrown away: they are
//! appended to `<segment>.torn` and synced *before* the segment is truncated, so a crash during
//! the repair at worst copies them twice, and never loses them.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::durable::sync_parent_dir;
use crate::error::StoreError;
use crate::read::TornTail;

/// Suffix of the side file that collects torn tails of a segment.
const TORN_SUFFIX: &str = ".torn";

/// The side file for `segment`: its path with `.torn` appended.
pub fn torn_side_file(segment: &Path) -> PathBuf {
    let mut name = segment.as_os_str().to_owned();
    name.push(TORN_SUFFIX);
    PathBuf::from(name)
}

/// Append `tail` to the side file, then cut `segment` back to `valid_len` bytes. `line` is the
/// 1-based line the tail started on, for the report.
pub(crate) fn set_aside_torn_tail(
    segment: &Path,
    tail: &[u8],
    valid_len: usize,
    line: usize,
) -> Result<TornTail, StoreError> {
    let side_file = torn_side_file(segment);
    let mut side = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&side_file)
        .map_err(|e| StoreError::io(&side_file, "open the torn-tail file", e))?;
    // Each tail goes in as one write, ending in a newline so that tails from several crashes
    // stay on separate lines.
    let mut record = tail.to_vec();
    if record.last() != Some(&b'\n') {
        record.push(b'\n');
    }
    side.write_all(&record)
        .and_then(|()| side.sync_all())
        .map_err(|e| StoreError::io(&side_file, "save the torn tail to", e))?;
    sync_parent_dir(&side_file);

    let file = OpenOptions::new()
        .write(true)
        .open(segment)
        .map_err(|e| StoreError::io(segment, "open for truncating", e))?;
    file.set_len(valid_len as u64)
        .and_then(|()| file.sync_all())
        .map_err(|e| StoreError::io(segment, "truncate the torn tail of", e))?;

    tracing::warn!(
        event = "torn_tail_set_aside",
        segment = %segment.display(),
        side_file = %side_file.display(),
        line,
        bytes = tail.len(),
    );
    Ok(TornTail {
        side_file,
        bytes: tail.len() as u64,
        line,
    })
}
