//! Fakes shared by the CLI's unit tests.

use std::path::PathBuf;

use seedpod_protocol::ProviderKind;
use seedpod_store::{PodConfig, PodMeta};

/// The `pod.json` of a scripted pod in `/w`, child of `parent` if given.
pub fn meta(name: &str, parent: Option<&str>) -> PodMeta {
    PodMeta {
        name: name.into(),
        cwd: PathBuf::from("/w"),
        active_segment: "s".into(),
        segments: vec!["s".into()],
        parent: parent.map(Into::into),
        children: Vec::new(),
        delegated: None,
        config: PodConfig {
            provider: ProviderKind::Scripted,
            model: "script".into(),
            script: None,
            base_url: None,
            temperature: None,
            max_tokens: None,
        },
        created_ms: 0,
        instructions: None,
    }
}
