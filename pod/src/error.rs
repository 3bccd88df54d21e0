//! Errors that stop a pod from starting or serving, worded for the person reading them.

use std::path::{Path, PathBuf};

use seedpod_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum PodError {
    #[error("pod \"{name}\" is already running{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AlreadyRunning { name: String, pid: Option<u32> },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Assemble(#[from] crate::assemble::AssembleError),
    #[error(transparent)]
    Client(#[from] seedpod_client::ClientError),
    #[error("could not {op} {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        cause: std::io::Error,
    },
}

impl PodError {
    pub fn io(path: &Path, op: &'static str, source: std::io::Error) -> PodError {
        if seedpod_store::device::is_out_of_space(&source) {
            return PodError::Store(seedpod_store::StoreError::NoSpace {
                path: path.to_path_buf(),
                op,
                device: seedpod_store::device::describe(path),
            });
        }
        PodError::Io {
            path: path.to_path_buf(),
            op,
            cause: source,
        }
    }
}
