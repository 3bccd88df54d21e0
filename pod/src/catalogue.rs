//! Every tool a pod can offer, each declared once beside its implementation
//! (`seedpod_protocol::ToolDecl`): the built-in tools (`seedpod_tools::BUILTIN_TOOLS`), the
//! pod's own (`task_list.rs`, `git_commit.rs`, `paste.rs`), the child-pod tools
//! (`children/tools.rs`) and, as a kind, the tools of MCP servers (`mcp/mod.rs`).
//!
//! Every list about tools is read from here: the `[approvals]` keys and their defaults (given to
//! `seedpod-config`), the policy map, what is offered, the prompt's notes, the compact prompt,
//! the approval summaries and what the input guard reports in results. A name with no
//! declaration is no tool: it gets no policy but `deny`, and a pod refuses to offer it
//! (`assemble/`).

use seedpod_protocol::ToolDecl;

use crate::mcp::names::server_of;

/// The declared tools in the order the model sees them (and `config show` lists them): the
/// built-in tools, the pod's own, then the child-pod tools. MCP tools come after these, in
/// their servers' order; they have no `[approvals]` key of their own until a person writes one.
pub fn declared() -> Vec<&'static ToolDecl> {
    let pod_tools = [
        &crate::task_list::DECL,
        &crate::git_commit::DECL,
        &crate::paste::DECL,
        &crate::tool_search::DECL,
        &crate::mcp::resources::LIST_DECL,
        &crate::mcp::resources::READ_DECL,
    ];
    seedpod_tools::BUILTIN_TOOLS
        .into_iter()
        .chain(pod_tools)
        .chain(crate::children::tools::DECLS)
        .collect()
}

/// The declaration of tool `name`: a declared tool's own, the MCP kind's for an
/// `mcp__SERVER__TOOL` name, `None` for a name no declaration covers.
pub fn decl_for(name: &str) -> Option<&'static ToolDecl> {
    if server_of(name).is_some() {
        return Some(&crate::mcp::DECL);
    }
    declared().into_iter().find(|decl| decl.name == name)
}

/// The one line an approval request shows for a call of `name`, as its declaration summarises
/// it (the raw arguments for a tool without a summary of its own).
pub fn call_summary(name: &str, arguments: &str) -> String {
    seedpod_tools::summary_line(decl_for(name), name, arguments)
}

/// Every declared tool at its declared default, as with no configuration file. (Here, not in
/// `policy.rs`: the tools' modules know the policy type, so the policy type must not know them.)
pub fn default_policies() -> crate::policy::Policies {
    crate::policy::Policies::new(
        declared()
            .into_iter()
            .map(|decl| (decl.name.to_owned(), decl.default_policy)),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use seedpod_protocol::{Effect, GuardScan, InSmallPrompt, Policy, Preview};

    use super::*;

    fn child_tools() -> Vec<&'static str> {
        crate::children::tools::DECLS
            .iter()
            .map(|d| d.name)
            .collect()
    }

    #[test]
    fn the_tools_in_the_order_the_model_sees_them() {
        let names: Vec<&str> = declared().iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "glob",
                "grep",
                "shell",
                "update_tasks",
                "git_commit",
                "read_paste",
                "tool_search",
                "mcp_list_resources",
                "mcp_read_resource",
                "spawn_pod",
                "send_to_pod",
                "read_pod_output",
                "list_pods",
                "stop_pod",
            ]
        );
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "one declaration per name");
        assert!(
            names.iter().all(|name| server_of(name).is_none()),
            "no declared name passes for an MCP tool's"
        );
    }

    /// What each tool is allowed to do unless a person says otherwise, and the reasons
    /// (docs/configuration.md): the file tools are confined by the scope, a child gets only
    /// its parent's scope, the task list only records; shell is confined by nothing but the
    /// sandbox and git_commit commits as the person, so both ask; an MCP tool comes from
    /// outside, so it asks, and so do the MCP resource tools (a server's `trust_read_only`
    /// lets them run, `mcp/catalogue.rs`).
    #[test]
    fn shell_git_commit_and_mcp_tools_ask_and_every_other_tool_is_allowed() {
        for decl in declared() {
            let expected = match decl.name {
                "shell" | "git_commit" | "mcp_list_resources" | "mcp_read_resource" => Policy::Ask,
                _ => Policy::Allow,
            };
            assert_eq!(decl.default_policy, expected, "{}", decl.name);
        }
        assert_eq!(crate::mcp::DECL.default_policy, Policy::Ask);
        let sandboxable: Vec<&str> = declared()
            .iter()
            .filter(|d| d.effect == Effect::RunsCommands)
            .map(|d| d.name)
            .collect();
        assert_eq!(sandboxable, ["shell"], "only shell can be `sandboxed`");
    }

    #[test]
    fn names_find_their_declaration_and_mcp_names_the_kind() {
        for decl in declared() {
            assert!(std::ptr::eq(decl_for(decl.name).unwrap(), decl));
        }
        let mcp = decl_for("mcp__fs__read").unwrap();
        assert_eq!(mcp.name, crate::mcp::DECL.name);
        assert_eq!(decl_for("teleport").map(|d| d.name), None);
        assert_eq!(decl_for("mcp__").map(|d| d.name), None);
    }

    #[test]
    fn the_compact_prompt_leaves_out_the_task_list_and_keeps_children_for_who_asks() {
        let of = |offer: InSmallPrompt| -> Vec<&str> {
            declared()
                .iter()
                .filter(|d| d.in_small_prompt == offer)
                .map(|d| d.name)
                .collect()
        };
        assert_eq!(of(InSmallPrompt::Never), ["update_tasks"]);
        assert_eq!(of(InSmallPrompt::WhenConfigured), child_tools());
    }

    #[test]
    fn only_the_child_tools_results_may_carry_pod_markers() {
        let lenient: Vec<&str> = declared()
            .iter()
            .filter(|d| d.guard == GuardScan::ExceptPodMarkers)
            .map(|d| d.name)
            .collect();
        assert_eq!(lenient, child_tools());
        assert_eq!(crate::mcp::DECL.guard, GuardScan::Everything);
    }

    /// The calls a person sees before they run as a command or a file change, which the TUI,
    /// `seedpod approve` and the pod's approvals read from here and never by name.
    #[test]
    fn shell_previews_a_command_and_the_file_tools_a_change() {
        let of = |preview: Preview| -> Vec<&str> {
            declared()
                .iter()
                .filter(|d| d.preview == preview)
                .map(|d| d.name)
                .collect()
        };
        assert_eq!(of(Preview::Command), ["shell"]);
        assert_eq!(of(Preview::FileWrite), ["write_file"]);
        assert_eq!(of(Preview::FileEdit), ["edit_file"]);
        assert_eq!(crate::mcp::DECL.preview, Preview::Arguments);
    }

    #[test]
    fn a_commit_is_summarised_by_its_subject() {
        assert_eq!(
            call_summary(
                "git_commit",
                r#"{"message": "\nFix the parser\n\nBecause."}"#
            ),
            "git_commit: Fix the parser"
        );
        assert_eq!(
            call_summary("git_commit", r#"{"message": "Add it", "all": true}"#),
            "git_commit: Add it (every change)"
        );
    }

    #[test]
    fn every_summary_is_one_line_and_names_its_tool() {
        let nasty = r#"{"path": "a\nb", "command": "x\u001b[2J", "message": "m", "name": "k"}"#;
        for decl in declared() {
            let line = call_summary(decl.name, nasty);
            assert!(!line.chars().any(char::is_control), "{line:?}");
            assert!(line.starts_with(decl.name), "{line:?}");
        }
        assert_eq!(
            call_summary("mcp__fs__rm", r#"{"path": "/"}"#),
            r#"mcp__fs__rm: {"path": "/"}"#
        );
    }
}
