//! How a tool is declared: one [`ToolDecl`] per tool, written in the tool's own module, from
//! which every list about tools is derived — the `[approvals]` keys and their defaults, what
//! `config show` prints, the system prompt's notes, the compact prompt, the approval summaries
//! and previews, the memory flush's tools and what the input guard looks for in results.
//! `docs/decisions.md` says why.
//!
//! Plain data that every crate can read, like [`crate::ToolSpec`]: the crates that run tools
//! (`seedpod-tools`, the pod) write declarations, the configuration reads the keys from them, and
//! nothing here runs a tool.
//!
//! A declaration has no `Default` and every field is required, so a tool without a default
//! policy does not compile.

use serde::Deserialize;
use serde_json::Value;

/// What happens when the model calls a tool: the one meaning shared by the configuration file,
/// its layering and the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Run it.
    Allow,
    /// Wait for a person to approve the call.
    Ask,
    /// Do not offer the tool to the model at all.
    Deny,
    /// Only for a tool that runs commands (`Effect::RunsCommands`): run confined by the sandbox
    /// without asking; a call that asks to leave the sandbox waits for a person. Acts as `ask`
    /// where the sandbox is not enforced.
    Sandboxed,
}

impl Policy {
    pub const ALL: [Policy; 4] = [Policy::Allow, Policy::Ask, Policy::Deny, Policy::Sandboxed];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Allow => "allow",
            Policy::Ask => "ask",
            Policy::Deny => "deny",
            Policy::Sandboxed => "sandboxed",
        }
    }

    pub fn parse(text: &str) -> Option<Policy> {
        Policy::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// Everything seedpod says about one tool besides its schema (which its implementation
/// generates, beside this declaration).
#[derive(Debug, Clone, Copy)]
pub struct ToolDecl {
    /// The name the model calls it by, which is also its `[approvals]` key.
    pub name: &'static str,
    /// Its policy when no configuration file names it. A tool the configuration can reach
    /// must say how careful to be with it: this field is why a tool cannot be offered without
    /// a policy.
    pub default_policy: Policy,
    /// What a call can change.
    pub effect: Effect,
    /// How to use it well, in the full system prompt's tool protocols layer: four short
    /// sections, `BEFORE:`, `AFTER:`, `NEXT:` and `GOTCHA:`. `None`: it needs none.
    pub note: Option<&'static str>,
    /// Its one line in the compact prompt: what its schema does not say and a small model gets
    /// wrong most. `None`: no line.
    pub small_note: Option<&'static str>,
    /// Whether a segment in the compact prompt (small windows) offers it.
    pub in_small_prompt: InSmallPrompt,
    /// What an approval request (and everything that shows one) says about a call, from its
    /// arguments as JSON (`null` when they are not JSON: a summary is shown even for arguments
    /// the tool would refuse).
    pub summary: fn(&Value) -> CallSummary,
    /// What the input guard looks for in its results.
    pub guard: GuardScan,
    /// How a call is shown to a person before it runs: read by the pod when it asks (what the
    /// approval request carries), the TUI's approval modal and `seedpod approve`, so none of
    /// them knows a tool by its name.
    pub preview: Preview,
    /// Whether the memory flush before a compaction may offer it.
    pub in_flush: InFlush,
}

/// What a call can change. A typed answer to "does it only read?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing outside the conversation: it reads files or the pod's own records (the
    /// task list is kept in the log).
    ReadOnly,
    /// Changes files or other pods: writes within the scope, commits, starts or stops children.
    Changes,
    /// Runs the commands it is given. Only such a tool can be `sandboxed`, which is a way of
    /// running commands.
    RunsCommands,
}

/// Whether a segment rendered with the compact prompt offers the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InSmallPrompt {
    Always,
    /// Only when a person set its `[approvals]` key (or one of another such tool) to `allow` or
    /// `ask`, saying they want it: five child-pod schemas are too much for a small window that
    /// rarely needs them.
    WhenConfigured,
    /// Never: a small window has no room for it.
    Never,
}

/// How a call is shown to a person before it runs, and so what its approval request carries.
/// Each kind reads the arguments `Preview::arguments` names, which the tool's schema must have
/// (the pod's catalogue tests check every declared tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preview {
    /// A command line to run, its `command` argument: shown whole as `$ command`. "Approve
    /// always" is a rule over the command's words (`ApprovalRequest::always`), and a command no
    /// rule may cover is approved once.
    Command,
    /// A file written whole: `content` becomes the file at `path`. Shown as a diff against what
    /// the file holds now, which the pod reads into the request (`ApprovalRequest::replaces`).
    FileWrite,
    /// A file edited by replacement: `old` becomes `new` in the file at `path`, once or, with
    /// `replace_all`, everywhere. Shown as a diff of the file (whose text the pod reads into the
    /// request, as for a write), or of the two snippets when that text is not there.
    FileEdit,
    /// Its summary and its arguments say it all.
    Arguments,
}

impl Preview {
    /// The arguments this preview is made from, which the tool's schema must have.
    pub const fn arguments(self) -> &'static [&'static str] {
        match self {
            Preview::Command => &["command"],
            Preview::FileWrite => &["path", "content"],
            Preview::FileEdit => &["path", "old", "new"],
            Preview::Arguments => &[],
        }
    }

    /// Whether it shows a change to one file, as a diff.
    pub const fn is_file_change(self) -> bool {
        matches!(self, Preview::FileWrite | Preview::FileEdit)
    }
}

/// Whether the memory flush before a compaction (docs/agent-loop.md §Memory flush) offers the
/// tool. The flush keeps its notes in files, so it gets the tools that read or change one file
/// by its `path` — and of those only the ones its policy runs without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InFlush {
    Offered,
    Never,
}

/// What the input guard reports in a tool's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardScan {
    /// Every family of injection patterns.
    Everything,
    /// Every family but forged seedpod markers: the results are other pods' transcripts, which
    /// carry those markers (`[pod NAME] …`, `[notification]`) honestly.
    ExceptPodMarkers,
}

/// An approval's one-line description of a call, before it is flattened and cut:
/// `LABEL: DETAIL`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSummary {
    /// Said instead of the tool's name (`shell (leaves the sandbox)`); `None`: the name.
    pub label: Option<&'static str>,
    /// What the call does (`src/a.rs (1,234 bytes)`); `None`: its raw arguments.
    pub detail: Option<String>,
}

impl CallSummary {
    /// The raw arguments after the tool's name: for tools whose arguments say it best.
    pub fn raw(_arguments: &Value) -> CallSummary {
        CallSummary {
            label: None,
            detail: None,
        }
    }

    /// `detail` after the tool's name (the raw arguments when `None`).
    pub fn detail(detail: Option<String>) -> CallSummary {
        CallSummary {
            label: None,
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_case_insensitively_and_round_trip() {
        for policy in Policy::ALL {
            assert_eq!(Policy::parse(policy.as_str()), Some(policy));
        }
        assert_eq!(Policy::parse(" ASK "), Some(Policy::Ask));
        assert_eq!(Policy::parse("maybe"), None);
    }
}
