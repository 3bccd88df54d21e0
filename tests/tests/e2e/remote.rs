//! Pods on other machines. A transport script stands in for ssh (`[remote] ssh`): it
//! skips ssh's options and runs the command line for HOST in a shell with that host's own
//! `SEEDPOD_HOME` — another machine as far as seedpod can tell, without an sshd. Through it:
//! `send`, `notify`, `events`, `history`, `ls HOST:` and `ls --all`; the TUI attached over the
//! link, the link killed mid-session and resumed without loss; an unreachable host and a hung
//! one; and a pod on a machine with an incompatible seedpod.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seedpod_e2e::pty::{Tui, keys};
use seedpod_e2e::{TestHome, kill, missing_prerequisite, seedpod_bin};
use serde_json::json;

/// ssh as far as seedpod can tell. `FAKE_SSH_HOME_<host>` is that host's SEEDPOD_HOME (no
/// variable: the host does not resolve); `FAKE_SSH_HANG_<host>` makes it never answer; while the
/// file `FAKE_SSH_DOWN` names exists, no host can be reached (the network is gone); every
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
if [ -n "$FAKE_SSH_DOWN" ] && [ -e "$FAKE_SSH_DOWN" ]; then
  echo "ssh: connect to host $host port 22: Network is unreachable" >&2
  exit 255
fi
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
    here: TestHome,
    there: TestHome,
    log: PathBuf,
}

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl Machines {
    fn new() -> Machines {
        let here = TestHome::new();
        let there = TestHome::new();
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
            ("FAKE_SSH_DOWN".into(), self.down().display().to_string()),
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

    /// While this file exists the network is down.
    fn down(&self) -> PathBuf {
        self.here.path().join("network-down")
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

    // The same entries as a client on that machine reads, line for line, once the turn the
    // notification woke has ended (until then the two reads may fall either side of its end).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while m
        .there
        .ok(&["history", "p", "--json"])
        .matches("\"run_end\"")
        .count()
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the notification's turn never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
    // The link drops under it: not a quiet end, but an error saying where to go on from.
    kill(m.last_transport(), libc::SIGKILL);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the link to h1:p was lost") && err.contains("events h1:p --since"),
        "{err}"
    );

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

    // The link dies and the network stays away a while (a laptop's lid closes); meanwhile
    // the pod goes on over there.
    std::fs::write(m.down(), "").unwrap();
    kill(m.last_transport(), libc::SIGKILL);
    tui.wait_for("link lost — reconnecting to h1");
    m.there.ok(&["send", "p", "keep going"]);
    std::fs::remove_file(m.down()).unwrap();
    tui.wait_for("resumed where it left off");
    tui.wait_for("Second answer, while the link was down.");

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

/// A real sshd on a loopback port, as the person's own user with a key made for the test.
struct RealSsh {
    dir: tempfile::TempDir,
    port: u16,
    daemon: std::process::Child,
}

/// Ports tried: each was free when chosen, but another process may take it before sshd binds.
const SSHD_PORT_ATTEMPTS: usize = 3;

impl RealSsh {
    /// `None` where this machine cannot run one (`missing_prerequisite`: a failure in CI, whose
    /// `.ci/run` installs openssh-server, and a skip elsewhere).
    fn start() -> Option<RealSsh> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.exists() {
            missing_prerequisite("an sshd at /usr/sbin/sshd (`.ci/run` installs openssh-server)");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("ssh")
            .tempdir_in("/tmp")
            .unwrap();
        let path = |name: &str| dir.path().join(name);
        for key in ["host_key", "user_key"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path(key))
                .status()
                .unwrap();
            assert!(made.success(), "ssh-keygen failed");
        }
        std::fs::copy(path("user_key.pub"), path("authorized_keys")).unwrap();
        let _ = std::fs::create_dir_all("/run/sshd");
        let mut said = Vec::new();
        for _ in 0..SSHD_PORT_ATTEMPTS {
            // A free port: bound, read, released for sshd.
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let config = format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PidFile {}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin yes\n",
                path("host_key").display(),
                path("authorized_keys").display(),
                path("sshd.pid").display(),
            );
            std::fs::write(path("sshd_config"), config).unwrap();
            let mut daemon = Command::new(sshd)
                .args(["-D", "-e", "-f"])
                .arg(path("sshd_config"))
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // sshd says on stderr when it listens; a daemon that cannot run says why and exits.
            let mut lines = BufReader::new(daemon.stderr.take().unwrap()).lines();
            said.clear();
            let listening = loop {
                match lines.next() {
                    Some(Ok(line)) if line.contains("Server listening") => break true,
                    Some(Ok(line)) => said.push(line),
                    _ => break false,
                }
            };
            if listening {
                std::thread::spawn(move || for _ in lines {});
                return Some(RealSsh { dir, port, daemon });
            }
            let _ = daemon.wait();
            if !said.iter().any(|l| l.contains("Address already in use")) {
                break;
            }
        }
        missing_prerequisite(&format!(
            "an sshd that starts; /usr/sbin/sshd said: {}",
            said.join(" / ")
        ));
        None
    }

    fn ssh_command(&self) -> String {
        format!(
            "ssh -p {} -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
             -o LogLevel=ERROR -o IdentitiesOnly=yes",
            self.port,
            self.dir.path().join("user_key").display()
        )
    }
}

impl Drop for RealSsh {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_scenario_through_a_real_sshd_on_loopback() {
    let Some(sshd) = RealSsh::start() else {
        return;
    };
    let here = TestHome::new();
    let there = TestHome::new();
    // sshd gives the command a fresh environment: the other machine's seedpod is a wrapper
    // that knows its own home, as a person's PATH and profile would.
    let wrapper = here.path().join("seedpod-there");
    executable(
        &wrapper,
        &format!(
            "#!/bin/sh\nSEEDPOD_HOME={} exec {} \"$@\"\n",
            there.path().display(),
            seedpod_bin().display()
        ),
    );
    // CI may run without USER in its environment: ask who this process runs as.
    let whoami = Command::new("id").arg("-un").output().unwrap();
    let user = String::from_utf8_lossy(&whoami.stdout).trim().to_string();
    here.user_config(&format!(
        "[remote]\nssh = \"{}\"\n[remote.hosts.lo]\nhost = \"{user}@127.0.0.1\"\nbin = {:?}\n",
        sshd.ssh_command(),
        wrapper.display().to_string()
    ));
    let script = there.script(
        "s.jsonl",
        &[
            json!({"text": "Hello over real ssh."}),
            json!({"text": "Noted."}),
            json!({"text": "Welcome back."}),
        ],
    );
    there.start_scripted("p", &script);
    let answer = here.ok(&["send", "lo:p", "hi"]);
    assert!(answer.contains("Hello over real ssh."), "{answer}");
    let out = here.run(&["notify", "lo:p", "ci green"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        here.ok(&["history", "lo:p", "--json"]),
        there.ok(&["history", "p", "--json"])
    );
    let all = here.ok(&["ls", "--all"]);
    assert!(all.contains("\nlo (") && all.contains("  p "), "{all}");

    let mut tui = Tui::spawn_sized(&here, &["attach", "lo:p"], 30, 100);
    tui.wait_for("· connected");
    tui.wait_for("Noted.");
    // The ssh client dies: the TUI reconnects through a new one and resumes.
    let client = Command::new("pgrep")
        .args(["-n", "-f", &format!("ssh -p {}", sshd.port)])
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&client.stdout)
        .trim()
        .parse()
        .unwrap();
    kill(pid, libc::SIGKILL);
    there.ok(&["notify", "p", "while you were away"]);
    tui.wait_for("resumed where it left off");
    tui.wait_for("while you were away");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    there.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pod_picker_groups_other_machines_pods_under_their_names_and_attaches_to_one() {
    let m = Machines::new();
    let there_script = m.there.script("s.jsonl", &[json!({"text": "Over on h1."})]);
    m.there.start_scripted("far", &there_script);
    m.there.ok(&["send", "far", "hello"]);
    let here_script = m.here.script("s.jsonl", &[json!({"text": "Right here."})]);
    m.here.start_scripted("near", &here_script);
    let env = m.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut tui = Tui::spawn_with(&m.here, &["attach", "near"], 30, 100, &env);
    tui.wait_for("· connected");
    tui.send(keys::CTRL_P);
    tui.wait_for("── h1");
    tui.wait_for("far");
    tui.wait_for("unreachable: ssh: Could not resolve hostname nowhere");
    tui.wait_for("unreachable: hung: no answer within 2s");
    let screen = tui.screen();
    let local = screen.find("near").expect("this machine's pod is listed");
    let remote = screen.find("── h1").expect("h1's heading");
    assert!(local < remote, "this machine first:\n{screen}");
    // Down from `near` to h1's `far`, and in.
    tui.send("j");
    tui.send(keys::ENTER);
    tui.wait_for("Over on h1.");
    tui.wait_for("· connected");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    m.here.ok(&["stop", "near"]);
    m.there.ok(&["stop", "far"]);
}
