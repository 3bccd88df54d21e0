//! From the effective configuration to what a pod runs with besides its model: the built-in
//! tools (those whose policy is not `deny`), their scope, the approval policies, the input
//! guard, the prompt sources and the `[context]` settings.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::{Effective, SandboxMode, Source};
use seedpod_engine::ToolRegistry;
use seedpod_pod::children::tools::CHILD_TOOLS;
use seedpod_pod::context::ContextSettings;
use seedpod_pod::policy::{Policies, Policy};
use seedpod_pod::session::{PromptSettings, SessionSettings};
use seedpod_store::ScopeGrant;
use seedpod_tools::{
    BUILTIN_TOOLS, ProtectedDirs, Sandbox, SandboxSupport, Scope, ScopeRules, ShellLimits,
    ToolContext,
};

use crate::exit::Exit;

/// The pod's tools and session settings for a pod working in `cwd`.
pub struct PodSession {
    pub tools: ToolRegistry,
    pub session: SessionSettings,
}

/// `grant` is what a child pod's parent delegated to it (`None` for a pod a person started).
pub fn build(
    home: &Home,
    cwd: &Path,
    eff: &Effective,
    grant: Option<&ScopeGrant>,
) -> Result<PodSession> {
    let rules = scope_rules(cwd, eff, grant);
    let scope = Scope::new(cwd, &rules).map_err(|e| match grant {
        Some(_) => Exit::usage(format!(
            "the scope delegated to this pod cannot be used (a path may have been removed): {e}"
        )),
        None => Exit::usage(format!(
            "the [scope] settings cannot be used for {}: {e}",
            cwd.display()
        )),
    })?;
    // seedpod's own directories and the person's shell, git and ssh files are never written by
    // the file tools, whatever the scope (seedpod-tools' `protected.rs` has the list).
    let scope = Arc::new(scope.with_protected(&ProtectedDirs {
        seedpod: vec![
            home.config.clone(),
            home.data.clone(),
            home.state.clone(),
            home.run.clone(),
        ],
        user_home: std::env::home_dir(),
    }));
    let (sandbox, sandbox_alert) = sandbox(eff, &scope);
    // What the pods hold and the sockets a person answers through are covered for every
    // sandboxed command (seedpod-tools' `sandbox/jail.rs`).
    let sandbox = sandbox.map(|s| {
        s.hiding(vec![
            home.config.clone(),
            home.data.clone(),
            home.state.clone(),
            home.run.clone(),
        ])
    });
    let policies = Policies::new(eff.approvals.all().into_iter().map(|(tool, setting)| {
        let mut policy = setting.value;
        // Without the whole sandbox, "sandboxed" cannot keep its promise: it asks instead.
        if policy == Policy::Sandboxed
            && (sandbox.is_none()
                || !matches!(SandboxSupport::probe(), SandboxSupport::Landlock { .. }))
        {
            policy = Policy::Ask;
        }
        (tool.to_string(), policy)
    }))
    .with_mcp(
        eff.approvals
            .mcp_keys()
            .iter()
            .map(|(key, setting)| (key.clone(), setting.value)),
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
        sandbox,
    };
    let mut tools = ToolRegistry::new();
    for tool in seedpod_tools::builtin_tools(&ctx, &enabled) {
        tools.register(tool);
    }
    let session = SessionSettings {
        context: context_settings(eff),
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
        child_limits: seedpod_pod::children::limits::ChildLimits::from_settings(&eff.children),
        notify_wrapper: eff.notify.wrapper.value.clone(),
        mcp: seedpod_pod::mcp::McpSettings {
            servers: eff.mcp.servers.clone(),
            only: None,
        },
    };
    Ok(PodSession { tools, session })
}

/// `[context]` and `context_window` as the pod uses them.
fn context_settings(eff: &Effective) -> ContextSettings {
    let context = &eff.context;
    ContextSettings {
        window: eff.context_window.as_ref().map(|w| w.value),
        window_table: context.window_table(),
        probe: context.probe.value,
        compact_at: context.compact_at.value,
        soft_trim_at: context.soft_trim_at.value,
        hard_clear_at: context.hard_clear_at.value,
        // Validated to at most MAX_KEEP_LAST_ASSISTANTS, so it fits.
        keep_last_assistants: usize::try_from(context.keep_last_assistants.value)
            .unwrap_or(usize::MAX),
        summary_model: context.summary_model.as_ref().map(|m| m.value.clone()),
        memory_flush: context.memory_flush.value,
        child_tools_in_compact: child_tools_configured(eff),
    }
}

/// Whether a person asked for child pods: some file sets an `[approvals]` key of a child-pod
/// tool to `allow` or `ask`. Only then does the compact prompt (small windows) offer them;
/// setting one to `deny` does not bring the other four back.
fn child_tools_configured(eff: &Effective) -> bool {
    CHILD_TOOLS.iter().any(|tool| {
        eff.approvals
            .policy(tool)
            .is_some_and(|p| p.source != Source::Default && p.value != Policy::Deny)
    })
}

/// A child pod may touch exactly what its parent delegated — not even its own working
/// directory otherwise, since the parent lent only those roots — and the configured deny rules
/// still apply. Any other pod's own directory is always writable (unless a deny rule says
/// otherwise), and the configured roots add to it.
fn scope_rules(cwd: &Path, eff: &Effective, grant: Option<&ScopeGrant>) -> ScopeRules {
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

/// The shell sandbox for this pod's scope, or `None` with the alert that says why not (only
/// when the person asked for it: `sandbox = "scope"` on a kernel without Landlock, or
/// `shell = "sandboxed"` with the sandbox off). A child's scope is its delegated scope, so its
/// sandbox is too.
fn sandbox(eff: &Effective, scope: &Arc<Scope>) -> (Option<Sandbox>, Option<String>) {
    let sandboxed = eff
        .approvals
        .policy("shell")
        .is_some_and(|p| p.value == Policy::Sandboxed);
    match (eff.shell.sandbox.value, SandboxSupport::probe()) {
        (SandboxMode::Scope, support @ SandboxSupport::Partial { .. }) => {
            match Sandbox::new(scope.clone(), eff.shell.network.value, std::env::home_dir()) {
                Ok(sandbox) => (
                    Some(sandbox),
                    Some(format!(
                        "the shell sandbox is {}",
                        support.describe(eff.shell.network.value)
                    )),
                ),
                Err(err) => (
                    None,
                    Some(format!(
                        "{err}; shell commands run unconfined, under approvals alone"
                    )),
                ),
            }
        }
        (SandboxMode::Scope, SandboxSupport::Landlock { .. }) => {
            match Sandbox::new(scope.clone(), eff.shell.network.value, std::env::home_dir()) {
                Ok(sandbox) => (Some(sandbox), None),
                Err(err) => (
                    None,
                    Some(format!(
                        "{err}; shell commands run unconfined, under approvals alone"
                    )),
                ),
            }
        }
        (SandboxMode::Scope, SandboxSupport::Unsupported(why)) => {
            let then = if sandboxed {
                "[approvals] shell = \"sandboxed\" asks before every command instead"
            } else {
                "shell commands run unconfined, under approvals alone"
            };
            (
                None,
                Some(format!("the shell sandbox is not enforced: {why}; {then}")),
            )
        }
        (SandboxMode::Off, _) if sandboxed => (
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

/// For `config show`: what the sandbox setting means on this machine.
pub fn sandbox_status(eff: &Effective) -> String {
    match eff.shell.sandbox.value {
        SandboxMode::Off => "not enforced ([shell] sandbox = \"off\")".into(),
        SandboxMode::Scope => SandboxSupport::probe().describe(eff.shell.network.value),
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use seedpod_client::Home;
    use seedpod_config::trust::{self, TrustStore};
    use seedpod_config::{Effective, Inputs, Overrides};
    use seedpod_store::ScopeGrant;
    use seedpod_tools::Access;

    use super::build;

    /// A home, a pod directory with `.seedpod/config.toml` holding `project`, and two other
    /// directories `shared` and `out` next to it.
    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new(project: &str) -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            for sub in ["home/config", "work/.seedpod", "shared", "out"] {
                std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            }
            std::fs::write(dir.path().join("work/.seedpod/config.toml"), project).unwrap();
            // These tests are about building the scope from settings, so the person trusted
            // the project file (trust itself is tested in seedpod-config and tests/trust.rs).
            let mut store = TrustStore::default();
            let key = trust::project_key(&dir.path().join("work")).unwrap();
            store
                .trusted
                .insert(key, trust::content_hash(project.as_bytes()));
            store.save(&dir.path().join("home/config")).unwrap();
            Fixture { dir }
        }

        fn path(&self, sub: &str) -> PathBuf {
            self.dir.path().join(sub).canonicalize().unwrap()
        }

        fn eff(&self) -> Effective {
            Effective::resolve(&Inputs {
                config_dir: &self.path("home/config"),
                cwd: &self.path("work"),
                env: &|_: &str| None,
                flags: Overrides::default(),
                tools: &seedpod_pod::catalogue::declared(),
            })
            .unwrap()
        }

        fn home(&self) -> Home {
            Home::under(&self.path("home"))
        }
    }

    fn allows(scope: &seedpod_tools::Scope, path: &Path, access: Access) -> bool {
        scope.check(&path.display().to_string(), access).is_ok()
    }

    #[test]
    fn a_pod_a_person_started_writes_its_cwd_and_the_configured_roots() {
        let fx = Fixture::new("[scope]\nread = [\"../shared\"]\n");
        let pod = build(&fx.home(), &fx.path("work"), &fx.eff(), None).unwrap();
        let scope = pod.session.scope.unwrap();
        assert!(allows(
            &scope,
            &fx.path("work").join("new.txt"),
            Access::Write
        ));
        assert!(allows(&scope, &fx.path("shared"), Access::Read));
        assert!(!allows(&scope, &fx.path("out"), Access::Read));
        assert!(pod.session.wake_on_child_reports);
    }

    #[test]
    fn a_child_gets_exactly_its_grant_and_the_configured_deny_rules() {
        let fx = Fixture::new(
            "[scope]\nread = [\"../out\"]\nwrite = [\"../out\"]\ndeny = [\"../shared/secret\"]\n[children]\nwake = false\n",
        );
        std::fs::create_dir_all(fx.dir.path().join("shared/secret")).unwrap();
        let grant = ScopeGrant {
            read: vec![fx.path("shared")],
            write: vec![fx.path("work")],
        };
        let pod = build(&fx.home(), &fx.path("work"), &fx.eff(), Some(&grant)).unwrap();
        let scope = pod.session.scope.unwrap();
        assert!(allows(
            &scope,
            &fx.path("work").join("a.txt"),
            Access::Write
        ));
        assert!(allows(&scope, &fx.path("shared"), Access::Read));
        assert!(!allows(&scope, &fx.path("shared").join("x"), Access::Write));
        assert!(
            !allows(&scope, &fx.path("shared/secret"), Access::Read),
            "the configured deny still applies"
        );
        assert!(
            !allows(&scope, &fx.path("out"), Access::Read),
            "configured roots are replaced by the grant"
        );
        assert!(!pod.session.wake_on_child_reports);
    }

    #[test]
    fn context_settings_come_from_the_config() {
        let fx = Fixture::new(
            "context_window = 8192\n[context]\ncompact_at = 0.6\nsoft_trim_at = 0.2\nhard_clear_at = 0.4\n\
             keep_last_assistants = 5\nsummary_model = \"tiny\"\nmemory_flush = true\nprobe = false\n\
             [context.windows]\n\"qwen\" = 32768\n\"qwen3:0.6b\" = 4096\n",
        );
        let pod = build(&fx.home(), &fx.path("work"), &fx.eff(), None).unwrap();
        let c = pod.session.context;
        assert_eq!(c.window, Some(8_192));
        assert_eq!(
            c.window_table,
            [
                ("qwen3:0.6b".to_string(), 4_096),
                ("qwen".to_string(), 32_768)
            ]
        );
        assert!(!c.probe);
        assert_eq!(
            (c.compact_at, c.soft_trim_at, c.hard_clear_at),
            (0.6, 0.2, 0.4)
        );
        assert_eq!(c.keep_last_assistants, 5);
        assert_eq!(c.summary_model.as_deref(), Some("tiny"));
        assert!(c.memory_flush);
        assert!(!c.child_tools_in_compact);

        let defaults = build(&fx.home(), &fx.path("work"), &Fixture::new("").eff(), None)
            .unwrap()
            .session
            .context;
        assert_eq!(defaults, seedpod_pod::context::ContextSettings::default());
    }

    #[test]
    fn child_tools_stay_in_the_compact_prompt_only_when_a_person_configured_one() {
        let configured = |project: &str| {
            let fx = Fixture::new(project);
            build(&fx.home(), &fx.path("work"), &fx.eff(), None)
                .unwrap()
                .session
                .context
                .child_tools_in_compact
        };
        assert!(!configured(""));
        assert!(!configured("[approvals]\nshell = \"allow\"\n"));
        assert!(configured("[approvals]\nspawn_pod = \"ask\"\n"));
        assert!(configured("[approvals]\nlist_pods = \"allow\"\n"));
        assert!(
            !configured("[approvals]\nspawn_pod = \"deny\"\n"),
            "denying one is not asking for the others"
        );
    }

    #[test]
    fn a_read_only_child_cannot_write_its_own_cwd() {
        let fx = Fixture::new("");
        let grant = ScopeGrant {
            read: vec![fx.path("work")],
            write: Vec::new(),
        };
        let pod = build(&fx.home(), &fx.path("work"), &fx.eff(), Some(&grant)).unwrap();
        let scope = pod.session.scope.unwrap();
        assert!(allows(&scope, &fx.path("work"), Access::Read));
        assert!(!allows(
            &scope,
            &fx.path("work").join("a.txt"),
            Access::Write
        ));
    }
}
