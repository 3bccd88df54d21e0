//! The pod's session for a pod working in a directory: `seedpod-pod`'s `assemble` does the
//! composition (scope, sandbox, tools, policies); this module only turns its errors into exit
//! codes and reads `--instructions`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::Effective;
use seedpod_pod::assemble::{Machine, PodInputs, assemble};
use seedpod_store::ScopeGrant;

use crate::exit::Exit;

pub use seedpod_pod::assemble::PodSession;

/// The pod's built-in tools and session settings for a pod working in `cwd`. `grant` is what a
/// child pod's parent delegated to it (`None` for a pod a person started).
pub fn build(
    home: &Home,
    cwd: &Path,
    eff: &Effective,
    grant: Option<&ScopeGrant>,
) -> Result<PodSession> {
    build_child(home, cwd, eff, grant, None, None)
}

/// `build`, for a pod whose parent passed on only some of its MCP servers (`mcp_only`), keeping
/// file checkpoints in `checkpoints` (a served pod's `checkpoints/` directory).
pub fn build_child(
    home: &Home,
    cwd: &Path,
    eff: &Effective,
    grant: Option<&ScopeGrant>,
    mcp_only: Option<Vec<String>>,
    checkpoints: Option<PathBuf>,
) -> Result<PodSession> {
    assemble(PodInputs {
        home,
        cwd,
        eff,
        grant,
        mcp_only,
        machine: Machine::this(),
        checkpoints,
    })
    .map_err(|e| Exit::usage(e.to_string()))
}

/// For `config show`: what the sandbox setting means on this machine.
pub fn sandbox_status(eff: &Effective) -> String {
    seedpod_pod::assemble::sandbox_status(eff, &Machine::this().sandbox)
}

/// `--instructions TEXT|@FILE`: the text, read from FILE for the `@` form.
pub fn instructions(arg: Option<&str>) -> Result<Option<String>> {
    let Some(arg) = arg else {
        return Ok(None);
    };
    match arg.strip_prefix('@') {
        Some(file) => {
            let path = PathBuf::from(file);
            let text = std::fs::read_to_string(&path).map_err(|e| {
                Exit::usage(format!(
                    "--instructions @{file}: cannot read {}: {e}",
                    path.display()
                ))
            })?;
            Ok(Some(text))
        }
        None => Ok(Some(arg.to_string())),
    }
}
