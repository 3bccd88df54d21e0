//! `[approvals]`, `[scope]`, `[shell]`, `[system_prompt]`, `[input]` and `[children]`:
//! defaults, layering, errors and how `config show` prints them.

use std::path::{Path, PathBuf};

use super::Fixture;
use crate::effective::{HOME_ENV, INPUT_GUARD_ENV};
use crate::*;

const TOOLS: [&str; 15] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "shell",
    "update_tasks",
    "git_commit",
    "read_paste",
    "spawn_pod",
    "send_to_pod",
    "read_pod_output",
    "list_pods",
    "stop_pod",
];

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

#[test]
fn defaults_allow_the_file_and_child_tools_ask_for_shell_and_set_no_extra_scope() {
    let eff = Fixture::new().resolve().unwrap();
    let all = eff.approvals.all();
    let names: Vec<&str> = all.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, TOOLS);
    for (name, policy) in &all {
        let expected = if *name == "shell" || *name == "git_commit" {
            Policy::Ask
        } else {
            Policy::Allow
        };
        assert_eq!(*policy, Setting::default(expected), "{name}");
    }
    assert_eq!(eff.scope.read, Setting::default(Vec::new()));
    assert_eq!(eff.scope.write, Setting::default(Vec::new()));
    assert_eq!(eff.scope.deny, Setting::default(Vec::new()));
    assert_eq!(eff.shell.timeout_secs, Setting::default(120));
    assert_eq!(eff.shell.max_timeout_secs, Setting::default(600));
    assert_eq!(eff.system_prompt.identity_file, None);
    assert_eq!(eff.input.guard, Setting::default(GuardMode::Warn));
    assert_eq!(eff.input.max_message_chars, Setting::default(32_000));
    assert_eq!(eff.children.wake, Setting::default(true));
    assert_eq!(eff.children.max_children, Setting::default(8));
    assert_eq!(eff.children.max_depth, Setting::default(3));
}

#[test]
fn approvals_layer_tool_by_tool() {
    let fx = Fixture::new();
    fx.user_file("[approvals]\nshell = \"allow\"\nwrite_file = \"deny\"\n");
    fx.trusted_project_file("[approvals]\nshell = \"deny\"\n");
    let approvals = fx.resolve().unwrap().approvals;
    assert_eq!(
        approvals.policy("shell"),
        Some(Setting::new(
            Policy::Deny,
            Source::ProjectFile(fx.project_path())
        ))
    );
    // The project file named only shell; the user's write_file survives.
    assert_eq!(
        approvals.policy("write_file"),
        Some(Setting::new(Policy::Deny, Source::UserFile(fx.user_path())))
    );
    assert_eq!(
        approvals.policy("read_file"),
        Some(Setting::default(Policy::Allow))
    );
    assert_eq!(approvals.policy("browser"), None);
}

#[test]
fn every_tool_name_in_the_file_sets_that_tool() {
    let fx = Fixture::new();
    let text: String = TOOLS.iter().map(|t| format!("{t} = \"deny\"\n")).collect();
    fx.user_file(&format!("[approvals]\n{text}"));
    let approvals = fx.resolve().unwrap().approvals;
    for tool in TOOLS {
        assert_eq!(
            approvals.policy(tool),
            Some(Setting::new(Policy::Deny, Source::UserFile(fx.user_path()))),
            "{tool}"
        );
    }
}

#[test]
fn child_tools_layer_like_the_others() {
    let fx = Fixture::new();
    fx.user_file("[approvals]\nspawn_pod = \"ask\"\nstop_pod = \"deny\"\n");
    fx.trusted_project_file("[approvals]\nspawn_pod = \"deny\"\n");
    let approvals = fx.resolve().unwrap().approvals;
    assert_eq!(
        approvals.policy("spawn_pod"),
        Some(Setting::new(
            Policy::Deny,
            Source::ProjectFile(fx.project_path())
        ))
    );
    assert_eq!(
        approvals.policy("stop_pod"),
        Some(Setting::new(Policy::Deny, Source::UserFile(fx.user_path())))
    );
    assert_eq!(
        approvals.policy("send_to_pod"),
        Some(Setting::default(Policy::Allow))
    );
}

#[test]
fn children_wake_layers_and_rejects_non_booleans() {
    let fx = Fixture::new();
    fx.user_file("[children]\nwake = false\n");
    assert_eq!(
        fx.resolve().unwrap().children.wake,
        Setting::new(false, Source::UserFile(fx.user_path()))
    );
    fx.trusted_project_file("[children]\nwake = true\n");
    assert_eq!(
        fx.resolve().unwrap().children.wake,
        Setting::new(true, Source::ProjectFile(fx.project_path()))
    );

    let fx = Fixture::new();
    fx.trusted_project_file("[children]\nwake = \"yes\"\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
    assert!(err.contains(".seedpod/config.toml"), "{err}");

    let fx = Fixture::new();
    fx.trusted_project_file("[children]\nwak = false\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("wak`") && err.contains("`wake`"), "{err}");
}

#[test]
fn child_limits_layer_and_out_of_range_values_are_errors_naming_the_key() {
    let fx = Fixture::new();
    fx.user_file("[children]\nmax_children = 20\nmax_depth = 5\n");
    let eff = fx.resolve().unwrap();
    let user = Source::UserFile(fx.user_path());
    assert_eq!(eff.children.max_children, Setting::new(20, user.clone()));
    assert_eq!(eff.children.max_depth, Setting::new(5, user));
    // Fewer children applies from an untrusted project: it only tightens.
    fx.project_file("[children]\nmax_children = 2\n");
    assert_eq!(fx.resolve().unwrap().children.max_children.value, 2);

    for (text, key) in [
        (
            "[children]\nmax_children = 100000\n",
            "children.max_children",
        ),
        ("[children]\nmax_depth = 100\n", "children.max_depth"),
    ] {
        let fx = Fixture::new();
        fx.user_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.contains(key) && err.contains("at most"), "{err}");
    }
    let fx = Fixture::new();
    fx.user_file("[children]\nmax_depth = -1\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("max_depth"), "{err}");
}

#[test]
fn show_states_the_child_limits_and_what_they_bound() {
    let eff = Fixture::new().resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}:\n{text}"))
            .to_owned()
    };
    let children = line("max_children = 8");
    assert!(children.contains("# default; live children"), "{children}");
    let depth = line("max_depth = 3");
    assert!(depth.contains("# default; levels of child pods"), "{depth}");
}

#[test]
fn an_unknown_tool_name_is_an_error_with_line_and_the_valid_names() {
    let fx = Fixture::new();
    fx.trusted_project_file("[approvals]\nread_file = \"allow\"\nshel = \"allow\"\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains(".seedpod/config.toml"), "{err}");
    assert!(err.contains("line 3"), "{err}");
    assert!(err.contains("shel`"), "{err}");
    for tool in TOOLS {
        assert!(
            err.contains(&format!("`{tool}`")),
            "{tool} not listed: {err}"
        );
    }
}

#[test]
fn an_unknown_policy_lists_the_policies() {
    let fx = Fixture::new();
    fx.user_file("[approvals]\n\nshell = \"yes\"\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("line 3"), "{err}");
    for policy in ["allow", "ask", "deny"] {
        assert!(err.contains(policy), "{policy} not listed: {err}");
    }
    assert_eq!(Policy::parse(" Ask "), Some(Policy::Ask));
    assert_eq!(Policy::parse("yes"), None);
}

#[test]
fn a_higher_layer_replaces_a_scope_list_whole() {
    let mut fx = Fixture::new();
    fx.env(HOME_ENV, "/home/u");
    fx.user_file("[scope]\nread = [\"a\", \"b\"]\ndeny = [\".env\"]\n");
    fx.trusted_project_file("[scope]\nread = [\"c\"]\n");
    let scope = fx.resolve().unwrap().scope;
    assert_eq!(
        scope.read,
        Setting::new(paths(&["c"]), Source::ProjectFile(fx.project_path()))
    );
    assert_eq!(
        scope.deny,
        Setting::new(paths(&[".env"]), Source::UserFile(fx.user_path()))
    );
    assert_eq!(scope.write, Setting::default(Vec::new()));

    // An empty list is a value too: it clears the lower layer's list.
    fx.trusted_project_file("[scope]\ndeny = []\n");
    let deny = fx.resolve().unwrap().scope.deny;
    assert_eq!(
        deny,
        Setting::new(Vec::new(), Source::ProjectFile(fx.project_path()))
    );
}

#[test]
fn a_leading_tilde_is_the_home_directory_and_relative_paths_stay_relative() {
    let mut fx = Fixture::new();
    fx.env(HOME_ENV, "/home/u");
    fx.trusted_project_file(
        "[scope]\nread = [\"~/notes\", \"~\", \"docs/../x\", \"/abs\", \"a/~/b\"]\n",
    );
    let read = fx.resolve().unwrap().scope.read.value;
    assert_eq!(
        read,
        paths(&["/home/u/notes", "/home/u", "docs/../x", "/abs", "a/~/b"])
    );
}

#[test]
fn tilde_paths_that_cannot_be_expanded_are_errors() {
    let cases = [
        (
            "[scope]\nwrite = [\"~bob/x\"]\n",
            "scope.write",
            Some("/home/u"),
        ),
        ("[scope]\nread = [\"~/notes\"]\n", "scope.read", None),
        ("[scope]\ndeny = [\"\"]\n", "scope.deny", Some("/home/u")),
    ];
    for (text, key, home) in cases {
        let mut fx = Fixture::new();
        if let Some(home) = home {
            fx.env(HOME_ENV, home);
        }
        fx.trusted_project_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.starts_with(key), "{text:?} → {err}");
        assert!(err.contains(".seedpod/config.toml"), "{text:?} → {err}");
    }
}

#[test]
fn identity_file_is_relative_to_the_file_that_names_it() {
    let fx = Fixture::new();
    fx.user_file("[system_prompt]\nidentity_file = \"identity.md\"\n");
    let identity = fx.resolve().unwrap().system_prompt.identity_file.unwrap();
    assert_eq!(
        identity,
        Setting::new(
            fx.config_dir.join("identity.md"),
            Source::UserFile(fx.user_path())
        )
    );

    fx.trusted_project_file("[system_prompt]\nidentity_file = \"/etc/me.md\"\n");
    let identity = fx.resolve().unwrap().system_prompt.identity_file.unwrap();
    assert_eq!(identity.value, Path::new("/etc/me.md"));
    assert_eq!(identity.source, Source::ProjectFile(fx.project_path()));
}

#[test]
fn the_guard_variable_beats_the_files() {
    let mut fx = Fixture::new();
    fx.user_file("[input]\nguard = \"block\"\nmax_message_chars = 100\n");
    assert_eq!(
        fx.resolve().unwrap().input.guard,
        Setting::new(GuardMode::Block, Source::UserFile(fx.user_path()))
    );
    fx.env(INPUT_GUARD_ENV, "Off");
    let input = fx.resolve().unwrap().input;
    assert_eq!(
        input.guard,
        Setting::new(GuardMode::Off, Source::Env(INPUT_GUARD_ENV))
    );
    assert_eq!(input.max_message_chars.value, 100);

    fx.env(INPUT_GUARD_ENV, "loud");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(
        err.contains("SEEDPOD_INPUT_GUARD") && err.contains("loud"),
        "{err}"
    );
    assert!(err.contains("off, log, warn or block"), "{err}");
}

#[test]
fn invalid_agent_values_name_key_value_and_origin() {
    let cases: &[(&str, &str)] = &[
        ("[shell]\ntimeout_secs = 0\n", "shell.timeout_secs = 0"),
        (
            "[shell]\ntimeout_secs = 300\nmax_timeout_secs = 200\n",
            "shell.max_timeout_secs = 200",
        ),
        // Below the default timeout, which the file did not change.
        (
            "[shell]\nmax_timeout_secs = 60\n",
            "shell.max_timeout_secs = 60",
        ),
        (
            "[input]\nmax_message_chars = 0\n",
            "input.max_message_chars = 0",
        ),
    ];
    for (text, start) in cases {
        let fx = Fixture::new();
        fx.trusted_project_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.starts_with(start), "{text:?} → {err}");
        assert!(err.contains(".seedpod/config.toml"), "{text:?} → {err}");
    }

    let fx = Fixture::new();
    fx.trusted_project_file("[input]\nguard = \"loud\"\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("block"), "{err}");
}

#[test]
fn show_prints_the_agent_sections_with_their_sources() {
    let mut fx = Fixture::new();
    fx.env(HOME_ENV, "/home/u").env(INPUT_GUARD_ENV, "log");
    fx.user_file("[approvals]\nshell = \"deny\"\n[scope]\nread = [\"~/notes\"]\n");
    fx.trusted_project_file("[shell]\ntimeout_secs = 30\n[children]\nwake = false\n");
    let eff = fx.resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}:\n{text}"))
            .to_owned()
    };
    for section in [
        "[approvals]",
        "[scope]",
        "[shell]",
        "[system_prompt]",
        "[input]",
        "[children]",
    ] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    let shell = line("shell = ");
    assert!(shell.contains("\"deny\""), "{shell}");
    assert!(
        shell.contains(&fx.user_path().display().to_string()),
        "{shell}"
    );
    assert!(shell.contains("not offered to the model"), "{shell}");
    assert!(line("read_file = ").contains("# default"));
    let read = line("read = ");
    assert!(read.contains("[\"/home/u/notes\"]"), "{read}");
    assert!(line("write = []").contains("# default"));
    assert!(line("timeout_secs = 30").contains(".seedpod/config.toml"));
    assert!(line("max_timeout_secs = 600").contains("# default"));
    assert!(line("# identity_file").contains("built-in identity"));
    assert!(line("guard = \"log\"").contains("env SEEDPOD_INPUT_GUARD"));
    assert!(line("max_message_chars = 32000").contains("# default"));
    assert!(line("spawn_pod = \"allow\"").contains("# default"));
    let wake = line("wake = false");
    assert!(wake.contains(".seedpod/config.toml"), "{wake}");
    assert!(wake.contains("waits for the next turn"), "{wake}");
}

#[test]
fn show_explains_the_default_wake() {
    let eff = Fixture::new().resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    let wake = text.lines().find(|l| l.starts_with("wake = ")).unwrap();
    assert!(wake.contains("wake = true"), "{wake}");
    assert!(
        wake.contains("# default; a report from a child starts a turn"),
        "{wake}"
    );
}

/// The keys and defaults are the declarations the caller gives, nothing written in this crate:
/// a tool declared only there is configurable, and a name it does not declare is an error.
#[test]
fn the_approval_keys_and_defaults_are_the_declared_tools() {
    use seedpod_protocol::{
        CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Preview, ToolDecl,
    };
    const PROBE: ToolDecl = ToolDecl {
        name: "probe",
        default_policy: Policy::Ask,
        effect: Effect::ReadOnly,
        note: None,
        small_note: None,
        in_small_prompt: InSmallPrompt::Always,
        summary: CallSummary::raw,
        guard: GuardScan::Everything,
        preview: Preview::Arguments,
        in_flush: InFlush::Never,
    };
    let fx = Fixture::new();
    let resolve = || {
        Effective::resolve(&Inputs {
            config_dir: &fx.config_dir,
            cwd: &fx.cwd,
            env: &|_: &str| None,
            flags: Overrides::default(),
            tools: &[&PROBE],
        })
    };
    let eff = resolve().unwrap();
    assert_eq!(
        eff.approvals.all(),
        [("probe", Setting::default(Policy::Ask))]
    );
    fx.user_file("[approvals]\nprobe = \"deny\"\n");
    assert_eq!(
        resolve().unwrap().approvals.policy("probe"),
        Some(Setting::new(Policy::Deny, Source::UserFile(fx.user_path())))
    );
    fx.user_file("[approvals]\nshell = \"ask\"\n");
    let err = resolve().unwrap_err().to_string();
    assert!(
        err.contains("line 2: unknown field `shell`, expected one of `probe`, or an MCP tool key"),
        "{err}"
    );
    fx.user_file("[approvals]\nprobe = \"sandboxed\"\n");
    let err = resolve().unwrap_err().to_string();
    assert!(
        err.contains("approvals.probe"),
        "a tool that runs no commands: {err}"
    );
}
