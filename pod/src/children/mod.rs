//! Child pods (DESIGN §7), the parts that run off the controller: starting a child process,
//! talking to children, reading their logs, delivering this pod's own reports to its parent,
//! and the five tools the model drives them with.
//!
//! The controller owns every piece of state (the records in `pod.json`, the scope lent to
//! children, the outbox); these tasks only do the slow work (processes, sockets, disk reads)
//! and send the controller commands with what they found.

pub mod output;

use seedpod_store::ScopeGrant;

/// How a new pod was started by its parent: recorded in its `pod.json` at creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildStart {
    pub parent: String,
    /// The child's first input: committed (queued) in its log before it reports ready, so it
    /// is never lost between "started" and "told what to do".
    pub task: String,
    /// What the parent delegated; replaces the configured read and write roots.
    pub grant: ScopeGrant,
}
