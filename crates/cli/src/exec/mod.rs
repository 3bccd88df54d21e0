//! `seedpod exec TASK`: a throwaway pod for scripts and CI. It starts a new pod, gives it the
//! task, prints the answer as the log keeps it (or `--json` events), answers approval requests
//! only as its flags say, and exits with the run's outcome; the pod is then stopped and deleted
//! unless `--keep`. Ctrl-C, SIGTERM and SIGHUP stop the run and remove the pod the same way.
//! `docs/exec.md` is the user's reference (flags, exit codes, the event schema).
//!
//! `event.rs` holds the outcomes and the `--json` schema, `policy.rs` what the flags approve,
//! `follow.rs` the run as it happens; this file the pod's life around it.

mod event;
mod follow;
mod policy;

use std::io::Write as _;

use anyhow::{Context as _, Result};
use clap::Args;
use seedpod_client::Home;
use seedpod_protocol::{ClientMode, Method, PodName};
use tokio::signal::unix::{SignalKind, signal};

use self::event::{ExecEvent, Outcome};
use self::follow::{Ended, Printer};
pub use self::policy::ApproveLevel;
use self::policy::ExecPolicy;
use crate::args::PodConfigArgs;
use crate::exit::Exit;
use crate::lease::Lease;
use crate::pods;
use crate::start::ExecLease;

/// A new exec pod is named after the exec process: `exec-<pid>`.
const NAME_PREFIX: &str = "exec-";

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The task, as typed input (`@FILE` attaches a file); `-` reads it from standard input.
    pub task: String,
    /// One JSON event per line on stdout instead of the answer's text (see docs/exec.md).
    #[arg(long)]
    pub json: bool,
    /// Tool calls the configuration says to ask about that this run approves: `none` (a call
    /// that asks ends the run, exit 3), `read-only` (the built-in tools that only read) or
    /// `all`.
    #[arg(long, value_enum, default_value_t = ApproveLevel::None)]
    pub approve: ApproveLevel,
    /// Also approve calls of this tool (repeatable), e.g. `--allow shell`.
    #[arg(long, value_name = "TOOL")]
    pub allow: Vec<String>,
    /// Keep the pod when the run is over (its name is printed on stderr) for `seedpod history`,
    /// `attach` or another `send`.
    #[arg(long)]
    pub keep: bool,
    /// The pod's name (default: exec-<pid>); it must not exist yet.
    #[arg(long)]
    pub name: Option<PodName>,
    #[command(flatten)]
    pub config: PodConfigArgs,
}

pub async fn exec(home: &Home, args: ExecArgs) -> Result<()> {
    let task = pods::text_or_stdin(Some(args.task.clone()))?;
    if task.trim().is_empty() {
        return Err(Exit::usage(
            "the task is empty: give it as an argument, or `-` and text on standard input",
        ));
    }
    let policy = ExecPolicy::new(args.approve, &args.allow)?;
    let cwd = pods::canonical_cwd(args.config.cwd.as_deref())?;
    let name = match args.name.clone() {
        Some(name) => name,
        None => PodName::new(format!("{NAME_PREFIX}{}", std::process::id()))
            .map_err(|e| Exit::failure(format!("cannot name the exec pod: {e}")))?,
    };
    if home.pod_dir(&name).join("pod.json").exists() {
        return Err(Exit::usage(format!(
            "a pod named \"{name}\" exists; exec runs a new pod: choose another --name, or \
             `seedpod send {name}` to give that pod a task"
        )));
    }
    let print = Printer { json: args.json };
    // From here a signal must end in the pod's removal, so they are ours before it starts.
    let mut stop = Stop::watch()?;
    // A signal we cannot catch (kill -9) ends the pod through the lease (`lease.rs`).
    let mut lease = Lease::new().context("cannot make the pipe that ties the pod to exec")?;
    let pod_lease = lease.pod_fd().map(|fd| ExecLease {
        fd,
        keep: args.keep,
    });
    let started = tokio::select! {
        started = crate::start::start_leased(home, &name, &cwd, &args.config, pod_lease) => started,
        signal = stop.recv() => Err(Exit::failure(format!("{signal} while the pod started"))),
    };
    lease.launched();
    let ended = match started {
        Ok(()) => {
            crate::mcp_report::report_failed(home, &name).await;
            print.event(&ExecEvent::Started {
                pod: name.as_str(),
                cwd: &cwd.to_string_lossy(),
            });
            tokio::select! {
                ended = follow(home, &name, &task, &policy, print) => ended,
                signal = stop.recv() => Ended {
                    outcome: Outcome::Interrupted,
                    message: Some(format!("{signal}: the run was stopped")),
                },
            }
        }
        Err(err) => Ended {
            outcome: Outcome::Failed,
            message: Some(format!("{err:#}")),
        },
    };
    let kept = args.keep && home.pod_dir(&name).join("pod.json").exists();
    if kept {
        if let Err(err) = lease.release() {
            let _ = writeln!(
                std::io::stderr(),
                "seedpod: the kept pod {name} may stop when exec exits: {err}"
            );
        }
        if ended.outcome == Outcome::Interrupted {
            // Kept means inspectable, not still working on a run nobody follows.
            if let Ok(mut conn) = pods::connect(home, &name, ClientMode::Control).await {
                let _ = conn.call(Method::Cancel).await;
            }
        }
        let _ = writeln!(
            std::io::stderr(),
            "kept pod {name}: `seedpod history {name}` shows the run, `seedpod attach {name}` \
             continues it, `seedpod stop {name}` ends it"
        );
    } else if let Err(err) = remove(home, &name).await {
        let _ = writeln!(std::io::stderr(), "seedpod: {err:#}");
    }
    print.event(&ExecEvent::End {
        status: ended.outcome,
        exit_code: ended.outcome.exit_code(),
        message: ended.message.as_deref(),
        pod: name.as_str(),
        kept,
    });
    match (ended.outcome, ended.message) {
        (Outcome::Completed, _) => Ok(()),
        (outcome, message) => Err(anyhow::Error::new(Exit {
            code: outcome.exit_code(),
            message: message.unwrap_or_default(),
        })),
    }
}

/// Connect to the new pod and follow the task's run.
async fn follow(
    home: &Home,
    name: &PodName,
    task: &str,
    policy: &ExecPolicy,
    print: Printer,
) -> Ended {
    let result = async {
        let mut conn = pods::connect(home, name, ClientMode::Control).await?;
        follow::run(&mut conn, task, policy, print).await
    }
    .await;
    result.unwrap_or_else(|err| Ended {
        outcome: Outcome::Failed,
        message: Some(format!("{err:#}")),
    })
}

/// Stop the exec pod and delete it: its directory, log and stderr file.
async fn remove(home: &Home, name: &PodName) -> Result<()> {
    crate::demo::remove(home, name)
        .await
        .with_context(|| format!("the exec pod {name} could not be removed"))
}

/// The signals that end an exec run: Ctrl-C, `kill`, a closed terminal.
struct Stop {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Stop {
    fn watch() -> Result<Stop> {
        let watch = |kind: SignalKind, what: &str| {
            signal(kind).with_context(|| format!("cannot watch {what}"))
        };
        Ok(Stop {
            interrupt: watch(SignalKind::interrupt(), "SIGINT")?,
            terminate: watch(SignalKind::terminate(), "SIGTERM")?,
            hangup: watch(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next signal, named for the person.
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "interrupted (Ctrl-C)",
            _ = self.terminate.recv() => "terminated (SIGTERM)",
            _ = self.hangup.recv() => "the terminal closed (SIGHUP)",
        }
    }
}
