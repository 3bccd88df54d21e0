//! seedpod's own files are private by construction: under umask 022 every directory
//! it creates is 0700 and every file 0600, and a runtime directory that is a symbolic link — the
//! way another local user would plant one in a shared /tmp and repoint it later — is refused by
//! the pod and by every client before anything is sent.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;

use serde_json::json;

use seedpod_e2e::TestHome;

/// Every directory and regular file under `dir`, with its mode.
fn modes(dir: &Path, out: &mut Vec<(String, bool, u32)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let mode = meta.mode() & 0o777;
        if meta.is_dir() {
            out.push((path.display().to_string(), true, mode));
            modes(&path, out);
        } else if meta.is_file() {
            out.push((path.display().to_string(), false, mode));
        }
    }
}

/// `seedpod ARGS` under umask 022, which the pod it may start inherits; must succeed. The mask
/// is set in the child only: the test process is shared with every other test.
fn ok_under_umask_022(sb: &TestHome, args: &[&str]) {
    let mut cmd = sb.cmd();
    cmd.args(args);
    // SAFETY: umask is async-signal-safe and only sets the child's own file-creation mask.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "seedpod {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn everything_a_pod_writes_is_private_under_umask_022() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    let script = script.to_str().unwrap();
    ok_under_umask_022(
        &sb,
        &["start", "p", "--provider", "scripted", "--script", script],
    );
    ok_under_umask_022(&sb, &["send", "p", "hello"]);
    ok_under_umask_022(&sb, &["notify", "p", "a note"]);
    let mut found = Vec::new();
    for dir in [&sb.home.data, &sb.home.state, &sb.home.run] {
        found.push((
            dir.display().to_string(),
            true,
            std::fs::metadata(dir).unwrap().mode() & 0o777,
        ));
        modes(dir, &mut found);
    }
    let files = found.iter().filter(|(_, is_dir, _)| !is_dir).count();
    assert!(
        files >= 4,
        "the pod wrote its log, pod.json, lock and logs: {found:?}"
    );
    let open: Vec<_> = found
        .iter()
        .filter(|(_, is_dir, mode)| {
            if *is_dir {
                *mode != 0o700
            } else {
                *mode != 0o600
            }
        })
        .collect();
    assert!(open.is_empty(), "readable by others: {open:?}");
    sb.ok(&["stop", "p"]);
}

#[test]
fn a_symlinked_runtime_dir_is_refused_by_the_pod_and_by_clients() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    // A private directory of the victim's own, reached through a link someone could repoint.
    let real = sb.path().join("elsewhere");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&real, &sb.home.run).unwrap();
    let out = sb.run(&[
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
    ]);
    assert!(
        !out.status.success(),
        "started through a linked runtime dir"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("symbolic link"), "{err}");

    // A pod started properly, then the runtime dir swapped for a link: clients refuse to send.
    std::fs::remove_file(&sb.home.run).unwrap();
    sb.start_scripted("q", &script);
    let moved = sb.path().join("moved");
    std::fs::rename(&sb.home.run, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &sb.home.run).unwrap();
    let out = sb.run(&["notify", "q", "secret text"]);
    assert!(
        !out.status.success(),
        "notify went through a linked runtime dir"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("symbolic link"), "{err}");
    // Put it back so the pod can be stopped.
    std::fs::remove_file(&sb.home.run).unwrap();
    std::fs::rename(&moved, &sb.home.run).unwrap();
    sb.ok(&["stop", "q"]);
}
