//! Which provider a pod talks to, built from its recorded configuration.

use std::path::Path;
use std::sync::Arc;

use seedpod_engine::{
    AnthropicConfig, AnthropicProvider, OpenAiConfig, OpenAiProvider, Provider, ScriptedProvider,
};
use seedpod_protocol::ProviderKind;
use seedpod_store::PodConfig;

use crate::error::PodError;

/// File in the pod directory where the scripted provider records every request body it
/// receives (one per line); its line count is the script cursor, so restarts continue the script.
pub const SCRIPTED_RECORD_FILE: &str = "scripted-requests.jsonl";

/// API key for the Anthropic provider (required).
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// API key for the OpenAI provider (optional: local servers need none).
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";
/// Endpoint for the OpenAI provider when `--base-url` is not given.
pub const OPENAI_BASE_URL_ENV: &str = "OPENAI_BASE_URL";

pub fn build_provider(config: &PodConfig, pod_dir: &Path) -> Result<Arc<dyn Provider>, PodError> {
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
            let api_key = std::env::var(ANTHROPIC_KEY_ENV).ok().filter(|k| !k.is_empty());
            if api_key.is_none() {
                return Err(PodError::Config(format!(
                    "the anthropic provider needs an API key: set {ANTHROPIC_KEY_ENV}"
                )));
            }
            let mut cfg = AnthropicConfig {
                api_key,
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
            let mut cfg = OpenAiConfig {
                // Optional: local OpenAI-compatible servers need no key.
                api_key: std::env::var(OPENAI_KEY_ENV).ok().filter(|k| !k.is_empty()),
                ..OpenAiConfig::default()
            };
            let base_url = config
                .base_url
                .clone()
                .or_else(|| std::env::var(OPENAI_BASE_URL_ENV).ok().filter(|u| !u.is_empty()));
            if let Some(base_url) = base_url {
                cfg.base_url = base_url;
            }
            let provider = OpenAiProvider::new(cfg).map_err(|e| PodError::Config(e.to_string()))?;
            Ok(Arc::new(provider))
        }
        ProviderKind::Unknown => Err(PodError::Config(
            "this pod was configured by a newer seedpod with a provider this one does not know; upgrade seedpod".into(),
        )),
    }
}
