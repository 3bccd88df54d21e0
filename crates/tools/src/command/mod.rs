//! Which `shell` commands a standing approval may cover, and the narrowest rule for one.
//!
//! A standing rule ("always allow `git status …`") must mean what it says, so it only ever
//! covers a command that is *one plain command with nothing hidden in it*. `judge` parses the
//! command with bash's grammar (`parse.rs`, tree-sitter-bash) into the words bash would pass to
//! the program, refusing lists, pipelines, newlines, comments, redirections (except descriptor
//! duplication such as `2>&1`), substitutions, expansions, globs and assignments; then refuses
//! wrappers and program-specific escapes (`escapes.rs` and `git.rs`: `git -c`, `find -exec`,
//! …), read the way each program reads its options (`options.rs`: abbreviations, glued short
//! options, `--`). Anything it cannot vouch for is `NotSimple` and is asked about every time;
//! "always" on it approves once. `rule.rs` derives the rule "always" offers and decides what a
//! rule covers (the leaf of `gh pr list`, not all of `gh pr`).

#[cfg(test)]
mod escape_tests;
mod escapes;
#[cfg(test)]
mod fuzz;
mod git;
mod options;
mod parse;
mod rule;
#[cfg(test)]
mod rule_tests;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::scope::Scope;

pub use rule::{narrowest_rule, rule_covers, standing_covers};

/// What `judge` made of a `shell` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// One plain command; its words with quoting removed, program first.
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
    let Some(command) = serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|v| v.get("command").and_then(Value::as_str).map(str::to_owned))
    else {
        return Judgement::NotSimple("the call has no command string".into());
    };
    // Running outside the sandbox is a person's decision each time.
    if crate::shell::wants_unconfined(arguments) {
        return Judgement::NotSimple("it asks to run outside the sandbox".into());
    }
    judge_command(&command, scope)
}

/// Judge one command line.
pub fn judge_command(command: &str, scope: Option<&Scope>) -> Judgement {
    let words = match parse::words(command) {
        Ok(words) => words,
        Err(why) => return Judgement::NotSimple(why),
    };
    match escapes::check(&words, scope) {
        Ok(()) => Judgement::Simple(words),
        Err(why) => Judgement::NotSimple(why),
    }
}
