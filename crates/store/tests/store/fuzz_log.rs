//! Fuzzing the log reader with torn and corrupt files. Take a real segment, cut it at any
//! byte, overwrite any bytes with anything, append junk: reading never panics; it either gives
//! the entries before the damage (a torn last line moved aside, as after a crash mid-write) or
//! refuses with the file and line — and a read that succeeded on a cut file gives a prefix of
//! the original entries, never an entry that was not written. `PROPTEST_CASES` raises the
//! number of cases (docs/testing.md).

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{file_bytes, realistic_entries, seg_path};
use proptest::prelude::*;
use seedpod_store::{StoreError, read_segment, read_segment_entries};

fn damaged(original: &[u8], cut: usize, edits: &[(usize, u8)], junk: &[u8]) -> Vec<u8> {
    let mut bytes = original[..cut.min(original.len())].to_vec();
    for (at, byte) in edits {
        if !bytes.is_empty() {
            let at = at % bytes.len();
            bytes[at] = *byte;
        }
    }
    bytes.extend_from_slice(junk);
    bytes
}

proptest! {
    #[test]
    fn fuzz_a_cut_log_reads_as_a_prefix_of_what_was_written(cut in any::<prop::sample::Index>()) {
        let entries = realistic_entries();
        let original = file_bytes(&entries);
        let cut = cut.index(original.len() + 1);
        let dir = tempfile::tempdir().unwrap();
        let path = seg_path(dir.path());
        std::fs::write(&path, &original[..cut]).unwrap();
        match read_segment(&path) {
            Ok(read) => {
                prop_assert!(read.entries.len() <= entries.len());
                prop_assert_eq!(&read.entries[..], &entries[..read.entries.len()]);
                // Reading again after the repair finds nothing more to move aside.
                let again = read_segment(&path).unwrap();
                prop_assert!(again.torn.is_none());
                prop_assert_eq!(again.entries, read.entries);
            }
            // An empty file, or one cut inside its first line, has no segment start.
            Err(err) => prop_assert!(
                matches!(err, StoreError::Corrupt { .. } | StoreError::Fold(_)),
                "{}", err
            ),
        }
    }

    #[test]
    fn fuzz_corrupt_bytes_never_panic_and_errors_name_the_line(
        cut in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        junk in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let original = file_bytes(&realistic_entries());
        let bytes = damaged(&original, cut.index(original.len() + 1), &edits, &junk);
        let dir = tempfile::tempdir().unwrap();
        let path = seg_path(dir.path());
        std::fs::write(&path, &bytes).unwrap();
        // The read-only reader first: it must not change the file.
        let _ = read_segment_entries(&path);
        prop_assert_eq!(std::fs::read(&path).unwrap(), bytes);
        if let Err(err) = read_segment(&path) {
            let message = err.to_string();
            if let StoreError::Corrupt { line, .. } = err {
                prop_assert!(line >= 1);
                prop_assert!(message.contains(&format!(":{line}:")), "{}", message);
            }
        }
    }
}
