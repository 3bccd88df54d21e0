//! The rule an "always" answer offers, the narrowest that still covers the call, and what a
//! rule covers.
//!
//! Most programs with subcommands are two levels deep (`git status …`, `cargo test …`), and the
//! rule names the program and the subcommand. Some subcommands are groups whose own
//! subcommands do very different things (`gh pr list` and `gh pr merge`, `git remote show` and
//! `git remote set-url`): there the rule names the leaf too (`gh pr list …`), and a rule that
//! stops short of the leaf — one an older pod offered, or a first-word rule — covers no command
//! of that group. `NESTED` lists them; a program missing from it keeps two-level rules.

use seedpod_protocol::{CommandRule, StandingApproval};

use super::escapes::base_name;

/// Programs organised as `PROGRAM SUBCOMMAND …`, where approving the subcommand is what people
/// mean by "always" (`cargo test …`, `git status …`). For every other program the rule is the
/// exact command: approving `rm -rf build` must not approve `rm -rf ~`.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "make",
    "gh",
    "uv",
    "pip",
    "pip3",
    "poetry",
    "rustup",
    "deno",
    "dotnet",
    "mvn",
    "gradle",
    "terraform",
    "just",
    "nix",
];

/// Which subcommands of a program are groups with their own subcommands.
#[derive(Debug)]
pub enum Groups {
    /// These, and no others.
    Only(&'static [&'static str]),
    /// Every subcommand except these: programs where nearly every subcommand takes a leaf
    /// (`gh pr …`, `kubectl get pods`), so a forgotten one is narrowed rather than widened.
    AllExcept(&'static [&'static str]),
}

/// Programs with subcommand groups, and their groups. A script runner's `run` is a group too:
/// its leaf is the script or program it runs (`npm run build`, `uv run pytest`).
pub const NESTED: &[(&str, Groups)] = &[
    (
        "gh",
        Groups::AllExcept(&["status", "browse", "completion", "help", "version"]),
    ),
    ("kubectl", Groups::AllExcept(&[])),
    (
        "git",
        Groups::Only(&[
            "remote",
            "stash",
            "worktree",
            "submodule",
            "notes",
            "bisect",
            "sparse-checkout",
            "maintenance",
            "bundle",
            "reflog",
            "lfs",
            "commit-graph",
            "multi-pack-index",
            "hook",
            "config",
            "svn",
        ]),
    ),
    (
        "uv",
        Groups::Only(&["tool", "pip", "python", "cache", "self", "auth", "run"]),
    ),
    (
        "docker",
        Groups::Only(&[
            "container",
            "image",
            "network",
            "volume",
            "system",
            "builder",
            "buildx",
            "compose",
            "context",
            "plugin",
            "manifest",
            "trust",
            "swarm",
            "node",
            "service",
            "stack",
            "secret",
            "config",
            "checkpoint",
        ]),
    ),
    (
        "podman",
        Groups::Only(&[
            "container",
            "image",
            "network",
            "volume",
            "system",
            "compose",
            "machine",
            "pod",
            "generate",
            "kube",
            "secret",
            "manifest",
            "healthcheck",
        ]),
    ),
    (
        "helm",
        Groups::Only(&[
            "repo",
            "plugin",
            "dependency",
            "get",
            "show",
            "registry",
            "search",
        ]),
    ),
    ("cargo", Groups::Only(&["config", "report"])),
    (
        "npm",
        Groups::Only(&[
            "run",
            "run-script",
            "rum",
            "urn",
            "config",
            "c",
            "cache",
            "access",
            "dist-tag",
            "org",
            "owner",
            "profile",
            "team",
            "token",
            "pkg",
        ]),
    ),
    (
        "pnpm",
        Groups::Only(&["run", "run-script", "config", "store", "env", "cache"]),
    ),
    (
        "yarn",
        Groups::Only(&["run", "config", "cache", "workspace", "workspaces"]),
    ),
    ("bun", Groups::Only(&["run", "pm"])),
    ("go", Groups::Only(&["mod", "work", "tool"])),
    ("pip", Groups::Only(&["cache", "config"])),
    ("pip3", Groups::Only(&["cache", "config"])),
    (
        "poetry",
        Groups::Only(&["run", "env", "self", "cache", "source", "debug"]),
    ),
    (
        "rustup",
        Groups::Only(&[
            "toolchain",
            "target",
            "component",
            "override",
            "self",
            "set",
            "show",
            "run",
        ]),
    ),
    ("deno", Groups::Only(&["run", "task"])),
    (
        "dotnet",
        Groups::Only(&["tool", "nuget", "workload", "sln", "new", "dev-certs"]),
    ),
    (
        "terraform",
        Groups::Only(&["workspace", "state", "providers"]),
    ),
    (
        "nix",
        Groups::Only(&[
            "run",
            "shell",
            "profile",
            "flake",
            "store",
            "registry",
            "hash",
            "key",
            "nar",
            "derivation",
        ]),
    ),
];

/// The words a prefix rule needs before it names a leaf of a group.
const LEAF_RULE_WORDS: usize = 3;

/// `Prefix([program, group, leaf])` for a subcommand group's leaf, `Prefix([program,
/// subcommand])` for a plain subcommand; otherwise (an option where a subcommand or leaf
/// would be, or no leaf at all) `Exact(words)`.
pub fn narrowest_rule(words: &[String]) -> CommandRule {
    let program_has_subcommands =
        |program: &String| SUBCOMMAND_PROGRAMS.contains(&program.as_str());
    match words {
        [program, group, leaf, ..]
            if program_has_subcommands(program)
                && is_group(program, group)
                && is_subcommand(leaf) =>
        {
            CommandRule::Prefix(vec![program.clone(), group.clone(), leaf.clone()])
        }
        [program, subcommand, ..]
            if program_has_subcommands(program)
                && is_subcommand(subcommand)
                && !is_group(program, subcommand) =>
        {
            CommandRule::Prefix(vec![program.clone(), subcommand.clone()])
        }
        _ => CommandRule::Exact(words.to_vec()),
    }
}

/// Does `rule` cover a command with these words? As `CommandRule::covers`, except that a
/// prefix rule shorter than three words covers nothing whose second word is a group (or is not
/// a plain subcommand, so could hide one: `gh -R x pr merge`) of a program in `NESTED`.
pub fn rule_covers(rule: &CommandRule, words: &[String]) -> bool {
    rule.covers(words)
        && match rule {
            CommandRule::Exact(_) => true,
            CommandRule::Prefix(prefix) => prefix.len() >= LEAF_RULE_WORDS || !needs_leaf(words),
        }
}

/// `StandingApproval::covers` with `rule_covers` for its rule: what the pod asks before it
/// lets a call run without asking.
pub fn standing_covers(standing: &StandingApproval, tool: &str, words: Option<&[String]>) -> bool {
    standing.tool == tool
        && match &standing.rule {
            None => true,
            Some(rule) => words.is_some_and(|words| rule_covers(rule, words)),
        }
}

/// Whether a prefix rule must name a leaf to cover `words`.
fn needs_leaf(words: &[String]) -> bool {
    match words {
        [program, second, ..] => {
            let program = base_name(program);
            nested(program).is_some() && (!is_subcommand(second) || is_group(program, second))
        }
        _ => false,
    }
}

fn nested(program: &str) -> Option<&'static Groups> {
    NESTED
        .iter()
        .find(|(name, _)| *name == program)
        .map(|(_, groups)| groups)
}

fn is_group(program: &str, subcommand: &str) -> bool {
    match nested(base_name(program)) {
        None => false,
        Some(Groups::Only(groups)) => groups.contains(&subcommand),
        Some(Groups::AllExcept(plain)) => !plain.contains(&subcommand),
    }
}

/// `status`, `build-std`, `run`: lower-case letters, digits and inner dashes.
fn is_subcommand(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}
