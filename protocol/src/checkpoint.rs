//! `FileCheckpoint`: what a file tool kept of a file just before it changed it. Recorded in the
//! tool call's `tool_result` (`meta.checkpoints`) by reference — the bytes live in the pod's
//! content-addressed checkpoint store — so a rewind knows exactly which before-state belongs to
//! which path at which point of the log (docs/storage.md §Checkpoints).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheckpoint {
    /// The absolute path the tool changed, as the scope resolved it.
    pub path: String,
    pub before: Before,
}

/// The file as it was before the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Before {
    /// A regular file with these bytes: `sha256` (lowercase hex) names the blob in the store.
    Blob { sha256: String, bytes: u64 },
    /// There was no file at the path; a rewind removes it.
    Absent,
    /// It was not kept (larger than the whole checkpoint budget, or the store failed); a
    /// rewind says it cannot restore this file.
    NotKept { reason: String },
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_round_trips_and_pins_its_wire_shape() {
        let cases = [
            (
                Before::Blob {
                    sha256: "ab".into(),
                    bytes: 3,
                },
                r#"{"path":"/p/a","before":{"state":"blob","sha256":"ab","bytes":3}}"#,
            ),
            (
                Before::Absent,
                r#"{"path":"/p/a","before":{"state":"absent"}}"#,
            ),
            (
                Before::NotKept {
                    reason: "too big".into(),
                },
                r#"{"path":"/p/a","before":{"state":"not_kept","reason":"too big"}}"#,
            ),
        ];
        for (before, wire) in cases {
            let checkpoint = FileCheckpoint {
                path: "/p/a".into(),
                before,
            };
            assert_eq!(serde_json::to_string(&checkpoint).unwrap(), wire);
            assert_eq!(
                serde_json::from_str::<FileCheckpoint>(wire).unwrap(),
                checkpoint
            );
        }
        let newer: FileCheckpoint =
            serde_json::from_str(r#"{"path":"/p","before":{"state":"sparse"}}"#).unwrap();
        assert_eq!(newer.before, Before::Unknown);
    }
}
