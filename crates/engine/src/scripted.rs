//! `ScriptedProvider`: a deterministic TEST AND DEMO DOUBLE that answers each request with the next
//! line of a JSON-lines script. It is never a default: a pod uses it only when configured with
//! `--provider scripted --script FILE`.
//!
//! It exists so the whole product (controller, log, replay, clients, end-to-end tests, demos) can
//! run without a network or an API key, while exercising the same streaming paths a real provider
//! does: chunked deltas, reasoning, tool calls, usage, slow responses and failures. A `gate` file
//! lets a test hold a response mid-stream (to pause, cancel or attach at a known point).
//!
//! The script format lives in `script.rs`, the streaming order in `plan.rs`, the persisted cursor
//! in `cursor.rs`; this file plays a plan as a stream.

mod cursor;
mod plan;
mod script;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use seedpod_protocol::{ModelItem, PodName, ProviderKind, ToolSpec};
use serde::Serialize;

use self::cursor::Cursor;
use self::plan::{Action, PlanInput};
pub use self::script::{
    DEFAULT_CHUNK_CHARS, ScriptError, ScriptStep, ScriptToolCall, ScriptedErrorKind,
    ScriptedFailure, parse_script,
};
use crate::provider::{Context, EventStream, Provider, ProviderError, ProviderEvent};

/// How often a gated response checks for its gate file. Polling is acceptable only because this is
/// a test double; nothing real waits like this.
const GATE_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Plays a script; see the module doc. Cheap to stream from: each stream clones only `Arc`s.
pub struct ScriptedProvider {
    playback: Playback,
}

impl ScriptedProvider {
    /// Load `script`. With `record`, every request body is appended there and the script resumes
    /// after the requests already recorded.
    pub fn from_file(script: &Path, record: Option<PathBuf>) -> Result<Self, ScriptError> {
        Self::from_file_for(script, record, None)
    }

    /// Like `from_file`, for pod `pod`: it plays the steps tagged `"pod": "<pod>"`, or the
    /// untagged steps when none carry its name (so a parent and its children can share one
    /// script, each with its own cursor).
    pub fn from_file_for(
        script: &Path,
        record: Option<PathBuf>,
        pod: Option<&PodName>,
    ) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(script).map_err(|source| ScriptError::Read {
            path: script.to_path_buf(),
            cause: source,
        })?;
        let steps = steps_for(parse_script(&text, script)?, pod.map(PodName::as_str));
        Ok(ScriptedProvider {
            playback: Playback::new(
                steps,
                script.parent(),
                script.display().to_string(),
                Cursor::open(record)?,
            ),
        })
    }

    /// Play `steps` given in code. Relative gate paths are resolved against the working directory.
    /// Fails only if `record` exists and cannot be read.
    pub fn from_steps(
        steps: Vec<ScriptStep>,
        record: Option<PathBuf>,
    ) -> Result<Self, ScriptError> {
        Ok(ScriptedProvider {
            playback: Playback::new(
                steps,
                None,
                "the steps passed to ScriptedProvider::from_steps".to_owned(),
                Cursor::open(record)?,
            ),
        })
    }
}

/// The steps pod `pod` plays (see `from_file_for`).
fn steps_for(steps: Vec<ScriptStep>, pod: Option<&str>) -> Vec<ScriptStep> {
    let tagged = pod.is_some_and(|pod| steps.iter().any(|s| s.pod.as_deref() == Some(pod)));
    let want = if tagged { pod } else { None };
    steps
        .into_iter()
        .filter(|s| s.pod.as_deref() == want)
        .collect()
}

/// The scripted request body: the whole context in a fixed field order.
#[derive(Serialize)]
struct ScriptedRequest<'a> {
    model: &'a str,
    system: &'a str,
    tools: &'a [ToolSpec],
    items: &'a [ModelItem],
}

impl Provider for ScriptedProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Scripted
    }

    fn request_body(&self, ctx: &Context<'_>) -> String {
        let request = ScriptedRequest {
            model: &ctx.model.model,
            system: ctx.system_prompt,
            tools: ctx.tools,
            items: ctx.items,
        };
        // Structs of strings and `serde_json::Value`s (string-keyed, sorted maps) always
        // serialise; there is no input that makes this fail.
        crate::provider::body_json(&request)
    }

    fn stream(&self, body: String) -> EventStream {
        let player = Player {
            playback: self.playback.clone(),
            body: Some(body),
            actions: VecDeque::new(),
        };
        futures::stream::unfold(player, |mut player| async move {
            let item = player.next().await?;
            Some((item, player))
        })
        .boxed()
    }
}

/// The script and its cursor, shared by the provider and every stream it returns (streams are
/// `'static`, so they own a clone).
#[derive(Clone)]
struct Playback {
    steps: Arc<[ScriptStep]>,
    /// Each step's gate, resolved against the script's directory.
    gates: Arc<[Option<PathBuf>]>,
    /// Where more responses can be added, for the "script exhausted" message.
    source: Arc<str>,
    cursor: Arc<Cursor>,
}

impl Playback {
    fn new(
        steps: Vec<ScriptStep>,
        base_dir: Option<&Path>,
        source: String,
        cursor: Cursor,
    ) -> Self {
        let gates = steps
            .iter()
            .map(|step| {
                let gate = step.gate.as_deref()?;
                Some(match base_dir {
                    Some(dir) if gate.is_relative() => dir.join(gate),
                    Some(_) | None => gate.to_path_buf(),
                })
            })
            .collect();
        Playback {
            steps: steps.into(),
            gates,
            source: source.into(),
            cursor: Arc::new(cursor),
        }
    }
}

/// One request in flight: claims its step on the first poll, then executes that step's plan.
struct Player {
    playback: Playback,
    /// The request body, until the step is claimed.
    body: Option<String>,
    actions: VecDeque<Action>,
}

impl Player {
    async fn next(&mut self) -> Option<Result<ProviderEvent, ProviderError>> {
        if let Some(body) = self.body.take() {
            match self.start(body).await {
                Ok(actions) => self.actions = actions.into(),
                Err(err) => return Some(Err(err)),
            }
        }
        while let Some(action) = self.actions.pop_front() {
            match action {
                Action::Emit(event) => return Some(Ok(event)),
                Action::Sleep(duration) => tokio::time::sleep(duration).await,
                Action::Gate(path) => wait_for_gate(&path).await,
                Action::Fail(err) => {
                    self.actions.clear();
                    return Some(Err(err));
                }
            }
        }
        None
    }

    /// Record the request, claim the next step and plan it.
    async fn start(&self, body: String) -> Result<Vec<Action>, ProviderError> {
        let body_chars = body.chars().count();
        let index = claim(self.playback.cursor.clone(), body).await?;
        let steps = &self.playback.steps;
        let Some(step) = steps.get(index) else {
            return Err(ProviderError::permanent(format!(
                "scripted provider: script exhausted after {} responses (add lines to {})",
                steps.len(),
                self.playback.source
            )));
        };
        Ok(plan::plan(PlanInput {
            step,
            request_number: index + 1,
            body_chars,
            gate: self.playback.gates.get(index).cloned().flatten(),
        }))
    }
}

/// Claim a step, doing the record file's I/O off the runtime.
async fn claim(cursor: Arc<Cursor>, body: String) -> Result<usize, ProviderError> {
    if !cursor.records_to_disk() {
        return cursor.claim(&body);
    }
    tokio::task::spawn_blocking(move || cursor.claim(&body))
        .await
        .unwrap_or_else(|err| {
            Err(ProviderError::permanent(format!(
                "scripted provider: recording the request failed: {err}"
            )))
        })
}

async fn wait_for_gate(path: &Path) {
    while !tokio::fs::try_exists(path).await.unwrap_or(false) {
        tokio::time::sleep(GATE_POLL_INTERVAL).await;
    }
}
