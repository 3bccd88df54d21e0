//! The command line's surface: every documented command has `--help`.
//!
//! Being an integration test of this package also makes `cargo test --workspace` build the
//! `seedpod` binary that the end-to-end tests in `tests/` drive.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const COMMANDS: &[&str] = &[
    "start", "ls", "send", "notify", "events", "history", "context", "pause", "resume", "cancel",
    "stop", "restart", "spawn", "pod",
];

/// `seedpod ARGS --help` on standard output.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_seedpod"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "seedpod {args:?} --help");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_command_has_help() {
    let bin = env!("CARGO_BIN_EXE_seedpod");
    let top = Command::new(bin).arg("--help").output().unwrap();
    assert!(top.status.success());
    let text = String::from_utf8_lossy(&top.stdout);
    for command in COMMANDS {
        assert!(text.contains(command), "`seedpod --help` lists {command}");
        let out = Command::new(bin)
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "seedpod {command} --help");
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage:"));
    }
    let serve = help(&["pod", "serve"]);
    for flag in [
        "--script",
        "--parent",
        "--task",
        "--scope-read",
        "--scope-write",
    ] {
        assert!(serve.contains(flag), "pod serve --help: {flag}");
    }
    assert!(help(&["ls"]).contains("--tree"));
    assert!(help(&["stop"]).contains("--with-children"));
    let spawn = help(&["spawn"]);
    for flag in ["--read", "--write", "--model", "--instructions"] {
        assert!(spawn.contains(flag), "spawn --help: {flag}");
    }
}

#[test]
fn child_pod_commands_refuse_bad_use_with_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_seedpod"))
            .env("SEEDPOD_HOME", home.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["ls", "--tree", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--json"));

    let out = run(&["spawn", "nobody", "kid", "do it"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no pod named \"nobody\""), "{err}");

    let out = run(&["pod", "serve", "kid", "--parent", "boss"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--task"));
}

#[test]
fn unknown_commands_fail_with_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_seedpod"))
        .arg("frobnicate")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage"));
}
