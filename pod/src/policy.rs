//! Which tool calls run at once, which wait for a person, and which are refused.
//!
//! The policy is operational (read from the configuration at every pod start); what a person
//! decided is not: answers are committed to the log, so a restart neither forgets an
//! `approve_always` nor auto-approves a request that was still pending.

use std::collections::BTreeMap;

use seedpod_protocol::ToolDecl;

/// What happens when the model calls a tool: the configuration's own type, so the file, the
/// layering and the pod can never disagree about what a policy means.
pub use seedpod_config::Policy;

/// Policy per tool name: for a pod, every declared tool's (`catalogue.rs`), configured or its
/// declaration's default (`assemble/`). A name not listed is denied: a tool without a declared
/// policy is never run, and never offered (`offers`). MCP tools (`mcp__SERVER__TOOL`) have
/// their own rule: they come from outside the pod, so one no key covers asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policies {
    /// Declared tools' policies, by name.
    tools: BTreeMap<String, Policy>,
    /// `[approvals]` keys for MCP tools: `mcp__SERVER__TOOL` and `mcp__SERVER__*`.
    mcp: BTreeMap<String, Policy>,
}

impl Policies {
    pub fn new(tools: impl IntoIterator<Item = (String, Policy)>) -> Policies {
        Policies {
            tools: tools.into_iter().collect(),
            mcp: BTreeMap::new(),
        }
    }

    /// The configured `[approvals]` key `key` for MCP (`mcp__SERVER__*` or a tool's), if any.
    pub fn mcp_key(&self, key: &str) -> Option<Policy> {
        self.mcp.get(key).copied()
    }

    /// With the configured MCP keys.
    pub fn with_mcp(mut self, keys: impl IntoIterator<Item = (String, Policy)>) -> Policies {
        self.mcp = keys.into_iter().collect();
        self
    }

    /// The policy of `tool`. One without a listed policy is denied; the pod lists every
    /// declared tool, registers none without a declaration, and a call naming a tool that is
    /// not registered is answered by the registry before any policy is asked, so that denial
    /// is a backstop, never what a working tool gets.
    pub fn for_tool(&self, tool: &str) -> Policy {
        if crate::mcp_names::server_of(tool).is_some() {
            return self.for_mcp_tool(tool, false);
        }
        self.tools.get(tool).copied().unwrap_or(Policy::Deny)
    }

    /// Whether the tool `decl` declares is offered to the model: a denied one is not.
    pub fn offers(&self, decl: &ToolDecl) -> bool {
        self.for_tool(decl.name) != Policy::Deny
    }

    /// For tests that stand a test tool in for a real one: each tool of `registry` without a
    /// listed policy runs without asking, as a declared tool allowed by default would.
    #[cfg(test)]
    pub(crate) fn allowing_unlisted(mut self, registry: &seedpod_engine::ToolRegistry) -> Policies {
        for spec in registry.specs() {
            self.tools.entry(spec.name).or_insert(Policy::Allow);
        }
        self
    }

    /// MCP tool `tool`: its own key, then its server's `*` key; then `allow` when
    /// `trusted_read_only` (its server has `trust_read_only` and the tool declares
    /// `readOnlyHint`); else `ask`.
    pub fn for_mcp_tool(&self, tool: &str, trusted_read_only: bool) -> Policy {
        if let Some(policy) = self.mcp.get(tool) {
            return *policy;
        }
        if let Some(server) = crate::mcp_names::server_of(tool)
            && let Some(policy) = self.mcp.get(&format!("mcp__{server}__*"))
        {
            return *policy;
        }
        if trusted_read_only {
            Policy::Allow
        } else {
            crate::mcp_names::DECL.default_policy
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlisted_tools_are_denied_and_listed_ones_follow_their_policy() {
        let policies = Policies::new([
            ("shell".to_string(), Policy::Ask),
            ("write_file".to_string(), Policy::Deny),
            ("read_file".to_string(), Policy::Allow),
        ]);
        assert_eq!(policies.for_tool("shell"), Policy::Ask);
        assert_eq!(policies.for_tool("write_file"), Policy::Deny);
        assert_eq!(policies.for_tool("read_file"), Policy::Allow);
        assert_eq!(policies.for_tool("glob"), Policy::Deny, "not listed");
        assert_eq!(Policies::default().for_tool("shell"), Policy::Deny);
        assert!(!policies.offers(seedpod_tools::BUILTIN_TOOLS[1]));
        assert!(policies.offers(seedpod_tools::BUILTIN_TOOLS[0]));
    }

    #[test]
    fn every_declared_tool_has_its_declared_default() {
        let policies = crate::catalogue::default_policies();
        for decl in crate::catalogue::declared() {
            assert_eq!(
                policies.for_tool(decl.name),
                decl.default_policy,
                "{}",
                decl.name
            );
        }
        assert_eq!(policies.for_tool("teleport"), Policy::Deny);
    }

    #[test]
    fn mcp_tools_ask_unless_a_key_or_trusted_read_only_says_otherwise() {
        let policies = Policies::default().with_mcp([
            ("mcp__t__*".to_string(), Policy::Allow),
            ("mcp__t__rm".to_string(), Policy::Deny),
            ("mcp__u__ls".to_string(), Policy::Ask),
        ]);
        assert_eq!(policies.for_tool("mcp__t__echo"), Policy::Allow);
        assert_eq!(policies.for_tool("mcp__t__rm"), Policy::Deny);
        assert_eq!(policies.for_tool("mcp__v__echo"), Policy::Ask);
        assert_eq!(policies.for_mcp_tool("mcp__v__echo", true), Policy::Allow);
        assert_eq!(
            policies.for_mcp_tool("mcp__u__ls", true),
            Policy::Ask,
            "an explicit key beats the server's read-only claim"
        );
        assert_eq!(Policies::default().for_tool("mcp__x__y"), Policy::Ask);
    }
}
