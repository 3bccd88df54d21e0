//! Slash commands typed into the composer (`/help`, `/stop`, ...). The list and its one-line
//! descriptions are `seedpod_protocol::SLASH_COMMANDS`, shared with the pod's completion.
//! `/clear`, `/compact`, `/model` and `/memory` are carried out by the pod (`Method::Command`),
//! `/spawn` asks the pod to start a child (`Method::Spawn`); the rest are the TUI's own.

/// A command the TUI understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    Detach,
    Stop,
    Clear,
    /// `/compact [FOCUS]`: the pod summarises the conversation into a new segment, with what
    /// the summary should keep in mind (empty: nothing in particular).
    Compact(String),
    Pods,
    /// `/model NAME`; `None` when no name was given.
    Model(Option<String>),
    /// `/memory TEXT`; `None` when no text was given.
    Memory(Option<String>),
    /// `/spawn NAME TASK...`; `None` when the name or the task is missing.
    Spawn(Option<Spawn>),
    Resume,
    Cancel,
    /// `/copy [code]`: the focused cell, else the last answer; `code`: its last code block.
    Copy {
        code: bool,
    },
    Mouse,
    /// `/approvals`: list the standing approvals and revoke them.
    Approvals,
    /// `/commit [hint]`: sent as typed; the pod looks at the repository and starts the run.
    Commit,
    /// `/find [TEXT]`: search the transcript (Ctrl-F); `None`: type the text next.
    Find(Option<String>),
    /// `/mcp [SERVER]`: the pod lists its MCP servers (shown in a popup).
    Mcp(String),
    /// `/fork [TURN]`: a new pod with this pod's history up to the end of a turn.
    Fork(Turn),
    /// `/rewind [TURN]`: this pod back to the end of a turn (conversation, files or both).
    Rewind(Turn),
}

/// The turn `/fork` and `/rewind` go back to: the person's messages counted from 1, as the CLI
/// counts them (docs/storage.md §Fork and rewind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// No number: the person picks one from a list.
    Pick,
    At(usize),
    /// Something that is no turn number, kept to say so.
    Invalid(String),
}

impl Turn {
    fn parse(args: &str) -> Turn {
        if args.is_empty() {
            return Turn::Pick;
        }
        match args.parse::<usize>() {
            Ok(number) => Turn::At(number),
            Err(_) => Turn::Invalid(args.to_string()),
        }
    }
}

/// A child pod to start: its name and its first input (the rest of the line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawn {
    pub name: String,
    pub task: String,
}

/// What a line of input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Command(Command),
    /// `/name` that is no command (maybe a workflow the person typed by hand).
    Unknown(String),
    /// Ordinary input.
    Input,
}

/// Parse a submitted input. Only a single-line input starting with `/name` is a command, so a
/// pasted path or a multi-line message starting with a slash is still sent.
pub fn parse(text: &str) -> Parsed {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Parsed::Input;
    };
    if trimmed.contains('\n') {
        return Parsed::Input;
    }
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    if name.is_empty() || name.contains('/') {
        return Parsed::Input;
    }
    let command = match name {
        "help" | "?" => Command::Help,
        "detach" | "quit" | "exit" => Command::Detach,
        "stop" => Command::Stop,
        "clear" => Command::Clear,
        "compact" => Command::Compact(args.to_string()),
        "pods" => Command::Pods,
        "model" => Command::Model((!args.is_empty()).then(|| args.to_string())),
        "memory" => Command::Memory((!args.is_empty()).then(|| args.to_string())),
        "spawn" => Command::Spawn(spawn_args(args)),
        "resume" => Command::Resume,
        "cancel" => Command::Cancel,
        "copy" => Command::Copy {
            code: args.eq_ignore_ascii_case("code"),
        },
        "mouse" => Command::Mouse,
        "approvals" => Command::Approvals,
        "commit" => Command::Commit,
        "find" => Command::Find((!args.is_empty()).then(|| args.to_string())),
        "mcp" => Command::Mcp(args.to_string()),
        "fork" => Command::Fork(Turn::parse(args)),
        "rewind" => Command::Rewind(Turn::parse(args)),
        other => return Parsed::Unknown(other.to_string()),
    };
    Parsed::Command(command)
}

fn spawn_args(args: &str) -> Option<Spawn> {
    let (name, task) = args.split_once(char::is_whitespace)?;
    let task = task.trim();
    (!task.is_empty()).then(|| Spawn {
        name: name.to_string(),
        task: task.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shared_slash_command_is_understood() {
        for (name, _) in seedpod_protocol::SLASH_COMMANDS {
            assert!(
                matches!(parse(&format!("/{name}")), Parsed::Command(_)),
                "/{name}"
            );
        }
    }

    #[test]
    fn spawn_takes_a_name_and_the_rest_of_the_line_as_its_task() {
        assert_eq!(
            parse("/spawn  tests  run the test suite\tand report "),
            Parsed::Command(Command::Spawn(Some(Spawn {
                name: "tests".into(),
                task: "run the test suite\tand report".into(),
            })))
        );
        assert_eq!(parse("/spawn"), Parsed::Command(Command::Spawn(None)));
        assert_eq!(parse("/spawn tests"), Parsed::Command(Command::Spawn(None)));
        assert_eq!(
            parse("/spawn tests   "),
            Parsed::Command(Command::Spawn(None))
        );
    }

    #[test]
    fn arguments_and_non_commands() {
        assert_eq!(
            parse("/model  claude-x "),
            Parsed::Command(Command::Model(Some("claude-x".into())))
        );
        assert_eq!(parse("/model"), Parsed::Command(Command::Model(None)));
        assert_eq!(
            parse("/memory use tabs in Makefiles"),
            Parsed::Command(Command::Memory(Some("use tabs in Makefiles".into())))
        );
        assert_eq!(parse("/memory"), Parsed::Command(Command::Memory(None)));
        assert_eq!(
            parse("/compact"),
            Parsed::Command(Command::Compact(String::new()))
        );
        assert_eq!(
            parse("/compact  the parser work "),
            Parsed::Command(Command::Compact("the parser work".into()))
        );
        assert_eq!(parse("/review now"), Parsed::Unknown("review".into()));
        assert_eq!(parse("/usr/bin is a path"), Parsed::Input);
        assert_eq!(parse("/help\nmore lines"), Parsed::Input);
        assert_eq!(parse("hello /help"), Parsed::Input);
        assert_eq!(parse("/"), Parsed::Input);
    }

    #[test]
    fn fork_and_rewind_take_a_turn_number_or_nothing() {
        assert_eq!(parse("/fork"), Parsed::Command(Command::Fork(Turn::Pick)));
        assert_eq!(
            parse("/fork 3"),
            Parsed::Command(Command::Fork(Turn::At(3)))
        );
        assert_eq!(
            parse("/rewind  0 "),
            Parsed::Command(Command::Rewind(Turn::At(0)))
        );
        for bad in ["-1", "two", "1; rm -rf ~", "99999999999999999999999"] {
            assert_eq!(
                parse(&format!("/rewind {bad}")),
                Parsed::Command(Command::Rewind(Turn::Invalid(bad.into()))),
                "{bad}"
            );
        }
    }
}
