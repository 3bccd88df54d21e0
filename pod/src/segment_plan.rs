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
}

/// A planned segment: render its prompt, then start it with `tools`.
pub struct Planned {
    pub mode: PromptMode,
    pub tools: Vec<ToolSpec>,
    pub inputs: PromptInputs,
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
    let tools = crate::prompt::tools_for_mode(plan.specs, mode, plan.child_tools_in_compact);
    let inputs = plan.prompt.inputs(&PromptFor {
        pod_name: plan.pod_name,
        cwd: plan.cwd,
        model: plan.model,
        tools: &tools,
        session_instructions: plan.session_instructions,
        date: &today(),
        mode,
    });
    Planned {
        mode,
        tools,
        inputs,
    }
}

/// Today's UTC date as `YYYY-MM-DD` (civil-from-days; no calendar crate needed for this).
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil_date(secs / 86_400)
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (UTC).
pub fn civil_date(days_since_epoch: u64) -> String {
    // Howard Hinnant's days→civil algorithm, for days on or after 1970-01-01.
    let z = days_since_epoch as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::civil_date;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }
}
