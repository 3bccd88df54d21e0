//! `seedpod demo` leaves nothing behind: its pod is stopped and deleted when the terminal
//! closes (SIGHUP), not only on Ctrl-D, and a demo killed before it could clean up has its
//! pod reaped by the next `seedpod ls`.

use seedpod_e2e::pty::Tui;
use seedpod_e2e::{TestHome, kill};

/// The demo pods in the sandbox's data directory.
fn demo_pods(sb: &TestHome) -> Vec<String> {
    let Ok(dirs) = std::fs::read_dir(sb.path().join("data/pods")) else {
        return Vec::new();
    };
    dirs.filter_map(|d| d.ok())
        .filter_map(|d| d.file_name().into_string().ok())
        .filter(|name| name.starts_with("demo-"))
        .collect()
}

fn start_demo(sb: &TestHome) -> (Tui, u32) {
    let mut tui = Tui::spawn(sb, &["demo"]);
    tui.wait_for("connected");
    let pid = tui.pid().expect("the demo's pid");
    assert_eq!(demo_pods(sb), [format!("demo-{pid}")]);
    (tui, pid)
}

#[test]
fn a_closed_terminal_ends_the_demo_and_deletes_its_pod() {
    let sb = TestHome::new();
    let (mut tui, pid) = start_demo(&sb);
    kill(pid, libc::SIGHUP);
    assert!(tui.wait_exit(), "{}", tui.screen());
    assert_eq!(demo_pods(&sb), Vec::<String>::new());
    let listed = sb.ok(&["ls"]);
    assert!(!listed.contains("demo-"), "{listed}");
}

#[test]
fn ls_reaps_the_pod_of_a_killed_demo() {
    let sb = TestHome::new();
    let (mut tui, pid) = start_demo(&sb);
    kill(pid, libc::SIGKILL);
    tui.wait_exit();
    // Killed, the demo could not clean up: its pod runs on until `ls` sees its owner gone.
    assert_eq!(demo_pods(&sb), [format!("demo-{pid}")]);
    let out = sb.run(&["ls"]);
    assert!(out.status.success());
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains("demo-"), "{listed}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!("removed pod demo-{pid}")), "{said}");
    assert_eq!(demo_pods(&sb), Vec::<String>::new());
}
