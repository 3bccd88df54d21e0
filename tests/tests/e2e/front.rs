//! `seedpod` is a small front that runs the one-shot commands itself and executes
//! `seedpod-core` for everything else (docs/decisions.md, "A small front binary for one-shot
//! commands"). The front is only a shortcut: every command line must mean, print and exit
//! exactly as the core alone makes of it, including every error; and a front copied or linked
//! elsewhere must neither run a program planted beside the link nor fail silently.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use seedpod_e2e::{TestHome, seedpod_bin};
use seedpod_protocol::{EntryKind, SystemItem};
use serde_json::json;

fn core_bin() -> PathBuf {
    seedpod_bin().with_file_name("seedpod-core")
}

/// Run `program` with `args` as `sb.cmd()` would, in `dir`, with `stdin` on standard input.
fn run_in(sb: &TestHome, program: &Path, dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .env("SEEDPOD_HOME", sb.path())
        .env_remove("SEEDPOD_LOG")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // A command that does not read its input closes the pipe first; that is no failure here.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait")
}

fn shown(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_one_shot_line_means_to_the_front_what_it_means_to_the_core() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    sb.start_scripted("sleeping", &script);
    sb.ok(&["stop", "sleeping"]);
    let elsewhere = tempfile::tempdir().expect("a directory without a pod");
    let here = sb.path().to_path_buf();

    let lines: &[(&[&str], &Path, &str)] = &[
        (&["notify", "p", "build 41 passed", "--no-wake"], &here, ""),
        (&["notify", "--no-wake", "p", "build 42 passed"], &here, ""),
        (
            &["notify", "p", "--no-wake"],
            &here,
            "from standard input\n",
        ),
        (
            &["notify", "p", "-", "--no-wake"],
            &here,
            "a dash reads it too\n",
        ),
        (&["notify", "--no-wake"], &here, "this directory's pod\n"),
        (&["pause", "p"], &here, ""),
        (&["resume", "p"], &here, ""),
        (&["cancel", "p"], &here, ""),
        (&["notify", "nobody", "hi"], &here, ""),
        (&["notify", "sleeping", "hi", "--no-wake"], &here, ""),
        (&["pause", "sleeping"], &here, ""),
        (
            &["notify", "--no-wake"],
            elsewhere.path(),
            "no pod works here\n",
        ),
        (&["cancel"], elsewhere.path(), ""),
        (&["notify", "p", "hi", "again"], &here, ""),
        (&["notify", "--no-wake", "--no-wake", "p", "hi"], &here, ""),
        (&["notify", "p", "-x marks the spot"], &here, ""),
        (&["notify", "bad/name", "hi"], &here, ""),
        (&["notify", "nohost:p", "hi"], &here, ""),
        (&["pause", "p", "q"], &here, ""),
        (&["notify", "--help"], &here, ""),
        (&["resume", "-h"], &here, ""),
    ];
    let mut delivered = 0;
    for (args, dir, stdin) in lines {
        let front = shown(&run_in(&sb, &seedpod_bin(), dir, args, stdin));
        let core = shown(&run_in(&sb, &core_bin(), dir, args, stdin));
        assert_eq!(front, core, "seedpod {args:?} in {}", dir.display());
        if front.0 == Some(0) && front.2.starts_with("notified p: ") {
            delivered += 2;
        }
    }
    assert_eq!(delivered, 10, "five notifications, each sent by both");

    // Every acknowledged notification is in the history, once per sender.
    let history = sb.history("p").await;
    let notes: Vec<&str> = history
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::SystemItem {
                item: SystemItem::Notification { message, .. },
                ..
            } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    for text in [
        "build 41 passed",
        "build 42 passed",
        "from standard input",
        "a dash reads it too",
        "this directory's pod",
    ] {
        assert_eq!(
            notes.iter().filter(|m| **m == text).count(),
            2,
            "{text}: {notes:?}"
        );
    }
}

#[test]
fn a_front_without_its_core_still_notifies_and_says_what_is_missing_for_the_rest() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    let alone = tempfile::tempdir().expect("a directory for the front alone");
    let front = alone.path().join("seedpod");
    std::fs::copy(seedpod_bin(), &front).expect("copy the front");

    let out = run_in(
        &sb,
        &front,
        sb.path(),
        &["notify", "p", "hi", "--no-wake"],
        "",
    );
    assert!(out.status.success(), "{:?}", shown(&out));

    let out = run_in(&sb, &front, sb.path(), &["ls"], "");
    let (code, stdout, stderr) = shown(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.starts_with("seedpod: cannot run ")
            && stderr.contains(&alone.path().join("seedpod-core").display().to_string())
            && stderr.contains("cargo build --release -p seedpod"),
        "{stderr}"
    );
}

#[test]
fn a_link_to_the_front_runs_the_real_core_not_one_planted_beside_the_link() {
    let sb = TestHome::new();
    let planted = tempfile::tempdir().expect("a directory on someone's PATH");
    let marker = planted.path().join("PLANTED_RAN");
    let fake = planted.path().join("seedpod-core");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\ntouch '{}'\necho planted\n", marker.display()),
    )
    .expect("plant a core");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make it executable");
    let link = planted.path().join("seedpod");
    std::os::unix::fs::symlink(seedpod_bin(), &link).expect("link the front");

    let out = run_in(&sb, &link, sb.path(), &["--version"], "");
    let (code, stdout, stderr) = shown(&out);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("seedpod "), "{stdout}");
    assert!(!marker.exists(), "the planted seedpod-core ran");
}
