//! What context management costs per request on a long segment: the fill estimate, the pruning
//! plan and the compaction check `prepare` runs before every request, at 10,000 committed items
//! (the budget is under 1 ms: docs/testing.md §Benchmarks), and for comparison the request body
//! that follows them.
//!
//! `cargo run --release -p seedpod-pod --example context_bench [ITEMS]`

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use seedpod_engine::{Context, OpenAiConfig, OpenAiProvider, Provider};
use seedpod_pod::context::{ContextSettings, compact, estimate, prune};
use seedpod_protocol::{
    CallId, ContextWindow, Entry, EntryKind, EntrySeq, ModelConfig, ModelItem, Origin,
    ProviderKind, SegmentId, SegmentStart, Usage, WindowSource,
};
use seedpod_store::SegmentState;

const DEFAULT_ITEMS: usize = 10_000;
const ROUNDS: usize = 200;

fn item(i: usize) -> EntryKind {
    let call_id = format!("call_{}", i / 4);
    match i % 4 {
        0 => EntryKind::UserInput {
            segments: Vec::new(),
            text: format!("please look at src/module_{i}.rs and fix the failing test"),
            queue_id: None,
        },
        1 => EntryKind::AssistantItem {
            item: ModelItem::ToolCall {
                call_id: CallId::new(call_id),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/module_{i}.rs\"}}"),
            },
        },
        2 => EntryKind::ToolResult {
            call_id: CallId::new(call_id),
            name: "read_file".into(),
            // Every tenth result is large, as real file reads are.
            content: "fn main() { println!(\"hello\"); }\n".repeat(if i % 40 == 2 {
                300
            } else {
                8
            }),
            is_error: false,
            meta: Default::default(),
        },
        _ => EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: "Fixed: the test expected the old error message.".into(),
            },
        },
    }
}

fn state(items: usize, window: u64) -> SegmentState {
    let start = SegmentStart {
        date: None,
        segment_id: SegmentId::new("bench"),
        system_prompt: "You are a pod.".repeat(200),
        model: ModelConfig::new(ProviderKind::Openai, "gpt-4o"),
        tools: Vec::new(),
        seed: Vec::new(),
        standing_approvals: Vec::new(),
        origin: Origin::New,
        context_window: Some(ContextWindow {
            tokens: window,
            source: WindowSource::Config,
        }),
        compaction: None,
        tasks: Vec::new(),
        totals: None,
    };
    let entry = |seq: u64, kind| Entry {
        v: 1,
        seq: EntrySeq::new(seq),
        ts: 0,
        kind,
    };
    let mut state = SegmentState::start(&entry(0, EntryKind::SegmentStart(start))).expect("start");
    let mut seq = 1;
    for i in 0..items {
        if i + 1 == items {
            // The provider's count for the last request: the estimate starts from it.
            state
                .apply(&entry(
                    seq,
                    EntryKind::Usage(Usage {
                        input_tokens: 1_000_000,
                        ..Usage::default()
                    }),
                ))
                .expect("usage");
            seq += 1;
        }
        state.apply(&entry(seq, item(i))).expect("fold");
        seq += 1;
    }
    state
}

fn time(mut f: impl FnMut()) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    samples.sort();
    (samples[ROUNDS / 2], samples[ROUNDS * 99 / 100])
}

fn main() {
    let items: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(DEFAULT_ITEMS);
    let settings = ContextSettings::default();
    // A window the segment nearly fills: pruning has work to plan, compaction is due.
    let window = 2_000_000;
    let mut state = state(items, window);
    let (median, p99) = time(|| {
        let fill = estimate::fill_tokens(&state);
        std::hint::black_box(prune::plan(&state.history, fill, window, &settings));
    });
    println!(
        "{items} items: estimate + a pruning step's plan (once per step)  median {median:?}  p99 {p99:?}"
    );
    // Steady state: the step is committed; every later request plans again and finds nothing.
    let fill = estimate::fill_tokens(&state);
    for trim in prune::plan(&state.history, fill, window, &settings) {
        if let ModelItem::ToolResult { content, .. } = &mut state.history[trim.index as usize] {
            *content = trim.content;
        }
    }
    // As the committed step does, the provider's old count no longer applies.
    state.usage_mark = None;
    let fill = estimate::fill_tokens(&state);
    assert!(
        prune::plan(&state.history, fill, window, &settings).is_empty(),
        "a second step right after the first"
    );
    // A window the trimmed segment fills to 40%: between the soft and hard ratios, so the
    // plan walks every result and finds nothing to do, as on a busy pod's every request.
    let steady = fill * 5 / 2;
    println!("  (fill {fill} tokens after the step; measured against a {steady}-token window)");
    let (median, p99) = time(|| {
        let fill = estimate::fill_tokens(&state);
        let trims = prune::plan(&state.history, fill, steady, &settings);
        assert!(trims.is_empty());
        std::hint::black_box(trims);
    });
    println!(
        "{items} items: estimate + pruning plan (every request)  median {median:?}  p99 {p99:?}"
    );
    let (median, p99) = time(|| {
        let no_mark = SegmentState {
            usage_mark: None,
            ..state.clone()
        };
        std::hint::black_box(estimate::fill_tokens(&no_mark));
    });
    println!(
        "{items} items: whole-request estimate (clone included) median {median:?}  p99 {p99:?}"
    );
    let (median, p99) = time(|| {
        std::hint::black_box(compact::plan(
            &state.history,
            window,
            compact::Depth::Normal,
            None,
        ));
    });
    println!("{items} items: compaction plan (only when due)  median {median:?}  p99 {p99:?}");
    let provider = OpenAiProvider::new(OpenAiConfig::default()).expect("provider");
    let (median, p99) = time(|| {
        std::hint::black_box(provider.request_body(&Context {
            model: &state.model,
            system_prompt: &state.system_prompt,
            tools: &state.tools,
            items: &state.history,
        }));
    });
    println!("{items} items: request body, for comparison   median {median:?}  p99 {p99:?}");
}
