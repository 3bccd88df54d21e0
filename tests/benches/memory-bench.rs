//! What a long-lived pod costs as its log grows (docs/testing.md §Benchmarks): a pod whose log
//! holds many entries over many segments, written straight into its files in the log format
//! (each segment starts with a `segment_start` compacted from the one before, then finished
//! turns), so a million entries take seconds rather than hours of turns. For each shape it
//! prints:
//!
//! - restore: `seedpod start` of the stopped pod until it is ready (process start, reading and
//!   folding the active segment, listening);
//! - the pod's RSS right after restore, and after the attaches below;
//! - attach's first screen: connect in attach mode until `snapshot_end` (median of 5);
//! - one `earlier` page from the segment before the active one (what the TUI asks when a
//!   person scrolls past the top);
//! - `seedpod history NAME --all` over every segment, to /dev/null.
//!
//! The shapes: 100,000 entries in one segment; 2,000 in one segment; 1,000,000 over 500
//! segments of 2,000 (the same active segment as the second, so the difference between those
//! two is what the 499 earlier segments cost). `--entries N --segments S` runs one shape.
//! `--archive` archives the earlier segments (`seedpod archive`) before restoring.
//!
//! Run: `cargo bench -p seedpod-e2e --bench memory-bench`. Prints numbers; asserts none except
//! that what it measured worked (the pod restored, the snapshot and the page arrived).

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use seedpod_e2e::{TestHome, rss_kb};
use seedpod_protocol::{
    CallId, ClientMode, Entry, EntryKind, EntrySeq, FinishReason, Method, ModelItem, Origin,
    PodName, RunEndReason, RunTrigger, Segment, ServerMsg, Usage,
};
use serde_json::json;

const USAGE: &str = "memory-bench [--entries N --segments S] [--archive]";
/// Entries of one finished turn as `turn` writes it.
const TURN_ENTRIES: u64 = 8;
/// Characters of each turn's tool result: a small file read.
const RESULT_CHARS: usize = 600;
const ATTACHES: usize = 5;

struct Shape {
    entries: u64,
    segments: u64,
}

fn options() -> Result<(Vec<Shape>, bool), String> {
    let (mut entries, mut segments, mut archive) = (None, None, false);
    let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
    while let Some(flag) = args.next() {
        if flag == "--archive" {
            archive = true;
            continue;
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = value
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{flag} takes a positive number, not {value:?}"))?;
        match flag.as_str() {
            "--entries" => entries = Some(number),
            "--segments" => segments = Some(number),
            other => return Err(format!("unknown flag {other:?}\n{USAGE}")),
        }
    }
    let shapes = match (entries, segments) {
        (None, None) => vec![
            Shape {
                entries: 100_000,
                segments: 1,
            },
            Shape {
                entries: 2_000,
                segments: 1,
            },
            Shape {
                entries: 1_000_000,
                segments: 500,
            },
        ],
        (entries, segments) => vec![Shape {
            entries: entries.unwrap_or(100_000),
            segments: segments.unwrap_or(1),
        }],
    };
    Ok((shapes, archive))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (shapes, archive) = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    for shape in shapes {
        measure(&shape, archive).await;
    }
}

async fn measure(shape: &Shape, archive: bool) {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("m", &script);
    sb.ok(&["stop", "m"]);
    let started = Instant::now();
    let bytes = build_log(&sb, shape);
    println!(
        "\n{} entries over {} segment(s): {:.1} MB of log written in {}",
        shape.entries,
        shape.segments,
        bytes as f64 / 1e6,
        ms(started.elapsed())
    );
    if archive && shape.segments > 1 {
        let started = Instant::now();
        sb.ok(&["archive", "m"]);
        println!(
            "  archive of {} earlier segments: {} ({:.1} MB on disk after)",
            shape.segments - 1,
            ms(started.elapsed()),
            dir_bytes(&sb.home.pod_dir(&pod_name()).join("segments")) as f64 / 1e6
        );
    }

    let started = Instant::now();
    sb.start_scripted("m", &script);
    let restore = started.elapsed();
    let pid = sb.pid("m").await;
    println!("  restore (start until ready): {}", ms(restore));
    println!("  RSS after restore: {} kB", rss_kb(pid));

    let mut times = Vec::new();
    for _ in 0..ATTACHES {
        let started = Instant::now();
        let mut attach = sb.connect("m", ClientMode::Attach).await;
        let mut entries = 0;
        loop {
            match attach.recv().await.expect("frame").expect("open") {
                ServerMsg::SnapshotEntries { entries: batch } => entries += batch.len(),
                ServerMsg::SnapshotEnd { .. } => break,
                _ => {}
            }
        }
        times.push(started.elapsed());
        assert!(entries > 0, "the snapshot carried no entries");
    }
    times.sort();
    println!(
        "  attach to snapshot_end: median {} max {}",
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );

    let mut conn = sb.connect("m", ClientMode::Control).await;
    let active = match conn.call(Method::Status).await.expect("status") {
        ServerMsg::StatusReply { status, .. } => status.segment_id,
        other => panic!("unexpected status reply {other:?}"),
    };
    let started = Instant::now();
    let page = conn
        .call(Method::Earlier {
            segment_id: active,
            before_seq: EntrySeq::FIRST,
        })
        .await
        .expect("earlier");
    let paged = started.elapsed();
    match page {
        ServerMsg::Earlier { entries, .. } => println!(
            "  one earlier page ({} entries): {}",
            entries.len(),
            ms(paged)
        ),
        other => panic!("unexpected earlier reply {other:?}"),
    }
    println!(
        "  RSS after {ATTACHES} attaches and a page: {} kB",
        rss_kb(pid)
    );

    let started = Instant::now();
    let out = sb
        .cmd()
        .args(["history", "m", "--all", "--json"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run seedpod history");
    assert!(out.success(), "history --all failed");
    println!(
        "  history --all --json to /dev/null: {}",
        ms(started.elapsed())
    );
    sb.ok(&["stop", "m"]);
}

fn pod_name() -> PodName {
    PodName::new("m".to_owned()).expect("a valid name")
}

/// Replace pod `m`'s log with `shape`: the created segment's start is the template of every
/// segment's; returns the bytes written.
fn build_log(sb: &TestHome, shape: &Shape) -> u64 {
    let dir = sb.home.pod_dir(&pod_name());
    let mut meta = seedpod_store::load_meta(&dir)
        .expect("read pod.json")
        .expect("the pod exists");
    let first = seedpod_store::segment_path(&dir, &meta.active_segment);
    let text = std::fs::read_to_string(&first).expect("read the first segment");
    let start: Entry =
        serde_json::from_str(text.lines().next().expect("a first line")).expect("the first entry");
    let EntryKind::SegmentStart(template) = start.kind else {
        panic!("the first entry is not a segment_start")
    };
    std::fs::remove_file(&first).expect("remove the created segment");
    let per_segment = shape.entries / shape.segments;
    let mut ids = Vec::new();
    let mut bytes = 0;
    let mut ts = start.ts;
    for n in 0..shape.segments {
        let id = seedpod_store::new_segment_id();
        let mut start = template.clone();
        start.segment_id = id.clone();
        start.origin = match ids.last() {
            Some(previous) => Origin::CompactedFrom {
                segment_id: Clone::clone(previous),
            },
            None => Origin::New,
        };
        let path = seedpod_store::segment_path(&dir, &id);
        let file = std::fs::File::create(&path).expect("create a segment");
        let mut out = std::io::BufWriter::new(file);
        let mut seq = EntrySeq::FIRST;
        let mut line = |kind: EntryKind, seq: &mut EntrySeq, ts: &mut u64| {
            let entry = Entry {
                v: 1,
                seq: *seq,
                ts: *ts,
                kind,
            };
            let mut text = serde_json::to_vec(&entry).expect("encode an entry");
            text.push(b'\n');
            out.write_all(&text).expect("write an entry");
            *seq = seq.next();
            *ts += 1;
            text.len() as u64
        };
        bytes += line(EntryKind::SegmentStart(start), &mut seq, &mut ts);
        let mut turn = n * per_segment;
        while seq.get() + TURN_ENTRIES <= per_segment {
            turn += 1;
            for kind in turn_entries(turn) {
                bytes += line(kind, &mut seq, &mut ts);
            }
        }
        out.flush().expect("flush a segment");
        ids.push(id);
    }
    meta.active_segment = ids.last().expect("at least one segment").clone();
    meta.segments = ids;
    seedpod_store::save_meta(&dir, &meta).expect("write pod.json");
    bytes
}

/// One finished turn: a question, a tool call and its result, an answer.
fn turn_entries(turn: u64) -> [EntryKind; TURN_ENTRIES as usize] {
    let call_id = CallId::new(format!("call_{turn}"));
    let question = format!("question {turn}: what does the file say?");
    [
        EntryKind::RunStart {
            trigger: RunTrigger::User,
        },
        EntryKind::UserInput {
            segments: vec![Segment::text(question.clone())],
            text: question,
            queue_id: None,
        },
        EntryKind::AssistantItem {
            item: ModelItem::ToolCall {
                call_id: call_id.clone(),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"notes/{turn}.md\"}}"),
            },
        },
        EntryKind::ToolResult {
            call_id,
            name: "read_file".into(),
            content: format!("line of notes {turn} ").repeat(RESULT_CHARS / 20),
            is_error: false,
            meta: Default::default(),
        },
        EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: format!("Answer {turn}: the file holds notes, a line of **markdown**."),
            },
        },
        EntryKind::Usage(Usage {
            input_tokens: 1_000,
            output_tokens: 40,
            ..Usage::default()
        }),
        EntryKind::TurnEnd {
            iteration: 1,
            finish: FinishReason::Stop,
        },
        EntryKind::RunEnd {
            reason: RunEndReason::Completed,
            message: None,
        },
    ]
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
