//! A pod assembled from its effective configuration: where its file tools may go, what is
//! never written, the shell sandbox or why there is none, which tools it offers and the policy
//! of each, a child's delegated scope and servers, and what an untrusted project file may not
//! set. The most security-relevant composition in the product, in one constructor
//! ([`assemble`]) with a test for each rule; the CLI only calls it.
//!
//! Files: `scope.rs` (scope rules and protected directories), `sandbox.rs` (the sandbox and
//! its fallback), `tools.rs` (policies, offered tools, the declared-tools check).

mod sandbox;
mod scope;
mod tools;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use seedpod_client::Home;
use seedpod_config::Effective;
use seedpod_engine::ToolRegistry;
use seedpod_store::ScopeGrant;
use seedpod_tools::{SandboxSupport, ScopeError};

use crate::children::limits::ChildLimits;
use crate::mcp::McpSettings;
use crate::session::{PromptSettings, SessionSettings};

pub use sandbox::sandbox_status;
pub use tools::{PodTools, check_declared, offer_pod_tools};

/// What a pod is assembled from.
pub struct PodInputs<'a> {
    pub home: &'a Home,
    /// The pod's working directory.
    pub cwd: &'a Path,
    pub eff: &'a Effective,
    /// What a child pod's parent delegated to it; `None` for a pod a person started.
    pub grant: Option<&'a ScopeGrant>,
    /// For a child pod: which of its parent's MCP servers it starts (`None`: all of them).
    pub mcp_only: Option<Vec<String>>,
    pub machine: Machine,
    /// Where `write_file` and `edit_file` keep a file before changing it (the pod's
    /// `checkpoints/` directory, docs/storage.md §Checkpoints); `None`: nothing is kept.
    pub checkpoints: Option<PathBuf>,
}

/// What this machine offers the assembly: asked of the system once in a real pod
/// ([`Machine::this`]), stated by tests.
#[derive(Debug, Clone)]
pub struct Machine {
    /// How far the kernel can confine `shell`.
    pub sandbox: SandboxSupport,
    /// The person's home directory: its shell, git and ssh files are protected, and its
    /// toolchain directories readable in the sandbox.
    pub user_home: Option<PathBuf>,
}

impl Machine {
    pub fn this() -> Machine {
        Machine {
            sandbox: SandboxSupport::probe(),
            user_home: std::env::home_dir(),
        }
    }
}

/// A pod's built-in tools and the settings it runs with besides its model. The pod's own tools
/// join the built-in ones when it is served ([`offer_pod_tools`]): they need its controller.
pub struct PodSession {
    pub tools: ToolRegistry,
    pub session: SessionSettings,
}

/// Why a pod cannot be assembled, worded for the person starting it.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    #[error("the scope delegated to this pod cannot be used (a path may have been removed): {0}")]
    DelegatedScope(ScopeError),
    #[error("the [scope] settings cannot be used for {}: {source}", cwd.display())]
    Scope { cwd: PathBuf, source: ScopeError },
    /// A tool without a declaration reached the registry: it has no declared policy, so it is
    /// not offered (`catalogue.rs`).
    #[error("tool \"{0}\" has no declaration, so no policy: a pod does not offer it")]
    Undeclared(String),
}

/// Assemble a pod from its configuration.
pub fn assemble(inputs: PodInputs<'_>) -> Result<PodSession, AssembleError> {
    let PodInputs {
        home,
        cwd,
        eff,
        grant,
        mcp_only,
        machine,
        checkpoints,
    } = inputs;
    let scope = scope::scope(home, cwd, eff, grant, &machine)?;
    let (sandbox, sandbox_alert) = sandbox::sandbox(home, eff, &scope, &machine);
    let policies = tools::policies(eff, sandbox.as_ref(), &machine);
    let registry = tools::builtin_tools(eff, &scope, sandbox, &policies, checkpoints);
    check_declared(&registry)?;
    let session = SessionSettings {
        context: eff.context.clone(),
        // What the person must hear at every attach: the project file's keys left out for
        // want of trust, and a sandbox weaker than asked for.
        startup_alerts: eff
            .untrusted_warning()
            .into_iter()
            .chain(sandbox_alert)
            .collect(),
        policies,
        scope: Some(scope.clone()),
        prompt: PromptSettings {
            identity_file: eff
                .system_prompt
                .identity_file
                .as_ref()
                .map(|s| s.value.clone()),
            config_dir: Some(home.config.clone()),
            scope: Some(scope),
        },
        guard: eff.input.guard.value,
        max_message_chars: eff.input.max_message_chars.value,
        wake_on_child_reports: eff.children.wake.value,
        child_limits: ChildLimits::from_settings(&eff.children),
        notify_wrapper: eff.notify.wrapper.value.clone(),
        notify_max_chars: eff.notify.max_chars.value,
        tool_search: crate::tool_search::Budget {
            max_tools: eff.tool_search.max_tools.value,
            max_schema_share: eff.tool_search.max_schema_share.value,
        },
        mcp: McpSettings {
            servers: eff.mcp.servers.clone(),
            only: mcp_only,
        },
        // A project's hooks are here only once it is trusted (`seedpod_config::loosen`).
        hooks: eff.hooks.clone(),
    };
    Ok(PodSession {
        tools: registry,
        session,
    })
}
