//! From the effective configuration to what a pod runs with besides its model: the built-in
//! tools (those whose policy is not `deny`), their scope, the approval policies, the input
//! guard and the prompt sources.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::{Effective, GuardMode as ConfigGuard, Policy as ConfigPolicy};
use seedpod_engine::ToolRegistry;
use seedpod_pod::guard::GuardMode;
use seedpod_pod::policy::{Policies, Policy};
use seedpod_pod::session::{PromptSettings, SessionSettings};
use seedpod_tools::{BUILTIN_TOOLS, Scope, ScopeRules, ShellLimits, ToolContext};

use crate::exit::Exit;

/// The pod's tools and session settings for a pod working in `cwd`.
pub struct PodSession {
    pub tools: ToolRegistry,
    pub session: SessionSettings,
}

pub fn build(home: &Home, cwd: &Path, eff: &Effective) -> Result<PodSession> {
    // The pod's own directory is always writable (unless a deny rule says otherwise); the
    // configured roots add to it.
    let mut write = vec![cwd.to_path_buf()];
    write.extend(eff.scope.write.value.iter().cloned());
    let rules = ScopeRules {
        read: eff.scope.read.value.clone(),
        write,
        deny: eff.scope.deny.value.clone(),
    };
    let scope = Scope::new(cwd, &rules).map_err(|e| {
        Exit::usage(format!(
            "the [scope] settings cannot be used for {}: {e}",
            cwd.display()
        ))
    })?;
    let scope = Arc::new(scope);
    let policies = Policies::new(
        eff.approvals
            .all()
            .into_iter()
            .map(|(tool, setting)| (tool.to_string(), policy(setting.value))),
    );
    // A denied tool is not offered at all.
    let enabled: Vec<&str> = BUILTIN_TOOLS
        .iter()
        .map(|info| info.name)
        .filter(|name| policies.for_tool(name) != Policy::Deny)
        .collect();
    let ctx = ToolContext {
        scope: scope.clone(),
        shell: ShellLimits {
            default_timeout: Duration::from_secs(eff.shell.timeout_secs.value),
            max_timeout: Duration::from_secs(eff.shell.max_timeout_secs.value),
            ..ShellLimits::default()
        },
    };
    let mut tools = ToolRegistry::new();
    for tool in seedpod_tools::builtin_tools(&ctx, &enabled) {
        tools.register(tool);
    }
    let session = SessionSettings {
        policies,
        scope: Some(scope),
        prompt: PromptSettings {
            identity_file: eff
                .system_prompt
                .identity_file
                .as_ref()
                .map(|s| s.value.clone()),
            config_dir: Some(home.config.clone()),
        },
        guard: guard(eff.input.guard.value),
        max_message_chars: eff.input.max_message_chars.value,
        wake_on_child_reports: true,
    };
    Ok(PodSession { tools, session })
}

fn policy(policy: ConfigPolicy) -> Policy {
    match policy {
        ConfigPolicy::Allow => Policy::Allow,
        ConfigPolicy::Ask => Policy::Ask,
        ConfigPolicy::Deny => Policy::Deny,
    }
}

fn guard(mode: ConfigGuard) -> GuardMode {
    match mode {
        ConfigGuard::Off => GuardMode::Off,
        ConfigGuard::Log => GuardMode::Log,
        ConfigGuard::Warn => GuardMode::Warn,
        ConfigGuard::Block => GuardMode::Block,
    }
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
