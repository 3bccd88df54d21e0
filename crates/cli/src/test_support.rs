//! Fakes shared by the CLI's unit tests.

use std::path::PathBuf;

use seedpod_protocol::{PodName, ProviderKind, SegmentId};
use seedpod_store::{PodConfig, PodMeta};

/// The `pod.json` of a scripted pod in `/w`, child of `parent` if given.
pub fn meta(name: &str, parent: Option<&str>) -> PodMeta {
    PodMeta {
        parent: parent.map(|p| PodName::new(p).unwrap()),
        ..PodMeta::new(
            PodName::new(name.to_string()).unwrap(),
            PathBuf::from("/w"),
            SegmentId::new("s"),
            PodConfig::new(ProviderKind::Scripted, "script"),
            0,
        )
    }
}
