//! Each composition rule of a pod: its scope and a child's, what is never written, the sandbox
//! and its fallback on a machine without Landlock or user namespaces, the tools offered and
//! their policies (nothing undeclared), and what an untrusted project file may and may not set.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seedpod_client::Home;
use seedpod_config::trust::{self, TrustStore};
use seedpod_config::{Effective, Inputs, Overrides, Setting};
use seedpod_engine::ToolRegistry;
use seedpod_engine::testing::EchoTool;
use seedpod_store::ScopeGrant;
use seedpod_tools::{Access, SandboxSupport, Scope};

use super::*;
use crate::catalogue;
use crate::policy::Policy;

/// A home, a pod directory with `.seedpod/config.toml` holding `project`, and two other
/// directories `shared` and `out` next to it.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The person trusted the project file: what it sets applies.
    fn new(project: &str) -> Fixture {
        let fx = Fixture::untrusted(project);
        let mut store = TrustStore::default();
        let key = trust::project_key(&fx.path("work")).unwrap();
        store
            .trusted
            .insert(key, trust::content_hash(project.as_bytes()));
        store.save(&fx.path("home/config")).unwrap();
        fx
    }

    /// Nobody trusted the project file: what it loosens is left out.
    fn untrusted(project: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home/config", "work/.seedpod", "shared", "out", "me/.ssh"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("work/.seedpod/config.toml"), project).unwrap();
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
            tools: &catalogue::declared(),
        })
        .unwrap()
    }

    fn home(&self) -> Home {
        Home::under(&self.path("home"))
    }

    /// A machine whose kernel offers `sandbox`, and whose person lives in `me/`.
    fn machine(&self, sandbox: SandboxSupport) -> Machine {
        Machine {
            sandbox,
            user_home: Some(self.path("me")),
        }
    }

    fn assemble_on(
        &self,
        sandbox: SandboxSupport,
        grant: Option<&ScopeGrant>,
    ) -> Result<PodSession, AssembleError> {
        assemble(PodInputs {
            home: &self.home(),
            cwd: &self.path("work"),
            eff: &self.eff(),
            grant,
            mcp_only: None,
            machine: self.machine(sandbox),
            checkpoints: None,
        })
    }

    /// On a machine without Landlock, which is where every rule but the sandbox's is the same.
    fn assemble(&self, grant: Option<&ScopeGrant>) -> PodSession {
        self.assemble_on(no_landlock(), grant).unwrap()
    }
}

fn no_landlock() -> SandboxSupport {
    SandboxSupport::Unsupported("Landlock is not in this kernel".into())
}

fn partial() -> SandboxSupport {
    SandboxSupport::Partial {
        abi: 6,
        why: "unprivileged user namespaces are restricted".into(),
    }
}

fn landlock() -> SandboxSupport {
    SandboxSupport::Landlock { abi: 6 }
}

fn allows(scope: &Scope, path: &Path, access: Access) -> bool {
    scope.check(&path.display().to_string(), access).is_ok()
}

fn names(tools: &ToolRegistry) -> Vec<String> {
    tools.specs().into_iter().map(|spec| spec.name).collect()
}

#[test]
fn a_pod_a_person_started_writes_its_cwd_and_the_configured_roots() {
    let fx = Fixture::new("[scope]\nread = [\"../shared\"]\n");
    let pod = fx.assemble(None);
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
    let pod = fx.assemble(Some(&grant));
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
fn a_read_only_child_cannot_write_its_own_cwd() {
    let fx = Fixture::new("");
    let grant = ScopeGrant {
        read: vec![fx.path("work")],
        write: Vec::new(),
    };
    let pod = fx.assemble(Some(&grant));
    let scope = pod.session.scope.unwrap();
    assert!(allows(&scope, &fx.path("work"), Access::Read));
    assert!(!allows(
        &scope,
        &fx.path("work").join("a.txt"),
        Access::Write
    ));
}

#[test]
fn a_child_starts_only_the_servers_its_parent_passed_on() {
    let fx = Fixture::new("");
    let pod = assemble(PodInputs {
        home: &fx.home(),
        cwd: &fx.path("work"),
        eff: &fx.eff(),
        grant: None,
        mcp_only: Some(vec!["fs".into()]),
        machine: fx.machine(no_landlock()),
        checkpoints: None,
    })
    .unwrap();
    assert_eq!(pod.session.mcp.only, Some(vec!["fs".to_string()]));
    assert_eq!(fx.assemble(None).session.mcp.only, None, "a root pod: all");
}

#[test]
fn a_scope_that_cannot_be_used_says_whose_it_is() {
    let fx = Fixture::new("[scope]\nread = [\"../loop\"]\n");
    // A link to itself: no path it names can be resolved.
    std::os::unix::fs::symlink("loop", fx.dir.path().join("loop")).unwrap();
    let err = fx.assemble_on(no_landlock(), None).err().unwrap();
    assert!(
        err.to_string()
            .starts_with("the [scope] settings cannot be used for "),
        "{err}"
    );
    let grant = ScopeGrant {
        read: vec![fx.dir.path().join("loop")],
        write: Vec::new(),
    };
    let err = fx.assemble_on(no_landlock(), Some(&grant)).err().unwrap();
    assert!(
        err.to_string()
            .starts_with("the scope delegated to this pod cannot be used"),
        "{err}"
    );
}

/// A scope that covers the person's home and seedpod's directories still writes none of what
/// steers the person's programs or the pods.
#[test]
fn seedpod_and_the_persons_own_files_are_never_written() {
    let fx = Fixture::new("[scope]\nwrite = [\"..\"]\n");
    let scope = fx.assemble(None).session.scope.unwrap();
    assert!(allows(&scope, &fx.path("out").join("a"), Access::Write));
    for protected in [
        fx.path("me/.ssh").join("authorized_keys"),
        fx.path("me").join(".bashrc"),
        fx.path("home/config").join("config.toml"),
        fx.home().data.join("pods"),
    ] {
        assert!(
            !allows(&scope, &protected, Access::Write),
            "{}",
            protected.display()
        );
    }
}

/// The sandbox each machine gives, what the pod says, and what `sandboxed` becomes: it runs
/// commands without asking only inside the whole sandbox, and asks everywhere else.
#[test]
fn the_sandbox_and_its_fallback_on_each_machine() {
    struct Case {
        config: &'static str,
        machine: fn() -> SandboxSupport,
        sandbox: bool,
        alert: Option<&'static str>,
        shell: Policy,
    }
    let cases = [
        Case {
            config: "",
            machine: landlock,
            sandbox: true,
            alert: None,
            shell: Policy::Ask,
        },
        Case {
            config: "[approvals]\nshell = \"sandboxed\"\n",
            machine: landlock,
            sandbox: true,
            alert: None,
            shell: Policy::Sandboxed,
        },
        // No user namespaces: Landlock and the filter still confine, and the pod says so.
        Case {
            config: "",
            machine: partial,
            sandbox: true,
            alert: Some("the shell sandbox is partial (Landlock ABI 6"),
            shell: Policy::Ask,
        },
        Case {
            config: "[approvals]\nshell = \"sandboxed\"\n",
            machine: partial,
            sandbox: true,
            alert: Some("the shell sandbox is partial"),
            shell: Policy::Ask,
        },
        // No Landlock: nothing confines, and the pod says so.
        Case {
            config: "",
            machine: no_landlock,
            sandbox: false,
            alert: Some(
                "the shell sandbox is not enforced: Landlock is not in this kernel; shell \
                 commands run unconfined, under approvals alone",
            ),
            shell: Policy::Ask,
        },
        Case {
            config: "[approvals]\nshell = \"sandboxed\"\n",
            machine: no_landlock,
            sandbox: false,
            alert: Some(
                "the shell sandbox is not enforced: Landlock is not in this kernel; \
                 [approvals] shell = \"sandboxed\" asks before every command instead",
            ),
            shell: Policy::Ask,
        },
        // The person turned it off: said only when it contradicts `sandboxed`.
        Case {
            config: "[shell]\nsandbox = \"off\"\n",
            machine: landlock,
            sandbox: false,
            alert: None,
            shell: Policy::Ask,
        },
        Case {
            config: "[shell]\nsandbox = \"off\"\n[approvals]\nshell = \"sandboxed\"\n",
            machine: landlock,
            sandbox: false,
            alert: Some("[approvals] shell = \"sandboxed\" needs [shell] sandbox = \"scope\""),
            shell: Policy::Ask,
        },
    ];
    for case in cases {
        let fx = Fixture::new(case.config);
        let pod = fx.assemble_on((case.machine)(), None).unwrap();
        let label = format!("{:?} with {:?}", (case.machine)(), case.config);
        let description = pod
            .tools
            .get("shell")
            .map(|shell| shell.spec().description)
            .unwrap_or_default();
        assert_eq!(
            description.contains("Runs in a sandbox"),
            case.sandbox,
            "{label}: {description}"
        );
        let alerts = pod.session.startup_alerts.join("\n");
        match case.alert {
            Some(alert) => assert!(alerts.contains(alert), "{label}: {alerts}"),
            None => assert!(alerts.is_empty(), "{label}: {alerts}"),
        }
        assert_eq!(
            pod.session.policies.for_tool("shell"),
            case.shell,
            "{label}"
        );
    }
}

#[test]
fn config_show_says_what_the_machine_enforces() {
    let fx = Fixture::new("");
    assert_eq!(
        sandbox_status(&fx.eff(), &no_landlock()),
        "not enforced (Landlock is not in this kernel)"
    );
    let off = Fixture::new("[shell]\nsandbox = \"off\"\n");
    assert_eq!(
        sandbox_status(&off.eff(), &landlock()),
        "not enforced ([shell] sandbox = \"off\")"
    );
    assert!(sandbox_status(&fx.eff(), &landlock()).starts_with("enforced (Landlock ABI 6"));
}

/// The configuration's keys are the declared tools, each at its declared default.
#[test]
fn every_declared_tool_is_configurable_and_starts_at_its_default() {
    let eff = Fixture::new("").eff();
    let configured: Vec<(&str, Setting<Policy>)> = eff.approvals.all();
    let declared: Vec<(&str, Setting<Policy>)> = catalogue::declared()
        .into_iter()
        .map(|decl| (decl.name, Setting::default(decl.default_policy)))
        .collect();
    assert_eq!(configured, declared);
}

/// Every tool the pod offers has a declaration and the policy it declares (or the
/// configuration sets); a denied one is not offered.
#[test]
fn every_offered_tool_is_declared_and_has_its_policy() {
    let fx = Fixture::new("[approvals]\nwrite_file = \"deny\"\nread_file = \"ask\"\n");
    let pod = fx.assemble(None);
    let offered = names(&pod.tools);
    assert_eq!(
        offered,
        [
            "read_file",
            "edit_file",
            "list_dir",
            "glob",
            "grep",
            "shell"
        ]
    );
    for name in &offered {
        let decl = catalogue::decl_for(name).unwrap_or_else(|| panic!("{name} undeclared"));
        let expected = match decl.name {
            "read_file" => Policy::Ask,
            _ => decl.default_policy,
        };
        assert_eq!(pod.session.policies.for_tool(name), expected, "{name}");
    }
    assert_eq!(pod.session.policies.for_tool("write_file"), Policy::Deny);
    assert!(check_declared(&pod.tools).is_ok());
}

/// The pod's own tools, added when it is served, are declared too, and the registry as a whole
/// passes the check.
#[test]
fn the_pods_own_tools_join_in_catalogue_order_unless_denied() {
    let fx = Fixture::new("[approvals]\nread_paste = \"deny\"\n");
    let mut pod = fx.assemble(None);
    let (senders, _queues) = crate::controller::channels();
    let name = seedpod_protocol::PodName::new("p").unwrap();
    offer_pod_tools(
        &mut pod.tools,
        PodTools {
            home: &fx.home(),
            name: &name,
            cwd: &fx.path("work"),
            pastes: senders.pastes.clone(),
            children: senders.children,
        },
        &pod.session.policies,
    )
    .unwrap();
    let expected: Vec<&str> = catalogue::declared()
        .into_iter()
        .map(|decl| decl.name)
        .filter(|name| *name != "read_paste")
        // Registered beside the MCP servers it searches (`server.rs`), not with these.
        .filter(|name| *name != crate::tool_search::TOOL_SEARCH)
        // So are the MCP resource tools.
        .filter(|name| !crate::mcp::resources::is_resource_tool(name))
        .collect();
    assert_eq!(names(&pod.tools), expected);
    for spec in pod.tools.specs() {
        let decl = catalogue::decl_for(&spec.name).unwrap();
        assert_eq!(
            pod.session.policies.for_tool(&spec.name),
            decl.default_policy,
            "{}",
            spec.name
        );
    }
}

/// What each declaration says of its calls' preview and of the memory flush agrees with the
/// tool's schema and with what the tool does, for every declared tool as a pod offers it: a
/// preview is made from arguments the schema has; only a tool that runs commands previews as
/// a command; a file preview changes a file; the flush gets only tools that work on one file
/// by its `path` and run nothing. So a new tool declared as a file edit is previewed, approved
/// and offered to the flush as one with no other change (docs/decisions.md).
#[test]
fn every_declared_tools_preview_and_flush_agree_with_its_schema() {
    use seedpod_protocol::{Effect, InFlush, Preview};

    let fx = Fixture::new("");
    let mut pod = fx.assemble(None);
    let (senders, _queues) = crate::controller::channels();
    let name = seedpod_protocol::PodName::new("p").unwrap();
    offer_pod_tools(
        &mut pod.tools,
        PodTools {
            home: &fx.home(),
            name: &name,
            cwd: &fx.path("work"),
            pastes: senders.pastes.clone(),
            children: senders.children,
        },
        &pod.session.policies,
    )
    .unwrap();
    let mut specs = pod.tools.specs();
    // `tool_search` is registered beside the MCP servers it searches (`server.rs`), and so
    // are the MCP resource tools.
    specs.push(crate::tool_search::spec());
    specs.extend(crate::mcp::resources::specs());
    assert_eq!(
        specs.len(),
        catalogue::declared().len(),
        "{:?}",
        names(&pod.tools)
    );
    for spec in specs {
        let decl = catalogue::decl_for(&spec.name).unwrap();
        let name = decl.name;
        let has = |argument: &str| spec.parameters["properties"].get(argument).is_some();
        for argument in decl.preview.arguments() {
            assert!(
                has(argument),
                "{name} is previewed as {:?} from `{argument}`, which its schema lacks",
                decl.preview
            );
        }
        assert_eq!(
            decl.preview == Preview::Command,
            decl.effect == Effect::RunsCommands,
            "{name}: a command preview is for a tool that runs commands, and only for one"
        );
        if decl.preview.is_file_change() {
            assert_eq!(decl.effect, Effect::Changes, "{name}");
        }
        if decl.in_flush == InFlush::Offered {
            assert!(
                has("path"),
                "{name} is offered to the flush without a `path`"
            );
            assert!(
                decl.effect == Effect::ReadOnly || decl.preview.is_file_change(),
                "{name}: the flush reads files and writes them, nothing else"
            );
        }
    }
    assert_eq!(crate::mcp::DECL.preview, Preview::Arguments);
    assert_eq!(crate::mcp::DECL.in_flush, InFlush::Never);
}

/// A registry entry with no declaration is refused, wherever it hides: alone, among declared
/// tools, or under a name close to one. Its policy, asked anyway, is `deny`.
#[test]
fn a_tool_without_a_declaration_is_refused() {
    let fx = Fixture::new("");
    for sneaky in ["sneaky", "Shell", "shell ", "mcp__", "read_file2"] {
        let mut pod = fx.assemble(None);
        pod.tools.register(Arc::new(EchoTool::named(sneaky)));
        let err = check_declared(&pod.tools).err();
        assert!(
            matches!(&err, Some(AssembleError::Undeclared(name)) if name == sneaky),
            "{sneaky:?}: {err:?}"
        );
        assert_eq!(pod.session.policies.for_tool(sneaky), Policy::Deny);
    }
    let mut alone = ToolRegistry::new();
    alone.register(Arc::new(EchoTool::named("anything")));
    assert!(check_declared(&alone).is_err());
    assert!(check_declared(&ToolRegistry::new()).is_ok());

    // Handed to a pod being served (`ServeOptions::tools`), it stops the pod before it opens.
    let mut served = fx.assemble(None);
    served.tools.register(Arc::new(EchoTool::named("sneaky")));
    let (senders, _queues) = crate::controller::channels();
    let name = seedpod_protocol::PodName::new("p").unwrap();
    let pod = PodTools {
        home: &fx.home(),
        name: &name,
        cwd: &fx.path("work"),
        pastes: senders.pastes.clone(),
        children: senders.children,
    };
    let refused = offer_pod_tools(&mut served.tools, pod, &served.session.policies);
    assert!(
        matches!(&refused, Err(AssembleError::Undeclared(name)) if name == "sneaky"),
        "{refused:?}"
    );
}

#[test]
fn context_settings_come_from_the_config() {
    let fx = Fixture::new(
        "context_window = 8192\n[context]\ncompact_at = 0.6\nsoft_trim_at = 0.2\nhard_clear_at = 0.4\n\
         keep_last_assistants = 5\nsummary_model = \"tiny\"\nmemory_flush = true\nprobe = false\n\
         [context.windows]\n\"qwen\" = 32768\n\"qwen3:0.6b\" = 4096\n",
    );
    let c = fx.assemble(None).session.context;
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

    let defaults = Fixture::new("").assemble(None).session.context;
    assert_eq!(defaults, crate::context::ContextSettings::default());
}

#[test]
fn child_tools_stay_in_the_compact_prompt_only_when_a_person_configured_one() {
    let configured = |project: &str| {
        Fixture::new(project)
            .assemble(None)
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

/// What a project file nobody trusted may set: everything that tightens. What it may not:
/// anything that loosens, which is left out and named in an alert at every attach.
#[test]
fn an_untrusted_project_may_tighten_but_not_loosen() {
    let tightens = Fixture::untrusted(
        "[approvals]\nshell = \"deny\"\nread_file = \"ask\"\n[scope]\ndeny = [\"secret\"]\n",
    );
    std::fs::create_dir_all(tightens.dir.path().join("work/secret")).unwrap();
    let pod = tightens.assemble_on(landlock(), None).unwrap();
    assert!(pod.tools.get("shell").is_none(), "denied: not offered");
    assert_eq!(pod.session.policies.for_tool("read_file"), Policy::Ask);
    let scope = pod.session.scope.unwrap();
    assert!(!allows(&scope, &tightens.path("work/secret"), Access::Read));
    assert!(pod.session.startup_alerts.is_empty());

    let loosens = Fixture::untrusted(
        "[approvals]\nshell = \"allow\"\n\"mcp__fs__*\" = \"allow\"\n[scope]\nwrite = [\"../out\"]\n\
         [shell]\nsandbox = \"off\"\n",
    );
    let pod = loosens.assemble_on(landlock(), None).unwrap();
    assert_eq!(pod.session.policies.for_tool("shell"), Policy::Ask);
    assert_eq!(pod.session.policies.for_tool("mcp__fs__rm"), Policy::Ask);
    let scope = pod.session.scope.clone().unwrap();
    assert!(!allows(
        &scope,
        &loosens.path("out").join("a"),
        Access::Write
    ));
    let shell = pod.tools.get("shell").unwrap().spec().description;
    assert!(shell.contains("Runs in a sandbox"), "{shell}");
    let alert = pod.session.startup_alerts.join("\n");
    for key in [
        "approvals.shell",
        "approvals.mcp__fs__*",
        "scope.write",
        "shell.sandbox",
    ] {
        assert!(alert.contains(key), "{key}: {alert}");
    }
    assert!(alert.contains("seedpod trust"), "{alert}");

    // Trusted, the same file applies whole.
    let trusted = Fixture::new("[approvals]\nshell = \"allow\"\n[scope]\nwrite = [\"../out\"]\n");
    let pod = trusted.assemble(None);
    assert_eq!(pod.session.policies.for_tool("shell"), Policy::Allow);
    let scope = pod.session.scope.unwrap();
    assert!(allows(
        &scope,
        &trusted.path("out").join("a"),
        Access::Write
    ));
}
