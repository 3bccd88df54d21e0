//! `seedpod events NAME --json` as a child process: the event stream exactly as a script sees it.

use std::process::Stdio;

use seedpod_protocol::ServerMsg;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use crate::{EVENT_TIMEOUT, TestHome};

pub struct EventsProcess {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl EventsProcess {
    /// Start `seedpod events NAME --json` (plus `extra` arguments).
    pub fn spawn(sb: &TestHome, name: &str, extra: &[&str]) -> EventsProcess {
        let mut cmd = tokio::process::Command::from(sb.cmd());
        cmd.args(["events", name, "--json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn seedpod events");
        let stdout = child.stdout.take().expect("piped stdout");
        EventsProcess {
            child,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// The next frame it printed.
    pub async fn next(&mut self) -> ServerMsg {
        let line = tokio::time::timeout(EVENT_TIMEOUT, self.lines.next_line())
            .await
            .expect("seedpod events printed nothing in time")
            .expect("read events output")
            .expect("seedpod events exited");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a frame ({e}): {line}"))
    }

    /// Read frames until `pick` matches, collecting all of them into `seen`.
    pub async fn wait_for<T>(
        &mut self,
        seen: &mut Vec<ServerMsg>,
        mut pick: impl FnMut(&ServerMsg) -> Option<T>,
    ) -> T {
        loop {
            let msg = self.next().await;
            let found = pick(&msg);
            seen.push(msg);
            if let Some(found) = found {
                return found;
            }
        }
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
