//! Which pod a command means: named pods must exist; no name means the current directory's pod.

use std::path::{Path, PathBuf};

use anyhow::Result;
use seedpod_client::{ClientError, Connection, Home, sanitise_dir_name};
use seedpod_protocol::{ClientMode, PodName};
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
fn directory_pod<'a>(pods: &'a [(PodName, PodMeta)], cwd: &Path) -> Option<&'a PodName> {
    pods.iter()
        .filter(|(_, meta)| meta.cwd == cwd)
        .min_by_key(|(name, meta)| (meta.parent.is_some(), name.clone()))
        .map(|(name, _)| name)
}

/// The name `start` uses: the given one, the pod already serving this directory, or the
/// directory's basename made unique.
pub fn name_for_start(home: &Home, name: Option<&PodName>, cwd: &Path) -> Result<PodName> {
    if let Some(name) = name {
        return Ok(name.clone());
    }
    let pods = known_pods(home);
    if let Some(name) = directory_pod(&pods, cwd) {
        return Ok(name.clone());
    }
    let base = sanitise_dir_name(cwd);
    let taken = |candidate: &PodName| pods.iter().any(|(n, _)| n == candidate);
    if !taken(&base) {
        return Ok(base);
    }
    // The base leaves room for the suffix (it is cut 4 short of the limit), so each candidate
    // is a name; one that somehow is not is skipped.
    let name = (2..)
        .filter_map(|n| PodName::new(format!("{base}-{n}")).ok())
        .find(|candidate| !taken(candidate))
        .unwrap_or(base);
    Ok(name)
}

/// Connect to this machine's pod `name` (see `connect_pod`).
pub async fn connect(home: &Home, name: &PodName, mode: ClientMode) -> Result<Connection> {
    connect_pod(home, &Pod::Local(name.clone()), mode).await
}

/// A pod a command is about: one of this machine's, or `HOST:NAME` on another.
#[derive(Debug, Clone)]
pub enum Pod {
    Local(PodName),
    Remote {
        remote: seedpod_client::Remote,
        name: PodName,
    },
}

impl std::fmt::Display for Pod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pod::Local(name) => write!(f, "{name}"),
            Pod::Remote { remote, name } => write!(f, "{}:{name}", remote.alias),
        }
    }
}

/// The pod `target` names: an existing pod here (or this directory's, for none), or a pod on
/// another machine as `[remote]` says to reach it.
pub fn resolve_target(home: &Home, target: Option<&seedpod_client::Target>) -> Result<Pod> {
    use seedpod_client::Target;
    match target {
        None => Ok(Pod::Local(resolve_existing(home, None)?)),
        Some(Target::Local(name)) => Ok(Pod::Local(resolve_existing(home, Some(name))?)),
        Some(Target::Remote {
            host,
            name: Some(name),
        }) => Ok(Pod::Remote {
            remote: crate::remote::reach(home, host)?,
            name: name.clone(),
        }),
        Some(Target::Remote { host, name: None }) => Err(Exit::usage(format!(
            "{host}: names a machine, not a pod; write {host}:NAME (`seedpod ls {host}:` lists its pods)"
        ))),
    }
}

/// The pod `target` names when it is one of this machine's (an existing pod, or this
/// directory's for none); `None` for a pod on another machine.
pub fn resolve_here(
    home: &Home,
    target: Option<&seedpod_client::Target>,
) -> Option<Result<PodName>> {
    use seedpod_client::Target;
    match target {
        None => Some(resolve_existing(home, None)),
        Some(Target::Local(name)) => Some(resolve_existing(home, Some(name))),
        Some(Target::Remote { .. }) => None,
    }
}

/// Connect for requests; a stopped pod is exit 2 with the way to start it. A pod on another
/// machine is reached through `ssh HOST seedpod bridge NAME`, without prompts (`BatchMode`).
pub async fn connect_pod(home: &Home, pod: &Pod, mode: ClientMode) -> Result<Connection> {
    let name = match pod {
        Pod::Local(name) => name,
        Pod::Remote { remote, name } => {
            return Ok(remote.connect(name, CLIENT_NAME, mode, false, true).await?);
        }
    };
    Connection::connect(home, name, CLIENT_NAME, mode)
        .await
        .map_err(stopped)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::meta;

    #[test]
    fn a_directory_means_its_own_pod_not_a_child_working_there() {
        let pods = vec![
            (PodName::new("alpha").unwrap(), meta("alpha", Some("zed"))),
            (PodName::new("zed").unwrap(), meta("zed", None)),
        ];
        let cwd = Path::new("/w");
        assert_eq!(directory_pod(&pods, cwd).map(PodName::as_str), Some("zed"));
        assert_eq!(
            directory_pod(&pods[..1], cwd).map(PodName::as_str),
            Some("alpha"),
            "a child alone"
        );
        assert_eq!(directory_pod(&pods, Path::new("/elsewhere")), None);
    }
}
