//! A stdio server's process, from the outside: how it ended, its stderr into the pod's log,
//! and stopping it with its whole tree (`tree.rs`).

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use super::tree;

/// How long a stopping server gets after its stdin closes before its group is signalled.
pub(super) const STOP_GRACE: Duration = Duration::from_secs(2);
/// A server's stderr reaches the pod's log up to this much per start, then is drained unread.
const STDERR_BUDGET: usize = 256 * 1024;
const STDERR_LINE_CHARS: usize = 2_000;

/// A stdio server's exit, described; never for an HTTP server.
pub(super) async fn wait_child(child: &mut Option<Child>) -> String {
    match child {
        Some(child) => match child.wait().await {
            Ok(status) => describe_exit(status),
            Err(err) => format!("waiting for it failed: {err}"),
        },
        None => std::future::pending().await,
    }
}

pub(super) fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("it exited with status {code}"),
        (None, Some(signal)) => format!("it was killed by signal {signal}"),
        (None, None) => "it exited".to_owned(),
    }
}

/// SIGTERM to the server's process group and every process of its tree (`tree.rs`), then
/// SIGKILL to what is still there; then whatever carries its tag.
pub(super) async fn stop_group(child: &mut Child, tag: &str) {
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let found = find_tree(child.id(), tag).await;
    if let Some(group) = group {
        signal_group(group, libc::SIGTERM);
    }
    tree::signal(&found, libc::SIGTERM);
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
        && let Some(group) = group
    {
        signal_group(group, libc::SIGKILL);
        let _ = child.wait().await;
    }
    // Whatever the leader started and left behind goes too.
    if let Some(group) = group {
        signal_group(group, libc::SIGKILL);
    }
    tree::signal(&found, libc::SIGKILL);
    // Started since the first look, or re-parented away from the server: the tag finds it.
    let late = find_tree(None, tag).await;
    tree::signal(&late, libc::SIGKILL);
    if !late.is_empty() || !found.is_empty() {
        tracing::info!(
            event = "mcp_tree_stopped",
            processes = found.len() + late.len()
        );
    }
}

async fn find_tree(root: Option<u32>, tag: &str) -> Vec<tree::Found> {
    let tag = tag.to_owned();
    tokio::task::spawn_blocking(move || tree::find(root, &tag))
        .await
        .unwrap_or_default()
}

fn signal_group(group: i32, signal: i32) {
    // SAFETY: killpg only sends a signal; `group` is the process group this pod created for
    // the server (`process_group(0)` makes the child its leader, so its pid names it).
    unsafe {
        libc::killpg(group, signal);
    }
}

/// Copy the server's stderr into the pod's log, a line at a time, up to a budget.
pub(super) async fn log_stderr(server: String, stderr: tokio::process::ChildStderr) {
    let mut lines = BufReader::new(stderr).lines();
    let mut spent = 0usize;
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                if spent > STDERR_BUDGET {
                    continue;
                }
                spent += line.len();
                let line = seedpod_protocol::char_prefix(&line, STDERR_LINE_CHARS).unwrap_or(&line);
                tracing::info!(event = "mcp_stderr", server = %server, line = %line);
                if spent > STDERR_BUDGET {
                    tracing::warn!(event = "mcp_stderr", server = %server, line = "[further stderr of this server is not logged]");
                }
            }
            Ok(None) => break,
            // Not UTF-8, or the pipe broke: what is left is drained unread.
            Err(_) => {
                let mut rest = lines.into_inner();
                let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
                break;
            }
        }
    }
}
