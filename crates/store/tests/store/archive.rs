//! Archiving earlier segments (`seedpod_store::archive`): what is archived reads back the same,
//! the active segment never is, and every way it can go wrong leaves the files as they were.

// The fixtures below are test code outside #[test] functions: they fail a test by panicking.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, SystemTime};

use seedpod_protocol::{PodName, ProviderKind, SegmentId};
use seedpod_store::{
    ArchiveRule, PodConfig, PodMeta, StoreError, archive_segments, archived_path,
    read_segment_entries, save_meta, segment_path,
};

use crate::support::{file_bytes, realistic_entries};

const DAY: Duration = Duration::from_secs(86_400);

/// A pod in `dir` with segments `s1`…`sN` (the last active), each a realistic segment whose
/// file was last written `ages[n]` ago.
fn pod(dir: &Path, ages: &[Duration]) -> PodMeta {
    std::fs::create_dir_all(dir.join("segments")).unwrap();
    let ids: Vec<SegmentId> = (1..=ages.len())
        .map(|n| SegmentId::new(format!("s{n}")))
        .collect();
    for (id, age) in ids.iter().zip(ages) {
        let path = segment_path(dir, id);
        std::fs::write(&path, file_bytes(&realistic_entries())).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - *age).unwrap();
    }
    let mut meta = PodMeta::new(
        PodName::new("p").unwrap(),
        dir.to_path_buf(),
        ids[0].clone(),
        PodConfig::new(ProviderKind::Scripted, "m"),
        0,
    );
    meta.active_segment = ids.last().unwrap().clone();
    meta.segments = ids;
    save_meta(dir, &meta).unwrap();
    meta
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("segments"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "archive.lock")
        .collect();
    names.sort();
    names
}

#[test]
fn archived_segments_read_back_the_same_and_the_active_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let meta = pod(dir.path(), &[DAY * 40, DAY * 35, DAY * 2, DAY * 50]);
    let before: Vec<_> = meta
        .segments
        .iter()
        .map(|id| read_segment_entries(&segment_path(dir.path(), id)).unwrap())
        .collect();
    let rule = ArchiveRule {
        older_than: Some(DAY * 30),
        plain_over_bytes: None,
    };
    let report = archive_segments(dir.path(), &meta, &rule, SystemTime::now()).unwrap();
    let archived: Vec<&str> = report.archived.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(archived, ["s1", "s2"], "{report:?}");
    assert_eq!(report.kept, 1);
    assert!(report.archived.iter().all(|(_, plain, gz)| gz < plain));
    // s4 is older than the rule but active: never archived.
    assert_eq!(
        files(dir.path()),
        ["s1.jsonl.gz", "s2.jsonl.gz", "s3.jsonl", "s4.jsonl"]
    );
    let after: Vec<_> = meta
        .segments
        .iter()
        .map(|id| read_segment_entries(&segment_path(dir.path(), id)).unwrap())
        .collect();
    assert_eq!(after, before);

    let again = archive_segments(dir.path(), &meta, &ArchiveRule::all(), SystemTime::now());
    let again = again.unwrap();
    assert_eq!(again.archived.len(), 1, "s3 now: {again:?}");
    assert_eq!(again.already, 2);
    assert_eq!(
        files(dir.path()),
        ["s1.jsonl.gz", "s2.jsonl.gz", "s3.jsonl.gz", "s4.jsonl"]
    );
}

#[test]
fn a_second_archiver_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let meta = pod(dir.path(), &[DAY, DAY, DAY]);
    let lock = std::fs::File::create(dir.path().join("segments/archive.lock")).unwrap();
    lock.try_lock().unwrap();
    let err =
        archive_segments(dir.path(), &meta, &ArchiveRule::all(), SystemTime::now()).unwrap_err();
    assert!(matches!(err, StoreError::ArchiveBusy { .. }), "{err}");
    assert!(err.to_string().contains("another archiver"), "{err}");
    assert_eq!(files(dir.path()), ["s1.jsonl", "s2.jsonl", "s3.jsonl"]);
    drop(lock);
    archive_segments(dir.path(), &meta, &ArchiveRule::all(), SystemTime::now()).unwrap();
}

#[test]
fn a_segment_name_that_leaves_the_pod_is_refused_before_anything_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let mut meta = pod(&dir.path().join("pod"), &[DAY, DAY]);
    let outside = dir.path().join("outside.jsonl");
    std::fs::write(&outside, file_bytes(&realistic_entries())).unwrap();
    meta.segments.insert(0, SegmentId::new("../../outside"));
    let pod_dir = dir.path().join("pod");
    let err =
        archive_segments(&pod_dir, &meta, &ArchiveRule::all(), SystemTime::now()).unwrap_err();
    assert!(matches!(err, StoreError::UnsafeSegmentId { .. }), "{err}");
    assert!(outside.exists());
    assert!(!archived_path(&outside).exists());
    assert_eq!(files(&pod_dir), ["s1.jsonl", "s2.jsonl"]);
}

#[test]
fn what_is_not_a_readable_regular_segment_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let meta = pod(dir.path(), &[DAY, DAY, DAY]);
    // A corrupt middle line: a person must look at it, not an archiver hide it.
    let s1 = segment_path(dir.path(), &SegmentId::new("s1"));
    let mut text = std::fs::read_to_string(&s1).unwrap();
    text.insert_str(text.find('\n').unwrap() + 1, "garbage\n");
    std::fs::write(&s1, &text).unwrap();
    let err =
        archive_segments(dir.path(), &meta, &ArchiveRule::all(), SystemTime::now()).unwrap_err();
    assert!(err.to_string().contains("s1.jsonl:2"), "{err}");
    assert_eq!(std::fs::read_to_string(&s1).unwrap(), text);
    assert!(!archived_path(&s1).exists());

    // A symlink where a segment should be.
    std::fs::remove_file(&s1).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", &s1).unwrap();
    let err =
        archive_segments(dir.path(), &meta, &ArchiveRule::all(), SystemTime::now()).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    assert!(std::fs::symlink_metadata(&s1).unwrap().is_symlink());
}

#[test]
fn a_crash_between_rename_and_removal_is_finished_only_if_the_archive_matches() {
    let dir = tempfile::tempdir().unwrap();
    let meta = pod(dir.path(), &[DAY, DAY, DAY]);
    let s1 = segment_path(dir.path(), &SegmentId::new("s1"));
    let s2 = segment_path(dir.path(), &SegmentId::new("s2"));
    // s1's archive is whole (the crash came after the rename); s2's is another segment's.
    let plain = std::fs::read(&s1).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &plain).unwrap();
    std::fs::write(archived_path(&s1), gz.finish().unwrap()).unwrap();
    let mut other = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut other, b"something else\n").unwrap();
    std::fs::write(archived_path(&s2), other.finish().unwrap()).unwrap();

    let err =
        archive_segments(dir.path(), &meta, &ArchiveRule::all(), SystemTime::now()).unwrap_err();
    assert!(err.to_string().contains("different content"), "{err}");
    assert!(!s1.exists(), "s1's matching archive finished its move");
    assert!(s2.exists(), "s2 kept beside an archive that is not its own");
    assert_eq!(
        read_segment_entries(&s1).unwrap(),
        realistic_entries(),
        "read from the archive"
    );
}
