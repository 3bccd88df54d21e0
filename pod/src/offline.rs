//! Reading a stopped pod's log without serving it: `seedpod history` and `seedpod context` work
//! on stopped pods, through exactly the restore path (read → fold → request body), so what they
//! print is what the pod will send when it is started again.

use seedpod_client::Home;
use seedpod_engine::Context;
use seedpod_protocol::{Entry, PodName};
use seedpod_store::{PodMeta, SegmentState, load_meta, read_segment, segment_path};

use crate::error::PodError;
use crate::lock;
use crate::providers::body_renderer;

pub struct OfflinePod {
    pub meta: PodMeta,
    pub entries: Vec<Entry>,
    pub state: SegmentState,
}

/// Open a stopped pod's active segment. Holds the pod lock (shared) while reading so a pod
/// starting at the same moment cannot race the torn-tail repair.
pub fn open_offline(home: &Home, name: &PodName) -> Result<OfflinePod, PodError> {
    let pod_dir = home.pod_dir(name);
    let _lock = lock::acquire_shared(&home.lock_path(name), name)?;
    let meta = load_meta(&pod_dir)?.ok_or_else(|| {
        PodError::Config(format!(
            "pod \"{name}\" has no pod.json in {}",
            pod_dir.display()
        ))
    })?;
    let read = read_segment(&segment_path(&pod_dir, &meta.active_segment))?;
    let state = SegmentState::replay(&read.entries).map_err(seedpod_store::StoreError::from)?;
    Ok(OfflinePod {
        meta,
        entries: read.entries,
        state,
    })
}

/// The body the pod's next provider request will carry once it is started.
pub fn offline_context(home: &Home, name: &PodName) -> Result<String, PodError> {
    let pod = open_offline(home, name)?;
    let provider = body_renderer(name, &pod.meta.config, &home.pod_dir(name))?;
    Ok(provider.request_body(&Context {
        model: &pod.state.model,
        system_prompt: &pod.state.system_prompt,
        tools: &pod.state.tools,
        items: &pod.state.history,
    }))
}
