//! Which provider a pod talks to, built from its recorded configuration.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use seedpod_engine::{
    AnthropicConfig, AnthropicProvider, DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_READ_TIMEOUT,
    OpenAiConfig, OpenAiProvider, Provider, RetryPolicy, ScriptedProvider,
};
use seedpod_protocol::ProviderKind;
use seedpod_store::PodConfig;

use crate::error::PodError;

/// File in the pod directory where the scripted provider records every request body it
/// receives (one per line); its line count is the script cursor, so restarts continue the script.
pub const SCRIPTED_RECORD_FILE: &str = "scripted-requests.jsonl";

/// API key variable of the Anthropic provider unless `api_key_env` names another.
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// API key variable of the OpenAI provider (optional: local servers need none).
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";

/// How a pod reaches its provider, from the configuration current when the pod starts. None of
/// it changes a request body, so none of it is recorded in the log.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// The variable holding the API key, when configured (`api_key_env`); else the provider's
    /// conventional one.
    pub api_key_env: Option<String>,
    pub connect_timeout: Duration,
    /// A response silent this long is a (retryable) timeout.
    pub idle_read_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            api_key_env: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            idle_read_timeout: DEFAULT_IDLE_READ_TIMEOUT,
            retry: RetryPolicy::default(),
        }
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
    config: &PodConfig,
    pod_dir: &Path,
    settings: &ProviderSettings,
) -> Result<Arc<dyn Provider>, PodError> {
    build(config, pod_dir, settings, Purpose::Requests)
}

/// A provider used only to render request bodies (offline `context`): no key required.
pub fn body_renderer(config: &PodConfig, pod_dir: &Path) -> Result<Arc<dyn Provider>, PodError> {
    build(
        config,
        pod_dir,
        &ProviderSettings::default(),
        Purpose::BodiesOnly,
    )
}

fn build(
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
            let provider =
                ScriptedProvider::from_file(script, Some(pod_dir.join(SCRIPTED_RECORD_FILE)))
                    .map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Anthropic => {
            let var = settings.api_key_env.as_deref().unwrap_or(ANTHROPIC_KEY_ENV);
            let api_key = key_from(var);
            if api_key.is_none() && purpose == Purpose::Requests {
                return Err(PodError::Config(format!(
                    "the anthropic provider needs an API key: set {var}"
                )));
            }
            let mut cfg = AnthropicConfig {
                api_key,
                connect_timeout: settings.connect_timeout,
                idle_read_timeout: settings.idle_read_timeout,
                ..AnthropicConfig::default()
            };
            if let Some(base_url) = &config.base_url {
                cfg.base_url = base_url.clone();
            }
            let provider =
                AnthropicProvider::new(cfg).map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Openai => {
            let api_key = match &settings.api_key_env {
                // A variable someone named on purpose must be set.
                Some(var) => match (key_from(var), purpose) {
                    (Some(key), _) => Some(key),
                    (None, Purpose::BodiesOnly) => None,
                    (None, Purpose::Requests) => {
                        return Err(PodError::Config(format!(
                            "api_key_env names {var}, which is not set; set it or remove api_key_env"
                        )));
                    }
                },
                // Optional: local OpenAI-compatible servers need no key.
                None => key_from(OPENAI_KEY_ENV),
            };
            let mut cfg = OpenAiConfig {
                api_key,
                connect_timeout: settings.connect_timeout,
                idle_read_timeout: settings.idle_read_timeout,
                ..OpenAiConfig::default()
            };
            // The endpoint was resolved from flags, files and OPENAI_BASE_URL when the pod was
            // configured, and recorded.
            if let Some(base_url) = &config.base_url {
                cfg.base_url = base_url.clone();
            }
            let provider = OpenAiProvider::new(cfg).map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Unknown => Err(PodError::Config(
            "this pod was configured by a newer seedpod with a provider this one does not know; upgrade seedpod".into(),
        )),
    }
}

fn key_from(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|k| !k.is_empty())
}
