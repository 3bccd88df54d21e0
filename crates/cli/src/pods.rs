//! Which pod a command means: named pods must exist; no name means the current directory's pod.
//! The part a one-shot command needs lives in the library (`local.rs`), shared with the front
//! binary; this adds pods on other machines and async connections.

use std::path::Path;

use anyhow::Result;
use seedpod_cli::local::directory_pod;
pub use seedpod_cli::local::{
    CLIENT_NAME, canonical_cwd, known_pods, resolve_existing, stopped, text_or_stdin,
};
use seedpod_client::{Connection, Home, sanitise_dir_name};
use seedpod_protocol::{ClientMode, PodName};

use crate::exit::Exit;

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
