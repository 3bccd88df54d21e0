//! Test-only: a slow disk on demand. A test holds one step of one pod (keyed by its directory)
//! and the code at that step waits — on the blocking thread it runs on — until the test lets
//! go, so the test can show what the controller does meanwhile. Compiled only into the pod's
//! own unit tests; the product has no such switch.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The disk steps the controller must never wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Reading a file's current text for an approval request's diff.
    Preview,
    /// Rendering a new segment's prompt (reading the instruction files).
    Render,
    /// Writing `pod.json`.
    MetaSave,
}

#[derive(Default)]
struct Holds {
    held: Vec<(PathBuf, Step)>,
    /// Steps that are waiting now.
    waiting: Vec<(PathBuf, Step)>,
}

static HOLDS: Mutex<Holds> = Mutex::new(Holds {
    held: Vec::new(),
    waiting: Vec::new(),
});
static CHANGED: Condvar = Condvar::new();

fn holds() -> MutexGuard<'static, Holds> {
    HOLDS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Called at `step` for the pod in `dir`: returns at once unless a test holds it.
pub(crate) fn point(dir: &Path, step: Step) {
    let key = (dir.to_path_buf(), step);
    let mut guard = holds();
    if !guard.held.contains(&key) {
        return;
    }
    guard.waiting.push(key.clone());
    CHANGED.notify_all();
    while guard.held.contains(&key) {
        guard = CHANGED.wait(guard).unwrap_or_else(PoisonError::into_inner);
    }
    guard.waiting.retain(|k| *k != key);
}

/// A held step; dropping it lets the step go on.
pub(crate) struct Held(PathBuf, Step);

pub(crate) fn hold(dir: &Path, step: Step) -> Held {
    holds().held.push((dir.to_path_buf(), step));
    Held(dir.to_path_buf(), step)
}

impl Held {
    /// Wait (on a blocking thread) until the step is reached and waiting.
    pub(crate) async fn reached(&self) {
        let key = (self.0.clone(), self.1);
        tokio::task::spawn_blocking(move || {
            let mut guard = holds();
            while !guard.waiting.contains(&key) {
                guard = CHANGED.wait(guard).unwrap_or_else(PoisonError::into_inner);
            }
        })
        .await
        .expect("the waiting thread ran");
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let key = (self.0.clone(), self.1);
        holds().held.retain(|k| *k != key);
        CHANGED.notify_all();
    }
}
