//! The one-shot commands (`notify`, `pause`, `resume`, `cancel`) for a pod on this machine, as
//! the core's parser gives them: they run on the library's blocking path (`quick.rs`), the one
//! the front binary takes, so both say the same. The front leaves a command line here when it
//! is not sure of it (`quick::recognise`). A pod on another machine is reached through ssh,
//! which the async client drives.

use anyhow::Result;
use seedpod_cli::quick::{self, Ask, Quick};
use seedpod_client::{Home, Target};

use crate::args::Command;

/// Run `command` here if it is one of these for a pod on this machine; otherwise give it back
/// for the async runtime. Any command not listed goes there, which is always correct, only
/// slower to start.
pub fn run(home: &Home, command: Command) -> Result<Result<()>, Box<Command>> {
    match local(command) {
        Ok(quick) => Ok(quick::run(home, quick)),
        Err(command) => Err(command),
    }
}

/// `command` as a one-shot request to a pod on this machine, when it is one.
pub fn local(command: Command) -> Result<Quick, Box<Command>> {
    let target = match &command {
        Command::Notify { name, .. }
        | Command::Pause { name }
        | Command::Resume { name }
        | Command::Cancel { name } => name,
        _ => return Err(Box::new(command)),
    };
    let name = match target {
        None => None,
        Some(Target::Local(name)) => Some(name.clone()),
        Some(Target::Remote { .. }) => return Err(Box::new(command)),
    };
    let ask = match command {
        Command::Notify { text, no_wake, .. } => Ask::Notify {
            text,
            wake: !no_wake,
        },
        Command::Pause { .. } => Ask::Pause,
        Command::Resume { .. } => Ask::Resume,
        Command::Cancel { .. } => Ask::Cancel,
        command => return Err(Box::new(command)),
    };
    Ok(Quick { name, ask })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use clap::Parser;
    use seedpod_cli::quick::recognise;

    use super::*;
    use crate::args::Cli;

    /// What the front takes as a one-shot must be what this parser makes of the same line; a
    /// line it declines may be anything.
    #[test]
    fn what_the_front_recognises_is_what_the_parser_parses() {
        let lines: &[&[&str]] = &[
            &["notify", "p", "hi"],
            &["notify", "p", "hi", "--no-wake"],
            &["notify", "--no-wake", "p", "hi"],
            &["notify", "p", "--no-wake", "hi"],
            &["notify", "p", "-"],
            &["notify", "p", ""],
            &["notify", "p"],
            &["notify"],
            &["notify", "--no-wake"],
            &["notify", "p", "text with spaces and: a colon"],
            &["notify", "p", "host:looking"],
            &["pause"],
            &["pause", "p"],
            &["resume", "p"],
            &["cancel", "p"],
            &["cancel", "p-2_x.y"],
            &["notify", "p", "x", "y"],
            &["notify", "h:p", "x"],
            &["pause", "-"],
            &["notify", "-", "x"],
        ];
        let mut recognised = 0;
        for line in lines {
            let args: Vec<OsString> = line.iter().map(OsString::from).collect();
            let Some(quick) = recognise(&args) else {
                continue;
            };
            recognised += 1;
            let cli = Cli::try_parse_from(std::iter::once("seedpod").chain(line.iter().copied()))
                .unwrap_or_else(|e| panic!("{line:?}: the front runs it, the parser says {e}"));
            let command = cli.command.expect("a command");
            match local(command) {
                Ok(parsed) => assert_eq!(parsed, quick, "{line:?}"),
                Err(command) => panic!("{line:?}: the front runs it, the parser made {command:?}"),
            }
        }
        assert_eq!(recognised, 16, "the plain shapes are the front's");
    }
}
