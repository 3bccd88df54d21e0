//! Which tool calls run at once, which wait for a person, and which are refused.
//!
//! The policy is operational (read from the configuration at every pod start); what a person
//! decided is not: answers are committed to the log, so a restart neither forgets an
//! `approve_always` nor auto-approves a request that was still pending.

use std::collections::BTreeMap;

/// What happens when the model calls a tool: the configuration's own type, so the file, the
/// layering and the pod can never disagree about what a policy means.
pub use seedpod_config::Policy;

/// Policy per tool name. Tools not listed are allowed: a tool the pod registers without a
/// configured policy (tests, future tools) is trusted like the read tools.
/// MCP tools (`mcp__SERVER__TOOL`) are the exception: they come from outside the pod, so one no
/// key covers asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policies {
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

    /// With the configured MCP keys.
    pub fn with_mcp(mut self, keys: impl IntoIterator<Item = (String, Policy)>) -> Policies {
        self.mcp = keys.into_iter().collect();
        self
    }

    pub fn for_tool(&self, tool: &str) -> Policy {
        if crate::mcp_names::server_of(tool).is_some() {
            return self.for_mcp_tool(tool, false);
        }
        self.tools.get(tool).copied().unwrap_or(Policy::Allow)
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
            Policy::Ask
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlisted_tools_are_allowed_and_listed_ones_follow_their_policy() {
        let policies = Policies::new([
            ("shell".to_string(), Policy::Ask),
            ("write_file".to_string(), Policy::Deny),
        ]);
        assert_eq!(policies.for_tool("shell"), Policy::Ask);
        assert_eq!(policies.for_tool("write_file"), Policy::Deny);
        assert_eq!(policies.for_tool("read_file"), Policy::Allow);
        assert_eq!(Policies::default().for_tool("shell"), Policy::Allow);
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
