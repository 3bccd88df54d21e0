//! `api = "chat" | "responses"`: which of OpenAI's two APIs the `openai` provider speaks
//! (docs/configuration.md §The Responses API). It is another way to write the provider —
//! `provider = "openai"` with `api = "responses"` is `provider = "openai-responses"` — so it is
//! folded into `provider` as each file is read, before anything (the project's trust check, the
//! layering, `config show`) looks at the file.

use serde::Deserialize;

use crate::error::ConfigError;
use crate::file::{ConfigFile, ProviderChoice};
use crate::source::Source;

/// The OpenAI API a pod on the `openai` provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenaiApi {
    /// Chat Completions (the default).
    Chat,
    /// The Responses API (`provider = "openai-responses"`).
    Responses,
}

impl OpenaiApi {
    pub fn as_str(self) -> &'static str {
        match self {
            OpenaiApi::Chat => "chat",
            OpenaiApi::Responses => "responses",
        }
    }

    /// The provider this API means on OpenAI.
    fn provider(self) -> ProviderChoice {
        match self {
            OpenaiApi::Chat => ProviderChoice::Openai,
            OpenaiApi::Responses => ProviderChoice::OpenaiResponses,
        }
    }
}

/// Fold `file.api` into `file.provider`. A file that sets `api` without `provider` picks the
/// API of the OpenAI provider `below` it; `api` with any other provider, or with none at all,
/// is an error rather than a key that silently does nothing.
pub(crate) fn fold(
    file: &mut ConfigFile,
    below: Option<ProviderChoice>,
    source: &Source,
) -> Result<(), ConfigError> {
    let Some(api) = file.api.take() else {
        return Ok(());
    };
    let invalid = |reason: String| ConfigError::Invalid {
        key: "api".into(),
        value: api.as_str().into(),
        origin: source.clone(),
        reason,
    };
    let provider = file.provider.or(below).ok_or_else(|| {
        invalid(
            "only applies to the openai provider, and no provider is set; add provider = \
             \"openai\" beside it"
                .into(),
        )
    })?;
    match provider {
        ProviderChoice::Openai => {}
        ProviderChoice::OpenaiResponses if file.provider.is_none() => {}
        ProviderChoice::OpenaiResponses => {
            if api != OpenaiApi::Responses {
                return Err(invalid(
                    "contradicts provider = \"openai-responses\" in the same file; write \
                     provider = \"openai\" with api = \"chat\", or remove api"
                        .into(),
                ));
            }
        }
        ProviderChoice::Anthropic | ProviderChoice::Scripted => {
            return Err(invalid(format!(
                "only applies to the openai provider, and the provider is \"{}\"; remove api, \
                 or set provider = \"openai\"",
                provider.as_str()
            )));
        }
    }
    file.provider = Some(api.provider());
    Ok(())
}
