//! One process per pod name: an exclusive `flock` on `pod.lock`, held for the process's life.
//! The kernel drops it when the process dies, however it dies, so a crash never leaves a pod
//! locked out (unlike a pid file, which is only a hint).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use seedpod_protocol::PodName;

use crate::error::PodError;

/// Held while the pod runs; dropping it releases the lock.
#[derive(Debug)]
pub struct PodLock {
    _file: File,
}

/// Take the exclusive lock for serving the pod, and record our pid in it.
pub fn acquire(path: &Path, name: &PodName) -> Result<PodLock, PodError> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| PodError::io(path, "open the pod lock", e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(PodError::AlreadyRunning {
                name: name.to_string(),
                pid: holder.trim().parse().ok(),
            });
        }
        Err(TryLockError::Error(e)) => return Err(PodError::io(path, "lock", e)),
    }
    // Record who holds it, for the error message of the next process that tries.
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(PodLock { _file: file })
}

/// Take a shared lock for reading a stopped pod's files: it fails while a pod serves them and
/// keeps one from starting meanwhile, but leaves the recorded pid alone (that is the server's).
pub fn acquire_shared(path: &Path, name: &PodName) -> Result<PodLock, PodError> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| PodError::io(path, "open the pod lock", e))?;
    match file.try_lock_shared() {
        Ok(()) => Ok(PodLock { _file: file }),
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            Err(PodError::AlreadyRunning {
                name: name.to_string(),
                pid: holder.trim().parse().ok(),
            })
        }
        Err(TryLockError::Error(e)) => Err(PodError::io(path, "lock", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> PodName {
        PodName::new("p").unwrap()
    }

    #[test]
    fn second_holder_is_refused_until_the_first_drops() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pod.lock");
        let first = acquire(&path, &p()).unwrap();
        match acquire(&path, &p()) {
            Err(PodError::AlreadyRunning { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected AlreadyRunning, got {other:?}"),
        }
        drop(first);
        // A process another test forks in this moment holds a copy of the descriptor (and so
        // the lock) until it execs: wait for the lock instead of trying it once. This returns
        // only because dropping released it.
        let again = OpenOptions::new().write(true).open(&path).unwrap();
        again.lock().unwrap();
    }

    #[test]
    fn a_reader_is_refused_while_serving_and_leaves_the_pid_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pod.lock");
        let server = acquire(&path, &p()).unwrap();
        assert!(matches!(
            acquire_shared(&path, &p()),
            Err(PodError::AlreadyRunning { .. })
        ));
        drop(server);
        std::fs::write(&path, "4242").unwrap();
        let reader = acquire_shared(&path, &p()).unwrap();
        assert!(matches!(
            acquire(&path, &p()),
            Err(PodError::AlreadyRunning { .. })
        ));
        drop(reader);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "4242");
    }
}
