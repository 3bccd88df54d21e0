//! The command line's surface: every documented command has `--help`.
//!
//! Being an integration test of this package also makes `cargo test --workspace` build the
//! `seedpod` binary that the end-to-end tests in `tests/` drive.

use std::process::Command;

const COMMANDS: &[&str] = &[
    "start", "ls", "send", "notify", "events", "history", "context", "pause", "resume", "cancel",
    "stop", "restart", "pod",
];

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
    let serve = Command::new(bin)
        .args(["pod", "serve", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&serve.stdout).contains("--script"));
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
