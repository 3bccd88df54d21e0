//! A real `bash` run through the real shell tool, confined: writes outside the write roots fail
//! with EACCES, inside they work, system files stay readable, and with the network off a
//! connect to a local listener is refused. Where the kernel has no Landlock these fail in CI
//! and are skipped, saying so, elsewhere.

use std::fs;
use std::net::TcpListener;
use std::sync::Arc;

use seedpod_engine::Tool;
use serde_json::json;

use super::{Sandbox, Support};
use crate::scope::{Scope, ScopeRules};
use crate::shell::{Shell, ShellLimits};

pub(super) fn landlock() -> bool {
    match Support::probe() {
        Support::Landlock { .. } => true,
        Support::Unsupported(why) | Support::Partial { why, .. } => {
            missing_prerequisite(&format!("the sandbox ({why})"));
            false
        }
    }
}

/// Say that a test cannot run here because it needs `what`; the caller then returns. Where `CI`
/// is set this fails instead: CI's machine has what the sandbox needs, and a skip there would
/// pass without testing anything. (The end-to-end tests have the same rule in
/// `tests/support/lib.rs`, which this crate's unit tests cannot reach.)
fn missing_prerequisite(what: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "this CI machine cannot run the test: it needs {what}"
    );
    eprintln!("skipped: the test needs {what}");
}

pub(super) struct Fixture {
    pub(super) _root: tempfile::TempDir,
    pub(super) project: std::path::PathBuf,
    pub(super) outside: std::path::PathBuf,
}

/// `project/` is the pod's directory (its write root); `outside/` is next to it, not in scope.
/// Both live in `/tmp` (or `$TMPDIR`), which the sandbox does not open: only its own private
/// temporary directory is writable.
pub(super) fn fixture() -> Fixture {
    let root = tempfile::tempdir().expect("temp dir");
    let project = root.path().join("project");
    let outside = root.path().join("outside");
    fs::create_dir_all(&project).expect("project");
    fs::create_dir_all(&outside).expect("outside");
    fs::write(outside.join("secret.txt"), "outside secret").expect("secret");
    Fixture {
        project: project.canonicalize().expect("canonical"),
        outside: outside.canonicalize().expect("canonical"),
        _root: root,
    }
}

pub(super) fn shell(project: &std::path::Path, network: bool) -> Shell {
    let scope = Scope::new(
        project,
        &ScopeRules {
            write: vec![".".into()],
            ..ScopeRules::default()
        },
    )
    .expect("scope");
    let sandbox = Sandbox::new(Arc::new(scope), network, None).expect("sandbox");
    Shell::new(project.to_path_buf(), ShellLimits::default(), Some(sandbox))
}

/// The result's text; a command the sandbox stopped exits non-zero, which fails the call.
pub(super) async fn run(shell: &Shell, command: &str) -> String {
    let output = shell.call(json!({ "command": command }).to_string()).await;
    assert_eq!(
        output.is_error,
        !output.content.starts_with("exit code 0"),
        "{}",
        output.content
    );
    output.content
}

#[tokio::test]
async fn writes_land_only_under_the_write_roots() {
    if !landlock() {
        return;
    }
    let f = fixture();
    let shell = shell(&f.project, true);
    let inside = run(&shell, "echo ok > inside.txt && cat inside.txt").await;
    assert!(inside.starts_with("exit code 0"), "{inside}");
    assert_eq!(
        fs::read_to_string(f.project.join("inside.txt")).expect("written"),
        "ok\n"
    );

    let target = f.outside.join("escaped.txt");
    let outside = run(&shell, &format!("echo pwned > '{}'", target.display())).await;
    assert!(outside.starts_with("exit code 1"), "{outside}");
    assert!(outside.contains("Permission denied"), "{outside}");
    assert!(
        outside.contains("the command ran in the sandbox"),
        "the result explains the refusal: {outside}"
    );
    assert!(!target.exists(), "a write landed outside the write roots");

    // Unless the machine keeps its temp files under a system directory (readable on purpose).
    let readable = [
        "/usr", "/etc", "/opt", "/run", "/nix", "/snap", "/dev", "/proc", "/sys",
    ];
    if readable.iter().any(|dir| f.outside.starts_with(dir)) {
        eprintln!(
            "the read check is skipped: {} is under a system dir",
            f.outside.display()
        );
    } else {
        let secret = f.outside.join("secret.txt");
        let read_outside = run(&shell, &format!("cat '{}'", secret.display())).await;
        assert!(
            !read_outside.contains("outside secret"),
            "a read outside the scope succeeded: {read_outside}"
        );
    }

    let system = run(
        &shell,
        "head -c 0 /etc/passwd && ls /usr/bin >/dev/null && echo fine",
    )
    .await;
    assert!(
        system.contains("fine"),
        "system files stay usable: {system}"
    );
}

#[tokio::test]
async fn sandbox_false_runs_unconfined() {
    if !landlock() {
        return;
    }
    let f = fixture();
    let shell = shell(&f.project, true);
    let target = f.outside.join("allowed.txt");
    let output = shell
        .call(
            json!({
                "command": format!("echo approved > '{}'", target.display()),
                "sandbox": false
            })
            .to_string(),
        )
        .await;
    assert!(
        output.content.starts_with("exit code 0"),
        "{}",
        output.content
    );
    assert!(target.exists());
}

#[tokio::test]
async fn without_network_a_local_connect_is_refused() {
    if !landlock() {
        return;
    }
    if !matches!(Support::probe(), Support::Landlock { abi } if abi >= 4) {
        missing_prerequisite("Landlock ABI 4 or later, to restrict TCP");
        return;
    }
    let f = fixture();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    let open = run(&shell(&f.project, true), &connect).await;
    assert!(open.contains("connected"), "with network on: {open}");

    let closed = run(&shell(&f.project, false), &connect).await;
    assert!(
        !closed.contains("connected") && closed.contains("Permission denied"),
        "with network off: {closed}"
    );
}

#[test]
fn support_describes_what_is_enforced() {
    let full = Support::Landlock { abi: 7 };
    assert!(full.describe(false).contains("no network"));
    assert!(full.describe(true).contains("network allowed"));
    assert!(full.describe(true).contains("no Unix sockets"));
    assert!(full.describe(true).contains("protected files read-only"));
    let partial = Support::Partial {
        abi: 7,
        why: "user namespaces are restricted".into(),
    };
    let said = partial.describe(false);
    assert!(
        said.starts_with("partial")
            && said.contains("no Unix sockets")
            && said.contains("user namespaces are restricted")
            && said.contains("asks before every command"),
        "{said}"
    );
    assert!(
        Support::Unsupported("no".into())
            .describe(true)
            .starts_with("not enforced")
    );
}

#[test]
fn a_crashed_pods_temp_dir_is_swept_and_a_live_ones_is_not() {
    let base = tempfile::tempdir().expect("base");
    let mut child = std::process::Command::new("true").spawn().expect("true");
    let dead = child.id();
    child.wait().expect("reaped");
    let stale = base.path().join(format!("seedpod-shell-{dead}-abc"));
    let live = base
        .path()
        .join(format!("seedpod-shell-{}-def", std::process::id()));
    let other = base.path().join("unrelated-7");
    for dir in [&stale, &live, &other] {
        fs::create_dir_all(dir.join("inner")).expect("dir");
    }
    super::sweep_stale(base.path());
    assert!(!stale.exists(), "a dead pod's directory stayed");
    assert!(live.exists() && other.exists());
}
