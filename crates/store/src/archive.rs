//! Archiving earlier segments: `<id>.jsonl` becomes `<id>.jsonl.gz`, read back transparently.
//!
//! A pod never writes to a segment once a newer one is active (docs/storage.md), so an earlier
//! segment can be compressed while the pod runs. The steps keep a readable copy at every
//! moment: compress into `<id>.jsonl.gz.tmp`, check that it decompresses to the very bytes of
//! the segment, fsync, rename it to `<id>.jsonl.gz`, fsync the directory, and only then remove
//! `<id>.jsonl`. A reader opens the plain file first and the archive when the plain file is
//! gone, so it never finds neither. A crash between the rename and the removal leaves both;
//! the next archive checks the pair and removes the plain file.
//!
//! What is refused, each with its own error and nothing changed: the active segment (never
//! selected), a segment id that is not a plain name (a `pod.json` edited to point elsewhere),
//! a segment that is not a regular file or does not read as a log, and a second archiver at
//! the same time (`archive.lock` in the segments directory, `flock`). Reading an archive that
//! is corrupt, truncated or would inflate past `MAX_SEGMENT_BYTES` is an error naming it.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use seedpod_protocol::SegmentId;

use crate::durable::sync_parent_dir;
use crate::error::StoreError;
use crate::meta::{PodMeta, SEGMENTS_DIR, segment_path};

/// Appended to a segment's file name when it is archived.
pub const ARCHIVE_SUFFIX: &str = ".gz";

/// Held (`flock`) by whoever archives a pod's segments, so two archivers never work at once.
pub const ARCHIVE_LOCK_FILE: &str = "archive.lock";

/// The most bytes a segment (plain or inflated from its archive) may have: far above any real
/// segment, which compaction keeps to a window's worth of history, and a stop for an archive
/// crafted to inflate without end.
pub const MAX_SEGMENT_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// Which earlier segments to archive. A segment is archived when any set rule picks it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArchiveRule {
    /// Segments last written at least this long ago (`Some(ZERO)`: every earlier segment).
    pub older_than: Option<Duration>,
    /// Keep at most this many bytes of plain earlier segments: the oldest beyond it are
    /// archived.
    pub plain_over_bytes: Option<u64>,
}

impl ArchiveRule {
    /// Every earlier segment.
    pub fn all() -> ArchiveRule {
        ArchiveRule {
            older_than: Some(Duration::ZERO),
            plain_over_bytes: None,
        }
    }

    pub fn is_off(&self) -> bool {
        self.older_than.is_none() && self.plain_over_bytes.is_none()
    }
}

/// What one archive pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchiveReport {
    /// Each segment archived now: its id, its bytes before and its archive's bytes.
    pub archived: Vec<(SegmentId, u64, u64)>,
    /// Earlier segments archived before this pass.
    pub already: usize,
    /// Earlier segments the rule left plain.
    pub kept: usize,
}

/// The archive file of the segment at `plain`: its path with `.gz` appended.
pub fn archived_path(plain: &Path) -> PathBuf {
    let mut name = plain.as_os_str().to_owned();
    name.push(ARCHIVE_SUFFIX);
    PathBuf::from(name)
}

/// A segment's bytes, from its plain file or, once archived, inflated from its archive.
pub(crate) fn read_segment_bytes(plain: &Path) -> Result<(Vec<u8>, PathBuf), StoreError> {
    match read_capped(plain) {
        Ok(data) => return Ok((data, plain.to_path_buf())),
        Err(err) if err.kind() == ErrorKind::NotFound => {}
        Err(err) => return Err(StoreError::io(plain, "read", err)),
    }
    let archive = archived_path(plain);
    match File::open(&archive) {
        Ok(file) => Ok((inflate(file, &archive)?, archive)),
        // Neither exists: report the name readers know.
        Err(err) if err.kind() == ErrorKind::NotFound => Err(StoreError::io(
            plain,
            "read",
            std::io::Error::from(err.kind()),
        )),
        Err(err) => Err(StoreError::io(&archive, "read", err)),
    }
}

/// A reader of a segment's bytes as they are read: its plain file, or once archived, its
/// archive inflated on the way (for readers that go line by line, like a parent reading a
/// child's output). An archive that is corrupt or truncated fails the read that reaches it.
pub fn open_segment(plain: &Path) -> std::io::Result<Box<dyn Read + Send>> {
    match File::open(plain) {
        Ok(file) => Ok(Box::new(file)),
        Err(err) if err.kind() == ErrorKind::NotFound => match File::open(archived_path(plain)) {
            Ok(archive) => Ok(Box::new(GzDecoder::new(archive).take(MAX_SEGMENT_BYTES))),
            Err(_) => Err(err),
        },
        Err(err) => Err(err),
    }
}

fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    File::open(path)?
        .take(MAX_SEGMENT_BYTES + 1)
        .read_to_end(&mut data)?;
    if data.len() as u64 > MAX_SEGMENT_BYTES {
        return Err(std::io::Error::other(format!(
            "the segment is larger than {} GiB",
            MAX_SEGMENT_BYTES >> 30
        )));
    }
    Ok(data)
}

/// The bytes `source` inflates to, refusing anything that is not one whole gzip stream.
fn inflate(source: impl Read, archive: &Path) -> Result<Vec<u8>, StoreError> {
    let mut data = Vec::new();
    let read = GzDecoder::new(source)
        .take(MAX_SEGMENT_BYTES + 1)
        .read_to_end(&mut data);
    let bad = |reason: String| StoreError::Archive {
        path: archive.to_path_buf(),
        reason,
    };
    match read {
        Ok(_) if data.len() as u64 > MAX_SEGMENT_BYTES => Err(bad(format!(
            "it inflates to more than {} GiB, more than any segment",
            MAX_SEGMENT_BYTES >> 30
        ))),
        Ok(_) => Ok(data),
        Err(err) if err.kind() == ErrorKind::UnexpectedEof => Err(bad(
            "the archive is truncated (it ends before its gzip stream does)".into(),
        )),
        Err(err) => Err(bad(format!("not a readable gzip archive ({err})"))),
    }
}

/// Archive the earlier segments of the pod in `pod_dir` that `rule` picks. `meta` is its
/// `pod.json` as just read: its active segment is never touched.
pub fn archive_segments(
    pod_dir: &Path,
    meta: &PodMeta,
    rule: &ArchiveRule,
    now: SystemTime,
) -> Result<ArchiveReport, StoreError> {
    let dir = pod_dir.join(SEGMENTS_DIR);
    let _lock = lock(&dir)?;
    let mut report = ArchiveReport::default();
    let mut plain = Vec::new();
    for id in meta
        .segments
        .iter()
        .filter(|id| **id != meta.active_segment)
    {
        check_id(id)?;
        let path = segment_path(pod_dir, id);
        match std::fs::symlink_metadata(&path) {
            Ok(found) if found.file_type().is_file() => {
                let modified = found.modified().unwrap_or(now);
                plain.push((id, path, found.len(), modified));
            }
            Ok(_) => {
                return Err(StoreError::Archive {
                    path,
                    reason: "not a regular file; nothing was archived".into(),
                });
            }
            Err(err) if err.kind() == ErrorKind::NotFound => report.already += 1,
            Err(err) => return Err(StoreError::io(&path, "look at", err)),
        }
    }
    let sizes: Vec<(u64, SystemTime)> = plain.iter().map(|p| (p.2, p.3)).collect();
    let picked = pick(&sizes, rule, now);
    for ((id, path, _, _), take) in plain.into_iter().zip(picked) {
        if !take {
            report.kept += 1;
            continue;
        }
        let (before, after) = archive_one(&path)?;
        tracing::info!(event = "segment_archived", segment = %id, before, after);
        report.archived.push((id.clone(), before, after));
    }
    Ok(report)
}

/// Which of the plain earlier segments (oldest first: bytes, last written) `rule` archives.
fn pick(segments: &[(u64, SystemTime)], rule: &ArchiveRule, now: SystemTime) -> Vec<bool> {
    let mut picked: Vec<bool> = segments
        .iter()
        .map(|(_, modified)| {
            rule.older_than.is_some_and(|age| {
                now.duration_since(*modified)
                    .is_ok_and(|since| since >= age)
            })
        })
        .collect();
    if let Some(limit) = rule.plain_over_bytes {
        // The newest stay plain while they fit; everything older than the first that does
        // not fit is archived.
        let mut kept = 0u64;
        let mut over = false;
        for (n, (bytes, _)) in segments.iter().enumerate().rev() {
            if picked[n] {
                continue;
            }
            kept = kept.saturating_add(*bytes);
            over |= kept > limit;
            picked[n] = over;
        }
    }
    picked
}

/// Only ids a pod makes (letters, digits, `-`, `_`) become file names: a `pod.json` edited to
/// list `../x` must not make the archiver compress and remove a file outside the pod.
fn check_id(id: &SegmentId) -> Result<(), StoreError> {
    let text = id.as_str();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if plain {
        Ok(())
    } else {
        Err(StoreError::UnsafeSegmentId { id: text.into() })
    }
}

fn lock(dir: &Path) -> Result<File, StoreError> {
    let path = dir.join(ARCHIVE_LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| StoreError::io(&path, "open", e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::ArchiveBusy { dir: dir.into() }),
        Err(std::fs::TryLockError::Error(err)) => Err(StoreError::io(&path, "lock", err)),
    }
}

/// Archive one segment; returns its bytes and its archive's.
fn archive_one(plain: &Path) -> Result<(u64, u64), StoreError> {
    let data = read_capped(plain).map_err(|e| StoreError::io(plain, "read", e))?;
    // A segment that does not read as a log is left for a person to look at, as it is.
    crate::read::check_bytes(&data, plain)?;
    let archive = archived_path(plain);
    if let Ok(existing) = File::open(&archive) {
        // A crash after the rename: the archive is there; trust it only if it holds exactly
        // this segment.
        if inflate(existing, &archive).is_ok_and(|inflated| inflated == data) {
            let size = std::fs::metadata(&archive).map_or(0, |m| m.len());
            remove_plain(plain)?;
            return Ok((data.len() as u64, size));
        }
        return Err(StoreError::Archive {
            path: archive,
            reason: format!(
                "an archive of a different content is already there beside {}; nothing was \
                 changed — move one of them aside",
                plain.display()
            ),
        });
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder
        .write_all(&data)
        .map_err(|e| StoreError::io(&archive, "compress", e))?;
    let compressed = encoder
        .finish()
        .map_err(|e| StoreError::io(&archive, "compress", e))?;
    if inflate(compressed.as_slice(), &archive)? != data {
        return Err(StoreError::Archive {
            path: archive,
            reason: "the compressed copy did not read back the same; nothing was changed".into(),
        });
    }
    let mut temp = archive.as_os_str().to_owned();
    temp.push(".tmp");
    let temp = PathBuf::from(temp);
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .map_err(|e| StoreError::io(&temp, "create", e))?;
    let written = file
        .write_all(&compressed)
        .and_then(|()| file.sync_all())
        .map_err(|e| StoreError::io(&temp, "write", e));
    drop(file);
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(err);
    }
    std::fs::rename(&temp, &archive).map_err(|e| StoreError::io(&archive, "rename to", e))?;
    sync_parent_dir(&archive);
    remove_plain(plain)?;
    Ok((data.len() as u64, compressed.len() as u64))
}

fn remove_plain(plain: &Path) -> Result<(), StoreError> {
    std::fs::remove_file(plain).map_err(|e| StoreError::io(plain, "remove", e))?;
    sync_parent_dir(plain);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn the_age_rule_picks_old_segments_and_the_size_rule_the_oldest() {
        let now = SystemTime::UNIX_EPOCH + DAY * 100;
        let segments = [
            (10, now - DAY * 40),
            (10, now - DAY * 20),
            (10, now - DAY * 10),
            (10, now - DAY),
        ];
        let age = ArchiveRule {
            older_than: Some(DAY * 15),
            plain_over_bytes: None,
        };
        assert_eq!(pick(&segments, &age, now), [true, true, false, false]);
        let size = ArchiveRule {
            older_than: None,
            plain_over_bytes: Some(25),
        };
        assert_eq!(pick(&segments, &size, now), [true, true, false, false]);
        let both = ArchiveRule {
            older_than: Some(DAY * 30),
            plain_over_bytes: Some(15),
        };
        assert_eq!(pick(&segments, &both, now), [true, true, true, false]);
        assert_eq!(pick(&segments, &ArchiveRule::default(), now), [false; 4]);
        assert_eq!(pick(&segments, &ArchiveRule::all(), now), [true; 4]);
    }

    #[test]
    fn ids_that_are_not_plain_names_are_refused() {
        for bad in ["../x", "a/b", "", ".", "..", "x.jsonl", "a\0b", "é"] {
            assert!(
                matches!(
                    check_id(&SegmentId::new(bad)),
                    Err(StoreError::UnsafeSegmentId { .. })
                ),
                "{bad:?}"
            );
        }
        check_id(&SegmentId::new("0193f0c2-aaaa_b")).unwrap();
    }

    #[test]
    fn corrupt_and_truncated_archives_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("s.jsonl");
        let archive = archived_path(&plain);
        std::fs::write(&archive, b"not gzip at all").unwrap();
        let err = read_segment_bytes(&plain).unwrap_err().to_string();
        assert!(err.contains("s.jsonl.gz") && err.contains("gzip"), "{err}");

        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(&[b'x'; 10_000]).unwrap();
        let whole = encoder.finish().unwrap();
        std::fs::write(&archive, &whole[..whole.len() / 2]).unwrap();
        let err = read_segment_bytes(&plain).unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");

        std::fs::write(&archive, &whole).unwrap();
        assert_eq!(read_segment_bytes(&plain).unwrap().0, vec![b'x'; 10_000]);
        std::fs::remove_file(&archive).unwrap();
        let err = read_segment_bytes(&plain).unwrap_err().to_string();
        assert!(err.contains("s.jsonl") && !err.contains(".gz"), "{err}");
    }
}
