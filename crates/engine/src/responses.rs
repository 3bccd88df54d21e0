//! `ResponsesProvider`: OpenAI's Responses API (`POST {base_url}/responses`), streamed.
//!
//! This file maps history to the request body (`request_body`, a pure function of the context,
//! DESIGN §1); `responses/decode.rs` reads the event stream back. Mapping rules
//! (what a person sees of them: docs/configuration.md §The Responses API):
//!
//! - the system prompt is the top-level `instructions`, so it heads every request unchanged and
//!   the server's prefix cache covers it; `SystemMessage` items are `system`-role messages where
//!   they occur (DESIGN §6), as for Chat Completions;
//! - user text is a `user` message; assistant text an `assistant` message of one `output_text`;
//! - tool calls are `function_call` items with the raw argument string the model streamed, and
//!   results are `function_call_output` items, in history order;
//! - reasoning that carries a Responses reasoning item is sent back as that item — id, summary
//!   parts and encrypted content exactly as they were received and logged — so a reasoning model
//!   keeps its chain across tool calls. An item without encrypted content can only be referred
//!   to when the server stored it (`store = true`); otherwise it is left out, as is reasoning
//!   from another provider (it cannot be verified);
//! - `store` is sent as configured (false unless a person says otherwise) and the encrypted
//!   reasoning is always asked for (`include`), so nothing depends on what the server kept.

mod decode;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use reqwest::header::AUTHORIZATION;
use seedpod_protocol::{
    ModelItem, ProviderKind, ReasoningEffort, ReasoningSummary, ResponsesOptions,
    ResponsesReasoning, ToolSpec,
};
use serde::Serialize;

use self::decode::ResponsesDecoder;
use crate::http::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_READ_TIMEOUT, Endpoint, ProviderSetupError, json_headers,
    secret_header, stream_events,
};
use crate::openai::OPENAI_DEFAULT_BASE_URL;
use crate::provider::{Context, EventStream, Provider};

/// What every request asks the server to include: the encrypted reasoning, which is what lets
/// reasoning be sent back without the server keeping anything.
const INCLUDE_ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// How to reach the server. What to ask of it is in the context's `ModelConfig` (logged), so a
/// replayed request asks the same.
#[derive(Clone, PartialEq)]
pub struct ResponsesConfig {
    /// Up to and including the API version; requests go to `{base_url}/responses`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer`.
    pub api_key: Option<String>,
    pub connect_timeout: Duration,
    /// A response silent for this long is abandoned as a transient timeout.
    pub idle_read_timeout: Duration,
}

impl Default for ResponsesConfig {
    fn default() -> Self {
        ResponsesConfig {
            base_url: OPENAI_DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_read_timeout: DEFAULT_IDLE_READ_TIMEOUT,
        }
    }
}

/// Never prints the key, so a config can be logged.
impl fmt::Debug for ResponsesConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponsesConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_read_timeout", &self.idle_read_timeout)
            .finish()
    }
}

pub struct ResponsesProvider {
    endpoint: Endpoint,
}

impl ResponsesProvider {
    pub fn new(config: ResponsesConfig) -> Result<Self, ProviderSetupError> {
        let mut headers = json_headers();
        if let Some(key) = &config.api_key {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
        }
        let endpoint = Endpoint::new(
            ProviderKind::OpenaiResponses.as_str(),
            &config.base_url,
            "/responses",
            headers,
            config.connect_timeout,
            config.idle_read_timeout,
        )?;
        Ok(ResponsesProvider { endpoint })
    }
}

impl Provider for ResponsesProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenaiResponses
    }

    fn request_body(&self, ctx: &Context<'_>) -> String {
        let options = ctx.model.responses.unwrap_or_default();
        let reasoning = (options.reasoning_effort.is_some() || options.reasoning_summary.is_some())
            .then_some(Reasoning {
                effort: options.reasoning_effort,
                summary: options.reasoning_summary,
            });
        let request = Request {
            model: &ctx.model.model,
            instructions: (!ctx.system_prompt.is_empty()).then_some(ctx.system_prompt),
            input: input(ctx.items, &options),
            tools: ctx.tools.iter().map(Tool::from).collect(),
            parallel_tool_calls: options.parallel_tool_calls,
            reasoning,
            temperature: ctx.model.temperature,
            max_output_tokens: ctx.model.max_tokens,
            store: options.store,
            include: [INCLUDE_ENCRYPTED_REASONING],
            stream: true,
        };
        crate::provider::body_json(&request)
    }

    fn stream(&self, body: String) -> EventStream {
        stream_events(self.endpoint.clone(), body, ResponsesDecoder::default())
    }

    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        let endpoint = self.endpoint.clone();
        Box::pin(async move { endpoint.list_models("/responses", "/models").await })
    }
}

/// The request body. Field order is part of the byte-for-byte contract.
#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    store: bool,
    include: [&'static str; 1],
    stream: bool,
}

#[derive(Serialize)]
struct Reasoning {
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<ReasoningEffort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<ReasoningSummary>,
}

/// A function tool: the Responses shape is flat (no `function` wrapper). Not strict: strict
/// mode demands schemas (every property required, no extra keys) that tools and MCP servers do
/// not promise, and the API refuses a strict tool whose schema falls short.
#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
    strict: bool,
}

impl<'a> From<&'a ToolSpec> for Tool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Tool {
            kind: "function",
            name: &spec.name,
            description: &spec.description,
            parameters: &spec.parameters,
            strict: false,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputItem<'a> {
    Message {
        role: Role,
        content: Content<'a>,
    },
    Reasoning {
        id: &'a str,
        summary: Vec<SummaryText<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        /// The raw string the model streamed, never re-serialised.
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a str,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    User,
    Assistant,
    System,
}

/// A message's content: plain text for what we send, one `output_text` part for what the
/// model said (the shape the API hands out and takes back).
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Parts([OutputText<'a>; 1]),
}

#[derive(Serialize)]
struct OutputText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct SummaryText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// History as input items; see the module doc for the rules.
fn input<'a>(items: &'a [ModelItem], options: &ResponsesOptions) -> Vec<InputItem<'a>> {
    items
        .iter()
        .filter_map(|item| input_item(item, options))
        .collect()
}

fn input_item<'a>(item: &'a ModelItem, options: &ResponsesOptions) -> Option<InputItem<'a>> {
    let message = |role, content| Some(InputItem::Message { role, content });
    match item {
        ModelItem::UserMessage { text } => message(Role::User, Content::Text(text)),
        ModelItem::SystemMessage { text } => message(Role::System, Content::Text(text)),
        ModelItem::AssistantText { text } => message(
            Role::Assistant,
            Content::Parts([OutputText {
                kind: "output_text",
                text,
            }]),
        ),
        ModelItem::Reasoning {
            responses: Some(reasoning),
            ..
        } => reasoning_item(reasoning, options),
        ModelItem::Reasoning {
            responses: None, ..
        } => None,
        ModelItem::ToolCall {
            call_id,
            name,
            arguments,
        } => Some(InputItem::FunctionCall {
            call_id: call_id.as_str(),
            name,
            arguments,
        }),
        ModelItem::ToolResult {
            call_id, content, ..
        } => Some(InputItem::FunctionCallOutput {
            call_id: call_id.as_str(),
            output: content,
        }),
    }
}

fn reasoning_item<'a>(
    reasoning: &'a ResponsesReasoning,
    options: &ResponsesOptions,
) -> Option<InputItem<'a>> {
    if reasoning.encrypted_content.is_none() && !options.store {
        // Nothing to send but an id the server did not keep: it would refuse the request.
        return None;
    }
    Some(InputItem::Reasoning {
        id: &reasoning.id,
        summary: reasoning
            .summary
            .iter()
            .map(|text| SummaryText {
                kind: "summary_text",
                text,
            })
            .collect(),
        encrypted_content: reasoning.encrypted_content.as_deref(),
    })
}
