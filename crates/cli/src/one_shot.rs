//! Commands that ask a pod on this machine one thing and exit — `notify`, `pause`, `resume`,
//! `cancel` — run without an async runtime: their whole life is a few milliseconds, and a
//! script may run them in a loop (docs/decisions.md, "One-shot commands skip the async
//! runtime"). A pod on another machine is reached through ssh, which the async client drives.

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::Method;

use crate::args::Command;
use crate::{control, pods};

/// Run `command` here if it is one of these for a pod on this machine; otherwise give it back
/// for the async runtime. Any command not listed goes there, which is always correct, only
/// slower to start.
pub fn run(home: &Home, command: Command) -> Result<Result<()>, Box<Command>> {
    match command {
        Command::Notify {
            name,
            text,
            no_wake,
        } => match pods::resolve_here(home, name.as_ref()) {
            Some(pod) => Ok(pod.and_then(|pod| {
                let text = pods::text_or_stdin(text)?;
                control::notify_here(home, &pod, text, !no_wake)
            })),
            None => Err(Box::new(Command::Notify {
                name,
                text,
                no_wake,
            })),
        },
        Command::Pause { name } => {
            simple(home, name, Method::Pause, |name| Command::Pause { name })
        }
        Command::Resume { name } => {
            simple(home, name, Method::Resume, |name| Command::Resume { name })
        }
        Command::Cancel { name } => {
            simple(home, name, Method::Cancel, |name| Command::Cancel { name })
        }
        command => Err(Box::new(command)),
    }
}

/// A request without parameters (`control::simple`), or the command given back (`rebuild`) for
/// a pod elsewhere.
fn simple(
    home: &Home,
    name: Option<seedpod_client::Target>,
    method: Method,
    rebuild: impl FnOnce(Option<seedpod_client::Target>) -> Command,
) -> Result<Result<()>, Box<Command>> {
    match pods::resolve_here(home, name.as_ref()) {
        Some(pod) => Ok(pod.and_then(|pod| control::simple_here(home, &pod, method))),
        None => Err(Box::new(rebuild(name))),
    }
}
