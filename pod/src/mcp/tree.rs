//! A stdio server's whole process tree, found so it can end with the server
//! (docs/configuration.md §MCP servers, "Lifecycle").
//!
//! A server runs in a process group of its own, and the group is signalled when it stops.
//! What leaves the group (`setsid`, a daemon's double fork) is found two more ways, on Linux:
//! - every process the server starts inherits `SEEDPOD_MCP_TAG=<a tag of this start>` in its
//!   environment, and `/proc/PID/environ` of every process of ours is searched for it — which
//!   finds an escapee even after its parent exited and it was re-parented to init;
//! - the server's descendants by parent pid, taken while the server still lives, which finds
//!   one that cleared its environment but whose parent is still around.
//!
//! A process that does both (leaves the group and clears its environment) and whose parent has
//! already exited is not found; catching that would need a cgroup per server (or the pod as a
//! child subreaper, which would also make it the parent of every orphan of every shell command
//! it runs, with no one to reap them): see docs/decisions.md §MCP process trees.
//!
//! A pid is signalled only if it still has the start time it had when it was found, so a pid
//! reused meanwhile by another process is left alone.

/// The variable that marks a server's processes.
pub const TAG_VAR: &str = "SEEDPOD_MCP_TAG";

/// A tag for one start of one server (unique, not secret: the server sees it).
pub fn new_tag() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// One process, as found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub pid: i32,
    /// Its start time (clock ticks after boot): a pid reused later has another.
    start: u64,
}

/// The processes (not this one) that carry `tag`, or descend from `root`.
pub fn find(root: Option<u32>, tag: &str) -> Vec<Found> {
    imp::find(root, tag)
}

/// Send `signal` to each of `found` that is still the process that was found.
pub fn signal(found: &[Found], signal: i32) {
    for process in found {
        if imp::start_time(process.pid) == Some(process.start) {
            // SAFETY: kill only sends a signal, to a pid just checked to be the process found
            // (same start time), one of the server's own.
            unsafe {
                libc::kill(process.pid, signal);
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Found, TAG_VAR};

    /// `/proc/PID/stat`'s parent pid and start time.
    fn stat(pid: i32) -> Option<(i32, u64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses and may hold anything: count from the last `)`.
        let rest = &text[text.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ppid = fields.get(1)?.parse().ok()?;
        let start = fields.get(19)?.parse().ok()?;
        Some((ppid, start))
    }

    pub fn start_time(pid: i32) -> Option<u64> {
        stat(pid).map(|(_, start)| start)
    }

    fn carries(pid: i32, marker: &[u8]) -> bool {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|environ| environ.split(|b| *b == 0).any(|entry| entry == marker))
    }

    pub fn find(root: Option<u32>, tag: &str) -> Vec<Found> {
        let marker = format!("{TAG_VAR}={tag}").into_bytes();
        let me = std::process::id() as i32;
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut all: Vec<(i32, i32, u64)> = Vec::new();
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            if let Some((ppid, start)) = stat(pid) {
                all.push((pid, ppid, start));
            }
        }
        let mut found: Vec<Found> = Vec::new();
        // Descendants of the root, generation by generation.
        if let Some(root) = root.and_then(|r| i32::try_from(r).ok()) {
            let mut parents = vec![root];
            while let Some(parent) = parents.pop() {
                for &(pid, ppid, start) in &all {
                    if ppid == parent && !found.iter().any(|f| f.pid == pid) {
                        found.push(Found { pid, start });
                        parents.push(pid);
                    }
                }
            }
        }
        for &(pid, _, start) in &all {
            if !found.iter().any(|f| f.pid == pid) && carries(pid, &marker) {
                found.push(Found { pid, start });
            }
        }
        found
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Found;

    /// Without `/proc`, only the process group is signalled.
    pub fn find(_root: Option<u32>, _tag: &str) -> Vec<Found> {
        Vec::new()
    }

    pub fn start_time(_pid: i32) -> Option<u64> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_process_that_left_its_session_is_found_and_ended() {
        let tag = new_tag();
        // `setsid` puts it in a session (and group) of its own, as an escaping server child.
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "1000"])
            .env(TAG_VAR, &tag)
            .spawn()
            .expect("setsid (util-linux) to start sleep");
        let pid = child.id() as i32;
        // `spawn` returns once `setsid` has exec'd `sleep` (same pid) with its environment.
        let found = find(None, &tag);
        assert!(found.iter().any(|f| f.pid == pid), "{found:?}");
        assert!(find(None, &new_tag()).is_empty());
        signal(&found, libc::SIGKILL);
        let status = child.wait().unwrap();
        assert!(!status.success());
    }

    #[test]
    fn a_process_found_is_not_signalled_once_its_pid_means_another() {
        let me = Found {
            pid: std::process::id() as i32,
            start: u64::MAX,
        };
        // A start time that is not this process's: nothing is sent (or this test would die).
        signal(&[me], libc::SIGKILL);
    }
}
