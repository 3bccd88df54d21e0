//! The commands that ask a pod on this machine one thing and exit — `notify`, `pause`,
//! `resume`, `cancel` — on a blocking socket, without an async runtime: their whole life is a
//! few milliseconds, and a script may run them in a loop (docs/decisions.md, "One-shot commands
//! skip the async runtime").
//!
//! The front binary recognises such a command line itself (`recognise`) so that it never loads
//! the core for one; the core runs the same `run` for the ones it parses. A command line that
//! `recognise` is not sure of is left to the core's full parser, which is always correct, only
//! slower to start: so `recognise` may decline anything, but what it accepts must mean exactly
//! what the core's parser makes of it (`args.rs` tests both on the same lines).

use std::ffi::OsString;
use std::fmt::Display;

use anyhow::Result;
use seedpod_client::{ClientError, Home, Target};
use seedpod_protocol::{AckOutcome, Method, PodName, ServerMsg};

use crate::exit::Exit;
use crate::local::{CLIENT_NAME, resolve_existing, stopped, text_or_stdin};

/// A one-shot command for a pod on this machine: `name`, or the current directory's pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quick {
    pub name: Option<PodName>,
    pub ask: Ask,
}

/// What a one-shot command asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// `text` is the message; `None` or `-` reads standard input.
    Notify {
        text: Option<String>,
        wake: bool,
    },
    Pause,
    Resume,
    Cancel,
}

/// The one-shot command `args` (the command line after the program's name) is, when it is
/// surely one: only the plain shapes `VERB [NAME]` and `notify [NAME] [TEXT]` with
/// `--no-wake` anywhere, every argument valid UTF-8 and the name one of this machine's pods.
/// Anything else — another flag, `--`, a `HOST:NAME`, a name that is not valid, too many
/// arguments — is `None`, for the core to parse and report.
pub fn recognise(args: &[OsString]) -> Option<Quick> {
    let (verb, rest) = args.split_first()?;
    let simple = match verb.to_str()? {
        "notify" => None,
        "pause" => Some(Ask::Pause),
        "resume" => Some(Ask::Resume),
        "cancel" => Some(Ask::Cancel),
        _ => return None,
    };
    let notify = simple.is_none();
    let mut no_wake = false;
    let mut positional = Vec::with_capacity(2);
    for arg in rest {
        let arg = arg.to_str()?;
        if notify && arg == "--no-wake" && !no_wake {
            no_wake = true;
        } else if arg.starts_with('-') && arg != "-" {
            // A flag of some kind: `--help`, `--`, a repeated `--no-wake`, a text that starts
            // with a dash (which the core's parser refuses as an unknown flag).
            return None;
        } else {
            positional.push(arg);
        }
    }
    let mut positional = positional.into_iter();
    let name = match positional.next() {
        Some(text) => match text.parse::<Target>().ok()? {
            Target::Local(name) => Some(name),
            Target::Remote { .. } => return None,
        },
        None => None,
    };
    let ask = match simple {
        Some(ask) => ask,
        None => Ask::Notify {
            text: positional.next().map(str::to_owned),
            wake: !no_wake,
        },
    };
    match positional.next() {
        Some(_) => None,
        None => Some(Quick { name, ask }),
    }
}

/// Run `quick`: resolve the pod, read standard input when the text is to come from there, ask,
/// and say on stderr what the pod answered.
pub fn run(home: &Home, quick: Quick) -> Result<()> {
    let name = resolve_existing(home, quick.name.as_ref())?;
    let method = match quick.ask {
        Ask::Notify { text, wake } => {
            let message = text_or_stdin(text)?;
            let reply = seedpod_client::blocking::call_once(
                home,
                &name,
                CLIENT_NAME,
                Method::Notify { message, wake },
            )
            .map_err(stopped)?;
            return notified(&name, reply);
        }
        Ask::Pause => Method::Pause,
        Ask::Resume => Method::Resume,
        Ask::Cancel => Method::Cancel,
    };
    let verb = method.name();
    match seedpod_client::blocking::call_once(home, &name, CLIENT_NAME, method) {
        Err(err @ ClientError::NotRunning { .. }) => Err(stopped(err)),
        result => simple_done(verb, result),
    }
}

/// The answer to `notify` from `pod` (a name, or `HOST:NAME` for one on another machine).
pub fn notified(pod: &dyn Display, reply: ServerMsg) -> Result<()> {
    match reply {
        ServerMsg::Ack { outcome, .. } => {
            let what = match outcome {
                AckOutcome::Queued => {
                    "queued (durable); it reaches the model before the next request"
                }
                AckOutcome::Started | AckOutcome::Done | AckOutcome::Unknown => "delivered",
            };
            say(&format!("notified {pod}: {what}\n"));
            Ok(())
        }
        other => Err(Exit::failure(format!(
            "unexpected answer: {}",
            seedpod_protocol::encode(&other)
        ))),
    }
}

/// The answer to `pause`, `resume` or `cancel` (`verb`).
pub fn simple_done(verb: &str, result: Result<ServerMsg, ClientError>) -> Result<()> {
    match result {
        Ok(_) => {
            say(&format!("{verb}: ok\n"));
            Ok(())
        }
        Err(ClientError::Refused { message, .. }) => {
            Err(Exit::failure(format!("{verb} refused: {message}")))
        }
        Err(err) => Err(err.into()),
    }
}

/// The confirmation line on stderr: one write, not one per formatted piece (stderr is
/// unbuffered), and a closed stderr is no reason to fail a request the pod has already done.
pub fn say(line: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &[&str]) -> Vec<OsString> {
        line.iter().map(OsString::from).collect()
    }

    fn name(text: &str) -> Option<PodName> {
        Some(PodName::new(text.to_string()).unwrap())
    }

    #[test]
    fn the_plain_shapes_are_recognised() {
        assert_eq!(
            recognise(&args(&["notify", "p", "build done"])),
            Some(Quick {
                name: name("p"),
                ask: Ask::Notify {
                    text: Some("build done".into()),
                    wake: true
                }
            })
        );
        assert_eq!(
            recognise(&args(&["notify", "--no-wake", "p", "-"])),
            Some(Quick {
                name: name("p"),
                ask: Ask::Notify {
                    text: Some("-".into()),
                    wake: false
                }
            })
        );
        assert_eq!(
            recognise(&args(&["notify"])),
            Some(Quick {
                name: None,
                ask: Ask::Notify {
                    text: None,
                    wake: true
                }
            })
        );
        assert_eq!(
            recognise(&args(&["cancel", "p"])),
            Some(Quick {
                name: name("p"),
                ask: Ask::Cancel
            })
        );
        assert_eq!(
            recognise(&args(&["pause"])),
            Some(Quick {
                name: None,
                ask: Ask::Pause
            })
        );
    }

    #[test]
    fn anything_unsure_is_left_to_the_core() {
        for line in [
            &["notify", "p", "x", "extra"][..],
            &["notify", "--help"],
            &["notify", "p", "--", "--no-wake"],
            &["notify", "--no-wake", "--no-wake", "p"],
            &["notify", "p", "-x marks the spot"],
            &["notify", "--no-wake=true", "p"],
            &["notify", "host:p", "hi"],
            &["notify", "host:", "hi"],
            &["notify", "no/slashes", "hi"],
            &["notify", "", "hi"],
            &["pause", "p", "q"],
            &["pause", "--no-wake", "p"],
            &["resume", "-h"],
            &["stop", "p"],
            &["Notify", "p", "hi"],
            &[],
        ] {
            assert_eq!(recognise(&args(line)), None, "{line:?}");
        }
        use std::os::unix::ffi::OsStringExt;
        let not_utf8 = OsString::from_vec(vec![b'p', 0xff]);
        assert_eq!(
            recognise(&[OsString::from("notify"), OsString::from("p"), not_utf8]),
            None
        );
    }
}
