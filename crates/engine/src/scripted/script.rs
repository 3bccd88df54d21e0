//! The script format: JSON lines, one scripted response per line.
//!
//! Unknown fields are rejected rather than ignored, because a misspelt field in a test script
//! (`"txet"`) would otherwise silently produce an empty response and a confusing test failure far
//! from the typo. Every error names the file and line.

use std::path::{Path, PathBuf};

use seedpod_protocol::Usage;
use serde::{Deserialize, Serialize};

use crate::provider::ProviderError;

/// Characters per streamed delta when a step does not say.
pub const DEFAULT_CHUNK_CHARS: usize = 16;

/// One scripted response. Every field is optional; an empty step answers with nothing and stops.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptStep {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptToolCall>,
    /// Reported usage; estimated from character counts when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Characters per delta; `DEFAULT_CHUNK_CHARS` when absent. Must be at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_chars: Option<usize>,
    /// Wait before the first event, as a slow model would.
    #[serde(default)]
    pub delay_ms: u64,
    /// Wait between consecutive deltas.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// Hold the response after its first text chunk until this file exists. Relative paths are
    /// resolved against the script file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<PathBuf>,
    /// Fail the request instead of (or, with `error_after_chars`, partway through) answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ScriptedFailure>,
    /// Stream this many characters of `text` before failing with `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_after_chars: Option<usize>,
    /// The pod that plays this step, so one script can drive a parent and its children: a pod
    /// plays the steps tagged with its name, or, if none are, the untagged ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
}

impl ScriptStep {
    /// A step that answers with plain text.
    pub fn text(text: impl Into<String>) -> Self {
        ScriptStep {
            text: Some(text.into()),
            ..ScriptStep::default()
        }
    }

    /// The delta size to stream with; never zero.
    pub fn chunk_size(&self) -> usize {
        self.chunk_chars.unwrap_or(DEFAULT_CHUNK_CHARS).max(1)
    }

    /// What is wrong with this step beyond its JSON shape, if anything.
    fn problem(&self) -> Option<&'static str> {
        if self.chunk_chars == Some(0) {
            return Some("chunk_chars must be at least 1");
        }
        if self.error_after_chars.is_some() && self.error.is_none() {
            return Some("error_after_chars needs an error to fail with");
        }
        None
    }
}

/// One tool call in a scripted response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptToolCall {
    /// The call id; `call_<request>_<index>` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// The raw argument text exactly as the model would stream it (it need not be valid JSON).
    #[serde(default)]
    pub arguments: String,
}

/// A scripted failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedFailure {
    pub kind: ScriptedErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedErrorKind {
    Transient,
    Permanent,
}

impl ScriptedFailure {
    pub fn to_error(&self) -> ProviderError {
        let message = self.message.clone();
        match self.kind {
            ScriptedErrorKind::Transient => ProviderError::transient(message),
            ScriptedErrorKind::Permanent => ProviderError::permanent(message),
        }
    }
}

/// Why a script or its record file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the script {}: {cause}", .path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "{}:{line}: {message} (each line is one response, e.g. {{\"text\": \"hello\"}})",
        .path.display()
    )]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("cannot read the scripted provider's record file {}: {cause}", .path.display())]
    Record {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// Parse a whole script. `path` is only used in error messages.
pub fn parse_script(text: &str, path: &Path) -> Result<Vec<ScriptStep>, ScriptError> {
    let mut steps = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        let line_error = |message: String| ScriptError::Line {
            path: path.to_path_buf(),
            line: index + 1,
            message,
        };
        let step: ScriptStep =
            serde_json::from_str(trimmed).map_err(|err| line_error(describe(&err)))?;
        if let Some(problem) = step.problem() {
            return Err(line_error(problem.to_owned()));
        }
        steps.push(step);
    }
    Ok(steps)
}

/// serde_json's message without its "at line 1 column N" suffix, which would be misleading next
/// to the real line number; the column is kept.
fn describe(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match full.strip_suffix(&suffix) {
        Some(message) => format!("{message} (column {})", err.column()),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<ScriptStep>, ScriptError> {
        parse_script(text, Path::new("demo.jsonl"))
    }

    #[test]
    fn skips_blank_and_comment_lines() {
        let steps = parse("// greeting\n\n{\"text\":\"hi\"}\n   \n  // end\n{}\n").unwrap();
        assert_eq!(steps, vec![ScriptStep::text("hi"), ScriptStep::default()]);
    }

    #[test]
    fn unknown_field_names_file_and_line() {
        let err = parse("// one\n{\"text\":\"ok\"}\n\n{\"txet\":\"typo\"}\n").unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(err, ScriptError::Line { line: 4, .. }),
            "{message}"
        );
        assert!(
            message.starts_with("demo.jsonl:4: unknown field `txet`"),
            "{message}"
        );
        assert!(!message.contains("at line 1"), "{message}");
    }

    #[test]
    fn unknown_tool_call_field_is_rejected() {
        let err = parse(r#"{"tool_calls":[{"name":"x","args":"{}"}]}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `args`"), "{err}");
    }

    #[test]
    fn zero_chunk_chars_is_rejected() {
        let err = parse(r#"{"text":"a","chunk_chars":0}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "demo.jsonl:1: chunk_chars must be at least 1 (each line is one response, e.g. {\"text\": \"hello\"})"
        );
    }

    #[test]
    fn error_after_chars_needs_an_error() {
        let err = parse(r#"{"text":"abc","error_after_chars":1}"#).unwrap_err();
        assert!(err.to_string().contains("needs an error"), "{err}");
    }

    #[test]
    fn every_field_parses() {
        let steps = parse(
            r#"{"text":"t","thinking":"th","signature":"s","tool_calls":[{"id":"c","name":"n","arguments":"{\"a\":1}"}],"usage":{"input_tokens":1,"output_tokens":2},"chunk_chars":8,"delay_ms":5,"chunk_delay_ms":6,"gate":"g","error":{"kind":"transient","message":"m"},"error_after_chars":3}"#,
        )
        .unwrap();
        let step = &steps[0];
        assert_eq!(step.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(step.usage.map(|u| u.output_tokens), Some(2));
        assert_eq!(step.chunk_size(), 8);
        assert_eq!(
            step.error.as_ref().map(ScriptedFailure::to_error),
            Some(ProviderError::transient("m"))
        );
    }
}
