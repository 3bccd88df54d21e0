//! The `shell` sandbox a pod gets, and what it says when the machine cannot give what the
//! configuration asks: it never runs weaker in silence (DESIGN invariant 6, docs/sandbox.md).

use std::sync::Arc;

use seedpod_client::Home;
use seedpod_config::{Effective, SandboxMode};
use seedpod_protocol::Effect;
use seedpod_tools::{Sandbox, SandboxSupport, Scope};

use super::Machine;
use crate::policy::Policy;

/// The pod's sandbox, with seedpod's own directories covered for every command, or `None`;
/// and the alert that says why not or how much less (only when the person asked for it:
/// `sandbox = "scope"` on a kernel without Landlock, `shell = "sandboxed"` with the sandbox
/// off, a partial sandbox). A child's scope is its delegated scope, so its sandbox is too.
pub(super) fn sandbox(
    home: &Home,
    eff: &Effective,
    scope: &Arc<Scope>,
    machine: &Machine,
) -> (Option<Sandbox>, Option<String>) {
    let network = eff.shell.network.value;
    let make = || {
        Sandbox::new(scope.clone(), network, machine.user_home.clone())
            // What the pods hold and the sockets a person answers through are covered for
            // every sandboxed command (seedpod-tools' `sandbox/jail.rs`).
            .map(|sandbox| sandbox.hiding(super::scope::seedpod_dirs(home)))
    };
    let unconfined = |err: seedpod_tools::SandboxError| {
        format!("{err}; shell commands run unconfined, under approvals alone")
    };
    match (eff.shell.sandbox.value, &machine.sandbox) {
        (SandboxMode::Scope, support @ SandboxSupport::Partial { .. }) => match make() {
            Ok(sandbox) => (
                Some(sandbox),
                Some(format!(
                    "the shell sandbox is {}",
                    support.describe(network)
                )),
            ),
            Err(err) => (None, Some(unconfined(err))),
        },
        (SandboxMode::Scope, SandboxSupport::Landlock { .. }) => match make() {
            Ok(sandbox) => (Some(sandbox), None),
            Err(err) => (None, Some(unconfined(err))),
        },
        (SandboxMode::Scope, SandboxSupport::Unsupported(why)) => {
            let then = if asks_for_sandboxed(eff) {
                "[approvals] shell = \"sandboxed\" asks before every command instead"
            } else {
                "shell commands run unconfined, under approvals alone"
            };
            (
                None,
                Some(format!("the shell sandbox is not enforced: {why}; {then}")),
            )
        }
        (SandboxMode::Off, _) if asks_for_sandboxed(eff) => (
            None,
            Some(
                "[approvals] shell = \"sandboxed\" needs [shell] sandbox = \"scope\"; it asks \
                 before every command instead"
                    .into(),
            ),
        ),
        (SandboxMode::Off, _) => (None, None),
    }
}

/// What `policy` means with this sandbox: `sandboxed` runs commands without asking only where
/// the whole sandbox confines them; anywhere else it cannot keep its promise, so it asks.
pub(super) fn keeps_promise(
    policy: Policy,
    sandbox: Option<&Sandbox>,
    machine: &Machine,
) -> Policy {
    let whole = sandbox.is_some() && matches!(machine.sandbox, SandboxSupport::Landlock { .. });
    match policy {
        Policy::Sandboxed if !whole => Policy::Ask,
        Policy::Allow | Policy::Ask | Policy::Deny | Policy::Sandboxed => policy,
    }
}

/// Whether the configuration sets a tool that runs commands (`shell`) to `sandboxed`.
fn asks_for_sandboxed(eff: &Effective) -> bool {
    crate::catalogue::declared()
        .into_iter()
        .filter(|decl| decl.effect == Effect::RunsCommands)
        .any(|decl| {
            eff.approvals
                .policy(decl.name)
                .is_some_and(|p| p.value == Policy::Sandboxed)
        })
}

/// For `config show`: what the sandbox setting means on this machine.
pub fn sandbox_status(eff: &Effective, support: &SandboxSupport) -> String {
    match eff.shell.sandbox.value {
        SandboxMode::Off => "not enforced ([shell] sandbox = \"off\")".into(),
        SandboxMode::Scope => support.describe(eff.shell.network.value),
    }
}
