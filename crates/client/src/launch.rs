//! Starting a pod process: `seedpod pod serve NAME --ready-line ...`, detached into its own
//! session, and waiting for its `ready` line (an event, not a poll). Used by `seedpod start`
//! and by a parent pod starting a child, so both start pods the same way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use seedpod_protocol::PodName;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::paths::Home;

/// How long a new pod gets to accept connections.
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// What a pod prints on stdout once it accepts connections.
pub const READY_LINE: &str = "ready";

/// What a pod prints on stdout, followed by the reason, when it cannot start. The pipe needs no
/// disk, so the reason arrives even when the pod's log and stderr file cannot be written.
pub const FAILED_PREFIX: &str = "failed: ";

/// What to start.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The `seedpod` binary (a pod starts children with its own executable).
    pub exe: PathBuf,
    pub name: PodName,
    /// Arguments after `pod serve NAME --ready-line`.
    pub args: Vec<OsString>,
    /// The process's working directory.
    pub cwd: PathBuf,
    /// Variables set for the pod beyond the ones it inherits (secrets that must not be in its
    /// argv, such as a base URL's credentials).
    pub env: Vec<(String, String)>,
    /// A descriptor of ours the pod inherits (every other is close-on-exec): the read end of
    /// `seedpod exec`'s lease pipe, passed to the pod as `--exec-lease`.
    pub inherit_fd: Option<std::os::fd::RawFd>,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot prepare {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot spawn the pod process: {0}")]
    Spawn(std::io::Error),
    #[error("pod \"{name}\" exited before it was ready{}", status.as_ref().map(|s| format!(" ({s})")).unwrap_or_default())]
    Exited {
        name: PodName,
        status: Option<String>,
    },
    #[error("pod \"{name}\" did not become ready within {}s", READY_TIMEOUT.as_secs())]
    NotReady { name: PodName },
    /// The pod said why it could not start (on its ready pipe, which needs no disk).
    #[error("pod \"{name}\" could not start: {message}")]
    Failed { name: PodName, message: String },
}

/// Where a pod's stderr goes (panics and anything written before its log is open).
pub fn stderr_path(home: &Home, name: &PodName) -> PathBuf {
    home.logs_dir().join(format!("{name}.stderr"))
}

/// Start the pod process and wait until it accepts connections.
pub async fn launch(home: &Home, launch: &Launch) -> Result<(), LaunchError> {
    let logs = home.logs_dir();
    crate::private::create_dir_all(&logs).map_err(|source| LaunchError::Io {
        path: logs.clone(),
        cause: source,
    })?;
    let stderr_path = stderr_path(home, &launch.name);
    let stderr = crate::private::open_append(&stderr_path).map_err(|source| LaunchError::Io {
        path: stderr_path.clone(),
        cause: source,
    })?;
    let mut cmd = tokio::process::Command::new(&launch.exe);
    cmd.arg("pod")
        .arg("serve")
        .arg(&launch.name)
        .arg("--ready-line")
        .args(&launch.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&launch.cwd);
    detach(&mut cmd, launch.inherit_fd);
    let mut child = cmd.spawn().map_err(LaunchError::Spawn)?;
    let Some(stdout) = child.stdout.take() else {
        return Err(LaunchError::Exited {
            name: launch.name.clone(),
            status: Some("no output pipe".into()),
        });
    };
    let mut lines = BufReader::new(stdout).lines();
    match tokio::time::timeout(READY_TIMEOUT, lines.next_line()).await {
        Ok(Ok(Some(line))) if line.trim() == READY_LINE => {
            // The pod outlives us; its exit status is nobody's business here. Dropping the
            // handle does not kill it (tokio only kills on drop when asked to).
            drop(child);
            Ok(())
        }
        Ok(Ok(Some(line))) if line.starts_with(FAILED_PREFIX) => {
            let _ = child.wait().await;
            Err(LaunchError::Failed {
                name: launch.name.clone(),
                message: line[FAILED_PREFIX.len()..].trim().to_string(),
            })
        }
        Ok(_) => {
            let status = child.wait().await.ok().map(|s| s.to_string());
            Err(LaunchError::Exited {
                name: launch.name.clone(),
                status,
            })
        }
        Err(_) => Err(LaunchError::NotReady {
            name: launch.name.clone(),
        }),
    }
}

/// Put the pod in its own session so closing the terminal (SIGHUP to the session) or Ctrl-C in
/// the shell that started it never reaches it, and a parent pod's exit does not take it along.
/// `inherit` is the one descriptor the pod keeps across exec, if any.
fn detach(cmd: &mut tokio::process::Command, inherit: Option<std::os::fd::RawFd>) {
    // SAFETY: setsid and fcntl are async-signal-safe and touch no memory of the parent; they
    // run in the forked child before exec. Clearing close-on-exec there, and only there, keeps
    // the descriptor from every other process the parent starts.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = inherit
                && libc::fcntl(fd, libc::F_SETFD, 0) == -1
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The last `lines` lines of each of `files` that has any, for a start failure's message.
pub fn log_tail(files: &[&Path], lines: usize) -> String {
    let mut out = String::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let all: Vec<&str> = text.lines().collect();
        if all.is_empty() {
            continue;
        }
        out.push_str(&format!("--- last lines of {} ---\n", path.display()));
        for line in &all[all.len().saturating_sub(lines)..] {
            out.push_str(line);
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push_str("(the pod wrote no log)");
    }
    out
}
