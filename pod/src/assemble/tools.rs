//! Which tools a pod offers and what each call of them gets: the policy map from the
//! configuration and the declarations, the built-in tools that are not denied, the pod's own
//! tools, and the check that nothing undeclared is among them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seedpod_client::Home;
use seedpod_config::Effective;
use seedpod_engine::ToolRegistry;
use seedpod_protocol::PodName;
use seedpod_tools::{CheckpointStore, Sandbox, Scope, ShellLimits, ToolContext};
use tokio::sync::mpsc;

use super::{AssembleError, Machine};
use crate::catalogue;
use crate::children::ChildMsg;
use crate::children::tools::ChildTools;
use crate::paste::PasteQuery;
use crate::policy::Policies;

/// Every declared tool's policy as configured (or its declared default), with `sandboxed`
/// asking where the sandbox cannot keep its promise, and the configured MCP keys.
pub(super) fn policies(eff: &Effective, sandbox: Option<&Sandbox>, machine: &Machine) -> Policies {
    let tools = catalogue::declared().into_iter().map(|decl| {
        // The configuration resolves a key for every declared tool; the declaration's
        // default stands in should a caller have resolved it with fewer.
        let configured = eff
            .approvals
            .policy(decl.name)
            .map_or(decl.default_policy, |setting| setting.value);
        let policy = super::sandbox::keeps_promise(configured, sandbox, machine);
        (decl.name.to_owned(), policy)
    });
    Policies::new(tools).with_mcp(
        eff.approvals
            .mcp_keys()
            .iter()
            .map(|(key, setting)| (key.clone(), setting.value)),
    )
}

/// The built-in tools `policies` do not deny, in catalogue order, confined to `scope`.
pub(super) fn builtin_tools(
    eff: &Effective,
    scope: &Arc<Scope>,
    sandbox: Option<Sandbox>,
    policies: &Policies,
    checkpoints: Option<PathBuf>,
) -> ToolRegistry {
    let enabled: Vec<&str> = seedpod_tools::BUILTIN_TOOLS
        .into_iter()
        .filter(|decl| policies.offers(decl))
        .map(|decl| decl.name)
        .collect();
    let ctx = ToolContext {
        scope: scope.clone(),
        shell: ShellLimits {
            default_timeout: Duration::from_secs(eff.shell.timeout_secs.value),
            max_timeout: Duration::from_secs(eff.shell.max_timeout_secs.value),
            login: eff.shell.login.value,
            ..ShellLimits::default()
        },
        sandbox,
        // A budget of 0 turns checkpoints off (docs/configuration.md `[storage]`).
        checkpoints: checkpoints
            .filter(|_| eff.storage.checkpoint_budget_mb.value > 0)
            .map(|dir| {
                let budget = eff
                    .storage
                    .checkpoint_budget_mb
                    .value
                    .saturating_mul(1024 * 1024);
                Arc::new(CheckpointStore::new(dir, budget))
            }),
    };
    let mut tools = ToolRegistry::new();
    for tool in seedpod_tools::builtin_tools(&ctx, &enabled) {
        tools.register(tool);
    }
    tools
}

/// What the pod's own tools need, which exists only once the pod is being served: the
/// controller's command queue, and who the pod is.
pub struct PodTools<'a> {
    pub home: &'a Home,
    pub name: &'a PodName,
    pub cwd: &'a Path,
    /// `read_paste`'s queue to the controller.
    pub pastes: mpsc::Sender<PasteQuery>,
    /// The child tools' queue to the controller.
    pub children: mpsc::Sender<ChildMsg>,
}

/// Add the pod's own tools that `policies` do not deny to `tools` (after the built-in ones, in
/// catalogue order): the task list, `git_commit`, `read_paste`, then the child-pod tools. Then
/// refuse the whole registry if anything in it has no declaration.
pub fn offer_pod_tools(
    tools: &mut ToolRegistry,
    pod: PodTools<'_>,
    policies: &Policies,
) -> Result<(), AssembleError> {
    crate::task_list::UpdateTasks::register(tools, policies);
    crate::git_commit::GitCommit::register(tools, pod.cwd, policies);
    crate::paste::ReadPaste::register(tools, pod.pastes, policies);
    ChildTools::new(pod.home.clone(), pod.name.clone(), pod.children).register(tools, policies);
    check_declared(tools)
}

/// Refuse a registry holding a tool no declaration covers: it would have no policy of its own
/// (the policy map denies it, but the model would be offered it all the same).
pub fn check_declared(tools: &ToolRegistry) -> Result<(), AssembleError> {
    match tools
        .specs()
        .into_iter()
        .find(|spec| catalogue::decl_for(&spec.name).is_none())
    {
        Some(spec) => Err(AssembleError::Undeclared(spec.name)),
        None => Ok(()),
    }
}
