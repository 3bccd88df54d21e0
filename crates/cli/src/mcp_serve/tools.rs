//! The tools `seedpod mcp serve` offers, each declared once here: its name, the description
//! the client's model reads, and its input schema. `docs/mcp-serve.md` documents the same.

use serde_json::{Value, json};

/// Longest `send_message` wait a client may ask for.
pub const MAX_WAIT_SECS: u64 = 3600;
/// `send_message`'s wait when the client does not say.
pub const DEFAULT_WAIT_SECS: u64 = 600;
/// Most entries `read_history` returns in one call.
pub const MAX_HISTORY: usize = 500;
/// `read_history`'s count when the client does not say.
pub const DEFAULT_HISTORY: usize = 20;

/// One served tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServedTool {
    SendMessage,
    ReadHistory,
    PodStatus,
    ListPendingApprovals,
    AnswerApproval,
}

impl ServedTool {
    pub const ALL: [ServedTool; 5] = [
        ServedTool::SendMessage,
        ServedTool::ReadHistory,
        ServedTool::PodStatus,
        ServedTool::ListPendingApprovals,
        ServedTool::AnswerApproval,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ServedTool::SendMessage => "send_message",
            ServedTool::ReadHistory => "read_history",
            ServedTool::PodStatus => "pod_status",
            ServedTool::ListPendingApprovals => "list_pending_approvals",
            ServedTool::AnswerApproval => "answer_approval",
        }
    }

    pub fn from_name(name: &str) -> Option<ServedTool> {
        ServedTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    pub fn description(self) -> &'static str {
        match self {
            ServedTool::SendMessage => {
                "Send a message to the seedpod agent pod as its user, starting a run (or queued \
                 behind the one running). With wait (the default) the answer comes back: the \
                 agent's messages of that run and how it ended; the wait also ends early when \
                 the run needs a person's approval for a tool call, or after timeout_secs, \
                 and the run goes on either way (read_history shows what came later)."
            }
            ServedTool::ReadHistory => {
                "The latest entries of the pod's conversation (its active segment), oldest \
                 first, one line each: user inputs, the agent's messages, tool calls and \
                 results, notes."
            }
            ServedTool::PodStatus => {
                "The pod's state (idle, running, paused, waiting_for_approval, …), model, \
                 working directory, queued inputs, context fill and token usage, as JSON."
            }
            ServedTool::ListPendingApprovals => {
                "The tool calls of the pod that wait for a person's approval, as JSON: call_id, \
                 tool, summary and the raw arguments."
            }
            ServedTool::AnswerApproval => {
                "Approve or deny one waiting tool call by its call_id (deny gives the agent the \
                 reason). Off unless the person running this server turned it on with \
                 [mcp_serve] answer_approvals = true in their seedpod config.toml; until then \
                 every call is refused and a person answers with `seedpod approve`. Never \
                 grants a standing (\"always\") approval."
            }
        }
    }

    pub fn input_schema(self) -> Value {
        match self {
            ServedTool::SendMessage => json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The message, as the pod's user would type it."},
                    "wait": {"type": "boolean", "description": "Wait for the run's answer (default true)."},
                    "timeout_secs": {
                        "type": "integer", "minimum": 1, "maximum": MAX_WAIT_SECS,
                        "description": format!("Longest wait in seconds (default {DEFAULT_WAIT_SECS}).")
                    }
                },
                "required": ["text"]
            }),
            ServedTool::ReadHistory => json!({
                "type": "object",
                "properties": {
                    "limit": {
                        "type": "integer", "minimum": 1, "maximum": MAX_HISTORY,
                        "description": format!("How many of the latest entries (default {DEFAULT_HISTORY}).")
                    }
                }
            }),
            ServedTool::PodStatus | ServedTool::ListPendingApprovals => {
                json!({"type": "object", "properties": {}})
            }
            ServedTool::AnswerApproval => json!({
                "type": "object",
                "properties": {
                    "call_id": {"type": "string", "description": "The call_id list_pending_approvals gave."},
                    "decision": {"type": "string", "enum": ["approve", "deny"]},
                    "reason": {"type": "string", "description": "For deny: what the agent is told."}
                },
                "required": ["call_id", "decision"]
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_named_once_described_and_has_an_object_schema() {
        let mut names = std::collections::BTreeSet::new();
        for tool in ServedTool::ALL {
            assert!(names.insert(tool.name()), "{} twice", tool.name());
            assert_eq!(ServedTool::from_name(tool.name()), Some(tool));
            assert!(tool.description().len() > 40, "{}", tool.name());
            assert_eq!(tool.input_schema()["type"], "object", "{}", tool.name());
        }
        assert_eq!(ServedTool::from_name("send"), None);
    }
}
