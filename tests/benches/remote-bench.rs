//! What a pod on another machine costs (docs/testing.md §Benchmarks): `notify` and `send` round
//! trips and the reattach to a 10,000-entry pod, locally and through `seedpod bridge` — over a
//! transport that runs the bridge on this machine (the bridge's own cost, no network), and, when
//! given, over a real ssh (`--ssh "ssh -p 2222 -i KEY -o StrictHostKeyChecking=no"
//! --destination me@127.0.0.1`; the far side's seedpod must use this run's home: pass `--bin` a
//! wrapper that sets SEEDPOD_HOME, which this program prints).
//!
//! Run: `cargo bench -p seedpod-e2e --bench remote-bench` (add `-- --ssh … --destination …` for
//! the real ssh). Prints numbers; asserts none.

use std::time::{Duration, Instant};

use seedpod_client::{Connection, Remote};
use seedpod_e2e::{TestHome, seedpod_bin};
use seedpod_protocol::{ClientMode, Method, PodName, ServerMsg};
use serde_json::json;

const NOTIFY_ROUNDS: usize = 200;
const SEND_ROUNDS: usize = 30;
const SNAPSHOT_ENTRIES: usize = 10_000;
const ATTACHES: usize = 10;

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn p50(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// How a round trip reaches the pod.
enum Via {
    Local,
    Bridge(Remote),
}

impl Via {
    async fn connect(&self, sb: &TestHome, pod: &PodName, mode: ClientMode) -> Connection {
        match self {
            Via::Local => sb.connect(pod.as_str(), mode).await,
            Via::Bridge(remote) => remote
                .connect(pod, "remote-bench", mode, false, true)
                .await
                .expect("connect through the bridge"),
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let sb = TestHome::new();
    let steps: Vec<serde_json::Value> = (0..SEND_ROUNDS * 4)
        .map(|_| json!({"text": "hi"}))
        .collect();
    let script = sb.script("s.jsonl", &steps);
    sb.start_scripted("bench", &script);
    let pod: PodName = "bench".parse().expect("name");

    // The transport: runs the far side's command here, with this sandbox as its home.
    let transport = sb.path().join("transport");
    std::fs::write(
        &transport,
        format!(
            "#!/bin/sh\nwhile [ $# -gt 1 ]; do case \"$1\" in -o) shift 2;; *) shift;; esac; done\n\
             SEEDPOD_HOME={} exec sh -c \"exec $1\"\n",
            sb.path().display()
        ),
    )
    .expect("transport");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&transport, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    let wrapper = sb.path().join("seedpod-here");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nSEEDPOD_HOME={} exec {} \"$@\"\n",
            sb.path().display(),
            seedpod_bin().display()
        ),
    )
    .expect("wrapper");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    println!("far side's seedpod for --bin: {}", wrapper.display());
    let mut ways = vec![
        ("local socket", Via::Local),
        (
            "bridge, local transport",
            Via::Bridge(Remote {
                alias: "here".into(),
                destination: "here".into(),
                ssh: vec![transport.display().to_string()],
                bin: seedpod_bin().display().to_string(),
            }),
        ),
    ];
    if let (Some(ssh), Some(destination)) = (flag("--ssh"), flag("--destination")) {
        ways.push((
            "bridge over real ssh",
            Via::Bridge(Remote {
                alias: destination.clone(),
                destination,
                ssh: ssh.split_whitespace().map(str::to_owned).collect(),
                bin: flag("--bin").unwrap_or_else(|| wrapper.display().to_string()),
            }),
        ));
    }

    for (label, via) in &ways {
        let mut notify = Vec::new();
        for i in 0..NOTIFY_ROUNDS {
            let started = Instant::now();
            let mut conn = via.connect(&sb, &pod, ClientMode::Control).await;
            let reply = conn
                .call(Method::Notify {
                    message: format!("n {i}"),
                    wake: false,
                })
                .await
                .expect("notify");
            assert!(matches!(reply, ServerMsg::Ack { .. }));
            notify.push(started.elapsed());
        }
        println!(
            "{label}: notify round trip (connect+hello+notify+durable ack), p50 {} (n={NOTIFY_ROUNDS})",
            ms(p50(notify))
        );
    }

    // `seedpod send` as a person runs it: a process, its round trip, the scripted answer.
    let mut config = String::from("[remote]\n");
    config.push_str(&format!("ssh = \"{}\"\n", transport.display()));
    config.push_str(&format!(
        "[remote.hosts.here]\nbin = {:?}\n",
        seedpod_bin().display().to_string()
    ));
    sb.user_config(&config);
    for (label, target) in [
        ("local", "bench"),
        ("bridge, local transport", "here:bench"),
    ] {
        let mut times = Vec::new();
        for _ in 0..SEND_ROUNDS {
            let started = Instant::now();
            let out = sb.run(&["send", target, "hello"]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            times.push(started.elapsed());
        }
        println!(
            "{label}: `seedpod send` (process start to answer printed), p50 {} (n={SEND_ROUNDS})",
            ms(p50(times))
        );
    }

    sb.grow("bench", SNAPSHOT_ENTRIES).await;
    for (label, via) in &ways {
        let mut times = Vec::new();
        for _ in 0..ATTACHES {
            let started = Instant::now();
            let mut conn = via.connect(&sb, &pod, ClientMode::Attach).await;
            let mut entries = 0;
            loop {
                match conn.recv().await.expect("frame").expect("open") {
                    ServerMsg::SnapshotEntries { entries: batch } => entries += batch.len(),
                    ServerMsg::SnapshotEnd { .. } => break,
                    _ => {}
                }
            }
            assert!(entries >= SNAPSHOT_ENTRIES);
            times.push(started.elapsed());
        }
        println!(
            "{label}: reattach to {SNAPSHOT_ENTRIES} entries (connect to snapshot_end), p50 {}",
            ms(p50(times))
        );
    }
    sb.ok(&["stop", "bench"]);
}
