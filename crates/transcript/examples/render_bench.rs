//! Rendering cost with a 10,000-item transcript at 120x40.
//!
//! Run: `cargo run --release -p seedpod-transcript --example render_bench`
//!
//! Prints: reattach time (applying the snapshot frames), the first frame from a cold cache,
//! frame times while following the tail (steady, and with one streamed delta per frame),
//! a frame after appending one cell, after toggling a cell (a keystroke), paging up, and the
//! process RSS before and after. Numbers are printed, never asserted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use seedpod_protocol::{
    CallId, Entry, EntryKind, EntrySeq, EventSeq, FinishReason, ModelConfig, ModelItem, Origin,
    PodState, ProviderKind, RunEndReason, RunTrigger, Segment, SegmentId, SegmentStart, ServerMsg,
    SystemItem, Usage,
};
use seedpod_transcript::render::preload_highlighting;
use seedpod_transcript::{Theme, Transcript, TranscriptView, ViewState};

/// Counts live heap bytes, so the transcript's own memory can be told apart from what the
/// allocator keeps after the snapshot frames are freed (which RSS cannot).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_kib() -> usize {
    LIVE.load(Ordering::Relaxed) / 1024
}

const CELLS: usize = 10_000;
const FRAMES: usize = 500;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

fn main() {
    let rss_start = rss_kib();
    preload_highlighting();
    let rss_grammars = rss_kib();
    let heap_before = live_kib();
    let (frames, text_bytes) = snapshot_frames(CELLS);
    let frame_count = frames.len();

    let started = Instant::now();
    let mut transcript = Transcript::new();
    for frame in &frames {
        transcript.apply(frame);
    }
    let apply_time = started.elapsed();
    drop(frames);
    let heap_model = live_kib().saturating_sub(heap_before);
    let rss_model = rss_kib();

    let theme = Theme::colored();
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test backend");
    let mut state = ViewState::new();
    let cold = draw(&mut terminal, &transcript, &theme, &mut state);

    let steady = sample(FRAMES, || {
        draw(&mut terminal, &transcript, &theme, &mut state)
    });

    let mut seq = 1_000_000;
    transcript.apply(&ServerMsg::State {
        seq: EventSeq::new(seq),
        state: PodState::Running,
    });
    let streaming = sample(FRAMES, || {
        seq += 1;
        transcript.apply(&ServerMsg::TextDelta {
            seq: EventSeq::new(seq),
            text: "more **streamed** words, ".into(),
        });
        draw(&mut terminal, &transcript, &theme, &mut state)
    });

    let mut entry_seq = 2_000_000;
    let append = sample(200, || {
        seq += 1;
        entry_seq += 1;
        transcript.apply(&ServerMsg::Committed {
            seq: EventSeq::new(seq),
            entry: entry(entry_seq, user_text(entry_seq as usize)),
        });
        draw(&mut terminal, &transcript, &theme, &mut state)
    });

    let toggleable = state.visible_cells().find(|i| transcript.is_toggleable(*i));
    let toggle = sample(200, || {
        if let Some(index) = toggleable {
            transcript.toggle(index);
        }
        draw(&mut terminal, &transcript, &theme, &mut state)
    });

    let page_up = sample(200, || {
        state.page_up();
        draw(&mut terminal, &transcript, &theme, &mut state)
    });
    let rss_end = rss_kib();
    let heap_end = live_kib().saturating_sub(heap_before);

    println!(
        "transcript: {} cells, {} KiB of text",
        transcript.cells().len(),
        text_bytes / 1024
    );
    println!(
        "reattach (apply {frame_count} snapshot frames):  {}",
        ms(apply_time)
    );
    println!("first frame, cold cache:            {}", ms(cold));
    println!(
        "reattach to first full frame:       {}",
        ms(apply_time + cold)
    );
    report("frame following the tail", &steady);
    report("frame with one streamed delta", &streaming);
    report("frame after appending one cell", &append);
    report("frame after toggling a cell", &toggle);
    report("frame after page up", &page_up);
    println!(
        "lines in the render cache:          {}",
        state.cached_lines()
    );
    println!(
        "heap held by the transcript:        {heap_model} KiB ({:.1}x its log text)",
        heap_model as f64 / (text_bytes / 1024).max(1) as f64
    );
    println!("heap after all frames (with cache): {heap_end} KiB");
    match (rss_start, rss_grammars, rss_model, rss_end) {
        (Some(a), Some(b), Some(c), Some(d)) => {
            println!("RSS at start:                       {a} KiB");
            println!("RSS with grammars loaded:           {b} KiB");
            println!(
                "RSS with the transcript built:      {c} KiB (+{} KiB)",
                c.saturating_sub(b)
            );
            println!(
                "RSS after all frames:               {d} KiB (+{} KiB)",
                d.saturating_sub(c)
            );
        }
        _ => println!("RSS: /proc/self/status is not available here"),
    }
}

fn draw(
    terminal: &mut Terminal<TestBackend>,
    transcript: &Transcript,
    theme: &Theme,
    state: &mut ViewState,
) -> Duration {
    let started = Instant::now();
    terminal
        .draw(|frame| {
            let view = TranscriptView { transcript, theme };
            frame.render_stateful_widget(view, frame.area(), state);
        })
        .expect("draw");
    started.elapsed()
}

fn sample(n: usize, mut frame: impl FnMut() -> Duration) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..n).map(|_| frame()).collect();
    times.sort_unstable();
    times
}

fn report(what: &str, sorted: &[Duration]) {
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    println!(
        "{:<36}p50 {}  p99 {}  max {}",
        format!("{what}:"),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(at(1.0))
    );
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn entry(seq: u64, kind: EntryKind) -> Entry {
    Entry {
        v: 1,
        seq: EntrySeq::new(seq),
        ts: 1_763_848_000_000 + seq * 50,
        kind,
    }
}

fn user_text(n: usize) -> EntryKind {
    let text = format!("Question {n}: what does module {n} do, and can you check @src/m{n}.rs?");
    EntryKind::UserInput {
        segments: vec![
            Segment::text(text.clone()),
            Segment::FileRef {
                path: format!("src/m{n}.rs"),
            },
        ],
        text,
        queue_id: None,
    }
}

fn answer(n: usize) -> String {
    format!(
        "## Module {n}\n\nIt **parses** frames and *folds* them into cells; see `apply` and \
         [the docs](https://example.com/{n}).\n\n- first point about {n}\n- second point, \
         long enough to wrap at a narrow width for sure\n\n```rust\nfn module_{n}() -> u64 {{\n    \
         {n}\n}}\n```\n\n| key | value |\n|-----|-------|\n| n | {n} |\n"
    )
}

/// Snapshot frames for a pod whose segment holds `cells` visible cells of mixed kinds (and
/// the bookkeeping entries between them), in batches of 256 like the pod sends.
fn snapshot_frames(cells: usize) -> (Vec<ServerMsg>, usize) {
    let mut entries = vec![entry(
        0,
        EntryKind::SegmentStart(SegmentStart {
            date: None,
            context_window: None,
            compaction: None,
            segment_id: SegmentId::new("0193f0c2"),
            system_prompt: "You are the bench.".into(),
            model: ModelConfig::new(ProviderKind::Scripted, "script"),
            tools: vec![],
            seed: vec![],
            standing_approvals: Vec::new(),
            origin: Origin::New,
            tasks: Vec::new(),
            totals: None,
        }),
    )];
    let mut made = 1;
    let mut n = 0;
    let mut push = |kind: EntryKind, visible: bool, made: &mut usize| {
        let seq = entries.len() as u64;
        entries.push(entry(seq, kind));
        if visible {
            *made += 1;
        }
    };
    while made < cells {
        n += 1;
        push(
            EntryKind::RunStart {
                trigger: RunTrigger::User,
            },
            false,
            &mut made,
        );
        push(user_text(n), true, &mut made);
        push(
            EntryKind::AssistantItem {
                item: ModelItem::Reasoning {
                    text: format!("I should read src/m{n}.rs first.\nThen explain it."),
                    signature: None,
                    responses: None,
                },
            },
            true,
            &mut made,
        );
        let call_id = format!("call_{n}");
        push(
            EntryKind::AssistantItem {
                item: ModelItem::ToolCall {
                    call_id: CallId::new(call_id.clone()),
                    name: "read_file".into(),
                    arguments: format!(r#"{{"path":"src/m{n}.rs"}}"#),
                },
            },
            true,
            &mut made,
        );
        let output: Vec<String> = (0..30)
            .map(|i| format!("{i:>3} | let x{i} = {n};"))
            .collect();
        push(
            EntryKind::ToolResult {
                call_id: CallId::new(call_id),
                name: "read_file".into(),
                content: output.join("\n"),
                is_error: n % 7 == 0,
                meta: Default::default(),
            },
            false,
            &mut made,
        );
        push(
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { text: answer(n) },
            },
            true,
            &mut made,
        );
        if n % 5 == 0 {
            push(
                EntryKind::SystemItem {
                    item: SystemItem::Notification {
                        message: format!("build {n} finished"),
                        body: format!("[notification] build {n} finished"),
                    },
                    queue_id: None,
                },
                true,
                &mut made,
            );
        }
        push(
            EntryKind::Usage(Usage {
                input_tokens: 1_000 + n as u64,
                output_tokens: 200,
                cache_read_tokens: 0,
                cache_creation_tokens: 0,
            }),
            false,
            &mut made,
        );
        push(
            EntryKind::TurnEnd {
                iteration: 1,
                finish: FinishReason::Stop,
            },
            false,
            &mut made,
        );
        push(
            EntryKind::RunEnd {
                reason: RunEndReason::Completed,
                message: None,
            },
            true,
            &mut made,
        );
    }
    let text_bytes = entries
        .iter()
        .map(|e| serde_json::to_string(e).map_or(0, |s| s.len()))
        .sum();
    let mut frames = vec![ServerMsg::SnapshotBegin {
        context: Default::default(),
        seq: EventSeq::new(10),
        state: PodState::Idle,
        greeting: "bench".into(),
        segment_id: SegmentId::new("0193f0c2"),
        entries: entries.len() as u64,
        message_cap: None,
    }];
    for batch in entries.chunks(256) {
        frames.push(ServerMsg::SnapshotEntries {
            entries: batch.to_vec(),
        });
    }
    frames.push(ServerMsg::InFlight {
        text: String::new(),
        thinking: String::new(),
        tool_calls: vec![],
        queue: vec![],
    });
    frames.push(ServerMsg::SnapshotEnd {
        seq: EventSeq::new(10),
    });
    (frames, text_bytes)
}
