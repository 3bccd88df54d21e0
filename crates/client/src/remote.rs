//! Pods on other machines: `HOST:NAME`. The link is `ssh HOST seedpod bridge NAME` — ssh
//! brings authentication and encryption, the bridge relays the pod protocol frame for frame —
//! so a remote `Connection` is an ordinary one over the ssh process's stdout and stdin, and
//! every client works through it unchanged. Nothing here listens on a port or holds a secret.

use std::fmt;
use std::process::Stdio;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use seedpod_protocol::{ClientMode, NameError, PROTOCOL_VERSION, PodName};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

use crate::connection::Connection;
use crate::error::ClientError;

/// How long ssh gets to connect and the pod to answer the handshake through the bridge.
pub const REMOTE_HANDSHAKE: Duration = Duration::from_secs(20);
/// What of ssh's stderr is kept to explain a failure.
const STDERR_KEPT: usize = 4 * 1024;

/// Where a command goes: a pod here, or one on another machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Local(PodName),
    /// `HOST:NAME`; `HOST:` (no name) for `ls HOST:`.
    Remote {
        host: String,
        name: Option<PodName>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("{0}")]
    Name(#[from] NameError),
    #[error("host {host:?} {reason}")]
    Host { host: String, reason: String },
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Target, TargetError> {
        let Some((host, name)) = text.split_once(':') else {
            return Ok(Target::Local(PodName::new(text.to_owned())?));
        };
        if let Some(reason) = host_problem(host) {
            return Err(TargetError::Host {
                host: host.to_owned(),
                reason,
            });
        }
        let name = if name.is_empty() {
            None
        } else {
            Some(PodName::new(name.to_owned())?)
        };
        Ok(Target::Remote {
            host: host.to_owned(),
            name,
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Local(name) => write!(f, "{name}"),
            Target::Remote { host, name } => match name {
                Some(name) => write!(f, "{host}:{name}"),
                None => write!(f, "{host}:"),
            },
        }
    }
}

/// Why `host` cannot be given to ssh, if it cannot: it is an argument, so it must not look like
/// an option. The configuration checks `[remote.hosts]` by the same rule
/// (`seedpod_config::remote::host_problem`; this crate does not read configuration).
fn host_problem(host: &str) -> Option<String> {
    if host.is_empty() {
        return Some("is empty: write HOST:NAME".into());
    }
    if host.starts_with('-') {
        return Some("starts with `-`, which ssh would take for an option".into());
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("contains white space".into());
    }
    None
}

/// One machine, as `[remote]` says to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The name in `HOST:NAME`.
    pub alias: String,
    /// What ssh is given.
    pub destination: String,
    /// The ssh command and its options.
    pub ssh: Vec<String>,
    /// seedpod on that machine.
    pub bin: String,
}

/// ssh's process and what it said on stderr: kept with a remote connection, killed with it.
struct SshProcess {
    _child: Child,
}

impl Remote {
    /// `ssh [options] [-o BatchMode=yes] DESTINATION 'BIN' 'ARG'...`: the remote side gets one
    /// command line, each word quoted for its shell. `batch` (every command but `attach`)
    /// makes a missing key fail at once instead of asking for a password.
    pub fn command(&self, args: &[&str], batch: bool) -> Command {
        let (program, options) = match self.ssh.split_first() {
            Some((program, options)) => (program.as_str(), options),
            None => ("ssh", &[][..]),
        };
        let mut cmd = Command::new(program);
        cmd.args(options);
        if batch {
            cmd.args(["-o", "BatchMode=yes"]);
        }
        let line: Vec<String> = std::iter::once(self.bin.as_str())
            .chain(args.iter().copied())
            .map(seedpod_protocol::quote_word)
            .collect();
        cmd.arg(&self.destination).arg(line.join(" "));
        cmd.kill_on_drop(true);
        cmd
    }

    /// Connect to pod `name` there through `seedpod bridge`; `start` restores it first when
    /// it is stopped.
    pub async fn connect(
        &self,
        name: &PodName,
        client: &str,
        mode: ClientMode,
        start: bool,
        batch: bool,
    ) -> Result<Connection, ClientError> {
        let mut args = vec!["bridge", name.as_str()];
        if start {
            args.push("--start");
        }
        let cannot = |what: &str, err: std::io::Error| ClientError::Remote {
            host: self.alias.clone(),
            message: format!("cannot {what} `{}`: {err}", self.ssh.join(" ")),
        };
        // ssh reads from one end of a socket pair rather than a pipe: a write to an ssh that
        // died is then an error we can report (sent with MSG_NOSIGNAL), not a SIGPIPE that
        // kills the client before it can say what happened.
        let (ours, theirs) =
            std::os::unix::net::UnixStream::pair().map_err(|e| cannot("connect to", e))?;
        let mut cmd = self.command(&args, batch);
        cmd.stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| cannot("run", e))?;
        let stdin = ours
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(ours))
            .map_err(|e| cannot("connect to", e))?;
        let Some(stdout) = child.stdout.take() else {
            return Err(ClientError::Remote {
                host: self.alias.clone(),
                message: "ssh's stdout could not be opened".into(),
            });
        };
        let said = Arc::new(Mutex::new(String::new()));
        let stderr_done = child
            .stderr
            .take()
            .map(|stderr| tokio::spawn(keep_stderr(stderr, said.clone())));
        let greeted = Connection::over(
            Box::new(stdout),
            Box::new(NoSigPipe(stdin)),
            None,
            name,
            REMOTE_HANDSHAKE,
            client,
            mode,
        )
        .await;
        match greeted {
            Ok(mut conn) => {
                conn.keep(Box::new(SshProcess { _child: child }));
                Ok(conn)
            }
            Err(ClientError::Incompatible { supported, .. }) => {
                let theirs = self.version().await;
                Err(ClientError::Incompatible {
                    supported,
                    reason: skew(&self.alias, name, supported, theirs.as_deref()),
                })
            }
            Err(err) => {
                // ssh (or the bridge) said why on stderr before it went: read it to its end
                // (within a moment) before quoting it.
                let status = tokio::time::timeout(Duration::from_secs(2), child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
                if let Some(done) = stderr_done {
                    let _ = tokio::time::timeout(Duration::from_secs(2), done).await;
                }
                let said = said.lock().map(|s| s.trim().to_owned()).unwrap_or_default();
                let message = match (said.is_empty(), status) {
                    (false, _) => said,
                    (true, Some(status)) => format!("ssh exited ({status}) during the handshake"),
                    (true, None) => err.to_string(),
                };
                Err(ClientError::Remote {
                    host: self.alias.clone(),
                    message,
                })
            }
        }
    }

    /// Run `BIN ARGS...` there and collect what it printed, within `limit`.
    pub async fn run(
        &self,
        args: &[&str],
        limit: Duration,
    ) -> Result<std::process::Output, ClientError> {
        let mut cmd = self.command(args, true);
        cmd.stdin(Stdio::null());
        let out = tokio::time::timeout(limit, cmd.output())
            .await
            .map_err(|_| ClientError::Remote {
                host: self.alias.clone(),
                message: format!("no answer within {}s", limit.as_secs()),
            })?
            .map_err(|err| ClientError::Remote {
                host: self.alias.clone(),
                message: format!("cannot run `{}`: {err}", self.ssh.join(" ")),
            })?;
        Ok(out)
    }

    /// seedpod's version there, for a version-skew message.
    async fn version(&self) -> Option<String> {
        let out = self
            .run(&["--version"], Duration::from_secs(10))
            .await
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (out.status.success() && !text.is_empty()).then_some(text)
    }
}

/// Which side to upgrade, with both versions.
fn skew(host: &str, name: &PodName, supported: u32, theirs: Option<&str>) -> String {
    let ours = format!(
        "seedpod {} (protocol {PROTOCOL_VERSION})",
        env!("CARGO_PKG_VERSION")
    );
    let theirs = match theirs {
        Some(version) => format!("{version} (protocol {supported})"),
        None => format!("protocol {supported}"),
    };
    if supported < PROTOCOL_VERSION {
        format!(
            "pod {name} on {host} runs {theirs}, older than this machine's {ours}: upgrade \
             seedpod on {host}, then `seedpod restart {host}:{name}` (it restores exactly from \
             its log)"
        )
    } else {
        format!(
            "pod {name} on {host} runs {theirs}, newer than this machine's {ours}: upgrade \
             seedpod here"
        )
    }
}

/// The write end of the link: `send(2)` with `MSG_NOSIGNAL`, so a peer that is gone is
/// `EPIPE` for us to report rather than a signal that kills the process.
struct NoSigPipe(tokio::net::UnixStream);

impl tokio::io::AsyncWrite for NoSigPipe {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::os::fd::AsRawFd;
        use std::task::Poll;
        let stream = &self.0;
        loop {
            match stream.poll_write_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => return Poll::Pending,
            }
            let sent = stream.try_io(tokio::io::Interest::WRITABLE, || {
                // SAFETY: `buf` is a live slice of `buf.len()` bytes and the descriptor is
                // this stream's own open socket.
                let n = unsafe {
                    libc::send(
                        stream.as_raw_fd(),
                        buf.as_ptr().cast(),
                        buf.len(),
                        libc::MSG_NOSIGNAL,
                    )
                };
                usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
            });
            match sent {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

async fn keep_stderr(mut stderr: tokio::process::ChildStderr, said: Arc<Mutex<String>>) {
    let mut buf = [0u8; 1024];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Ok(mut said) = said.lock() {
                    said.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if said.len() > STDERR_KEPT {
                        let mut cut = said.len() - STDERR_KEPT;
                        while !said.is_char_boundary(cut) {
                            cut += 1;
                        }
                        said.drain(..cut);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_local_names_or_host_colon_name() {
        assert_eq!(
            "p".parse::<Target>().unwrap(),
            Target::Local("p".parse().unwrap())
        );
        assert_eq!(
            "me@gpu:p".parse::<Target>().unwrap(),
            Target::Remote {
                host: "me@gpu".into(),
                name: Some("p".parse().unwrap())
            }
        );
        assert_eq!(
            "gpu:".parse::<Target>().unwrap(),
            Target::Remote {
                host: "gpu".into(),
                name: None
            }
        );
        for bad in [":p", "-oProxyCommand=sh:p", "a b:p", "gpu:bad/name"] {
            assert!(bad.parse::<Target>().is_err(), "{bad}");
        }
        assert_eq!("gpu:p".parse::<Target>().unwrap().to_string(), "gpu:p");
    }

    #[test]
    fn the_remote_command_line_is_quoted_word_by_word() {
        assert_eq!(seedpod_protocol::quote_word("bridge"), "bridge");
        assert_eq!(
            seedpod_protocol::quote_word("it's; rm -rf ~"),
            "'it'\\''s; rm -rf ~'"
        );
        assert_eq!(seedpod_protocol::quote_word(""), "''");
        let remote = Remote {
            alias: "gpu".into(),
            destination: "me@gpu".into(),
            ssh: vec!["ssh".into(), "-p".into(), "2222".into()],
            bin: "/opt/seed pod".into(),
        };
        let cmd = remote.command(&["send", "p", "$(reboot)"], true);
        let args: Vec<String> = cmd
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-p",
                "2222",
                "-o",
                "BatchMode=yes",
                "me@gpu",
                "'/opt/seed pod' send p '$(reboot)'"
            ]
        );
    }

    #[test]
    fn version_skew_names_the_side_to_upgrade_and_both_versions() {
        let name: PodName = "p".parse().unwrap();
        let old = skew("gpu", &name, PROTOCOL_VERSION - 1, Some("seedpod 0.0.1"));
        assert!(old.contains("upgrade seedpod on gpu"), "{old}");
        assert!(old.contains("seedpod 0.0.1") && old.contains(env!("CARGO_PKG_VERSION")));
        let new = skew("gpu", &name, PROTOCOL_VERSION + 1, None);
        assert!(new.contains("upgrade seedpod here"), "{new}");
    }
}
