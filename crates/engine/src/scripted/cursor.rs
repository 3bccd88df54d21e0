//! Which script step answers the next request, persisted through an optional record file.
//!
//! The record file holds every request body received, one per line, and its line count *is* the
//! cursor: a pod restarted on the same script continues where it left off instead of replaying
//! the first response, and tests can read back exactly what the provider was sent. Appending the
//! line and advancing the cursor happen under one lock, on a blocking thread that runs to the end
//! even if the stream asking for it is dropped, so the two can never disagree.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::script::ScriptError;
use crate::provider::ProviderError;

pub struct Cursor {
    record: Option<PathBuf>,
    state: Mutex<CursorState>,
}

struct CursorState {
    /// Index of the step that answers the next request.
    next: usize,
    /// The record file ends in a torn line (a crash mid-append); start the next line fresh.
    needs_newline: bool,
}

impl Cursor {
    /// Start after the requests already recorded in `record`, if any.
    pub fn open(record: Option<PathBuf>) -> Result<Self, ScriptError> {
        let (next, needs_newline) = match &record {
            Some(path) => recorded_requests(path)?,
            None => (0, false),
        };
        Ok(Cursor {
            record,
            state: Mutex::new(CursorState {
                next,
                needs_newline,
            }),
        })
    }

    /// Record `body` and return the index of the step that answers it. Blocking when there is a
    /// record file: call it from a blocking thread.
    pub fn claim(&self, body: &str) -> Result<usize, ProviderError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(path) = &self.record {
            append_line(path, body, state.needs_newline).map_err(|err| {
                ProviderError::permanent(format!(
                    "scripted provider: cannot record the request in {}: {err}",
                    path.display()
                ))
            })?;
            state.needs_newline = false;
        }
        let claimed = state.next;
        state.next += 1;
        Ok(claimed)
    }

    pub fn records_to_disk(&self) -> bool {
        self.record.is_some()
    }
}

/// How many requests `path` records, and whether its last line is unterminated.
fn recorded_requests(path: &Path) -> Result<(usize, bool), ScriptError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok((0, false)),
        Err(source) => {
            return Err(ScriptError::Record {
                path: path.to_path_buf(),
                cause: source,
            });
        }
    };
    let lines = bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .count();
    let torn = bytes.last().is_some_and(|b| *b != b'\n');
    Ok((lines, torn))
}

fn append_line(path: &Path, body: &str, needs_newline: bool) -> std::io::Result<()> {
    let mut line = String::with_capacity(body.len() + 2);
    if needs_newline {
        line.push('\n');
    }
    line.push_str(body);
    line.push('\n');
    // In the pod's directory, beside its log: as private as the log.
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(line.as_bytes())?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_without_record_counts_from_zero() {
        let cursor = Cursor::open(None).unwrap();
        assert_eq!(cursor.claim("a").unwrap(), 0);
        assert_eq!(cursor.claim("b").unwrap(), 1);
    }

    #[test]
    fn cursor_resumes_from_the_record_and_repairs_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("requests.jsonl");
        std::fs::write(&record, "{\"first\":1}\n{\"torn\"").unwrap();
        let cursor = Cursor::open(Some(record.clone())).unwrap();
        assert_eq!(cursor.claim("{\"third\":3}").unwrap(), 2);
        assert_eq!(
            std::fs::read_to_string(&record).unwrap(),
            "{\"first\":1}\n{\"torn\"\n{\"third\":3}\n"
        );
        let reopened = Cursor::open(Some(record)).unwrap();
        assert_eq!(reopened.claim("x").unwrap(), 3);
    }

    #[test]
    fn unwritable_record_is_a_permanent_error() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("missing-dir").join("requests.jsonl");
        let cursor = Cursor::open(Some(record)).unwrap();
        let err = cursor.claim("{}").unwrap_err();
        assert!(!err.is_transient());
        assert!(err.message().contains("cannot record the request"), "{err}");
    }
}
