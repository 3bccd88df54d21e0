//! Issue 19: pods on other machines. A transport script stands in for ssh (`[remote] ssh`): it
//! skips ssh's options and runs the command line for HOST in a shell with that host's own
//! `SEEDPOD_HOME` — another machine as far as seedpod can tell, without an sshd. Through it:
//! `send`, `notify`, `events`, `history`, `ls HOST:` and `ls --all`; the TUI attached over the
//! link, the link killed mid-session and resumed without loss; an unreachable host and a hung
//! one; and a pod on a machine with an incompatible seedpod.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use seedpod_e2e::pty::{Tui, keys};
use seedpod_e2e::{Sandbox, kill, seedpod_bin};
use serde_json::json;

/// ssh as far as seedpod can tell. `FAKE_SSH_HOME_<host>` is that host's SEEDPOD_HOME (no
/// variable: the host does not resolve); `FAKE_SSH_HANG_<host>` makes it never answer; every
/// transport's pid is appended to `FAKE_SSH_LOG`.
const TRANSPORT: &str = r#"#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-p|-i|-l|-F|-J) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host=$1; shift
eval "home=\${FAKE_SSH_HOME_$host:-}"
eval "hang=\${FAKE_SSH_HANG_$host:-}"
if [ -n "$hang" ]; then exec sleep 3600; fi
if [ -z "$home" ]; then
  echo "ssh: Could not resolve hostname $host: Name or service not known" >&2
  exit 255
fi
[ -n "$FAKE_SSH_LOG" ] && echo $$ >> "$FAKE_SSH_LOG"
export SEEDPOD_HOME="$home"
# `exec` twice: the logged pid is the process at the end of the link, as killing ssh would be.
exec sh -c "exec $*"
"#;

/// A seedpod that answers every handshake as a newer seedpod would, and says its version.
const NEWER_SEEDPOD: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "seedpod 9.9.9"; exit 0; fi
read -r hello
echo '{"type":"incompatible","supported":999,"reason":"the client is older"}'
"#;

/// This machine (`here`) and one other (`there`, host `h1`).
struct Machines {
    here: Sandbox,
    there: Sandbox,
    log: PathBuf,
}

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl Machines {
    fn new() -> Machines {
        let here = Sandbox::new();
        let there = Sandbox::new();
        let transport = here.path().join("fake-ssh");
        executable(&transport, TRANSPORT);
        let newer = here.path().join("newer-seedpod");
        executable(&newer, NEWER_SEEDPOD);
        let bin = seedpod_bin();
        here.user_config(&format!(
            "[remote]\nssh = \"{} -o ConnectTimeout=5\"\ntimeout_secs = 2\n\
             [remote.hosts.h1]\nbin = {:?}\n[remote.hosts.nowhere]\nbin = {:?}\n\
             [remote.hosts.hung]\nbin = {:?}\n[remote.hosts.newer]\nhost = \"h1\"\nbin = {:?}\n",
            transport.display(),
            bin.display().to_string(),
            bin.display().to_string(),
            bin.display().to_string(),
            newer.display().to_string(),
        ));
        let log = here.path().join("transports.log");
        Machines { here, there, log }
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "FAKE_SSH_HOME_h1".into(),
                self.there.path().display().to_string(),
            ),
            ("FAKE_SSH_HANG_hung".into(), "1".into()),
            ("FAKE_SSH_LOG".into(), self.log.display().to_string()),
        ]
    }

    /// `seedpod ARGS` on this machine, with the transport's view of the other.
    fn here(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = self.here.cmd();
        cmd.envs(self.env()).args(args);
        cmd.output().unwrap()
    }

    fn here_ok(&self, args: &[&str]) -> String {
        let out = self.here(args);
        assert!(
            out.status.success(),
            "seedpod {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The last transport started (the newest link).
    fn last_transport(&self) -> u32 {
        let text = std::fs::read_to_string(&self.log).unwrap();
        text.lines().last().unwrap().trim().parse().unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_notify_events_history_and_ls_reach_a_pod_on_another_machine() {
    let m = Machines::new();
    let script = m.there.script(
        "s.jsonl",
        &[
            json!({"text": "Hello from h1."}),
            json!({"text": "Noted the build."}),
        ],
    );
    m.there.start_scripted("p", &script);

    let answer = m.here_ok(&["send", "h1:p", "hi there"]);
    assert!(answer.contains("Hello from h1."), "{answer}");
    let out = m.here(&["notify", "h1:p", "build done"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("notified h1:p"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The same entries as a client on that machine reads, line for line.
    let remote = m.here_ok(&["history", "h1:p", "--json"]);
    let local = m.there.ok(&["history", "p", "--json"]);
    assert_eq!(remote, local);
    assert!(remote.contains("build done"));
    let context = m.here_ok(&["context", "h1:p"]);
    assert_eq!(context, m.there.ok(&["context", "p"]));

    // `events` follows through the bridge: the snapshot, then live.
    let mut events = m.here.cmd();
    events
        .envs(m.env())
        .args(["events", "h1:p"])
        .stdout(Stdio::piped());
    let mut child = events.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let live = line == "== live";
        seen.push(line);
        if live {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("Hello from h1.")),
        "{seen:?}"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let listing = m.here_ok(&["ls", "h1:"]);
    assert!(
        listing.contains("p ") && listing.contains("idle"),
        "{listing}"
    );

    // Every machine at once; one that does not resolve and one that never answers are lines
    // saying so, and the listing ends (within each host's timeout).
    let all = m.here_ok(&["ls", "--all"]);
    assert!(all.starts_with("local\n  no pods\n"), "{all}");
    assert!(all.contains("\nh1\n") && all.contains("  p "), "{all}");
    assert!(
        all.contains("nowhere: unreachable") && all.contains("Could not resolve hostname"),
        "{all}"
    );
    assert!(all.contains("hung: no answer within 2s"), "{all}");

    // A notification to a machine that cannot be reached is not acknowledged: exit 1, and why.
    let lost = m.here(&["notify", "nowhere:p", "anyone?"]);
    assert_eq!(lost.status.code(), Some(1));
    let err = String::from_utf8_lossy(&lost.stderr);
    assert!(
        err.contains("nowhere: ssh: Could not resolve hostname"),
        "{err}"
    );

    // A pod that is not there says so, with where.
    let absent = m.here(&["send", "h1:ghost", "hello?"]);
    assert!(!absent.status.success());
    let err = String::from_utf8_lossy(&absent.stderr);
    assert!(err.contains("h1:") && err.contains("ghost"), "{err}");

    // Stop goes to that machine's seedpod.
    let stopped = m.here_ok(&["stop", "h1:p"]);
    assert!(stopped.contains("stopped p"), "{stopped}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_with_an_incompatible_seedpod_is_named_with_both_versions() {
    let m = Machines::new();
    let out = m.here(&["notify", "newer:p", "hello"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("upgrade seedpod here"), "{err}");
    assert!(err.contains("seedpod 9.9.9 (protocol 999)"), "{err}");
    assert!(err.contains(env!("CARGO_PKG_VERSION")), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_over_a_dropped_link_comes_back_where_it_was_with_nothing_lost_or_doubled() {
    let m = Machines::new();
    let script = m.there.script(
        "s.jsonl",
        &[
            json!({"text": "First answer, before the drop."}),
            json!({"text": "Second answer, while the link was down."}),
            json!({"text": "Third answer, after it came back."}),
        ],
    );
    m.there.start_scripted("p", &script);
    let env = m.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut tui = Tui::spawn_with(&m.here, &["attach", "h1:p"], 30, 100, &env);
    tui.wait_for("p on h1");
    tui.wait_for("· connected");
    tui.send("say something");
    tui.send(keys::ENTER);
    tui.wait_for("First answer, before the drop.");

    // The link dies (a laptop's lid closes); meanwhile the pod goes on over there.
    kill(m.last_transport(), libc::SIGKILL);
    m.there.ok(&["send", "p", "keep going"]);
    tui.wait_for("resumed where it left off");
    tui.wait_for("Second answer, while the link was down.");
    assert!(
        tui.wrote(b"link lost") || tui.count(b"resumed where it left off") == 1,
        "the drop went unnoticed"
    );

    tui.wait_for("· connected");
    tui.send("and more");
    tui.send(keys::ENTER);
    tui.wait_for("Third answer, after it came back.");
    let screen = tui.screen();
    for line in [
        "First answer, before the drop.",
        "Second answer, while the link was down.",
        "Third answer, after it came back.",
        "keep going",
    ] {
        assert_eq!(screen.matches(line).count(), 1, "{line:?} on:\n{screen}");
    }
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    // What the TUI showed is what a client on that machine reads.
    let local = m.there.ok(&["history", "p"]);
    for line in ["keep going", "and more", "Third answer"] {
        assert!(local.contains(line), "{local}");
    }
    m.there.ok(&["stop", "p"]);
}
