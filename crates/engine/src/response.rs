//! Receiving one streamed model response: forward each event as provisional, assemble the items
//! that will be committed once the stream has finished.
//!
//! Nothing here commits. A response that fails halfway leaves no trace in the log; clients drop
//! the in-flight block they painted from the provisional events.

use std::collections::BTreeMap;

use futures::StreamExt;
use seedpod_protocol::{EntryKind, FinishReason, ModelItem, ResponsesReasoning, Usage};
use tokio::time::Instant;

use crate::host::RunHost;
use crate::pending::PendingCall;
use crate::provider::{EventStream, ProviderError, ProviderEvent};

/// A fully received response, ready to commit.
#[derive(Debug, Default)]
pub struct Response {
    thinking: String,
    signature: String,
    /// Responses API reasoning items, each with the text people read, in arrival order.
    reasoning_items: Vec<(String, ResponsesReasoning)>,
    text: String,
    /// Keyed by the provider's call index, which orders the calls.
    calls: BTreeMap<u32, PendingCall>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
}

impl Response {
    fn apply(&mut self, event: ProviderEvent) -> Result<(), ProviderError> {
        match event {
            ProviderEvent::TextDelta(delta) => self.text.push_str(&delta),
            ProviderEvent::ThinkingDelta(delta) => self.thinking.push_str(&delta),
            ProviderEvent::ThinkingSignature(part) => self.signature.push_str(&part),
            ProviderEvent::ReasoningItem(item) => {
                // The deltas so far were this item's summary (or, from servers that stream the
                // reasoning itself, its text): the item now carries them.
                let streamed = std::mem::take(&mut self.thinking);
                let text = match item.summary.is_empty() {
                    true => streamed,
                    false => item.summary_text(),
                };
                self.reasoning_items.push((text, item));
            }
            ProviderEvent::ToolCallStart {
                index,
                call_id,
                name,
            } => {
                let call = PendingCall {
                    call_id,
                    name,
                    arguments: String::new(),
                };
                if self.calls.insert(index, call).is_some() {
                    return Err(malformed(format!("tool call #{index} was started twice")));
                }
            }
            ProviderEvent::ToolCallDelta { index, arguments } => match self.calls.get_mut(&index) {
                Some(call) => call.arguments.push_str(&arguments),
                None => {
                    return Err(malformed(format!(
                        "arguments arrived for tool call #{index} before it started"
                    )));
                }
            },
            ProviderEvent::Usage(usage) => self.usage = Some(usage),
            ProviderEvent::Finish(reason) => self.finish = Some(reason),
            ProviderEvent::Status(_) => {}
        }
        Ok(())
    }

    /// The text the model answered, cleaned (a summary request's summary).
    pub fn text(&self) -> String {
        crate::sanitize::clean(&self.text).text
    }

    /// The tool calls the model made, in call order.
    pub fn tool_calls(&self) -> Vec<PendingCall> {
        self.calls.values().cloned().collect()
    }

    /// Why the model stopped. A stream that ended without saying is treated as a normal stop.
    pub fn finish(&self) -> FinishReason {
        self.finish.unwrap_or(FinishReason::Stop)
    }

    /// The entries to commit, in order: usage, the raw text if cleaning changed it, reasoning
    /// (the provider's, then any found in the text), the cleaned text, then each tool call.
    pub fn entries(&self) -> Vec<EntryKind> {
        let mut entries = Vec::new();
        if let Some(usage) = self.usage {
            entries.push(EntryKind::Usage(usage));
        }
        let cleaned = crate::sanitize::clean(&self.text);
        // Whitespace around the answer is trimmed without keeping a raw copy for it.
        if cleaned.text.trim() != self.text.trim() {
            entries.push(EntryKind::AssistantRaw {
                text: self.text.clone(),
            });
        }
        if !self.thinking.is_empty() || !self.signature.is_empty() {
            let signature = (!self.signature.is_empty()).then(|| self.signature.clone());
            entries.push(assistant(ModelItem::Reasoning {
                text: self.thinking.clone(),
                signature,
                responses: None,
            }));
        }
        for (text, item) in &self.reasoning_items {
            entries.push(assistant(ModelItem::Reasoning {
                text: text.clone(),
                signature: None,
                responses: Some(item.clone()),
            }));
        }
        if !cleaned.reasoning.is_empty() {
            // No signature: a provider that checks reasoning never sees this one again.
            entries.push(assistant(ModelItem::Reasoning {
                text: cleaned.reasoning,
                signature: None,
                responses: None,
            }));
        }
        if !cleaned.text.is_empty() {
            entries.push(assistant(ModelItem::AssistantText { text: cleaned.text }));
        }
        for call in self.calls.values() {
            entries.push(assistant(ModelItem::ToolCall {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            }));
        }
        entries
    }
}

fn assistant(item: ModelItem) -> EntryKind {
    EntryKind::AssistantItem { item }
}

/// A provider broke the event contract; no retry will make the same response well formed.
fn malformed(what: String) -> ProviderError {
    ProviderError::permanent(format!("the provider sent a malformed response: {what}"))
}

/// How far one attempt got, whether it ended well or not (for the retry policy and the log).
#[derive(Debug, Default)]
pub struct Progress {
    /// When the first event arrived (time to first byte, give or take parsing).
    pub first_event: Option<Instant>,
    /// Part of the answer itself (not just usage or status) has been sent to clients.
    pub output_forwarded: bool,
}

/// Drain `stream`, forwarding every event to the host as provisional, until it ends or fails.
/// `progress` is kept up to date as events pass, so it is accurate when this fails.
pub async fn receive<H: RunHost>(
    host: &mut H,
    mut stream: EventStream,
    progress: &mut Progress,
) -> Result<Response, ProviderError> {
    let mut response = Response::default();
    while let Some(event) = stream.next().await {
        let event = event?;
        progress.first_event.get_or_insert_with(Instant::now);
        progress.output_forwarded |= event.is_output();
        host.provisional(event.clone()).await;
        response.apply(event)?;
    }
    if response.finish.is_none() {
        tracing::warn!(
            "the provider's stream ended without a finish reason; treating it as a stop"
        );
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::CallId;

    fn response(events: Vec<ProviderEvent>) -> Result<Response, ProviderError> {
        let mut response = Response::default();
        for event in events {
            response.apply(event)?;
        }
        Ok(response)
    }

    #[test]
    fn assembles_items_in_commit_order() {
        let r = response(vec![
            ProviderEvent::ThinkingDelta("let me ".into()),
            ProviderEvent::ThinkingDelta("see".into()),
            ProviderEvent::ThinkingSignature("si".into()),
            ProviderEvent::ThinkingSignature("g".into()),
            ProviderEvent::TextDelta("on it".into()),
            ProviderEvent::ToolCallStart {
                index: 1,
                call_id: CallId::new("b"),
                name: "read".into(),
            },
            ProviderEvent::ToolCallStart {
                index: 0,
                call_id: CallId::new("a"),
                name: "echo".into(),
            },
            ProviderEvent::ToolCallDelta {
                index: 1,
                arguments: "{ \"p\"".into(),
            },
            ProviderEvent::ToolCallDelta {
                index: 1,
                arguments: ":1 }".into(),
            },
            ProviderEvent::Usage(Usage {
                input_tokens: 1,
                ..Usage::default()
            }),
            ProviderEvent::Usage(Usage {
                input_tokens: 1,
                output_tokens: 9,
                ..Usage::default()
            }),
            ProviderEvent::Status("slow".into()),
            ProviderEvent::Finish(FinishReason::ToolUse),
        ])
        .unwrap();
        let call = |id: &str, name: &str, arguments: &str| {
            assistant(ModelItem::ToolCall {
                call_id: CallId::new(id),
                name: name.into(),
                arguments: arguments.into(),
            })
        };
        assert_eq!(
            r.entries(),
            vec![
                EntryKind::Usage(Usage {
                    input_tokens: 1,
                    output_tokens: 9,
                    ..Usage::default()
                }),
                assistant(ModelItem::Reasoning {
                    text: "let me see".into(),
                    signature: Some("sig".into()),
                    responses: None,
                }),
                assistant(ModelItem::AssistantText {
                    text: "on it".into()
                }),
                call("a", "echo", ""),
                call("b", "read", "{ \"p\":1 }"),
            ]
        );
        assert_eq!(r.finish(), FinishReason::ToolUse);
    }

    #[test]
    fn a_think_block_in_the_text_becomes_reasoning_and_the_raw_text_is_kept() {
        let r = response(vec![
            ProviderEvent::TextDelta("<think>pl".into()),
            ProviderEvent::TextDelta("an</think>Hel".into()),
            ProviderEvent::TextDelta("lo".into()),
        ])
        .unwrap();
        assert_eq!(
            r.entries(),
            vec![
                EntryKind::AssistantRaw {
                    text: "<think>plan</think>Hello".into()
                },
                assistant(ModelItem::Reasoning {
                    text: "plan".into(),
                    signature: None,
                    responses: None,
                }),
                assistant(ModelItem::AssistantText {
                    text: "Hello".into()
                }),
            ]
        );
        assert_eq!(r.text(), "Hello");
    }

    #[test]
    fn clean_text_commits_no_raw_copy_even_when_trimmed() {
        for raw in ["Hello", "Hello\n", "\n\nHello  \n"] {
            let r = response(vec![ProviderEvent::TextDelta(raw.into())]).unwrap();
            assert_eq!(
                r.entries(),
                vec![assistant(ModelItem::AssistantText {
                    text: "Hello".into()
                })],
                "{raw:?}"
            );
        }
    }

    #[test]
    fn empty_response_commits_nothing_and_stops() {
        let r = response(vec![]).unwrap();
        assert!(r.entries().is_empty());
        assert_eq!(r.finish(), FinishReason::Stop);
    }

    #[test]
    fn signature_alone_still_makes_a_reasoning_item() {
        let r = response(vec![ProviderEvent::ThinkingSignature("opaque".into())]).unwrap();
        assert_eq!(
            r.entries(),
            vec![assistant(ModelItem::Reasoning {
                text: String::new(),
                signature: Some("opaque".into()),
                responses: None,
            })]
        );
    }

    #[test]
    fn delta_before_start_and_double_start_are_malformed() {
        let err = response(vec![ProviderEvent::ToolCallDelta {
            index: 0,
            arguments: "{}".into(),
        }])
        .unwrap_err();
        assert!(err.message().contains("before it started"), "{err}");
        let start = ProviderEvent::ToolCallStart {
            index: 0,
            call_id: CallId::new("a"),
            name: "echo".into(),
        };
        let err = response(vec![start.clone(), start]).unwrap_err();
        assert!(err.message().contains("started twice"), "{err}");
    }
}
