//! Where a pod's file tools may go: its scope rules, and the directories no scope opens to
//! writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seedpod_client::Home;
use seedpod_config::Effective;
use seedpod_store::ScopeGrant;
use seedpod_tools::{ProtectedDirs, Scope, ScopeRules};

use super::{AssembleError, Machine};

/// The scope of a pod working in `cwd`, with seedpod's own directories and the person's shell,
/// git and ssh files protected from writes whatever the rules say (`seedpod-tools`'
/// `protected.rs` has the list).
pub(super) fn scope(
    home: &Home,
    cwd: &Path,
    eff: &Effective,
    grant: Option<&ScopeGrant>,
    machine: &Machine,
) -> Result<Arc<Scope>, AssembleError> {
    let rules = rules(cwd, eff, grant);
    let scope = Scope::new(cwd, &rules).map_err(|source| match grant {
        Some(_) => AssembleError::DelegatedScope(source),
        None => AssembleError::Scope {
            cwd: cwd.to_path_buf(),
            source,
        },
    })?;
    Ok(Arc::new(scope.with_protected(&ProtectedDirs {
        seedpod: seedpod_dirs(home),
        user_home: machine.user_home.clone(),
    })))
}

/// seedpod's own directories: the configuration, every pod's data and log, and the sockets a
/// person answers through.
pub(super) fn seedpod_dirs(home: &Home) -> Vec<PathBuf> {
    vec![
        home.config.clone(),
        home.data.clone(),
        home.state.clone(),
        home.run.clone(),
    ]
}

/// A child pod may touch exactly what its parent delegated — not even its own working
/// directory otherwise, since the parent lent only those roots — and the configured deny rules
/// still apply. Any other pod's own directory is always writable (unless a deny rule says
/// otherwise), and the configured roots add to it.
pub(super) fn rules(cwd: &Path, eff: &Effective, grant: Option<&ScopeGrant>) -> ScopeRules {
    let deny = eff.scope.deny.value.clone();
    match grant {
        Some(grant) => ScopeRules {
            read: grant.read.clone(),
            write: grant.write.clone(),
            deny,
        },
        None => {
            let mut write = vec![cwd.to_path_buf()];
            write.extend(eff.scope.write.value.iter().cloned());
            ScopeRules {
                read: eff.scope.read.value.clone(),
                write,
                deny,
            }
        }
    }
}
