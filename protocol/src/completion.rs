//! Composer completion: what a client may ask a pod to suggest after `@`, `/` and `#`, and the
//! slash commands every seedpod client understands.
//!
//! The pod answers because it owns the working directory and its `.seedpod/` folder; a client
//! on another machine-view of the files (or a future remote client) asks rather than guesses.

use serde::{Deserialize, Serialize};

/// What is being completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionKind {
    /// `@path`: files and directories under the pod's working directory (honouring `.gitignore`).
    File,
    /// `/name`: the client slash commands (`SLASH_COMMANDS`).
    Command,
    /// `/slug`: workflows in `<cwd>/.seedpod/workflows/*.md`.
    Workflow,
    /// `#slug`: knowledge notes in `<cwd>/.seedpod/knowledge/*.md`.
    Knowledge,
    /// `/model NAME`: the models the provider's server offers.
    Model,
    #[serde(other)]
    Unknown,
}

impl CompletionKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            CompletionKind::File => "file",
            CompletionKind::Command => "command",
            CompletionKind::Workflow => "workflow",
            CompletionKind::Knowledge => "knowledge",
            CompletionKind::Model => "model",
            CompletionKind::Unknown => "unknown",
        }
    }
}

/// One suggestion: `value` replaces the typed prefix (without its sigil); `detail` is a short
/// description for the popup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    pub value: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Completion {
    pub fn new(value: impl Into<String>, detail: impl Into<String>) -> Completion {
        Completion {
            value: value.into(),
            detail: detail.into(),
        }
    }
}

/// The slash commands of seedpod's clients, with a one-line description each. Shared so the
/// pod can offer them in completion and the TUI can check it handles every one.
pub const SLASH_COMMANDS: &[(&str, &str)] = &[
    ("help", "keys and commands"),
    ("detach", "leave the pod running and quit"),
    ("stop", "stop the pod (asks first)"),
    ("clear", "start a new segment"),
    ("compact", "summarise the conversation: /compact [FOCUS]"),
    ("pods", "switch to another pod"),
    ("spawn", "start a child pod: /spawn NAME TASK"),
    ("model", "switch the model: /model NAME"),
    ("memory", "append a line to AGENTS.md: /memory TEXT"),
    ("commit", "commit; the model writes the message"),
    ("find", "search the transcript: /find TEXT (Ctrl-F)"),
    ("resume", "continue a paused turn"),
    ("cancel", "cancel the running or paused turn"),
    ("copy", "copy the focused cell or last answer; /copy code"),
    ("approvals", "standing approvals: list, d revokes"),
    ("mcp", "MCP servers: state, tools, why one is down"),
    (
        "fork",
        "fork this pod after a turn into a new pod: /fork [TURN]",
    ),
    (
        "rewind",
        "go back to the end of a turn, files too: /rewind [TURN]",
    ),
    (
        "mouse",
        "mouse-wheel scrolling on/off (then Shift-drag selects)",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_use_their_wire_names() {
        for kind in [
            CompletionKind::File,
            CompletionKind::Command,
            CompletionKind::Workflow,
            CompletionKind::Knowledge,
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        let unknown: CompletionKind = serde_json::from_str("\"emoji\"").unwrap();
        assert_eq!(unknown, CompletionKind::Unknown);
    }

    #[test]
    fn empty_detail_is_omitted() {
        let json = serde_json::to_string(&Completion::new("src/", "")).unwrap();
        assert_eq!(json, r#"{"value":"src/"}"#);
    }
}
