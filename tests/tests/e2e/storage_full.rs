//! Storage that fills up. A run whose log cannot be written ends `send` with the
//! pod's reason (it used to wait forever); `start` on a full filesystem says which one is full
//! (it used to panic writing its own stderr file to the same disk).

use std::os::unix::process::CommandExt;
use std::process::Output;
use std::time::Duration;

use seedpod_e2e::{TestHome, missing_prerequisite};
use serde_json::json;

/// Long enough for a debug build; a hang fails the test instead of stalling the suite.
const CLIENT_DEADLINE: Duration = Duration::from_secs(60);

async fn run_bounded(sb: &TestHome, args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::from(sb.cmd());
    cmd.args(args).kill_on_drop(true);
    tokio::time::timeout(CLIENT_DEADLINE, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("seedpod {args:?} did not exit"))
        .expect("run seedpod")
}

#[tokio::test]
async fn send_ends_with_the_pods_reason_when_the_log_cannot_be_written() {
    let sb = TestHome::new();
    // An answer far larger than the pod may write: its commit fails mid-run.
    let script = sb.script(
        "s.jsonl",
        &[json!({"text": "y".repeat(300_000), "chunk_chars": 10_000})],
    );
    let mut start = sb.cmd();
    start.args([
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
    ]);
    // A file-size limit stands in for a full disk: every write past it fails (EFBIG), as every
    // write fails on a full one. SIGXFSZ is left at its default, which would kill the pod
    // unless it ignores the signal itself.
    // SAFETY: setrlimit is async-signal-safe and only lowers the child's own limit, which the
    // pod it launches inherits.
    unsafe {
        start.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 100_000,
                rlim_max: 100_000,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = start.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = run_bounded(&sb, &["send", "p", "write a lot"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("seedpod: the run stopped"), "{stderr}");
    assert!(last.contains("File too large"), "{stderr}");

    // The pod is alive and refuses to acknowledge what it cannot write.
    let out = run_bounded(&sb, &["notify", "p", "hello?"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("nothing was acknowledged"), "{stderr}");
    // And says so where a person looks first, instead of "idle".
    let listed = sb.ok(&["ls"]);
    let row = listed
        .lines()
        .find(|l| l.starts_with("p "))
        .unwrap_or_default();
    assert!(row.contains("log broken"), "{listed}");
}

/// Whether this machine lets an unprivileged process mount a tmpfs in its own namespaces.
fn can_mount_privately() -> bool {
    std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[tokio::test]
async fn start_on_a_full_filesystem_names_it_and_starts_once_there_is_room() {
    if !can_mount_privately() {
        missing_prerequisite(
            "user and mount namespaces (`unshare --user --map-root-user --mount`)",
        );
        return;
    }
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    let home = sb.path().join("home");
    std::fs::create_dir(&home).unwrap();
    // In a private mount namespace: a small tmpfs as SEEDPOD_HOME, filled, then `start`; then
    // room is made and `start` again. Everything runs inside, where the mount exists.
    let steps = format!(
        "mount -t tmpfs -o size=256k,mode=0700 tmpfs '{home}' || exit 90
         dd if=/dev/zero of='{home}/fill' bs=1k count=512 2>/dev/null
         '{bin}' start p --provider scripted --script '{script}'
         echo \"first=$?\" >&2
         rm '{home}/fill'
         '{bin}' start p --provider scripted --script '{script}' >/dev/null || exit 91
         '{bin}' send p hello || exit 92
         '{bin}' stop p >/dev/null",
        home = home.display(),
        bin = seedpod_e2e::seedpod_bin().display(),
        script = script.display(),
    );
    let mut cmd = tokio::process::Command::new("unshare");
    cmd.args(["--user", "--map-root-user", "--mount", "sh", "-c", &steps])
        .env("SEEDPOD_HOME", &home)
        .env_remove("SEEDPOD_LOG")
        .current_dir(sb.path())
        .kill_on_drop(true);
    let out = tokio::time::timeout(CLIENT_DEADLINE, cmd.output())
        .await
        .expect("the scenario ends")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    assert!(stderr.contains("first=1"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "pod \"p\" could not start: no space left on tmpfs mounted at {}",
            home.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stdout.trim(), "hi", "the pod works once there is room");
}
