//! The layered system prompt. Rendered once when a segment starts and stored in its
//! `segment_start` entry (invariant 2), so `render_prompt` is a pure function of its inputs and
//! the files it reads: the same inputs and files give the same bytes.
//!
//! Layers, in order, each present or absent (`Layer::text` is None when absent):
//! 1. identity — built-in (`identity.md`) or `PromptInputs::identity_file`;
//! 2. tool catalogue — what the schemas cannot say: MCP tools' origin, tools behind
//!    `tool_search` (the schemas, sent with every request, describe every tool once);
//! 3. tool protocols — how to use each enabled tool, as given by the caller;
//! 4. workflows — `<cwd>/.seedpod/workflows/*.md`, from their front matter;
//! 5. session instructions — given when the pod was created;
//! 6. project instructions — the nearest `AGENTS.md` from cwd upward, capped at 64 KiB, read as
//!    a project file (`project_file.rs`): a link out of its directory gives a note, not its text;
//! 7. custom instructions — `<config_dir>/instructions.md`.
//!
//! Templating (`minijinja`, strict: an undefined variable is an error naming its layer and file)
//! applies only to the layers people write as instructions: identity, session and custom
//! instructions. Variables: `current_date`, `cwd`, `pod_name`, `model`, `tools` (tool names).
//! AGENTS.md, workflow and tool text are data and are never templated, so they may contain `{{`.
//!
//! Two modes (`mode.rs`): the full prompt, and a compact one for models with a small window
//! (`small.rs` builds its layers, `tool_specs.rs` shortens the tool schemas it offers).
//!
//! Files: `layers.rs` builds each layer, `catalogue.rs` writes tool schemas for a reader,
//! `template.rs` wraps minijinja.

mod catalogue;
mod layers;
mod mode;
mod small;
mod template;
mod tool_specs;

use std::path::PathBuf;
use std::sync::Arc;

use seedpod_protocol::{PodName, ToolSpec};
use seedpod_tools::Scope;

use crate::guard::group_thousands;

pub use layers::{CUSTOM_INSTRUCTIONS_FILE, MAX_AGENTS_MD_BYTES};
pub use mode::PromptMode;
pub use small::{SMALL_MAX_AGENTS_MD_BYTES, SMALL_MAX_INSTRUCTIONS_BYTES};
pub use template::VARIABLES;
pub use tool_specs::{small_tool_specs, tools_for_mode};

/// Everything a system prompt is rendered from, besides the files it reads.
#[derive(Debug, Clone)]
pub struct PromptInputs {
    pub pod_name: PodName,
    /// The pod's working directory: where workflows and `AGENTS.md` are looked up.
    pub cwd: PathBuf,
    pub model: String,
    /// Passed in rather than read from the clock, so rendering stays a function of its inputs.
    pub current_date: String,
    pub tools: Vec<ToolSpec>,
    /// MCP tools the segment does not offer up front: `tool_search` finds and loads them
    /// (docs/agent-loop.md §Tool search). The prompt names them so the model knows to look.
    pub deferred_tools: Vec<ToolSpec>,
    /// (tool name, protocol text) for the enabled tools, in the order to show them.
    pub tool_protocols: Vec<(String, String)>,
    /// Replaces the built-in identity; an unreadable file is an error naming it.
    pub identity_file: Option<PathBuf>,
    /// Given when the pod was created (`start --instructions`).
    pub session_instructions: Option<String>,
    /// seedpod's config directory, which may hold `instructions.md` (`None` skips the layer).
    pub config_dir: Option<PathBuf>,
    /// Full, or compact for a small window. `tools` are the specs the segment offers in this
    /// mode (`tools_for_mode`).
    pub mode: PromptMode,
    /// The pod's file scope: a project file (`AGENTS.md`, a workflow) may be a link into what
    /// it lets the model read, besides its own directory (`project_file.rs`). `None`: only
    /// its own directory.
    pub scope: Option<Arc<Scope>>,
}

/// Which layer, in prompt order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    Identity,
    ToolCatalogue,
    ToolProtocols,
    Workflows,
    SessionInstructions,
    ProjectInstructions,
    CustomInstructions,
}

impl LayerKind {
    /// Every layer, in the order they appear in the prompt.
    pub const ALL: [LayerKind; 7] = [
        LayerKind::Identity,
        LayerKind::ToolCatalogue,
        LayerKind::ToolProtocols,
        LayerKind::Workflows,
        LayerKind::SessionInstructions,
        LayerKind::ProjectInstructions,
        LayerKind::CustomInstructions,
    ];

    /// The layer's name for people (`seedpod prompt show`, errors).
    pub fn label(&self) -> &'static str {
        match self {
            LayerKind::Identity => "identity",
            LayerKind::ToolCatalogue => "tool catalogue",
            LayerKind::ToolProtocols => "tool protocols",
            LayerKind::Workflows => "workflows",
            LayerKind::SessionInstructions => "session instructions",
            LayerKind::ProjectInstructions => "project instructions",
            LayerKind::CustomInstructions => "custom instructions",
        }
    }
}

/// One layer as rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub kind: LayerKind,
    /// Where the text came from: `built-in`, a path, `start --instructions`,
    /// `generated from 7 tools`.
    pub source: String,
    /// The layer's section exactly as it appears in the prompt; None when absent.
    pub text: Option<String>,
    /// Something a person should know: that the layer was truncated, or why it is absent.
    pub note: Option<String>,
    /// What the person must be told when the prompt is rendered (a project file that was
    /// refused, and where it led), raised as an alert by whoever renders it.
    pub alert: Option<String>,
}

/// The system prompt and how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedPrompt {
    /// The present layers' texts, in order, separated by a blank line.
    pub text: String,
    /// All seven layers, present or not, in order.
    pub layers: Vec<Layer>,
    /// The mode it was rendered in.
    pub mode: PromptMode,
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read {what} {}: {cause}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("the {layer} layer ({origin}) is not a valid template: {message}")]
    Template {
        layer: &'static str,
        origin: String,
        message: String,
    },
}

/// Render the system prompt for a new segment. Reads the identity file, the workflows, the
/// nearest `AGENTS.md` and the custom instructions; the caller runs it off the async runtime.
pub fn render_prompt(inputs: &PromptInputs) -> Result<RenderedPrompt, PromptError> {
    let vars = template::variables(inputs);
    let layers = match inputs.mode {
        PromptMode::Full => vec![
            layers::identity(inputs, &vars)?,
            layers::tool_catalogue(&inputs.tools, &inputs.deferred_tools),
            layers::tool_protocols(&inputs.tool_protocols),
            layers::workflows_layer(&inputs.cwd, inputs.scope.as_deref()),
            layers::session_instructions(inputs.session_instructions.as_deref(), &vars)?,
            layers::project_instructions(inputs, MAX_AGENTS_MD_BYTES)?,
            layers::custom_instructions(inputs.config_dir.as_deref(), &vars)?,
        ],
        PromptMode::Small => small::layers(inputs, &vars)?,
    };
    let text = layers
        .iter()
        .filter_map(|layer| layer.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok(RenderedPrompt {
        text,
        layers,
        mode: inputs.mode,
    })
}

impl RenderedPrompt {
    /// What the person must be told about this rendering (`Layer::alert`), in layer order.
    pub fn alerts(&self) -> Vec<String> {
        self.layers.iter().filter_map(|l| l.alert.clone()).collect()
    }

    /// The prompt layer by layer, for `seedpod prompt show`: a header line per layer naming its
    /// source (and note), then its text; absent layers as one line saying why.
    pub fn explain(&self) -> String {
        let present = self.layers.iter().filter(|l| l.text.is_some()).count();
        let mut out = format!(
            "system prompt: {} characters from {present} of {} layers",
            group_thousands(self.text.chars().count()),
            self.layers.len(),
        );
        for layer in &self.layers {
            let label = layer.kind.label();
            out.push_str("\n\n");
            match (&layer.text, &layer.note) {
                (Some(text), None) => {
                    out.push_str(&format!("── {label} ({}) ──\n{text}", layer.source));
                }
                (Some(text), Some(note)) => {
                    out.push_str(&format!("── {label} ({}; {note}) ──\n{text}", layer.source));
                }
                (None, note) => {
                    let why = note.as_deref().unwrap_or(&layer.source);
                    out.push_str(&format!("── {label}: absent ({why}) ──"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
