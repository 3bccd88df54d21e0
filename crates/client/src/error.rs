//! Errors a client can meet, each worded for the person who will read it.

use std::path::{Path, PathBuf};

use seedpod_protocol::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing is listening for this pod.
    #[error("pod \"{name}\" is not running; start it with `seedpod start {name}`")]
    NotRunning { name: String },
    /// The pod speaks another protocol version (`supported` is the pod's).
    #[error("{reason}")]
    Incompatible { supported: u32, reason: String },
    /// A pod on another machine could not be reached: what ssh or the bridge said.
    #[error("{host}: {message}")]
    Remote { host: String, message: String },
    /// The pod closed the connection.
    #[error("pod \"{name}\" closed the connection{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed {
        name: String,
        reason: Option<String>,
    },
    /// The pod's socket is there but nothing came back in time: the process is stopped
    /// (SIGSTOP), wedged, or overloaded.
    #[error("{}", not_answering(name, *pid, *waited, doing))]
    NotAnswering {
        name: String,
        pid: Option<u32>,
        waited: std::time::Duration,
        /// What went unanswered, e.g. "to notify".
        doing: String,
    },
    /// The pod answered a request with an error.
    #[error("pod refused: {message}")]
    Refused { code: ErrorCode, message: String },
    /// The pod sent something this client cannot make sense of.
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("{0}")]
    Setup(String),
    #[error("could not {op} {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        cause: std::io::Error,
    },
    #[error("connection error: {0}")]
    Transport(std::io::Error),
}

// The messages above carry their causes; none is exposed again as `source()`, so `{:#}` shows
// each once (docs/decisions.md, "Errors carry their cause").
impl From<std::io::Error> for ClientError {
    fn from(err: std::io::Error) -> Self {
        ClientError::Transport(err)
    }
}

fn not_answering(name: &str, pid: Option<u32>, waited: std::time::Duration, doing: &str) -> String {
    let secs = if waited.as_secs() == 0 {
        format!("{} ms", waited.as_millis())
    } else {
        format!("{} s", waited.as_secs())
    };
    match pid {
        Some(pid) => format!(
            "pod {name} (pid {pid}) is not answering: no reply {doing} in {secs}. If it was \
             stopped (Ctrl-Z, SIGSTOP), `kill -CONT {pid}` resumes it; `seedpod ls` shows its state"
        ),
        None => format!(
            "pod {name} is not answering: no reply {doing} in {secs}; `seedpod ls` shows its state"
        ),
    }
}

impl ClientError {
    pub fn io(path: &Path, op: &'static str, source: std::io::Error) -> ClientError {
        ClientError::Io {
            path: path.to_path_buf(),
            op,
            cause: source,
        }
    }
}
