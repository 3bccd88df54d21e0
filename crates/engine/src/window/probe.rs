//! Asking a local or compatible server what context window it serves a model with.
//!
//! The window that matters is the one the server runs the model with, which for local servers is
//! often far below the family's (llama.cpp's `-c`, Ollama's `num_ctx`, LM Studio's load setting).
//! Each server says it in its own place, so `probe_window` asks all of these at once, every
//! question bounded by the caller's timeout, and takes the first answer in this order:
//!
//! 1. Ollama `GET /api/ps`: `context_length` of the model if it is loaded — what Ollama actually
//!    allocated;
//! 2. Ollama `POST /api/show`: `num_ctx` in `parameters` (the Modelfile's setting, which Ollama
//!    uses when set), else the `model_info` key ending in `.context_length` (the model's own
//!    maximum; llama.cpp's server answers this route too, with its slot's `n_ctx`);
//! 3. llama.cpp `GET /props`: `default_generation_settings.n_ctx`, or a top-level `n_ctx`;
//! 4. vLLM `GET /v1/models`: `max_model_len` of the entry whose `id` is the model;
//! 5. LM Studio `GET /api/v0/models/{model}`: `loaded_context_length`, else `max_context_length`.
//!
//! Paths are taken from the server's root: the OpenAI base URL without a trailing `/v1`. A
//! refused connection, an error status, a timeout or an answer without the number all mean "ask
//! the next"; nothing here fails. Never asked of Anthropic (its API has no such question) or of
//! the scripted provider.

use std::time::Duration;

use reqwest::Url;
use seedpod_protocol::ProviderKind;
use serde_json::Value;

use crate::http::{endpoint_url, http_client};

/// A reasonable bound for each question when the caller has no better one: a local server
/// answers these in milliseconds, and a pod should not wait long on one that does not.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The most bytes of an answer read. Ollama's `/api/show` carries the license and template text;
/// far more than this is not an answer to our question.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// Where a server may state the window, in the order they are asked (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    OllamaRunning,
    OllamaShow,
    LlamaCppProps,
    VllmModels,
    LmStudioModel,
}

const SOURCES: [Source; 5] = [
    Source::OllamaRunning,
    Source::OllamaShow,
    Source::LlamaCppProps,
    Source::VllmModels,
    Source::LmStudioModel,
];

/// The context window `model` is served with at `base_url`, as the server states it, or `None`
/// if no known place answers within `timeout` each. Only for the OpenAI wire formats.
pub async fn probe_window(
    provider: ProviderKind,
    base_url: &str,
    model: &str,
    timeout: Duration,
) -> Option<u64> {
    match provider {
        // Local servers that speak the Responses API (vLLM, Ollama) state their window alike.
        ProviderKind::Openai | ProviderKind::OpenaiResponses => {}
        ProviderKind::Anthropic | ProviderKind::Scripted | ProviderKind::Unknown => return None,
    }
    let root = server_root(base_url)?;
    let client = http_client(&endpoint_url(&root, "/").ok()?, timeout).ok()?;
    let probe = Probe {
        client,
        root,
        model,
        timeout,
    };
    // All five questions at once: a pod's start waits for the answer, and asked in turn a
    // server that knows none of them costs five round trips (or five timeouts). The first
    // source in `SOURCES` order that answers still wins, as if they had been asked in turn.
    let answers = futures::future::join_all(SOURCES.map(|source| probe.ask(source))).await;
    let (source, tokens) = SOURCES
        .into_iter()
        .zip(answers)
        .find_map(|(source, tokens)| Some((source, tokens?)))?;
    tracing::debug!(
        ?source,
        tokens,
        model,
        "the server stated the context window"
    );
    Some(tokens)
}

/// The server's root: `base_url` without trailing slashes and without a trailing `/v1`.
fn server_root(base_url: &str) -> Option<String> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let root = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    (!root.is_empty()).then(|| root.to_owned())
}

struct Probe<'a> {
    client: reqwest::Client,
    root: String,
    model: &'a str,
    timeout: Duration,
}

impl Probe<'_> {
    async fn ask(&self, source: Source) -> Option<u64> {
        let answer = match source {
            Source::OllamaRunning => self.get(self.url("/api/ps")?).await?,
            Source::OllamaShow => {
                let body = serde_json::json!({ "model": self.model }).to_string();
                let request = self
                    .client
                    .post(self.url("/api/show")?)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body);
                self.json(request).await?
            }
            Source::LlamaCppProps => self.get(self.url("/props")?).await?,
            Source::VllmModels => self.get(self.url("/v1/models")?).await?,
            Source::LmStudioModel => {
                let mut url = self.url("/api/v0/models")?;
                url.path_segments_mut().ok()?.push(self.model);
                self.get(url).await?
            }
        };
        let tokens = match source {
            Source::OllamaRunning => ollama_running(&answer, self.model),
            Source::OllamaShow => ollama_show(&answer),
            Source::LlamaCppProps => llama_cpp_props(&answer),
            Source::VllmModels => vllm_models(&answer, self.model),
            Source::LmStudioModel => lm_studio_model(&answer),
        };
        tokens.filter(|tokens| *tokens > 0)
    }

    fn url(&self, path: &str) -> Option<Url> {
        endpoint_url(&self.root, path).ok()
    }

    async fn get(&self, url: Url) -> Option<Value> {
        self.json(self.client.get(url)).await
    }

    /// Send `request` and read a successful answer as JSON, all within the timeout.
    async fn json(&self, request: reqwest::RequestBuilder) -> Option<Value> {
        let exchange = async {
            let mut response = request.send().await.ok()?;
            if !response.status().is_success() {
                return None;
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.ok()? {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return None;
                }
                body.extend_from_slice(&chunk);
            }
            serde_json::from_slice::<Value>(&body).ok()
        };
        tokio::time::timeout(self.timeout, exchange).await.ok()?
    }
}

/// Ollama `/api/ps`: the loaded model named `model` (an untagged name means `:latest`).
fn ollama_running(answer: &Value, model: &str) -> Option<u64> {
    let tagged = if model.contains(':') {
        model.to_owned()
    } else {
        format!("{model}:latest")
    };
    answer
        .get("models")?
        .as_array()?
        .iter()
        .find(|entry| {
            ["name", "model"].iter().any(|field| {
                entry
                    .get(field)
                    .and_then(Value::as_str)
                    .is_some_and(|name| name == model || name == tagged)
            })
        })?
        .get("context_length")?
        .as_u64()
}

/// Ollama `/api/show`: `num_ctx` from the parameters text, else the model's context length.
fn ollama_show(answer: &Value) -> Option<u64> {
    let num_ctx = answer
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|parameters| {
            parameters.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next()? == "num_ctx")
                    .then(|| words.next()?.parse::<u64>().ok())
                    .flatten()
            })
        });
    num_ctx.or_else(|| {
        answer
            .get("model_info")?
            .as_object()?
            .iter()
            .find(|(key, _)| key.ends_with(".context_length"))?
            .1
            .as_u64()
    })
}

/// llama.cpp `/props`.
fn llama_cpp_props(answer: &Value) -> Option<u64> {
    answer
        .pointer("/default_generation_settings/n_ctx")
        .and_then(Value::as_u64)
        .or_else(|| answer.get("n_ctx")?.as_u64())
}

/// vLLM `/v1/models`: the entry for `model`.
fn vllm_models(answer: &Value, model: &str) -> Option<u64> {
    answer
        .get("data")?
        .as_array()?
        .iter()
        .find(|entry| {
            entry
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| id.eq_ignore_ascii_case(model))
        })?
        .get("max_model_len")?
        .as_u64()
}

/// LM Studio `/api/v0/models/{model}`.
fn lm_studio_model(answer: &Value) -> Option<u64> {
    answer
        .get("loaded_context_length")
        .and_then(Value::as_u64)
        .or_else(|| answer.get("max_context_length")?.as_u64())
}

#[cfg(test)]
mod tests;
