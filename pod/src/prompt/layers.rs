//! One function per prompt layer: where its text comes from, the section it becomes, and why it
//! is absent when it is.

use std::io;
use std::path::Path;

use minijinja::value::Value;
use seedpod_protocol::ToolSpec;
use seedpod_tools::Scope;

use super::{Layer, LayerKind, PromptError, PromptInputs, catalogue, template};
use crate::agents::{nearest_agents_md, open_agents_md};
use crate::completions::WORKFLOWS_DIR;
use crate::guard::group_thousands;
use crate::project_file::Refused;
use crate::references::{utf8_prefix_len, workflows};

/// Most bytes of `AGENTS.md` put into the prompt; a larger file is cut, with a note saying so.
pub const MAX_AGENTS_MD_BYTES: usize = 64 * 1024;

/// The built-in identity, used unless `PromptInputs::identity_file` replaces it.
const BUILT_IN_IDENTITY: &str = include_str!("identity.md");

/// The file in the config directory whose text is added to every pod's prompt.
pub const CUSTOM_INSTRUCTIONS_FILE: &str = "instructions.md";

fn present(kind: LayerKind, source: String, text: String) -> Layer {
    Layer {
        kind,
        source,
        text: Some(text),
        note: None,
        alert: None,
    }
}

fn absent(kind: LayerKind, source: String, note: String) -> Layer {
    Layer {
        kind,
        source,
        text: None,
        note: Some(note),
        alert: None,
    }
}

pub(super) fn identity(inputs: &PromptInputs, vars: &Value) -> Result<Layer, PromptError> {
    let kind = LayerKind::Identity;
    let Some(path) = &inputs.identity_file else {
        let text = template::render(kind, "built-in", "identity", BUILT_IN_IDENTITY, vars)?;
        return Ok(present(
            kind,
            "built-in".into(),
            text.trim_end().to_string(),
        ));
    };
    let source = path.display().to_string();
    let raw = std::fs::read_to_string(path).map_err(|source| PromptError::Read {
        what: "the identity file",
        path: path.clone(),
        cause: source,
    })?;
    let text = template::render(kind, &source, &short_name(path), &raw, vars)?;
    let text = text.trim();
    if text.is_empty() {
        return Ok(absent(kind, source, "the identity file is empty".into()));
    }
    Ok(present(kind, source, text.to_string()))
}

pub(super) fn tool_catalogue(tools: &[ToolSpec], deferred: &[ToolSpec]) -> Layer {
    let kind = LayerKind::ToolCatalogue;
    let source = format!("generated from {}", count(tools.len(), "tool", "tools"));
    if tools.is_empty() {
        return absent(kind, source, "no tools are enabled".into());
    }
    match catalogue::render(tools, deferred) {
        Some(text) => present(kind, source, text),
        None => absent(
            kind,
            source,
            "the tool schemas sent with each request describe the tools".into(),
        ),
    }
}

pub(super) fn tool_protocols(protocols: &[(String, String)]) -> Layer {
    let kind = LayerKind::ToolProtocols;
    let source = format!("protocols of {}", count(protocols.len(), "tool", "tools"));
    if protocols.is_empty() {
        return absent(kind, source, "no enabled tool has a protocol".into());
    }
    let mut text = String::from("# How to use your tools");
    for (name, protocol) in protocols {
        text.push_str(&format!("\n\n## {name}\n{}", protocol.trim()));
    }
    present(kind, source, text)
}

pub(super) fn workflows_layer(cwd: &Path, scope: Option<&Scope>) -> Layer {
    let kind = LayerKind::Workflows;
    let dir = cwd.join(WORKFLOWS_DIR);
    let found = workflows(cwd, scope);
    if found.is_empty() {
        let note = format!("no workflows in {}", dir.display());
        return absent(kind, dir.display().to_string(), note);
    }
    let mut text = String::from(
        "# Workflows\n\nThe user can start these workflows by typing /slug, optionally followed by \
         arguments. Its instructions then arrive in a [Workflow: /slug] message.\n",
    );
    for workflow in &found {
        text.push_str(&format!("\n- /{}", workflow.slug));
        if let Some(description) = &workflow.description {
            text.push_str(&format!(" — {description}"));
        }
        if let Some(arguments) = &workflow.arguments {
            text.push_str(&format!(" (arguments: {arguments})"));
        }
    }
    present(kind, dir.display().to_string(), text)
}

pub(super) fn session_instructions(
    instructions: Option<&str>,
    vars: &Value,
) -> Result<Layer, PromptError> {
    let kind = LayerKind::SessionInstructions;
    let source = "start --instructions".to_string();
    let Some(raw) = instructions else {
        return Ok(absent(
            kind,
            source,
            "none given when the pod was started".into(),
        ));
    };
    let text = template::render(kind, &source, "session instructions", raw, vars)?;
    if text.trim().is_empty() {
        return Ok(absent(
            kind,
            source,
            "the instructions given are empty".into(),
        ));
    }
    Ok(present(
        kind,
        source,
        format!("# Instructions for this pod\n\n{}", text.trim()),
    ))
}

/// `AGENTS.md` is data: not templated, so it may contain `{{` freely. At most `max_bytes` of it
/// are included (`MAX_AGENTS_MD_BYTES` in the full prompt). It is opened as a project file
/// (`agents::open_agents_md`): one that leads out of its directory is replaced by a note saying
/// so, and the person is alerted.
pub(super) fn project_instructions(
    inputs: &PromptInputs,
    max_bytes: usize,
) -> Result<Layer, PromptError> {
    let kind = LayerKind::ProjectInstructions;
    let cwd = &inputs.cwd;
    let Some(path) = nearest_agents_md(cwd) else {
        let note = format!("no AGENTS.md from {} upward", cwd.display());
        return Ok(absent(
            kind,
            format!("AGENTS.md from {} upward", cwd.display()),
            note,
        ));
    };
    let source = path.display().to_string();
    let read_error = |source| PromptError::Read {
        what: "the project instructions",
        path: path.clone(),
        cause: source,
    };
    let opened = match open_agents_md(&path, inputs.scope.as_deref()) {
        Ok(opened) => opened,
        Err(Refused::Io { reason, .. }) => return Err(read_error(io::Error::other(reason))),
        Err(refused) => return Ok(refused_instructions(source, &refused)),
    };
    let size = opened.len;
    let bytes = opened.head(max_bytes).map_err(read_error)?;
    let kept = if size > max_bytes as u64 {
        utf8_prefix_len(&bytes)
    } else {
        bytes.len()
    };
    let content = String::from_utf8_lossy(&bytes[..kept]);
    if content.trim().is_empty() {
        return Ok(absent(kind, source.clone(), format!("{source} is empty")));
    }
    let mut text = format!(
        "# Project instructions\n\nFrom {source}:\n\n{}",
        content.trim_end()
    );
    let mut note = None;
    if (kept as u64) < size {
        let (kept, size) = (group_thousands(kept), group_thousands(size as usize));
        text.push_str(&format!(
            "\n\n[… truncated: AGENTS.md is {size} bytes; only the first {kept} are included here. \
             Read the file for the rest.]"
        ));
        note = Some(format!("truncated to the first {kept} of {size} bytes"));
    }
    Ok(Layer {
        kind,
        source,
        text: Some(text),
        note,
        alert: None,
    })
}

/// The project-instructions layer for an `AGENTS.md` that was not read: the model learns that
/// there are instructions it was not given (so it does not guess at them), the person why.
fn refused_instructions(source: String, refused: &Refused) -> Layer {
    Layer {
        kind: LayerKind::ProjectInstructions,
        text: Some(format!(
            "# Project instructions\n\nNot included: {}.",
            refused.for_model()
        )),
        note: Some(format!("not read: {refused}")),
        alert: Some(format!(
            "the project instructions were not read: {refused}. Replace the link with the file \
             itself if you want them in the prompt"
        )),
        source,
    }
}

pub(super) fn custom_instructions(
    config_dir: Option<&Path>,
    vars: &Value,
) -> Result<Layer, PromptError> {
    let kind = LayerKind::CustomInstructions;
    let Some(config_dir) = config_dir else {
        return Ok(absent(
            kind,
            "none".into(),
            "no config directory was given".into(),
        ));
    };
    let path = config_dir.join(CUSTOM_INSTRUCTIONS_FILE);
    let source = path.display().to_string();
    let raw = match std::fs::read_to_string(&path) {
        Ok(raw) => raw,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(absent(kind, source.clone(), format!("no {source}")));
        }
        Err(source) => {
            return Err(PromptError::Read {
                what: "the custom instructions",
                path,
                cause: source,
            });
        }
    };
    let text = template::render(kind, &source, CUSTOM_INSTRUCTIONS_FILE, &raw, vars)?;
    if text.trim().is_empty() {
        return Ok(absent(kind, source.clone(), format!("{source} is empty")));
    }
    Ok(present(
        kind,
        source,
        format!("# Custom instructions\n\n{}", text.trim()),
    ))
}

/// A file's name, for template errors' line references.
fn short_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
