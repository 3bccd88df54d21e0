//! What a new segment starts with — its prompt mode, the tools it offers (shaped for that mode)
//! and the inputs of its system prompt — decided one way for a new pod, a segment switch and
//! `seedpod prompt show`, so what `prompt show` prints is what a new segment would get.
//!
//! Planning is cheap and reads no file; rendering (`Planned::render`) reads the instruction
//! files, so the controller runs it on a blocking thread.

use std::path::Path;

use seedpod_protocol::{PodName, ToolSpec};

use crate::prompt::{PromptError, PromptInputs, PromptMode, RenderedPrompt, render_prompt};
use crate::session::{PromptFor, PromptSettings};

/// What a segment's prompt is planned from.
pub struct Plan<'a> {
    pub prompt: &'a PromptSettings,
    pub pod_name: &'a PodName,
    pub cwd: &'a Path,
    pub model: &'a str,
    /// `start --instructions`, kept in `pod.json`.
    pub session_instructions: Option<&'a str>,
    /// The context window in tokens, when known: a small one calls for the compact prompt.
    pub window: Option<u64>,
    /// Every tool the pod offers now (built-in, pod, child and MCP tools), in offer order.
    pub specs: &'a [ToolSpec],
    /// Whether the compact prompt keeps the child-pod tools (`[context]`).
    pub child_tools_in_compact: bool,
    /// When the MCP tools wait behind `tool_search` (`[tool_search]`).
    pub tool_search: crate::tool_search::Budget,
    /// The tools of the segment before (none for a new pod): the MCP tools it loaded stay
    /// loaded, so the messages a compaction keeps never call a tool the request lacks.
    pub previous: &'a [ToolSpec],
}

/// A planned segment: render its prompt, then start it with `tools`.
pub struct Planned {
    pub mode: PromptMode,
    pub tools: Vec<ToolSpec>,
    /// The MCP tools left for `tool_search` to load (docs/agent-loop.md §Tool search).
    pub deferred: Vec<ToolSpec>,
    pub inputs: PromptInputs,
    /// The day the prompt says it is (`segment_start.date`).
    pub date: String,
}

impl Planned {
    /// Render the system prompt (reads the instruction files).
    pub fn render(&self) -> Result<RenderedPrompt, PromptError> {
        render_prompt(&self.inputs)
    }
}

/// Decide the mode, shape the tools for it and gather the prompt's inputs, dated today.
pub fn plan(plan: &Plan<'_>) -> Planned {
    let mode = PromptMode::for_window(plan.window);
    let (offered, deferred) =
        crate::tool_search::split(plan.specs, &plan.tool_search, plan.window, plan.previous);
    let tools = crate::prompt::tools_for_mode(&offered, mode, plan.child_tools_in_compact);
    let date = crate::calendar::today();
    let inputs = plan.prompt.inputs(&PromptFor {
        pod_name: plan.pod_name,
        cwd: plan.cwd,
        model: plan.model,
        tools: &tools,
        deferred: &deferred,
        session_instructions: plan.session_instructions,
        date: &date,
        mode,
    });
    Planned {
        mode,
        tools,
        deferred,
        inputs,
        date,
    }
}
