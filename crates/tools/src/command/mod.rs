//! Which `shell` commands a standing approval may cover, and the narrowest rule for one.
//!
//! A standing rule ("always allow `git status`") must mean what it says, so it only ever covers
//! a command that is *one simple command with nothing hidden in it*: no list, pipeline, newline,
//! comment, redirection, substitution, assignment, wrapper that runs another command, or
//! program-specific escape. `judge` decides that; anything it cannot vouch for is `NotSimple`
//! and is asked about every time.

use seedpod_protocol::CommandRule;
use serde_json::Value;

use crate::scope::Scope;

/// What `judge` made of a `shell` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// One simple command; its words with quoting removed, program first.
    Simple(Vec<String>),
    /// Anything a rule must not cover, and why (for the log and the modal).
    NotSimple(String),
}

impl Judgement {
    pub fn words(&self) -> Option<&[String]> {
        match self {
            Judgement::Simple(words) => Some(words),
            Judgement::NotSimple(_) => None,
        }
    }
}

/// Judge a `shell` call's raw arguments (`{"command": …}`) against `scope` (for escapes such
/// as `git -C DIR` that are only harmless inside it; with no scope known, such a command is
/// `NotSimple`).
pub fn judge(arguments: &str, scope: Option<&Scope>) -> Judgement {
    let _ = scope;
    let Some(command) = serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|v| v.get("command").and_then(Value::as_str).map(str::to_owned))
    else {
        return Judgement::NotSimple("the call has no command string".into());
    };
    match crate::summary::simple_words(&command) {
        Some(words) => Judgement::Simple(words),
        None => Judgement::NotSimple("not one simple command".into()),
    }
}

/// The narrowest rule an "always" answer offers for a judged command: program and subcommand
/// for programs that have subcommands (`git status …`), else the exact command.
pub fn narrowest_rule(words: &[String]) -> CommandRule {
    const SUBCOMMANDS: &[&str] = &["git", "cargo", "npm", "go", "docker", "kubectl", "make"];
    match words {
        [program, sub, ..]
            if SUBCOMMANDS.contains(&program.as_str())
                && sub.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                && !sub.starts_with('-') =>
        {
            CommandRule::Prefix(vec![program.clone(), sub.clone()])
        }
        _ => CommandRule::Exact(words.to_vec()),
    }
}
