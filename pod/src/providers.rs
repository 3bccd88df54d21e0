//! Which provider a pod talks to, built from its recorded configuration.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use seedpod_engine::{
    AnthropicConfig, AnthropicProvider, DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_READ_TIMEOUT,
    OpenAiConfig, OpenAiProvider, Provider, ResponsesConfig, ResponsesProvider, RetryPolicy,
    ScriptedProvider,
};
use seedpod_protocol::{PodName, ProviderKind};
use seedpod_store::PodConfig;

use crate::error::PodError;

/// File in the pod directory where the scripted provider records every request body it
/// receives (one per line); its line count is the script cursor, so restarts continue the script.
pub const SCRIPTED_RECORD_FILE: &str = "scripted-requests.jsonl";

/// Where the API key is and whether the pod cannot work without it. Decided by the
/// configuration (`seedpod-config`'s `key_requirement`), the one place that knows each
/// provider's conventional variable; the pod only reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyVar {
    pub var: String,
    pub required: bool,
}

/// How a pod reaches its provider, from the configuration current when the pod starts. None of
/// it changes a request body, so none of it is recorded in the log.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// `None`: the provider needs no key (scripted), or only request bodies are rendered.
    pub api_key: Option<ApiKeyVar>,
    pub connect_timeout: Duration,
    /// A response silent this long is a (retryable) timeout.
    pub idle_read_timeout: Duration,
    pub retry: RetryPolicy,
    /// `user:password` for the base URL, kept out of `pod.json` and argv
    /// (`seedpod_client::credentials`); put back into the URL only here, in memory.
    pub base_url_credentials: Option<String>,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            api_key: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_read_timeout: DEFAULT_IDLE_READ_TIMEOUT,
            retry: RetryPolicy::default(),
            base_url_credentials: None,
        }
    }
}

/// The base URL requests go to: the recorded one, with its credentials when there are some.
fn request_url(base_url: &str, settings: &ProviderSettings) -> String {
    match &settings.base_url_credentials {
        Some(credentials) => seedpod_client::credentials::with_userinfo(base_url, credentials),
        None => base_url.to_owned(),
    }
}

/// Whether the provider will make requests, and so needs its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Requests,
    /// Only `request_body`: what `seedpod context` shows for a stopped pod needs no key.
    BodiesOnly,
}

/// The provider a running pod talks to.
pub fn build_provider(
    name: &PodName,
    config: &PodConfig,
    pod_dir: &Path,
    settings: &ProviderSettings,
) -> Result<Arc<dyn Provider>, PodError> {
    build(name, config, pod_dir, settings, Purpose::Requests)
}

/// A provider used only to render request bodies (offline `context`): no key required.
pub fn body_renderer(
    name: &PodName,
    config: &PodConfig,
    pod_dir: &Path,
) -> Result<Arc<dyn Provider>, PodError> {
    build(
        name,
        config,
        pod_dir,
        &ProviderSettings::default(),
        Purpose::BodiesOnly,
    )
}

fn build(
    name: &PodName,
    config: &PodConfig,
    pod_dir: &Path,
    settings: &ProviderSettings,
    purpose: Purpose,
) -> Result<Arc<dyn Provider>, PodError> {
    match config.provider {
        ProviderKind::Scripted => {
            let Some(script) = &config.script else {
                return Err(PodError::Config(
                    "the scripted provider needs a script: pass --script FILE".into(),
                ));
            };
            let provider = ScriptedProvider::from_file_for(
                script,
                Some(pod_dir.join(SCRIPTED_RECORD_FILE)),
                Some(name),
            )
            .map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Anthropic => {
            let api_key = api_key(settings, purpose, "anthropic")?;
            let mut cfg = AnthropicConfig {
                api_key,
                connect_timeout: settings.connect_timeout,
                idle_read_timeout: settings.idle_read_timeout,
                ..AnthropicConfig::default()
            };
            if let Some(base_url) = &config.base_url {
                cfg.base_url = request_url(base_url, settings);
            }
            let provider =
                AnthropicProvider::new(cfg).map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Openai => {
            let api_key = api_key(settings, purpose, "openai")?;
            let mut cfg = OpenAiConfig {
                api_key,
                connect_timeout: settings.connect_timeout,
                idle_read_timeout: settings.idle_read_timeout,
                ..OpenAiConfig::default()
            };
            // The endpoint was resolved from flags, files and OPENAI_BASE_URL when the pod was
            // configured, and recorded.
            if let Some(base_url) = &config.base_url {
                cfg.base_url = request_url(base_url, settings);
            }
            let provider = OpenAiProvider::new(cfg).map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::OpenaiResponses => {
            let api_key = api_key(settings, purpose, "openai-responses")?;
            let mut cfg = ResponsesConfig {
                api_key,
                connect_timeout: settings.connect_timeout,
                idle_read_timeout: settings.idle_read_timeout,
                ..ResponsesConfig::default()
            };
            if let Some(base_url) = &config.base_url {
                cfg.base_url = request_url(base_url, settings);
            }
            let provider =
                ResponsesProvider::new(cfg).map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Unknown => Err(PodError::Config(
            "this pod was configured by a newer seedpod with a provider this one does not know; upgrade seedpod".into(),
        )),
    }
}

/// The key's value, or an error naming the variable when a required key is missing.
fn api_key(
    settings: &ProviderSettings,
    purpose: Purpose,
    provider: &str,
) -> Result<Option<String>, PodError> {
    let Some(key) = &settings.api_key else {
        return Ok(None);
    };
    match (key_from(&key.var), key.required, purpose) {
        (Some(value), _, _) => Ok(Some(value)),
        (None, true, Purpose::Requests) => Err(PodError::Config(format!(
            "the {provider} provider needs an API key: set {}",
            key.var
        ))),
        (None, false, _) | (None, true, Purpose::BodiesOnly) => Ok(None),
    }
}

fn key_from(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|k| !k.is_empty())
}
