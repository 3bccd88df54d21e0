//! Which provider a pod talks to, built from its recorded configuration.

use std::path::Path;
use std::sync::Arc;

use seedpod_engine::{Provider, ScriptedProvider};
use seedpod_protocol::ProviderKind;
use seedpod_store::PodConfig;

use crate::error::PodError;

/// File in the pod directory where the scripted provider records every request body it
/// receives (one per line); its line count is the script cursor, so restarts continue the script.
pub const SCRIPTED_RECORD_FILE: &str = "scripted-requests.jsonl";

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
        ProviderKind::Anthropic | ProviderKind::Openai => Err(PodError::Config(format!(
            "provider {} is not built into this seedpod yet; use --provider scripted --script FILE",
            config.provider.as_str()
        ))),
        ProviderKind::Unknown => Err(PodError::Config(
            "this pod was configured by a newer seedpod with a provider this one does not know; upgrade seedpod".into(),
        )),
    }
}
