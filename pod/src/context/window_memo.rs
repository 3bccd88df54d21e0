//! What model servers said about their context windows, remembered across pods.
//!
//! A new pod on a server it has a base URL for asks the server its window (`window::resolve`):
//! five questions, each bounded by a timeout, before the pod is ready. Every pod after the first
//! on the same server and model would ask the same questions and get the same answer, so the
//! answer — or the fact that nobody answered — is kept in the user's state directory
//! (`windows.json`) and a new pod takes it from there (docs/configuration.md §Context). A
//! server restarted with a smaller window is learned from its first refusal, as for any pod; one
//! restarted with a larger window is asked again once the record is a day old. Silence is
//! remembered only for minutes: a server that was down when one pod started is asked by the
//! next.
//!
//! The file is a convenience, never state: unreadable, corrupt, oversized or from a future
//! version, it is treated as empty and rewritten. It names no server: each record is keyed by a
//! hash of the provider, base URL and model, since a base URL may carry a credential in its
//! query or user part.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use seedpod_protocol::ProviderKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The memo's file in the state directory.
pub const MEMO_FILE: &str = "windows.json";
/// How long a server's stated window is taken without asking again.
pub const STATED_FOR_MS: u64 = 24 * 60 * 60 * 1000;
/// How long "nobody answered" is taken without asking again.
pub const SILENT_FOR_MS: u64 = 10 * 60 * 1000;
/// Records kept; the oldest go first. A person runs a handful of servers and models.
const MAX_RECORDS: usize = 64;
/// A memo larger than this is not ours (64 records take a few KiB).
const MAX_BYTES: u64 = 64 * 1024;

/// What the memo knows about one server and model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recalled {
    /// The server stated this window recently.
    Stated(u64),
    /// The server was asked recently and stated nothing.
    Silent,
    /// Not asked recently: ask.
    Unknown,
}

/// The memo in one state directory.
#[derive(Debug, Clone)]
pub struct WindowMemo {
    path: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct MemoFile {
    records: Vec<Record>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    key: String,
    /// What the server stated; `None` when it stated nothing.
    tokens: Option<u64>,
    at_ms: u64,
}

/// The key of one server and model: a hash, so the file names no URL.
pub fn memo_key(provider: ProviderKind, base_url: &str, model: &str) -> String {
    let provider = serde_json::to_string(&provider).unwrap_or_default();
    let mut hasher = Sha256::new();
    for part in [provider.as_str(), base_url.trim_end_matches('/'), model] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl WindowMemo {
    pub fn in_state_dir(state_dir: &Path) -> WindowMemo {
        WindowMemo {
            path: state_dir.join(MEMO_FILE),
        }
    }

    /// What is remembered about `key` at `now_ms`.
    pub fn recall(&self, key: &str, now_ms: u64) -> Recalled {
        let Some(record) = self.read().records.into_iter().find(|r| r.key == key) else {
            return Recalled::Unknown;
        };
        let age = now_ms.saturating_sub(record.at_ms);
        // A record from the future (a clock set back) is not believed.
        if record.at_ms > now_ms {
            return Recalled::Unknown;
        }
        match record.tokens {
            Some(tokens) if age < STATED_FOR_MS => Recalled::Stated(tokens),
            None if age < SILENT_FOR_MS => Recalled::Silent,
            _ => Recalled::Unknown,
        }
    }

    /// Remember what the server stated about `key` (nothing: `None`). Best effort: a memo that
    /// cannot be written costs the next pod its questions, nothing else.
    pub fn remember(&self, key: &str, tokens: Option<u64>, now_ms: u64) {
        let mut memo = self.read();
        memo.records.retain(|r| r.key != key);
        memo.records.push(Record {
            key: key.to_owned(),
            tokens,
            at_ms: now_ms,
        });
        memo.records.sort_by_key(|r| std::cmp::Reverse(r.at_ms));
        memo.records.truncate(MAX_RECORDS);
        if let Err(err) = self.write(&memo) {
            tracing::debug!(event = "window_memo_unwritten", path = %self.path.display(), error = %err);
        }
    }

    fn read(&self) -> MemoFile {
        let Ok(file) = std::fs::File::open(&self.path) else {
            return MemoFile::default();
        };
        let mut bytes = Vec::new();
        if file.take(MAX_BYTES + 1).read_to_end(&mut bytes).is_err()
            || bytes.len() as u64 > MAX_BYTES
        {
            return MemoFile::default();
        }
        serde_json::from_slice(&bytes).unwrap_or_default()
    }

    /// Atomically: a pod starting beside another reads a whole memo or none. Two pods writing
    /// at once each rename their own file; one record may be lost, which costs one probe.
    fn write(&self, memo: &MemoFile) -> std::io::Result<()> {
        let json = serde_json::to_vec(memo).map_err(std::io::Error::other)?;
        let temp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(&json)?;
        drop(file);
        std::fs::rename(&temp, &self.path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: u64 = 60 * 60 * 1000;

    fn memo() -> (tempfile::TempDir, WindowMemo) {
        let dir = tempfile::tempdir().unwrap();
        let memo = WindowMemo::in_state_dir(dir.path());
        (dir, memo)
    }

    #[test]
    fn a_stated_window_is_recalled_for_a_day_and_silence_for_minutes() {
        let (_dir, memo) = memo();
        let stated = memo_key(ProviderKind::Openai, "http://127.0.0.1:8080/v1", "llama");
        let silent = memo_key(ProviderKind::Openai, "http://127.0.0.1:9090/v1", "llama");
        assert_eq!(memo.recall(&stated, 1_000), Recalled::Unknown);
        memo.remember(&stated, Some(4_096), 1_000);
        memo.remember(&silent, None, 1_000);
        assert_eq!(memo.recall(&stated, 1_000 + HOUR), Recalled::Stated(4_096));
        assert_eq!(memo.recall(&silent, 1_000 + 60_000), Recalled::Silent);
        assert_eq!(memo.recall(&silent, 1_000 + HOUR), Recalled::Unknown);
        assert_eq!(memo.recall(&stated, 1_000 + 25 * HOUR), Recalled::Unknown);
    }

    #[test]
    fn servers_and_models_are_told_apart_and_no_url_is_written() {
        let (dir, memo) = memo();
        let url = "http://user:s3cret@127.0.0.1:8080/v1?key=hunter2";
        memo.remember(&memo_key(ProviderKind::Openai, url, "a"), Some(8_192), 5);
        assert_eq!(
            memo.recall(&memo_key(ProviderKind::Openai, url, "b"), 5),
            Recalled::Unknown
        );
        assert_eq!(
            memo.recall(&memo_key(ProviderKind::Openai, &format!("{url}/"), "a"), 5),
            Recalled::Stated(8_192),
            "a trailing slash is the same server"
        );
        let written = std::fs::read_to_string(dir.path().join(MEMO_FILE)).unwrap();
        for secret in ["s3cret", "hunter2", "127.0.0.1"] {
            assert!(!written.contains(secret), "{written}");
        }
        let mode = std::fs::metadata(dir.path().join(MEMO_FILE)).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
    }

    #[test]
    fn a_corrupt_oversized_or_future_memo_is_no_memo() {
        let (dir, memo) = memo();
        let key = memo_key(ProviderKind::Openai, "http://h/v1", "m");
        let path = dir.path().join(MEMO_FILE);
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(memo.recall(&key, 10), Recalled::Unknown);
        let record = format!(r#"{{"key":"{key}","tokens":4096,"at_ms":10}}"#);
        let huge = format!(
            r#"{{"records":[{record}],"pad":"{}"}}"#,
            "x".repeat(MAX_BYTES as usize)
        );
        std::fs::write(&path, huge).unwrap();
        assert_eq!(memo.recall(&key, 10), Recalled::Unknown);
        std::fs::write(&path, format!(r#"{{"records":[{record}]}}"#)).unwrap();
        assert_eq!(memo.recall(&key, 10), Recalled::Stated(4_096));
        assert_eq!(memo.recall(&key, 9), Recalled::Unknown, "from the future");
        // A corrupt memo is replaced by the next record, not kept.
        std::fs::write(&path, "{not json").unwrap();
        memo.remember(&key, Some(2_048), 20);
        assert_eq!(memo.recall(&key, 21), Recalled::Stated(2_048));
    }

    #[test]
    fn the_memo_keeps_the_newest_records() {
        let (_dir, memo) = memo();
        for i in 0..(MAX_RECORDS as u64 + 10) {
            memo.remember(&format!("k{i}"), Some(1_000 + i), 100 + i);
        }
        let now = 100 + MAX_RECORDS as u64 + 10;
        assert_eq!(memo.recall("k0", now), Recalled::Unknown);
        assert_eq!(
            memo.recall(&format!("k{}", MAX_RECORDS as u64 + 9), now),
            Recalled::Stated(1_000 + MAX_RECORDS as u64 + 9)
        );
        assert_eq!(memo.read().records.len(), MAX_RECORDS);
    }
}
