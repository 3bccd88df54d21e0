//! The layers of the compact prompt (`PromptMode::Small`), for models with a small window.
//! Same seven layers in the same order as the full prompt, each much shorter:
//! - identity: `identity_small.md` (a person's identity file is kept, capped);
//! - tool catalogue: absent — the schemas sent with every request already describe the tools;
//! - tool protocols: one line per tool instead of the BEFORE/AFTER/NEXT/GOTCHA notes;
//! - workflows: a one-line pointer instead of the catalogue;
//! - session, project and custom instructions: kept, capped harder, with a note when cut.

use minijinja::value::Value;
use seedpod_protocol::ToolSpec;

use super::{Layer, LayerKind, PromptError, PromptInputs, layers, template};
use crate::completions::WORKFLOWS_DIR;
use crate::guard::group_thousands;
use crate::references::workflows;

/// Most bytes of `AGENTS.md` in the compact prompt (about 500 tokens).
pub const SMALL_MAX_AGENTS_MD_BYTES: usize = 2 * 1024;
/// Most bytes of each layer a person writes (identity file, session and custom instructions)
/// in the compact prompt (about 250 tokens each).
pub const SMALL_MAX_INSTRUCTIONS_BYTES: usize = 1024;

const SMALL_IDENTITY: &str = include_str!("identity_small.md");

/// The compact prompt's layers, in prompt order.
pub(super) fn layers(inputs: &PromptInputs, vars: &Value) -> Result<Vec<Layer>, PromptError> {
    Ok(vec![
        identity(inputs, vars)?,
        Layer {
            kind: LayerKind::ToolCatalogue,
            source: format!("compact prompt, {} tools", inputs.tools.len()),
            text: None,
            note: Some(
                "compact prompt: the tool schemas sent with each request describe the tools".into(),
            ),
            alert: None,
        },
        tool_notes(&inputs.tools),
        workflow_pointer(inputs),
        capped(layers::session_instructions(
            inputs.session_instructions.as_deref(),
            vars,
        )?),
        layers::project_instructions(inputs, SMALL_MAX_AGENTS_MD_BYTES)?,
        capped(layers::custom_instructions(
            inputs.config_dir.as_deref(),
            vars,
        )?),
    ])
}

fn identity(inputs: &PromptInputs, vars: &Value) -> Result<Layer, PromptError> {
    if inputs.identity_file.is_some() {
        return Ok(capped(layers::identity(inputs, vars)?));
    }
    let kind = LayerKind::Identity;
    let text = template::render(kind, "built-in", "identity", SMALL_IDENTITY, vars)?;
    Ok(Layer {
        kind,
        source: "built-in, compact".into(),
        text: Some(text.trim_end().to_string()),
        note: None,
        alert: None,
    })
}

/// `# Tools` with one line for each offered tool that has a note.
fn tool_notes(tools: &[ToolSpec]) -> Layer {
    let kind = LayerKind::ToolProtocols;
    let notes: Vec<(&str, &str)> = tools
        .iter()
        .filter_map(|tool| tool_note(&tool.name).map(|note| (tool.name.as_str(), note)))
        .collect();
    let source = format!(
        "one-line notes for {} of {} tools",
        notes.len(),
        tools.len()
    );
    if notes.is_empty() {
        return Layer {
            kind,
            source,
            text: None,
            note: Some("no offered tool has a note".into()),
            alert: None,
        };
    }
    let mut text = String::from("# Tools");
    for (name, note) in notes {
        text.push_str(&format!("\n- {name}: {note}"));
    }
    Layer {
        kind,
        source,
        text: Some(text),
        note: None,
        alert: None,
    }
}

/// The one-line note a tool's declaration gives for the compact prompt: what its schema does
/// not say and a model gets wrong most.
fn tool_note(name: &str) -> Option<&'static str> {
    crate::catalogue::decl_for(name)?.small_note
}

fn workflow_pointer(inputs: &PromptInputs) -> Layer {
    let kind = LayerKind::Workflows;
    let dir = inputs.cwd.join(WORKFLOWS_DIR);
    let source = dir.display().to_string();
    let count = workflows(&inputs.cwd, inputs.scope.as_deref()).len();
    if count == 0 {
        let note = format!("no workflows in {source}");
        return Layer {
            kind,
            source,
            text: None,
            note: Some(note),
            alert: None,
        };
    }
    Layer {
        kind,
        source,
        text: Some(
            "# Workflows\nThe user can start the workflows in .seedpod/workflows/ by typing /slug; \
             their instructions arrive in a [Workflow: /slug] message."
                .into(),
        ),
        note: Some(format!("compact prompt: {count} not listed")),
        alert: None,
    }
}

/// `layer` with its text cut to `SMALL_MAX_INSTRUCTIONS_BYTES` (at a character boundary),
/// saying so to the model and in the layer's note.
fn capped(layer: Layer) -> Layer {
    let Some(text) = &layer.text else {
        return layer;
    };
    let max = SMALL_MAX_INSTRUCTIONS_BYTES;
    if text.len() <= max {
        return layer;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let (kept, size) = (group_thousands(end), group_thousands(text.len()));
    let cut = format!(
        "{}\n\n[… truncated for a small context window: only the first {kept} of {size} bytes of \
         this section are included.]",
        text[..end].trim_end()
    );
    Layer {
        text: Some(cut),
        note: Some(format!(
            "truncated to the first {kept} of {size} bytes (compact prompt)"
        )),
        ..layer
    }
}
