//! `seedpod notify` against `tmux display-message` (docs/testing.md §Benchmarks): both are a
//! short-lived client process that connects to a long-lived server on a Unix socket and waits
//! for its answer, so a person scripting either should find notify no slower. Each round runs
//! one of each as a child process, in alternating order so neither always goes first; the
//! rounds run once on the machine as it is and once with busy threads on every core.
//!
//! notify here is `--no-wake`: a woken turn would run in the pod while the next round is
//! timed. The ack is the same durable one (logged and fsynced) either way.
//!
//! Run: `cargo bench -p seedpod-e2e --bench notify-bench` (`-- --rounds N`). For a binary built
//! elsewhere set `SEEDPOD_BIN` (e.g. `SEEDPOD_BIN=target/release/seedpod`). Prints numbers;
//! asserts none. Needs `tmux` on the PATH.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use seedpod_e2e::{TestHome, seedpod_bin};
use serde_json::json;

const ROUNDS: usize = 40;

/// Busy threads in the loaded run: one per core of the machine this was written for, enough
/// that both clients and both servers have to wait for a core.
const BUSY_THREADS: usize = 2;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(ROUNDS);

    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("bench", &script);
    let tmux = Tmux::start(&format!("seedpod-bench-{}", std::process::id()));
    println!("seedpod: {}", seedpod_bin().display());

    for (label, busy) in [("as is", 0), ("loaded", BUSY_THREADS)] {
        let load = Load::start(busy);
        let (mut notify, mut display) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let mut seedpod = sb.cmd();
            seedpod.args(["notify", "bench", "--no-wake"]);
            seedpod.arg(format!("round {round}"));
            let mut tmux_cmd = tmux.display_message();
            if round % 2 == 0 {
                notify.push(time(&mut seedpod));
                display.push(time(&mut tmux_cmd));
            } else {
                display.push(time(&mut tmux_cmd));
                notify.push(time(&mut seedpod));
            }
        }
        drop(load);
        notify.sort();
        display.sort();
        let (n50, t50) = (percentile(&notify, 0.5), percentile(&display, 0.5));
        println!(
            "{label} ({busy} busy threads, loadavg {}), n={rounds}: \
             seedpod notify p50 {} p90 {} | tmux display-message p50 {} p90 {} | \
             p50 ratio notify/tmux {:.2}",
            loadavg(),
            ms(n50),
            ms(percentile(&notify, 0.9)),
            ms(t50),
            ms(percentile(&display, 0.9)),
            n50.as_secs_f64() / t50.as_secs_f64()
        );
    }
}

/// Wall time of one run of `cmd`, spawn to exit; a failed run stops the bench (a number for
/// a command that did not work would mean nothing).
fn time(cmd: &mut Command) -> Duration {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let started = Instant::now();
    let out = cmd.output().expect("run the client");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// A tmux server of our own (its own socket, no configuration file), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(socket: &str) -> Tmux {
        let tmux = Tmux {
            socket: socket.to_owned(),
        };
        let status = tmux
            .command()
            .args(["new-session", "-d"])
            .status()
            .expect("run tmux (this bench needs it on the PATH)");
        assert!(status.success(), "tmux new-session failed: {status}");
        tmux
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.socket, "-f", "/dev/null"]);
        cmd
    }

    fn display_message(&self) -> Command {
        let mut cmd = self.command();
        cmd.args(["display-message", "-p", "hi"]);
        cmd
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

/// Threads that spin until dropped.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(threads: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x: u64 = 1;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The 1-minute load average, to read "as is" numbers by.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}
