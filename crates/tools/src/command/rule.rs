//! The rule an "always" answer offers: the narrowest that still covers the call.

use seedpod_protocol::CommandRule;

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

/// `Prefix([program, subcommand])` for programs with subcommands when the second word is a
/// plain subcommand name; otherwise `Exact(words)`.
pub fn narrowest_rule(words: &[String]) -> CommandRule {
    match words {
        [program, subcommand, ..]
            if SUBCOMMAND_PROGRAMS.contains(&program.as_str()) && is_subcommand(subcommand) =>
        {
            CommandRule::Prefix(vec![program.clone(), subcommand.clone()])
        }
        _ => CommandRule::Exact(words.to_vec()),
    }
}

/// `status`, `build-std`, `run`: lower-case letters, digits and inner dashes.
fn is_subcommand(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}
