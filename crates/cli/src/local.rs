//! Which of this machine's pods a command means: a named pod must exist; no name means the pod
//! of the current directory. Shared by both executables (the front's one-shot path and every
//! command of the core), so both say the same thing when there is no such pod.

use std::path::{Path, PathBuf};

use anyhow::Result;
use seedpod_client::{ClientError, Home};
use seedpod_protocol::PodName;
use seedpod_store::PodMeta;

use crate::exit::Exit;

/// Client name sent in `hello`.
pub const CLIENT_NAME: &str = concat!("seedpod-cli/", env!("CARGO_PKG_VERSION"));

/// Every pod with a readable `pod.json`, sorted by name.
pub fn known_pods(home: &Home) -> Vec<(PodName, PodMeta)> {
    seedpod_client::known_pods(home)
}

fn known_list(home: &Home) -> String {
    let names: Vec<String> = known_pods(home)
        .into_iter()
        .map(|(n, _)| n.to_string())
        .collect();
    if names.is_empty() {
        "none yet; create one with `seedpod start NAME --provider ...`".into()
    } else {
        names.join(", ")
    }
}

pub fn canonical_cwd(dir: Option<&Path>) -> Result<PathBuf> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| Exit::failure(format!("cannot read the current directory: {e}")))?,
    };
    dir.canonicalize()
        .map_err(|e| Exit::failure(format!("directory {} is not usable: {e}", dir.display())))
}

/// The pod an existing-pod command refers to.
pub fn resolve_existing(home: &Home, name: Option<&PodName>) -> Result<PodName> {
    match name {
        Some(name) => {
            if home.pod_dir(name).join("pod.json").exists() {
                Ok(name.clone())
            } else {
                Err(Exit::usage(format!(
                    "no pod named \"{name}\" (known: {})",
                    known_list(home)
                )))
            }
        }
        None => {
            let cwd = canonical_cwd(None)?;
            directory_pod(&known_pods(home), &cwd)
                .cloned()
                .ok_or_else(|| {
                    Exit::usage(format!(
                        "no pod for {} (known: {}); name one, or start one here with `seedpod start`",
                        cwd.display(),
                        known_list(home)
                    ))
                })
        }
    }
}

/// The pod a command without a NAME means in `cwd`: one working there, a pod started by a person
/// before any child pod (children share their parent's directory, and typing `seedpod` there
/// means the parent), then by name.
pub fn directory_pod<'a>(pods: &'a [(PodName, PodMeta)], cwd: &Path) -> Option<&'a PodName> {
    pods.iter()
        .filter(|(_, meta)| meta.cwd == cwd)
        .min_by_key(|(name, meta)| (meta.parent.is_some(), name.clone()))
        .map(|(name, _)| name)
}

/// A connection's error as a command reports it: a pod that is not running is exit 2 with the
/// way to start it.
pub fn stopped(err: ClientError) -> anyhow::Error {
    match err {
        ClientError::NotRunning { name } => Exit::usage(format!(
            "pod \"{name}\" is stopped; start it with `seedpod start {name}` (it restores from its log)"
        )),
        err => err.into(),
    }
}

/// Read the text argument, or standard input for `-` or nothing.
pub fn text_or_stdin(text: Option<String>) -> Result<String> {
    match text.as_deref() {
        Some("-") | None => {
            let mut buf = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
                .map_err(|e| Exit::failure(format!("cannot read standard input: {e}")))?;
            Ok(buf.trim_end_matches('\n').to_string())
        }
        Some(text) => Ok(text.to_string()),
    }
}
