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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policies {
    tools: BTreeMap<String, Policy>,
}

impl Policies {
    pub fn new(tools: impl IntoIterator<Item = (String, Policy)>) -> Policies {
        Policies {
            tools: tools.into_iter().collect(),
        }
    }

    pub fn for_tool(&self, tool: &str) -> Policy {
        self.tools.get(tool).copied().unwrap_or(Policy::Allow)
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
}
