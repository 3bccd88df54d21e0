//! Turning one script step into the exact sequence of things its stream does.
//!
//! Planning is pure so the streaming order (thinking, signature, text, gate, tool calls, usage,
//! finish) is decided in one place and can be tested without a runtime; the player in
//! `scripted.rs` only executes the plan.

use std::path::PathBuf;
use std::time::Duration;

use seedpod_protocol::{CallId, FinishReason, Usage};

use super::script::ScriptStep;
use crate::provider::{ProviderError, ProviderEvent};

/// Characters per estimated token when a step gives no usage (a rough, deterministic guess).
const CHARS_PER_TOKEN: usize = 4;

/// One thing the scripted stream does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Emit(ProviderEvent),
    Sleep(Duration),
    /// Wait until this file exists.
    Gate(PathBuf),
    /// Yield this error and end the stream.
    Fail(ProviderError),
}

/// What a plan is made from besides the step itself.
pub struct PlanInput<'a> {
    pub step: &'a ScriptStep,
    /// 1-based number of this request, used in generated call ids.
    pub request_number: usize,
    /// Characters in the request body, for the usage estimate.
    pub body_chars: usize,
    /// The step's gate, already resolved to a usable path.
    pub gate: Option<PathBuf>,
}

pub fn plan(input: PlanInput<'_>) -> Vec<Action> {
    let step = input.step;
    let mut plan = Plan {
        actions: Vec::new(),
        chunk_size: step.chunk_size(),
        chunk_delay: Duration::from_millis(step.chunk_delay_ms),
        deltas: 0,
        output_chars: 0,
    };
    if step.delay_ms > 0 {
        plan.actions
            .push(Action::Sleep(Duration::from_millis(step.delay_ms)));
    }
    if let (Some(failure), None) = (&step.error, step.error_after_chars) {
        plan.actions.push(Action::Fail(failure.to_error()));
        return plan.actions;
    }

    let thinking = step.thinking.as_deref().unwrap_or_default();
    for chunk in char_chunks(thinking, plan.chunk_size) {
        plan.delta(chunk, ProviderEvent::ThinkingDelta(chunk.to_owned()));
    }
    if let Some(signature) = &step.signature {
        plan.actions
            .push(Action::Emit(ProviderEvent::ThinkingSignature(
                signature.clone(),
            )));
    }

    let full_text = step.text.as_deref().unwrap_or_default();
    let text = match step.error_after_chars {
        Some(limit) => prefix_chars(full_text, limit),
        None => full_text,
    };
    let mut text_chunks = char_chunks(text, plan.chunk_size);
    if let Some(first) = text_chunks.next() {
        plan.delta(first, ProviderEvent::TextDelta(first.to_owned()));
    }
    if let Some(gate) = input.gate {
        plan.actions.push(Action::Gate(gate));
    }
    for chunk in text_chunks {
        plan.delta(chunk, ProviderEvent::TextDelta(chunk.to_owned()));
    }
    if let Some(failure) = &step.error {
        plan.actions.push(Action::Fail(failure.to_error()));
        return plan.actions;
    }

    for (i, call) in step.tool_calls.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let call_id = call
            .id
            .clone()
            .unwrap_or_else(|| format!("call_{}_{i}", input.request_number));
        plan.actions
            .push(Action::Emit(ProviderEvent::ToolCallStart {
                index,
                call_id: CallId::new(call_id),
                name: call.name.clone(),
            }));
        for chunk in char_chunks(&call.arguments, plan.chunk_size) {
            let arguments = chunk.to_owned();
            plan.delta(chunk, ProviderEvent::ToolCallDelta { index, arguments });
        }
    }

    let usage = step.usage.unwrap_or(Usage {
        input_tokens: estimate_tokens(input.body_chars),
        output_tokens: estimate_tokens(plan.output_chars),
        ..Usage::default()
    });
    let finish = if step.tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolUse
    };
    plan.actions.push(Action::Emit(ProviderEvent::Usage(usage)));
    plan.actions
        .push(Action::Emit(ProviderEvent::Finish(finish)));
    plan.actions
}

/// The plan under construction: actions plus what chunk delays and the usage estimate need.
struct Plan {
    actions: Vec<Action>,
    chunk_size: usize,
    chunk_delay: Duration,
    /// Deltas emitted so far; the chunk delay goes between deltas, not before the first.
    deltas: usize,
    output_chars: usize,
}

impl Plan {
    fn delta(&mut self, chunk: &str, event: ProviderEvent) {
        if self.deltas > 0 && !self.chunk_delay.is_zero() {
            self.actions.push(Action::Sleep(self.chunk_delay));
        }
        self.deltas += 1;
        self.output_chars += chunk.chars().count();
        self.actions.push(Action::Emit(event));
    }
}

/// Split `text` into pieces of `size` characters (the last may be shorter), never inside a
/// character.
pub fn char_chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let size = size.max(1);
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (head, tail) = rest.split_at(prefix_chars(rest, size).len());
        rest = tail;
        Some(head)
    })
}

/// The first `n` characters of `text` (all of it if shorter).
fn prefix_chars(text: &str, n: usize) -> &str {
    let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

fn estimate_tokens(chars: usize) -> u64 {
    u64::try_from(chars / CHARS_PER_TOKEN).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::script::{ScriptToolCall, ScriptedErrorKind, ScriptedFailure};

    fn plan_of(step: &ScriptStep) -> Vec<Action> {
        plan(PlanInput {
            step,
            request_number: 3,
            body_chars: 40,
            gate: step.gate.clone(),
        })
    }

    fn emit(event: ProviderEvent) -> Action {
        Action::Emit(event)
    }

    fn text(s: &str) -> Action {
        emit(ProviderEvent::TextDelta(s.into()))
    }

    #[test]
    fn chunks_never_split_a_character() {
        let text = "héllo wörld 🎉 ok";
        let chunks: Vec<&str> = char_chunks(text, 3).collect();
        assert_eq!(chunks, ["hél", "lo ", "wör", "ld ", "🎉 o", "k"]);
        assert_eq!(chunks.concat(), text);
        assert_eq!(char_chunks("", 3).count(), 0);
        assert_eq!(char_chunks("ab", 0).collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn full_order_with_gate_and_chunk_delay() {
        let step = ScriptStep {
            thinking: Some("hmm".into()),
            signature: Some("sig".into()),
            text: Some("abcde".into()),
            tool_calls: vec![
                ScriptToolCall {
                    id: None,
                    name: "echo".into(),
                    arguments: "{\"a\"".into(),
                },
                ScriptToolCall {
                    id: Some("mine".into()),
                    name: "echo".into(),
                    arguments: String::new(),
                },
            ],
            chunk_chars: Some(2),
            chunk_delay_ms: 7,
            delay_ms: 5,
            gate: Some("g".into()),
            ..ScriptStep::default()
        };
        let pause = Action::Sleep(Duration::from_millis(7));
        let expected = vec![
            Action::Sleep(Duration::from_millis(5)),
            emit(ProviderEvent::ThinkingDelta("hm".into())),
            pause.clone(),
            emit(ProviderEvent::ThinkingDelta("m".into())),
            emit(ProviderEvent::ThinkingSignature("sig".into())),
            pause.clone(),
            text("ab"),
            Action::Gate("g".into()),
            pause.clone(),
            text("cd"),
            pause.clone(),
            text("e"),
            emit(ProviderEvent::ToolCallStart {
                index: 0,
                call_id: CallId::new("call_3_0"),
                name: "echo".into(),
            }),
            pause.clone(),
            emit(ProviderEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"".into(),
            }),
            pause,
            emit(ProviderEvent::ToolCallDelta {
                index: 0,
                arguments: "a\"".into(),
            }),
            emit(ProviderEvent::ToolCallStart {
                index: 1,
                call_id: CallId::new("mine"),
                name: "echo".into(),
            }),
            emit(ProviderEvent::Usage(Usage {
                input_tokens: 10,
                output_tokens: 3,
                ..Usage::default()
            })),
            emit(ProviderEvent::Finish(FinishReason::ToolUse)),
        ];
        assert_eq!(plan_of(&step), expected);
    }

    #[test]
    fn gate_without_text_comes_right_away() {
        let step = ScriptStep {
            gate: Some("g".into()),
            usage: Some(Usage::default()),
            ..ScriptStep::default()
        };
        assert_eq!(
            plan_of(&step),
            vec![
                Action::Gate("g".into()),
                emit(ProviderEvent::Usage(Usage::default())),
                emit(ProviderEvent::Finish(FinishReason::Stop)),
            ]
        );
    }

    #[test]
    fn error_alone_is_all_there_is() {
        let failure = ScriptedFailure {
            kind: ScriptedErrorKind::Permanent,
            message: "nope".into(),
        };
        let step = ScriptStep {
            text: Some("ignored".into()),
            error: Some(failure.clone()),
            ..ScriptStep::default()
        };
        assert_eq!(plan_of(&step), vec![Action::Fail(failure.to_error())]);
    }

    #[test]
    fn error_after_chars_streams_that_much_text_first() {
        let failure = ScriptedFailure {
            kind: ScriptedErrorKind::Transient,
            message: "dropped".into(),
        };
        let step = ScriptStep {
            text: Some("héllo".into()),
            chunk_chars: Some(2),
            error: Some(failure.clone()),
            error_after_chars: Some(3),
            ..ScriptStep::default()
        };
        assert_eq!(
            plan_of(&step),
            vec![text("hé"), text("l"), Action::Fail(failure.to_error())]
        );
    }
}
