//! Runs `seedpod fork` and `seedpod rewind` for `/fork` and `/rewind`: the TUI is a client of
//! the commands (docs/storage.md §Fork and rewind), never a second implementation. The
//! command is this very binary, run directly (no shell), with the same environment — so the
//! same `SEEDPOD_HOME` — and no terminal input: it must never wait for an answer.

use std::process::Stdio;

use seedpod_client::Home;
use seedpod_protocol::PodName;

use crate::app::branch::{BranchCommand, BranchKind, BranchResult, TurnList};

/// How many `NAME-fork-K` names are tried before giving up.
const FORK_NAMES: usize = 1000;

/// The first `SOURCE-fork-K` (K from 1) that names no pod.
pub fn fork_name(home: &Home, source: &PodName) -> Result<PodName, String> {
    for k in 1..=FORK_NAMES {
        let name = PodName::new(format!("{source}-fork-{k}")).map_err(|_| {
            format!("the name {source} is too long to name a fork after it; use `seedpod fork`")
        })?;
        if !home.pod_dir(&name).exists() {
            return Ok(name);
        }
    }
    Err(format!(
        "{source} has {FORK_NAMES} forks already; name the next one with `seedpod fork`"
    ))
}

/// The command line for `command` (after the program).
pub fn arguments(home: &Home, command: &BranchCommand) -> Result<Vec<String>, String> {
    Ok(match command {
        BranchCommand::Fork { source, turn } => {
            let new = fork_name(home, source)?;
            vec![
                "fork".into(),
                source.to_string(),
                new.to_string(),
                "--at".into(),
                turn.to_string(),
            ]
        }
        BranchCommand::Plan { pod, turn } => vec![
            "rewind".into(),
            pod.to_string(),
            "--to".into(),
            turn.to_string(),
            "--both".into(),
            "--dry-run".into(),
        ],
        BranchCommand::Rewind { pod, turn, scope } => vec![
            "rewind".into(),
            pod.to_string(),
            "--to".into(),
            turn.to_string(),
            scope.flag().into(),
            "--yes".into(),
        ],
    })
}

/// Run `command`: its standard output when it succeeds, else what it said went wrong, as one
/// line.
pub async fn run(home: &Home, command: &BranchCommand) -> BranchResult {
    let args = arguments(home, command)?;
    let program = std::env::current_exe()
        .map_err(|err| format!("cannot find the seedpod program to run: {err}"))?;
    let output = tokio::process::Command::new(program)
        .args(&args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|err| format!("cannot run seedpod {}: {err}", args[0]))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    Err(error_line(
        &String::from_utf8_lossy(&output.stderr),
        &args[0],
    ))
}

/// The turns of `pod`'s conversation for a picker, numbered as `seedpod fork` and `seedpod
/// rewind` number them: read from its log through the same functions
/// (`seedpod_store::lineage`), so a rewound segment's earlier part and the pods a fork came
/// from count too. A rewind cannot go back past where its pod was forked, so its picker starts
/// at the turn the fork was made at.
pub fn turns(home: &Home, pod: &PodName, kind: BranchKind) -> Result<TurnList, String> {
    let dir = home.pod_dir(pod);
    let unreadable = |err: &dyn std::fmt::Display| format!("cannot read {pod}'s log: {err}");
    let meta = seedpod_store::load_meta(&dir)
        .map_err(|e| unreadable(&e))?
        .ok_or_else(|| format!("pod {pod} has no pod.json; `seedpod ls` lists the pods"))?;
    let conversation =
        seedpod_store::lineage::conversation(&dir, &meta).map_err(|e| unreadable(&e))?;
    let parts = &conversation.parts;
    let all = seedpod_store::branch::turns(parts);
    let before_fork = all
        .iter()
        .filter(|t| {
            parts
                .iter()
                .any(|p| p.segment == t.segment && p.pod.is_some())
        })
        .count();
    let skip = match kind {
        BranchKind::Fork => 0,
        BranchKind::Rewind => before_fork.saturating_sub(1),
    };
    let turns = all
        .into_iter()
        .skip(skip)
        .map(|turn| {
            let first = turn
                .text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            (turn.number, first.trim().to_string())
        })
        .collect();
    Ok(TurnList {
        turns,
        note: conversation.gap,
    })
}

/// The last thing the command said on its error output, without the program's name.
fn error_line(stderr: &str, verb: &str) -> String {
    let line = stderr.lines().rev().map(str::trim).find(|l| !l.is_empty());
    match line {
        Some(line) => line.strip_prefix("seedpod: ").unwrap_or(line).to_string(),
        None => format!("seedpod {verb} failed without saying why"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_takes_the_first_free_name() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        let source = PodName::new("work").unwrap();
        assert_eq!(fork_name(&home, &source).unwrap().as_str(), "work-fork-1");
        for taken in ["work-fork-1", "work-fork-2"] {
            std::fs::create_dir_all(home.pod_dir(&PodName::new(taken).unwrap())).unwrap();
        }
        assert_eq!(fork_name(&home, &source).unwrap().as_str(), "work-fork-3");
    }

    #[test]
    fn a_name_too_long_for_a_fork_suffix_is_refused_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        let long = PodName::new("a".repeat(seedpod_protocol::MAX_NAME_CHARS)).unwrap();
        let err = fork_name(&home, &long).unwrap_err();
        assert!(err.contains("too long"), "{err}");
    }

    #[test]
    fn rewind_arguments_carry_the_scope_and_never_ask() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::under(dir.path());
        let pod = PodName::new("work").unwrap();
        let args = arguments(
            &home,
            &BranchCommand::Rewind {
                pod: pod.clone(),
                turn: 2,
                scope: crate::app::branch::RewindScope::Files,
            },
        )
        .unwrap();
        assert_eq!(args, ["rewind", "work", "--to", "2", "--files", "--yes"]);
        let plan = arguments(&home, &BranchCommand::Plan { pod, turn: 0 }).unwrap();
        assert_eq!(plan, ["rewind", "work", "--to", "0", "--both", "--dry-run"]);
    }

    #[test]
    fn the_error_is_the_last_line_said() {
        assert_eq!(
            error_line(
                "warning\nseedpod: pod \"w\" is in the middle of a turn\n\n",
                "rewind"
            ),
            "pod \"w\" is in the middle of a turn"
        );
        assert_eq!(
            error_line("", "fork"),
            "seedpod fork failed without saying why"
        );
    }
}
