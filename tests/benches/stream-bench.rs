//! What streaming costs (docs/testing.md §Benchmarks), against the real binary and a loopback
//! OpenAI-compatible server written here (raw HTTP/1.1, SSE body, close-delimited):
//!
//! 1. Overhead between an SSE event leaving the model server and the matching `text_delta`
//!    arriving at an attached client: the server records when it wrote token `i`, the client
//!    when it read it. Paced one event per millisecond so the number is latency, not queueing.
//!    It includes two loopback hops (HTTP in, the pod socket out), so it is an upper bound on
//!    what the pod itself adds.
//! 2. The pod's memory while it streams a 100,000-token answer as fast as the server can write
//!    it: RSS sampled every 10,000 tokens. Flat growth proportional to the answer (which the pod
//!    keeps, once, in its history) means no quadratic string building.
//!
//! 3. The same latency as 1 while scripts hammer the pod with notifications: `BURST_CLIENTS`
//!    control clients each send `BURST_NOTIFIES` non-waking notifications back to back during
//!    the paced stream. Each is queued durably (fsynced) before its ack; the number shows
//!    whether those fsyncs hold up the deltas, and how many acks per second the pod gives.
//!
//! Run: `cargo bench -p seedpod-e2e --bench stream-bench`. Prints numbers; asserts none.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use seedpod_e2e::TestHome;
use seedpod_protocol::{ClientMode, Method, PodName, Segment, ServerMsg};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const LATENCY_TOKENS: usize = 2_000;
const PACE: Duration = Duration::from_millis(1);
const MEMORY_TOKENS: usize = 100_000;
const MEMORY_SAMPLE_EVERY: usize = 10_000;
const BURST_CLIENTS: usize = 4;
const BURST_NOTIFIES: usize = 250;

/// When the server wrote each paced token.
type SendTimes = Arc<Mutex<Vec<Option<Instant>>>>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let sent: SendTimes = Arc::new(Mutex::new(vec![None; LATENCY_TOKENS]));
    let burst_sent: SendTimes = Arc::new(Mutex::new(vec![None; LATENCY_TOKENS]));
    let pod_pid = Arc::new(Mutex::new(0u32));
    let rss_samples = Arc::new(Mutex::new(Vec::new()));
    {
        let sent = sent.clone();
        let burst_sent = burst_sent.clone();
        let pod_pid = pod_pid.clone();
        let rss_samples = rss_samples.clone();
        tokio::spawn(async move {
            let mut request = 0;
            while let Ok((stream, _)) = listener.accept().await {
                request += 1;
                let plan = if request == 1 {
                    Plan::Paced(sent.clone())
                } else if request == 3 {
                    Plan::Paced(burst_sent.clone())
                } else {
                    let pid = *pod_pid.lock().unwrap_or_else(PoisonError::into_inner);
                    Plan::Flood {
                        pid,
                        samples: rss_samples.clone(),
                    }
                };
                tokio::spawn(answer(stream, plan));
            }
        });
    }

    let sb = TestHome::new();
    let base_url = format!("http://{addr}/v1");
    // This server answers every request with a stream: a context-window probe would take the
    // first one.
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).expect("project config dir");
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n")
        .expect("project config");
    sb.ok(&[
        "start",
        "bench",
        "--provider",
        "openai",
        "--base-url",
        &base_url,
        "--model",
        "bench",
    ]);
    *pod_pid.lock().unwrap_or_else(PoisonError::into_inner) = sb.pid("bench").await;

    // 1. Latency.
    let mut attached = sb.connect("bench", ClientMode::Attach).await;
    wait_snapshot_end(&mut attached).await;
    run(&sb, "latency").await;
    let latencies = delta_latencies(&mut attached, &sent).await;
    report(
        "SSE event written → text_delta read by an attached client",
        &latencies,
    );
    wait_run_end(&mut attached).await;

    // 2. Memory while streaming a 100k-token answer (the attached client keeps reading).
    let pid = sb.pid("bench").await;
    let before = rss_kib(pid);
    let started = Instant::now();
    run(&sb, "flood").await;
    // A client cannot read 100k deltas at the rate the pod forwards them; the pod resyncs it
    // with a snapshot instead of waiting for it (invariant 4), so the run's end may arrive in a
    // snapshot rather than as a live event.
    let mut resyncs = 0;
    while let Some(msg) = attached.recv().await.expect("recv") {
        if seedpod_e2e::is_run_end(&msg).is_some() {
            break;
        }
        if let ServerMsg::SnapshotBegin { state, .. } = &msg {
            resyncs += 1;
            if *state == seedpod_protocol::PodState::Idle {
                break;
            }
        }
    }
    let elapsed = started.elapsed();
    let samples = rss_samples
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    println!(
        "100k-token answer streamed in {:.2} s; pod RSS before {before} KiB; as the server wrote each {MEMORY_SAMPLE_EVERY} tokens: {:?} KiB; after {} KiB; peak (VmHWM) {} KiB",
        elapsed.as_secs_f64(),
        samples,
        rss_kib(pid),
        status_kib(pid, "VmHWM:")
    );
    let answer_bytes: usize = (0..MEMORY_TOKENS).map(|i| format!("w{i} ").len()).sum();
    println!(
        "the attached client was resynced {resyncs} times (it reads slower than the pod streams)"
    );
    println!(
        "(the answer itself is {} KiB of text, kept once in the pod's history)",
        answer_bytes / 1024
    );

    // 3. Latency under a notification burst. A fresh attach: the flood left this one resyncing.
    let mut attached = sb.connect("bench", ClientMode::Attach).await;
    wait_snapshot_end(&mut attached).await;
    run(&sb, "burst").await;
    let started = Instant::now();
    let senders: Vec<_> = (0..BURST_CLIENTS)
        .map(|client| {
            let home = sb.home.clone();
            tokio::spawn(async move {
                let pod = PodName::new("bench").expect("a valid name");
                let mut conn =
                    seedpod_client::Connection::connect(&home, &pod, "burst", ClientMode::Control)
                        .await
                        .expect("connect");
                for n in 0..BURST_NOTIFIES {
                    conn.call(Method::Notify {
                        message: format!("build {client}.{n} finished"),
                        wake: false,
                    })
                    .await
                    .expect("notify acknowledged");
                }
            })
        })
        .collect();
    let latencies = delta_latencies(&mut attached, &burst_sent).await;
    for sender in senders {
        sender.await.expect("burst client");
    }
    let acks = BURST_CLIENTS * BURST_NOTIFIES;
    report(
        &format!("the same, while {BURST_CLIENTS} clients send {acks} notifications"),
        &latencies,
    );
    println!(
        "{acks} durable notification acks in {:.2} s ({:.0}/s)",
        started.elapsed().as_secs_f64(),
        acks as f64 / started.elapsed().as_secs_f64()
    );
    wait_run_end(&mut attached).await;
}

/// When each paced token's `text_delta` arrived, against when the server wrote it.
async fn delta_latencies(
    attached: &mut seedpod_client::Connection,
    sent: &SendTimes,
) -> Vec<Duration> {
    let mut received: Vec<Option<Instant>> = vec![None; LATENCY_TOKENS];
    let mut pending = String::new();
    while received.iter().any(Option::is_none) {
        let Some(msg) = attached.recv().await.expect("recv") else {
            panic!("pod closed the connection");
        };
        match msg {
            ServerMsg::TextDelta { text, .. } => {
                let now = Instant::now();
                pending.push_str(&text);
                // Tokens are `t<i> `; a delta may hold several, or part of one.
                while let Some(end) = pending.find(' ') {
                    let token: String = pending.drain(..=end).collect();
                    if let Some(i) = token
                        .trim()
                        .strip_prefix('t')
                        .and_then(|n| n.parse::<usize>().ok())
                        && i < LATENCY_TOKENS
                    {
                        received[i] = Some(now);
                    }
                }
            }
            ServerMsg::Committed { .. } if received.iter().all(Option::is_some) => break,
            _ => {}
        }
    }
    let sent = sent.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let mut latencies: Vec<Duration> = sent
        .iter()
        .zip(&received)
        .filter_map(|(s, r)| Some(r.as_ref()?.duration_since(*s.as_ref()?)))
        .collect();
    latencies.sort();
    latencies
}

fn report(what: &str, latencies: &[Duration]) {
    println!(
        "{what}, n={}: p50 {} p90 {} p99 {} max {}",
        latencies.len(),
        ms(pct(latencies, 0.5)),
        ms(pct(latencies, 0.9)),
        ms(pct(latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default())
    );
}

enum Plan {
    /// Tokens `t0 `… one per `PACE`, each send time recorded.
    Paced(SendTimes),
    /// `MEMORY_TOKENS` tokens as fast as possible, sampling the pod's RSS.
    Flood {
        pid: u32,
        samples: Arc<Mutex<Vec<u64>>>,
    },
}

async fn answer(mut stream: TcpStream, plan: Plan) {
    read_request(&mut stream).await;
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    match plan {
        Plan::Paced(sent) => {
            for i in 0..LATENCY_TOKENS {
                let event = delta(&format!("t{i} "));
                if stream.write_all(event.as_bytes()).await.is_err() {
                    return;
                }
                sent.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(Instant::now());
                tokio::time::sleep(PACE).await;
            }
        }
        Plan::Flood { pid, samples } => {
            let mut batch = String::new();
            for i in 0..MEMORY_TOKENS {
                batch.push_str(&delta(&format!("w{i} ")));
                if (i + 1) % 100 == 0 {
                    if stream.write_all(batch.as_bytes()).await.is_err() {
                        return;
                    }
                    batch.clear();
                }
                if (i + 1) % MEMORY_SAMPLE_EVERY == 0 {
                    samples
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(rss_kib(pid));
                }
            }
        }
    }
    let end = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":10,\"total_tokens\":20}}\n\n",
        "data: [DONE]\n\n"
    );
    let _ = stream.write_all(end.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn delta(text: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}}}}]}}\n\n",
        serde_json::Value::String(text.to_owned())
    )
}

/// Read the head and a `content-length` body; the bench does not need their content.
async fn read_request(stream: &mut TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let Ok(n) = stream.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= head_end + 4 + length {
                return;
            }
        }
    }
}

async fn run(sb: &TestHome, text: &str) {
    let mut conn = sb.connect("bench", ClientMode::Control).await;
    conn.call(Method::Run {
        segments: vec![Segment::text(text)],
    })
    .await
    .expect("run");
}

async fn wait_snapshot_end(conn: &mut seedpod_client::Connection) {
    while let Some(msg) = conn.recv().await.expect("recv") {
        if matches!(msg, ServerMsg::SnapshotEnd { .. }) {
            return;
        }
    }
    panic!("no snapshot_end");
}

async fn wait_run_end(conn: &mut seedpod_client::Connection) {
    while let Some(msg) = conn.recv().await.expect("recv") {
        if seedpod_e2e::is_run_end(&msg).is_some() {
            return;
        }
    }
    panic!("no run_end");
}

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}
