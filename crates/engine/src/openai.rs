//! `OpenAiProvider`: the OpenAI Chat Completions API, streamed, as spoken by OpenAI and by the
//! compatible servers people run locally (Ollama, llama.cpp, vLLM, LM Studio) or route through
//! (OpenRouter).
//!
//! This file maps history to the request body (`request_body`, a pure function of the context,
//! DESIGN §1); `openai/decode.rs` reads the chunk stream back. Mapping rules:
//!
//! - the system prompt is the first `system` message; `SystemMessage` items are `system`
//!   messages where they occur (DESIGN §6);
//! - consecutive assistant items form one assistant message: its text as `content` (`null` when
//!   there is none) and its calls as `tool_calls`, each call's `arguments` the raw string the
//!   model streamed, verbatim;
//! - tool results are `tool` messages, in history order, their content verbatim (the API has no
//!   error flag; a failed call's result already says what went wrong);
//! - reasoning is not sent back: Chat Completions has no field for it, and servers that stream
//!   it (`reasoning_content`) ask clients not to return it.

mod decode;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use reqwest::header::AUTHORIZATION;
use seedpod_protocol::{ModelItem, ProviderKind, ToolSpec};
use serde::Serialize;

use self::decode::OpenAiDecoder;
use crate::http::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_READ_TIMEOUT, Endpoint, ProviderSetupError, json_headers,
    secret_header, stream_events,
};
use crate::provider::{Context, EventStream, Provider, ProviderError};

/// Where the API lives unless `base_url` says otherwise.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How to reach the server and what to ask of it beyond the history. The model itself comes
/// from the context (`ModelConfig`, stored in the log), so a replayed request names the same model.
#[derive(Clone, PartialEq)]
pub struct OpenAiConfig {
    /// Up to and including the API version; requests go to `{base_url}/chat/completions`
    /// (e.g. `http://127.0.0.1:11434/v1` for Ollama).
    pub base_url: String,
    /// Sent as `Authorization: Bearer`; local servers usually need none.
    pub api_key: Option<String>,
    /// Not sent unless set, so the server's default applies.
    pub max_tokens: Option<u32>,
    /// Not sent unless set.
    pub temperature: Option<f64>,
    pub connect_timeout: Duration,
    /// A response silent for this long is abandoned as a transient timeout.
    pub idle_read_timeout: Duration,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: OPENAI_DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            max_tokens: None,
            temperature: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_read_timeout: DEFAULT_IDLE_READ_TIMEOUT,
        }
    }
}

/// Never prints the key, so a config can be logged.
impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_read_timeout", &self.idle_read_timeout)
            .finish()
    }
}

pub struct OpenAiProvider {
    config: OpenAiConfig,
    endpoint: Endpoint,
    /// What `diagnose_cut` learned, so it asks once per window.
    cuts: crate::window::CutMemo,
}

impl OpenAiProvider {
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderSetupError> {
        let mut headers = json_headers();
        if let Some(key) = &config.api_key {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
        }
        let endpoint = Endpoint::new(
            ProviderKind::Openai.as_str(),
            &config.base_url,
            "/chat/completions",
            headers,
            config.connect_timeout,
            config.idle_read_timeout,
        )?;
        Ok(OpenAiProvider {
            config,
            endpoint,
            cuts: crate::window::CutMemo::default(),
        })
    }
}

impl Provider for OpenAiProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Openai
    }

    fn request_body(&self, ctx: &Context<'_>) -> String {
        let request = Request {
            model: &ctx.model.model,
            messages: messages(ctx.system_prompt, ctx.items),
            tools: ctx.tools.iter().map(Tool::from).collect(),
            // The logged model settings win: they are what a replay must reproduce.
            temperature: ctx.model.temperature.or(self.config.temperature),
            max_tokens: ctx.model.max_tokens.or(self.config.max_tokens),
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
        };
        // Strings, numbers and `serde_json::Value`s (string-keyed, sorted maps): there is no
        // input that makes this fail.
        crate::provider::body_json(&request)
    }

    fn stream(&self, body: String) -> EventStream {
        stream_events(self.endpoint.clone(), body, OpenAiDecoder::default())
    }

    fn diagnose_cut(
        &self,
        body: &str,
    ) -> futures::future::BoxFuture<'static, Option<ProviderError>> {
        if let Some(refusal) = self.cuts.recall(body.len()) {
            return Box::pin(async move { Some(refusal) });
        }
        let endpoint = self.endpoint.clone();
        let probe = unstreamed_probe(body);
        let cuts = self.cuts.clone();
        let len = body.len();
        Box::pin(async move {
            let answer = endpoint.send(probe?).await.err()?;
            cuts.remember(len, &answer);
            Some(answer)
        })
    }

    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        let endpoint = self.endpoint.clone();
        Box::pin(async move { endpoint.list_models("/chat/completions", "/models").await })
    }
}

/// The request body. Field order is part of the byte-for-byte contract.
#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

impl<'a> From<&'a ToolSpec> for Tool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Tool {
            kind: "function",
            function: Function {
                name: &spec.name,
                description: &spec.description,
                parameters: &spec.parameters,
            },
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// `null` when the turn was only tool calls.
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    /// The raw string the model streamed, never re-serialised.
    arguments: &'a str,
}

/// History as chat messages; see the module doc for the rules.
fn messages<'a>(system_prompt: &'a str, items: &'a [ModelItem]) -> Vec<Message<'a>> {
    let mut messages = Vec::new();
    if !system_prompt.is_empty() {
        messages.push(Message::System {
            content: system_prompt,
        });
    }
    // The assistant message being gathered from consecutive assistant items.
    let mut assistant: Option<(Option<String>, Vec<ToolCall<'a>>)> = None;
    for item in items {
        let message = match item {
            ModelItem::Reasoning { .. } => continue,
            ModelItem::AssistantText { text } => {
                let (content, _) = assistant.get_or_insert_default();
                content.get_or_insert_with(String::new).push_str(text);
                continue;
            }
            ModelItem::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let (_, calls) = assistant.get_or_insert_default();
                calls.push(ToolCall {
                    id: call_id.as_str(),
                    kind: "function",
                    function: CallFunction { name, arguments },
                });
                continue;
            }
            ModelItem::UserMessage { text } => Message::User { content: text },
            ModelItem::SystemMessage { text } => Message::System { content: text },
            // Chat Completions takes only text in a `tool` message: an image of the result
            // reaches the model as its placeholder line in `content` (docs/configuration.md
            // §MCP servers, images).
            ModelItem::ToolResult {
                call_id, content, ..
            } => Message::Tool {
                tool_call_id: call_id.as_str(),
                content,
            },
        };
        messages.extend(assistant.take().map(assistant_message));
        messages.push(message);
    }
    messages.extend(assistant.take().map(assistant_message));
    messages
}

fn assistant_message<'a>(
    (content, tool_calls): (Option<String>, Vec<ToolCall<'a>>),
) -> Message<'a> {
    Message::Assistant {
        content,
        tool_calls,
    }
}

/// `body` unstreamed and for a one-token answer: the same prompt, so a server that cuts a
/// stream over its window refuses this with its real "too long" error, at the cost of reading
/// the prompt once. `None` for a body that is not a JSON object (never ours).
fn unstreamed_probe(body: &str) -> Option<String> {
    let mut value: serde_json::Value = serde_json::from_str(body).ok()?;
    let object = value.as_object_mut()?;
    object.insert("stream".into(), false.into());
    object.remove("stream_options");
    object.insert("max_tokens".into(), 1.into());
    Some(value.to_string())
}
