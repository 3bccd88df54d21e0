//! seedpod's built-in tools and the filesystem scope that confines them.
//!
//! Owns: the seven built-in tools (`read_file`, `write_file`, `edit_file`, `list_dir`, `glob`,
//! `grep`, `shell`) behind the engine's [`Tool`] contract, each with its declaration beside it
//! (`DECL` in its module: default policy, prompt notes, how a call is summarised; the list is
//! [`BUILTIN_TOOLS`]); the [`Scope`] every file tool checks its paths against; the per-tool
//! protocol notes (`protocols/<name>.md`); and the shape of the one-line call summaries and the
//! shell command prefixes the pod's approvals show and remember.
//!
//! Must not own: approvals and policy beyond each tool's declared default (which calls need
//! asking, what "approve always" covers: the pod decides), the log, or the tool registry (the
//! engine's). Tools here never panic and never fail a run: every problem becomes an error
//! result worded for the model.
//!
//! Writes to files that change policy or make the person's programs run commands (`.seedpod/`,
//! `.git/`, `.gitattributes`, seedpod's own directories, …) are refused even inside the scope:
//! `protected.rs` has the list, the README the reasons.
//!
//! Start reading at [`builtin_tools`], then `scope.rs` and `file_tool.rs` (the shape every file
//! tool shares); `shell.rs` is the one async tool.

mod args;
mod atomic;
mod beneath;
mod checkpoint;
mod command;
mod edit_file;
mod file_tool;
mod glob;
mod grep;
mod lent;
mod list_dir;
mod protected;
mod read_file;
pub mod restore;
mod sandbox;
mod scope;
mod shell;
mod shell_env;
mod summary;
mod walk;
mod write_file;

#[cfg(test)]
mod test_support;

use std::sync::Arc;

use seedpod_engine::Tool;
use seedpod_protocol::ToolDecl;

use crate::file_tool::Blocking;

pub use beneath::{Unopenable, open_checked, open_checked_append};
pub use checkpoint::{BlobError, CheckpointStore, hash_hex as checkpoint_hash};
pub use command::{
    Judgement, judge as judge_shell_command, judge_command, narrowest_rule, rule_covers,
    standing_covers,
};
pub use file_tool::{BINARY_SNIFF_BYTES, looks_binary};
pub use lent::{Lent, LentRoot};
pub use protected::ProtectedDirs;
pub use sandbox::reach::{CLI_REFUSAL, REACH_NOTE, inside as inside_sandbox};
pub use sandbox::watch::{REVERTED_NOTE, TAMPER_NOTE, finding_note};
pub use sandbox::{Sandbox, SandboxError, Support as SandboxSupport};
pub use scope::{Access, Blocked, BlockedKind, Scope, ScopeError, ScopeRules};
pub use shell::{ShellLimits, TIMEOUT_EXIT_CODE, wants_unconfined};
pub use summary::summary_line;

/// The built-in tools' declarations, in catalogue order (the order the model sees them).
pub const BUILTIN_TOOLS: [&ToolDecl; Builtin::ALL.len()] = {
    let mut decls = [Builtin::ALL[0].decl(); Builtin::ALL.len()];
    let mut at = 1;
    while at < decls.len() {
        decls[at] = Builtin::ALL[at].decl();
        at += 1;
    }
    decls
};

/// What the built-in tools need from the pod.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub scope: Arc<Scope>,
    pub shell: ShellLimits,
    /// Confines `shell` commands; `None`: they run unconfined (sandbox off or not supported).
    pub sandbox: Option<Sandbox>,
    /// Where `write_file` and `edit_file` keep files before changing them; `None`: not kept.
    pub checkpoints: Option<Arc<CheckpointStore>>,
}

/// The built-in tools named in `enabled` (unknown names ignored), in [`BUILTIN_TOOLS`] order.
pub fn builtin_tools(ctx: &ToolContext, enabled: &[&str]) -> Vec<Arc<dyn Tool>> {
    Builtin::ALL
        .into_iter()
        .filter(|builtin| enabled.contains(&builtin.decl().name))
        .map(|builtin| builtin.build(ctx))
        .collect()
}

/// The built-in tools as a closed set, so adding one makes the compiler ask for its
/// declaration and its constructor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    ReadFile,
    WriteFile,
    EditFile,
    ListDir,
    Glob,
    Grep,
    Shell,
}

impl Builtin {
    const ALL: [Builtin; 7] = [
        Builtin::ReadFile,
        Builtin::WriteFile,
        Builtin::EditFile,
        Builtin::ListDir,
        Builtin::Glob,
        Builtin::Grep,
        Builtin::Shell,
    ];

    const fn decl(self) -> &'static ToolDecl {
        match self {
            Builtin::ReadFile => &read_file::DECL,
            Builtin::WriteFile => &write_file::DECL,
            Builtin::EditFile => &edit_file::DECL,
            Builtin::ListDir => &list_dir::DECL,
            Builtin::Glob => &glob::DECL,
            Builtin::Grep => &grep::DECL,
            Builtin::Shell => &shell::DECL,
        }
    }

    fn build(self, ctx: &ToolContext) -> Arc<dyn Tool> {
        let scope = ctx.scope.clone();
        match self {
            Builtin::ReadFile => Arc::new(Blocking::<read_file::ReadFile>::new(
                scope,
                ctx.checkpoints.clone(),
            )),
            Builtin::WriteFile => Arc::new(Blocking::<write_file::WriteFile>::new(
                scope,
                ctx.checkpoints.clone(),
            )),
            Builtin::EditFile => Arc::new(Blocking::<edit_file::EditFile>::new(
                scope,
                ctx.checkpoints.clone(),
            )),
            Builtin::ListDir => Arc::new(Blocking::<list_dir::ListDir>::new(
                scope,
                ctx.checkpoints.clone(),
            )),
            Builtin::Glob => Arc::new(Blocking::<glob::Glob>::new(scope, ctx.checkpoints.clone())),
            Builtin::Grep => Arc::new(Blocking::<grep::Grep>::new(scope, ctx.checkpoints.clone())),
            Builtin::Shell => Arc::new(shell::Shell::new(
                scope.cwd().to_owned(),
                ctx.shell,
                ctx.sandbox.clone(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Fixture;
    use seedpod_protocol::{Effect, GuardScan, InSmallPrompt, Policy};

    fn all_tools(f: &Fixture) -> Vec<Arc<dyn Tool>> {
        let ctx = ToolContext {
            scope: Arc::new(Scope::for_cwd(&f.cwd).unwrap()),
            shell: ShellLimits::default(),
            sandbox: None,
            checkpoints: None,
        };
        let names: Vec<&str> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
        builtin_tools(&ctx, &names)
    }

    #[test]
    fn the_catalogue_order_names_and_effects() {
        let names: Vec<&str> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "glob",
                "grep",
                "shell"
            ]
        );
        let exec: Vec<&str> = BUILTIN_TOOLS
            .iter()
            .filter(|t| t.effect == Effect::RunsCommands)
            .map(|t| t.name)
            .collect();
        assert_eq!(exec, ["shell"]);
        let f = Fixture::new();
        let specs: Vec<String> = all_tools(&f).iter().map(|t| t.spec().name).collect();
        assert_eq!(specs, names, "each tool's spec carries its catalogue name");
    }

    #[test]
    fn the_file_tools_are_allowed_and_shell_asks_by_default() {
        for tool in BUILTIN_TOOLS {
            let expected = if tool.name == "shell" {
                Policy::Ask
            } else {
                Policy::Allow
            };
            assert_eq!(tool.default_policy, expected, "{}", tool.name);
            assert_eq!(tool.in_small_prompt, InSmallPrompt::Always, "{}", tool.name);
            assert_eq!(tool.guard, GuardScan::Everything, "{}", tool.name);
            assert!(tool.small_note.is_some(), "{}", tool.name);
        }
    }

    #[test]
    fn enabled_selects_in_catalogue_order_and_ignores_unknown_names() {
        let f = Fixture::new();
        let ctx = ToolContext {
            scope: Arc::new(Scope::for_cwd(&f.cwd).unwrap()),
            shell: ShellLimits::default(),
            sandbox: None,
            checkpoints: None,
        };
        let tools = builtin_tools(&ctx, &["shell", "nope", "read_file"]);
        let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
        assert_eq!(names, ["read_file", "shell"]);
        assert!(builtin_tools(&ctx, &[]).is_empty());
    }

    #[test]
    fn every_tool_has_a_four_part_protocol() {
        for tool in BUILTIN_TOOLS {
            let text = tool.note.unwrap_or_else(|| panic!("{}", tool.name));
            let heads: Vec<&str> = text
                .lines()
                .filter_map(|l| l.split_once(": ").map(|(head, _)| head))
                .filter(|h| h.chars().all(|c| c.is_ascii_uppercase()))
                .collect();
            assert_eq!(
                heads,
                ["BEFORE", "AFTER", "NEXT", "GOTCHA"],
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn specs_are_deterministic_and_pinned() {
        let f = Fixture::new();
        let render = || {
            let specs: Vec<_> = all_tools(&f).iter().map(|t| t.spec()).collect();
            serde_json::to_string_pretty(&specs).unwrap()
        };
        let first = render();
        assert_eq!(first, render(), "the same bytes every time");
        // A schemars upgrade or an argument change shows up here as a reviewed diff: the
        // specs are part of every request body.
        insta::assert_snapshot!(first);
    }

    #[test]
    fn every_argument_struct_refuses_unknown_fields() {
        let f = Fixture::new();
        for tool in all_tools(&f) {
            let spec = tool.spec();
            assert_eq!(
                spec.parameters["additionalProperties"], false,
                "{}",
                spec.name
            );
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters.get("$schema").is_none());
        }
    }
}
