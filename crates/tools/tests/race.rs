//! The symlink-swap race (`src/beneath.rs`). While a thread keeps exchanging a directory inside
//! the scope with a symlink to a directory outside it (`renameat2(RENAME_EXCHANGE)`, atomic),
//! the real file tools read, write, edit and list through that directory for 2,000 rounds.
//! Nothing outside may be read, written or listed; a call caught mid-swap fails cleanly.

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg(target_os = "linux")]

use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use seedpod_tools::{BUILTIN_TOOLS, Scope, ScopeRules, ShellLimits, ToolContext, builtin_tools};
use serde_json::json;

const ROUNDS: usize = 2_000;
const OUTSIDE_SECRET: &str = "OUTSIDE SECRET";
const OUTSIDE_EDIT: &str = "outside <<ONE>> <<TWO>>";

fn exchange(a: &Path, b: &Path) -> bool {
    let (a, b) = (
        CString::new(a.as_os_str().as_encoded_bytes()).expect("path"),
        CString::new(b.as_os_str().as_encoded_bytes()).expect("path"),
    );
    const RENAME_EXCHANGE: libc::c_uint = 2;
    // SAFETY: two NUL-terminated paths that outlive the call; the kernel only reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            RENAME_EXCHANGE,
        )
    };
    rc == 0
}

#[derive(Default)]
struct Tally {
    read_ok: AtomicU64,
    read_refused: AtomicU64,
    write_ok: AtomicU64,
    write_refused: AtomicU64,
    list_ok: AtomicU64,
    list_refused: AtomicU64,
    edit_ok: AtomicU64,
    edit_refused: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_rounds_of_symlink_swaps_never_reach_outside_the_scope() {
    let root = tempfile::tempdir().expect("temp dir");
    let root = root.path().canonicalize().expect("canonical");
    let project = root.join("project");
    let inside = project.join("inside");
    let outside = root.join("outside");
    std::fs::create_dir_all(&inside).expect("inside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(inside.join("secret.txt"), "inside text").expect("inside file");
    std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET).expect("outside file");
    std::fs::write(outside.join("e.txt"), OUTSIDE_EDIT).expect("outside edit file");
    std::fs::write(inside.join("e.txt"), "<<ONE>>").expect("inside edit file");
    std::fs::write(outside.join("outside-marker"), "").expect("marker");
    let swap = project.join("swap");
    std::os::unix::fs::symlink(&outside, &swap).expect("symlink");
    let outside_before: Vec<_> = names(&outside);

    let scope = Scope::new(
        &project,
        &ScopeRules {
            write: vec![".".into()],
            ..ScopeRules::default()
        },
    )
    .expect("scope");
    let ctx = ToolContext {
        scope: Arc::new(scope),
        shell: ShellLimits::default(),
        sandbox: None,
        checkpoints: None,
    };
    let names_of_tools: Vec<&str> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
    let tools = builtin_tools(&ctx, &names_of_tools);
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t.spec().name == name)
            .cloned()
            .expect("tool")
    };
    let (read, write, edit, list) = (
        tool("read_file"),
        tool("write_file"),
        tool("edit_file"),
        tool("list_dir"),
    );

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let attacker = {
        let (stop, swaps, inside, swap) =
            (stop.clone(), swaps.clone(), inside.clone(), swap.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if exchange(&inside, &swap) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };

    let tally = Tally::default();
    let mut leaks = Vec::new();
    for round in 0..ROUNDS {
        let out = read
            .call(json!({"path": "inside/secret.txt"}).to_string())
            .await;
        if out.content.contains(OUTSIDE_SECRET) {
            leaks.push(format!("round {round}: read returned the outside file"));
        }
        count(&out, &tally.read_ok, &tally.read_refused);

        let out = write
            .call(
                json!({"path": "inside/out.txt", "content": format!("round {round}")}).to_string(),
            )
            .await;
        count(&out, &tally.write_ok, &tally.write_refused);

        // Back and forth, so every round has something to replace (when the last one landed).
        for (old, new) in [("<<ONE>>", "<<TWO>>"), ("<<TWO>>", "<<ONE>>")] {
            let out = edit
                .call(json!({"path": "inside/e.txt", "old": old, "new": new}).to_string())
                .await;
            count(&out, &tally.edit_ok, &tally.edit_refused);
        }

        let out = list.call(json!({"path": "inside"}).to_string()).await;
        if out.content.contains("outside-marker") {
            leaks.push(format!(
                "round {round}: list_dir listed the outside directory"
            ));
        }
        count(&out, &tally.list_ok, &tally.list_refused);
    }
    stop.store(true, Ordering::Relaxed);
    attacker.join().expect("attacker thread");

    // What is outside is exactly what was there: nothing written, nothing edited.
    assert_eq!(
        names(&outside),
        outside_before,
        "a file appeared outside the scope"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("e.txt")).expect("outside edit file"),
        OUTSIDE_EDIT,
        "an edit landed outside the scope"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).expect("outside file"),
        OUTSIDE_SECRET
    );
    assert!(leaks.is_empty(), "{leaks:#?}");
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(swaps > ROUNDS as u64, "the attacker raced: {swaps} swaps");
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    eprintln!(
        "{ROUNDS} rounds, {swaps} swaps; read ok {} refused {}; write ok {} refused {}; edit ok \
         {} refused {}; list ok {} refused {}; outside accesses 0",
        get(&tally.read_ok),
        get(&tally.read_refused),
        get(&tally.write_ok),
        get(&tally.write_refused),
        get(&tally.edit_ok),
        get(&tally.edit_refused),
        get(&tally.list_ok),
        get(&tally.list_refused),
    );
    // Both outcomes happened: the race was real, and the tools still worked between swaps.
    assert!(get(&tally.read_ok) > 0 && get(&tally.read_refused) > 0);
}

fn count(out: &seedpod_engine::ToolOutput, ok: &AtomicU64, refused: &AtomicU64) {
    if out.is_error {
        refused.fetch_add(1, Ordering::Relaxed);
    } else {
        ok.fetch_add(1, Ordering::Relaxed);
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
