//! Errors a client can meet, each worded for the person who will read it.

use std::path::{Path, PathBuf};

use seedpod_protocol::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing is listening for this pod.
    #[error("pod \"{name}\" is not running; start it with `seedpod start {name}`")]
    NotRunning { name: String },
    /// The pod speaks another protocol version.
    #[error("{reason}")]
    Incompatible { reason: String },
    /// The pod closed the connection.
    #[error("pod \"{name}\" closed the connection{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Closed {
        name: String,
        reason: Option<String>,
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

impl ClientError {
    pub fn io(path: &Path, op: &'static str, source: std::io::Error) -> ClientError {
        ClientError::Io {
            path: path.to_path_buf(),
            op,
            cause: source,
        }
    }
}
