//! `AnthropicProvider`: the Anthropic Messages API, streamed.
//!
//! This file maps history to the request body (`request_body`, a pure function of the context,
//! DESIGN §1); `anthropic/decode.rs` reads the event stream back. Mapping rules, each chosen so
//! the body is deterministic and the API accepts it:
//!
//! - user input and `SystemMessage` items (notifications, pod events, ...) are user-role text
//!   blocks (DESIGN §6); the system prompt is the top-level `system` field;
//! - consecutive items of one role merge into one message, blocks in history order, except that
//!   `tool_result` blocks move to the front of their user message (the API requires it);
//! - reasoning with a signature is a `thinking` block sent back verbatim; reasoning without one
//!   (from another provider) cannot be verified by the API and is left out;
//! - a tool call's `input` is its raw argument text embedded as is when it is a JSON object, and
//!   `{}` otherwise (the tool already answered such a call with an error the model can read);
//! - empty text blocks are left out (the API rejects them);
//! - prompt-caching breakpoints (`cache_control`) go on the system prompt, the last tool and the
//!   conversation's last block (`anthropic/cache.rs` says why and where exactly).

mod cache;
mod decode;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use reqwest::header::HeaderValue;
use seedpod_protocol::{ModelItem, ProviderKind, ToolImage, ToolSpec};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use self::cache::CacheControl;
use self::decode::AnthropicDecoder;
use crate::http::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_READ_TIMEOUT, Endpoint, ProviderSetupError, json_headers,
    secret_header, stream_events,
};
use crate::provider::{Context, EventStream, Provider};

/// Where the Messages API lives unless `base_url` says otherwise.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this provider speaks (`anthropic-version` header).
pub const ANTHROPIC_API_VERSION: &str = "2023-06-01";

/// `max_tokens` unless configured: the API requires a value, and this one every current model
/// accepts.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 8192;

/// How to reach the API and what to ask of it beyond the history. The model itself comes from
/// the context (`ModelConfig`, stored in the log), so a replayed request names the same model.
#[derive(Clone, PartialEq)]
pub struct AnthropicConfig {
    /// Scheme, host and optional path prefix; requests go to `{base_url}/v1/messages`.
    pub base_url: String,
    /// Sent as `x-api-key`. Without one the API answers 401, which is reported as such.
    pub api_key: Option<String>,
    pub max_tokens: u32,
    /// Not sent unless set, so the API's default applies.
    pub temperature: Option<f64>,
    /// Extended thinking with this budget; not sent unless set. Must be below `max_tokens`, and
    /// the API refuses a `temperature` alongside it.
    pub thinking_budget_tokens: Option<u32>,
    pub connect_timeout: Duration,
    /// A response silent for this long is abandoned as a transient timeout.
    pub idle_read_timeout: Duration,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            base_url: ANTHROPIC_DEFAULT_BASE_URL.to_owned(),
            api_key: None,
            max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
            temperature: None,
            thinking_budget_tokens: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_read_timeout: DEFAULT_IDLE_READ_TIMEOUT,
        }
    }
}

/// Never prints the key, so a config can be logged.
impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("thinking_budget_tokens", &self.thinking_budget_tokens)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_read_timeout", &self.idle_read_timeout)
            .finish()
    }
}

pub struct AnthropicProvider {
    config: AnthropicConfig,
    endpoint: Endpoint,
}

impl AnthropicProvider {
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderSetupError> {
        let mut headers = json_headers();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_API_VERSION),
        );
        if let Some(key) = &config.api_key {
            headers.insert("x-api-key", secret_header(key)?);
        }
        let endpoint = Endpoint::new(
            ProviderKind::Anthropic.as_str(),
            &config.base_url,
            "/v1/messages",
            headers,
            config.connect_timeout,
            config.idle_read_timeout,
        )?;
        Ok(AnthropicProvider { config, endpoint })
    }
}

impl Provider for AnthropicProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn request_body(&self, ctx: &Context<'_>) -> String {
        // The logged model settings win: they are what a replay must reproduce.
        let max_tokens = ctx.model.max_tokens.unwrap_or(self.config.max_tokens);
        let mut request = Request {
            model: &ctx.model.model,
            max_tokens,
            system: system_blocks(ctx.system_prompt),
            messages: messages(ctx.items),
            tools: ctx.tools.iter().map(Tool::from).collect(),
            temperature: ctx.model.temperature.or(self.config.temperature),
            // The API refuses a budget that is not below `max_tokens`; a request with a small
            // output limit (a compaction's summary) goes without thinking instead.
            thinking: self
                .config
                .thinking_budget_tokens
                .filter(|budget| *budget < max_tokens)
                .map(|budget_tokens| Thinking {
                    kind: "enabled",
                    budget_tokens,
                }),
            stream: true,
        };
        cache::place_breakpoints(&mut request);
        // Strings, numbers, already-valid raw JSON and `serde_json::Value`s (string-keyed, sorted
        // maps): there is no input that makes this fail.
        crate::provider::body_json(&request)
    }

    fn stream(&self, body: String) -> EventStream {
        stream_events(self.endpoint.clone(), body, AnthropicDecoder::default())
    }

    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        let endpoint = self.endpoint.clone();
        Box::pin(async move { endpoint.list_models("/messages", "/models").await })
    }
}

/// The request body. Field order is part of the byte-for-byte contract.
#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    max_tokens: u32,
    /// Blocks rather than a string, so the prompt can carry a cache breakpoint.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    stream: bool,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// One block of the system prompt; there is only ever one, the rendered prompt.
#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The system prompt as blocks; none when it is empty (the API rejects an empty text block).
fn system_blocks(prompt: &str) -> Vec<SystemBlock<'_>> {
    if prompt.is_empty() {
        return Vec::new();
    }
    vec![SystemBlock {
        kind: "text",
        text: prompt,
        cache_control: None,
    }]
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

impl<'a> From<&'a ToolSpec> for Tool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Tool {
            name: &spec.name,
            description: &spec.description,
            input_schema: &spec.parameters,
            cache_control: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    User,
    Assistant,
}

#[derive(Serialize)]
struct Message<'a> {
    role: Role,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// Never carries a breakpoint: the API refuses `cache_control` on thinking blocks.
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: ToolInput<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ResultContent<'a>,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

/// A tool result's content: its text as a string, as ever, or — when it has images — a text
/// block and one `image` block (base64 source) per image, which the Messages API takes in a
/// `tool_result` (docs/configuration.md §MCP servers, images).
enum ResultContent<'a> {
    Text(&'a str),
    WithImages(&'a str, &'a [ToolImage]),
}

impl Serialize for ResultContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Part<'a> {
            Text { text: &'a str },
            Image { source: Source<'a> },
        }
        #[derive(Serialize)]
        struct Source<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            media_type: &'a str,
            data: &'a str,
        }
        match self {
            ResultContent::Text(text) => serializer.serialize_str(text),
            ResultContent::WithImages(text, images) => {
                let mut seq = serializer.serialize_seq(None)?;
                // The API refuses an empty text block.
                if !text.is_empty() {
                    seq.serialize_element(&Part::Text { text })?;
                }
                for image in *images {
                    seq.serialize_element(&Part::Image {
                        source: Source {
                            kind: "base64",
                            media_type: &image.mime_type,
                            data: &image.data,
                        },
                    })?;
                }
                seq.end()
            }
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// A tool call's arguments as the API wants them: a JSON object.
enum ToolInput<'a> {
    /// The model's raw text, which is a JSON object: embedded byte for byte.
    Raw(&'a RawValue),
    /// The model's text was not a JSON object.
    Empty,
}

impl<'a> ToolInput<'a> {
    fn from_raw(raw: &'a str) -> Self {
        match serde_json::from_str::<&RawValue>(raw) {
            Ok(value) if value.get().starts_with('{') => ToolInput::Raw(value),
            Ok(_) | Err(_) => ToolInput::Empty,
        }
    }
}

impl Serialize for ToolInput<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolInput::Raw(value) => value.serialize(serializer),
            ToolInput::Empty => serde_json::Map::new().serialize(serializer),
        }
    }
}

/// History as Messages API messages; see the module doc for the rules.
fn messages(items: &[ModelItem]) -> Vec<Message<'_>> {
    let mut messages: Vec<Message<'_>> = Vec::new();
    for item in items {
        let Some((role, block)) = block(item) else {
            continue;
        };
        match messages.last_mut() {
            Some(last) if last.role == role => last.content.push(block),
            Some(_) | None => messages.push(Message {
                role,
                content: vec![block],
            }),
        }
    }
    for message in &mut messages {
        // A stable sort: tool results first, everything else after, each in history order.
        message
            .content
            .sort_by_key(|block| !matches!(block, Block::ToolResult { .. }));
    }
    messages
}

fn text_block(role: Role, text: &str) -> Option<(Role, Block<'_>)> {
    (!text.is_empty()).then_some((
        role,
        Block::Text {
            text,
            cache_control: None,
        },
    ))
}

fn block(item: &ModelItem) -> Option<(Role, Block<'_>)> {
    match item {
        ModelItem::UserMessage { text } | ModelItem::SystemMessage { text } => {
            text_block(Role::User, text)
        }
        ModelItem::AssistantText { text } => text_block(Role::Assistant, text),
        ModelItem::Reasoning {
            text,
            signature: Some(signature),
            ..
        } => Some((
            Role::Assistant,
            Block::Thinking {
                thinking: text,
                signature,
            },
        )),
        ModelItem::Reasoning {
            signature: None, ..
        } => None,
        ModelItem::ToolCall {
            call_id,
            name,
            arguments,
        } => Some((
            Role::Assistant,
            Block::ToolUse {
                id: call_id.as_str(),
                name,
                input: ToolInput::from_raw(arguments),
                cache_control: None,
            },
        )),
        ModelItem::ToolResult {
            call_id,
            content,
            is_error,
            images,
        } => Some((
            Role::User,
            Block::ToolResult {
                tool_use_id: call_id.as_str(),
                content: if images.is_empty() {
                    ResultContent::Text(content)
                } else {
                    ResultContent::WithImages(content, images)
                },
                is_error: *is_error,
                cache_control: None,
            },
        )),
    }
}
