//! Running one hook command: `sh -c COMMAND` in the pod's directory, in a process group of its
//! own, the event's JSON on stdin, stdout and stderr read up to a cap, and the whole group
//! killed when the hook exits, when its time is up, or when whoever waits for it goes away
//! (docs/hooks.md, "Running").
//!
//! The event reaches the hook only on stdin: nothing of it is ever joined into the command
//! line, so a tool argument such as `$(rm -rf ~)` is data to the hook, never shell syntax.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

/// The most a hook's stdout (and, apart, its stderr) is read; past it the pipe is closed and
/// the hook is reported, so a hook printing without end costs the pod this much memory at most.
pub const MAX_HOOK_OUTPUT_BYTES: usize = 64 * 1024;

/// How a hook run ended.
#[derive(Debug)]
pub enum Ran {
    /// It exited (or was ended by a signal) within its time.
    Exited {
        status: ExitStatus,
        stdout: String,
        stderr: String,
        /// It printed more than `MAX_HOOK_OUTPUT_BYTES` on stdout.
        stdout_cut: bool,
    },
    /// Its time ran out; its process group was killed.
    TimedOut,
    /// It could not be started at all.
    NotStarted(String),
}

/// Kills the hook's process group when dropped: on every way out of `run`, including the
/// caller dropping the future (a paused run).
struct Group(Option<i32>);

impl Group {
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            // SAFETY: killpg only sends a signal; `group` is the group `process_group(0)` made
            // for this hook, named by its leader's pid, which is ours until we reap it.
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Read `from` into `into` up to the cap; the rest is not read (the pipe is dropped with the
/// reader). Returns whether more was there.
async fn read_capped(from: Option<impl AsyncRead + Unpin>, into: &mut Vec<u8>) -> bool {
    let Some(from) = from else { return false };
    let mut limited = from.take(MAX_HOOK_OUTPUT_BYTES as u64 + 1);
    let _ = limited.read_to_end(into).await;
    if into.len() > MAX_HOOK_OUTPUT_BYTES {
        into.truncate(MAX_HOOK_OUTPUT_BYTES);
        return true;
    }
    false
}

/// Run `command` with `input` on stdin, for at most `timeout`. `env` is added to the pod's
/// environment (the hook is the person's own command, like a git hook).
pub async fn run(
    command: &str,
    cwd: &Path,
    env: &[(&str, &str)],
    input: &[u8],
    timeout: Duration,
) -> Ran {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(command).current_dir(cwd);
    for (name, value) in env {
        cmd.env(name, value);
    }
    run_prepared(cmd, "sh", input, timeout).await
}

/// Run `argv` (a program and its arguments, no shell) as `run` runs a hook: its own process
/// group, output capped, killed with its group when its time is up. For the person's own
/// credential commands (cross-app access's `id_token_command`).
pub async fn run_program(argv: &[String], cwd: &Path, input: &[u8], timeout: Duration) -> Ran {
    let Some((program, args)) = argv.split_first() else {
        return Ran::NotStarted("no program was named".to_owned());
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).current_dir(cwd);
    run_prepared(cmd, program, input, timeout).await
}

async fn run_prepared(
    mut cmd: tokio::process::Command,
    program: &str,
    input: &[u8],
    timeout: Duration,
) -> Ran {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(err) => return Ran::NotStarted(format!("could not start {program}: {err}")),
    };
    let mut group = Group(child.id().and_then(|id| i32::try_from(id).ok()));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let work = async {
        // A hook that does not read its stdin (or exits first) closes the pipe: not an error.
        let feed = async {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(input).await;
                let _ = stdin.shutdown().await;
            }
        };
        // The group is killed as soon as the hook itself exits: whatever it left running in
        // the background would otherwise hold the pipes open (and outlive it).
        let wait = async {
            let status = child.wait().await;
            group.kill();
            status
        };
        let ((), status, cut, _) = tokio::join!(
            feed,
            wait,
            read_capped(stdout, &mut out),
            read_capped(stderr, &mut err)
        );
        (status, cut)
    };
    match tokio::time::timeout(timeout, work).await {
        Err(_) => {
            group.kill();
            Ran::TimedOut
        }
        Ok((Err(err), _)) => Ran::NotStarted(format!("could not wait for it: {err}")),
        Ok((Ok(status), stdout_cut)) => Ran::Exited {
            status,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
            stdout_cut,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        std::env::temp_dir()
    }

    #[tokio::test]
    async fn the_event_arrives_on_stdin_and_stdout_comes_back() {
        let ran = run("cat", &dir(), &[], b"{\"a\":1}", Duration::from_secs(20)).await;
        match ran {
            Ran::Exited { status, stdout, .. } => {
                assert!(status.success());
                assert_eq!(stdout, "{\"a\":1}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn endless_output_is_cut_at_the_cap() {
        let ran = run("yes", &dir(), &[], b"", Duration::from_secs(20)).await;
        match ran {
            Ran::Exited {
                stdout, stdout_cut, ..
            } => {
                assert!(stdout_cut);
                assert_eq!(stdout.len(), MAX_HOOK_OUTPUT_BYTES);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_hook_past_its_time_is_killed_with_its_group() {
        let marker = tempfile::tempdir().expect("temp dir");
        let pid_file = marker.path().join("pid");
        let command = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
        let ran = run(&command, marker.path(), &[], b"", Duration::from_secs(1)).await;
        assert!(matches!(ran, Ran::TimedOut), "{ran:?}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .expect("the hook wrote its child's pid")
            .trim()
            .parse()
            .expect("a pid");
        assert!(gone(pid).await, "the hook's background sleep outlived it");
    }

    #[tokio::test]
    async fn what_a_hook_leaves_running_ends_when_it_exits() {
        let marker = tempfile::tempdir().expect("temp dir");
        let pid_file = marker.path().join("pid");
        // The background sleep keeps stdout open: without the group kill, the read would wait
        // for it until the timeout.
        let command = format!("sleep 300 & echo $! > {}; exit 0", pid_file.display());
        let ran = run(&command, marker.path(), &[], b"", Duration::from_secs(60)).await;
        assert!(matches!(ran, Ran::Exited { .. }), "{ran:?}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .expect("pid")
            .trim()
            .parse()
            .expect("a pid");
        assert!(gone(pid).await);
    }

    /// Whether `pid` is gone (or a zombie), polling while the kernel delivers the signal.
    async fn gone(pid: i32) -> bool {
        for _ in 0..200 {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
            match status {
                Err(_) => return true,
                Ok(text)
                    if text
                        .lines()
                        .any(|l| l.starts_with("State:") && l.contains('Z')) =>
                {
                    return true;
                }
                Ok(_) => tokio::task::yield_now().await,
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }
}
