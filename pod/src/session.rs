//! The operational settings a pod runs with that are not about the model: approval policies,
//! the file scope for `@path`, the input guard, and what a new segment's system prompt is made
//! of. Read from the configuration at every start; none of it is model-visible until it is
//! rendered into an entry, which is then what replay uses.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seedpod_protocol::{PodName, ToolSpec};
use seedpod_tools::Scope;

use crate::guard::{DEFAULT_MAX_MESSAGE_CHARS, GuardMode};
use crate::policy::Policies;
use crate::prompt::{PromptError, PromptInputs, PromptMode, RenderedPrompt, render_prompt};

#[derive(Clone)]
pub struct SessionSettings {
    pub policies: Policies,
    /// The file tools' scope; `@path` references obey it too. `None`: the pod's cwd only.
    pub scope: Option<Arc<Scope>>,
    pub prompt: PromptSettings,
    pub guard: GuardMode,
    pub max_message_chars: usize,
    /// Whether a report from a child (`turn_ended`, `errored`, `shut_down`) starts a turn of an
    /// idle pod (`[children] wake`); otherwise it waits for the next turn.
    pub wake_on_child_reports: bool,
    /// `[children] max_children` and `max_depth`: how many children this pod may run.
    pub child_limits: crate::children::limits::ChildLimits,
    /// `[context]`: the window, pruning and compaction.
    pub context: crate::context::ContextSettings,
    /// Warnings found while reading the configuration (an untrusted project file's ignored
    /// keys), shown to every client that attaches, like restore's own alerts.
    pub startup_alerts: Vec<String>,
    /// `[notify] wrapper`: the template a notification's text is framed by.
    pub notify_wrapper: String,
    /// `[notify] max_chars`: the longest notification the model reads whole.
    pub notify_max_chars: usize,
    /// `[mcp.servers]`, and which of them a child's parent passed on.
    pub mcp: crate::mcp::McpSettings,
    /// `[tool_search]`: when a new segment's MCP tools wait behind `tool_search`.
    pub tool_search: crate::tool_search::Budget,
    /// `[hooks]`: the person's commands run at points of the pod's life (`crate::hooks`).
    pub hooks: seedpod_config::HooksSettings,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            policies: Policies::default(),
            scope: None,
            prompt: PromptSettings::default(),
            guard: GuardMode::default(),
            max_message_chars: DEFAULT_MAX_MESSAGE_CHARS,
            wake_on_child_reports: seedpod_config::children::DEFAULT_WAKE,
            child_limits: Default::default(),
            context: crate::context::ContextSettings::default(),
            startup_alerts: Vec::new(),
            notify_wrapper: seedpod_config::notify::DEFAULT_NOTIFY_WRAPPER.to_owned(),
            notify_max_chars: seedpod_config::notify::DEFAULT_NOTIFY_MAX_CHARS,
            mcp: crate::mcp::McpSettings::default(),
            tool_search: crate::tool_search::Budget::default(),
            hooks: seedpod_config::HooksSettings::default(),
        }
    }
}

/// The inputs of the layered system prompt besides the pod itself.
#[derive(Debug, Clone, Default)]
pub struct PromptSettings {
    /// Replaces the built-in identity layer.
    pub identity_file: Option<PathBuf>,
    /// Where `instructions.md` (the custom instructions layer) is looked for. `None` skips it.
    pub config_dir: Option<PathBuf>,
    /// The pod's file scope, which bounds where the project's own files (`AGENTS.md`,
    /// workflows) may lead (`project_file.rs`). `None`: only their own directory.
    pub scope: Option<Arc<Scope>>,
}

/// What a segment's prompt is rendered from, for one pod.
pub struct PromptFor<'a> {
    pub pod_name: &'a PodName,
    pub cwd: &'a Path,
    pub model: &'a str,
    /// The tools the segment offers, already shaped for `mode`
    /// (`crate::prompt::tools_for_mode`): the same specs go into its `segment_start`.
    pub tools: &'a [ToolSpec],
    /// MCP tools left for `tool_search` to load (docs/agent-loop.md §Tool search).
    pub deferred: &'a [ToolSpec],
    /// `start --instructions`, kept in `pod.json`.
    pub session_instructions: Option<&'a str>,
    pub date: &'a str,
    /// Full, or compact for a small window (`PromptMode::for_window`).
    pub mode: PromptMode,
}

impl PromptSettings {
    /// Render the layered system prompt for a new segment. Reads the instruction files: a
    /// caller on the controller's loop renders `inputs` on a blocking thread instead.
    pub fn render(&self, pod: &PromptFor<'_>) -> Result<RenderedPrompt, PromptError> {
        render_prompt(&self.inputs(pod))
    }

    /// Everything `render_prompt` needs, owned, so it can be rendered on another thread.
    pub fn inputs(&self, pod: &PromptFor<'_>) -> PromptInputs {
        // The compact prompt has its own one-line notes instead of the protocols.
        let tool_protocols = match pod.mode {
            PromptMode::Full => pod
                .tools
                .iter()
                .filter_map(|spec| {
                    let note = crate::catalogue::decl_for(&spec.name)?.note?;
                    Some((spec.name.clone(), note.into()))
                })
                .collect(),
            PromptMode::Small => Vec::new(),
        };
        PromptInputs {
            pod_name: pod.pod_name.clone(),
            cwd: pod.cwd.to_path_buf(),
            model: pod.model.to_string(),
            current_date: pod.date.to_string(),
            tools: pod.tools.to_vec(),
            deferred_tools: pod.deferred.to_vec(),
            tool_protocols,
            identity_file: self.identity_file.clone(),
            session_instructions: pod.session_instructions.map(str::to_string),
            config_dir: self.config_dir.clone(),
            mode: pod.mode,
            scope: self.scope.clone(),
        }
    }
}
