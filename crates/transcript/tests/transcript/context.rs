//! Keeping the context inside its window, as the transcript shows it: the fill gauge from the
//! snapshot and live `context_fill` events, the `compacting` state with its clock, the
//! compaction cell (live and in a snapshot, folded and opened), and the notes for pruning steps
//! and a learned window.

use std::time::{Duration, Instant};

use crate::support::*;
use seedpod_protocol::{
    CallId, CompactionTrigger, ContextFill, ContextWindow, EntryKind, EventSeq, FillBasis,
    ModelConfig, Origin, PodState, ProviderKind, SegmentId, SegmentStart, ServerMsg,
    ToolResultTrim, TrimMode, WindowSource,
};
use seedpod_transcript::render::status_line_at;
use seedpod_transcript::{CellKind, ConnectionState, PodView, Theme, Transcript, cell_lines};

fn compacted_start(segment_id: &str, from: &str, trigger: CompactionTrigger) -> EntryKind {
    EntryKind::SegmentStart(SegmentStart {
        date: None,
        segment_id: SegmentId::new(segment_id),
        system_prompt: "You are demo.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin: Origin::CompactedFrom {
            segment_id: SegmentId::new(from),
        },
        context_window: None,
        compaction: Some(compaction_record(trigger, None)),
        tasks: Vec::new(),
        totals: None,
    })
}

/// The server's count of the last request (the gauge without `~`).
fn fill(tokens: u64, window: Option<u64>) -> ContextFill {
    ContextFill {
        tokens,
        window,
        source: window.map(|_| WindowSource::Config),
        basis: FillBasis::LastRequest,
    }
}

fn line(view: &PodView, width: u16) -> String {
    status_line_at(
        view,
        &ConnectionState::Connected,
        width,
        &Theme::plain(),
        Instant::now(),
    )
    .to_string()
}

#[test]
fn the_gauge_comes_from_the_snapshot_and_follows_live_events() {
    let mut t = Transcript::new();
    let ServerMsg::SnapshotBegin {
        seq,
        state,
        greeting,
        segment_id,
        entries,
        ..
    } = snapshot_begin(4, PodState::Idle)
    else {
        unreachable!()
    };
    t.apply(&ServerMsg::SnapshotBegin {
        seq,
        state,
        greeting,
        segment_id,
        entries,
        context: fill(9_920, Some(16_000)),
        message_cap: None,
    });
    t.apply(&ServerMsg::SnapshotEnd {
        seq: EventSeq::new(4),
    });
    assert_eq!(t.status().context, fill(9_920, Some(16_000)));
    assert!(line(t.status(), 80).contains("ctx 62% of 16k"));

    let changed = t.apply(&ServerMsg::ContextFill {
        seq: EventSeq::new(5),
        context: fill(13_000, Some(16_000)),
    });
    assert!(changed);
    assert!(line(t.status(), 80).contains("ctx 81% of 16k"));
    // The same fill again is nothing new; an old seq is a duplicate.
    assert!(!t.apply(&ServerMsg::ContextFill {
        seq: EventSeq::new(6),
        context: fill(13_000, Some(16_000)),
    }));
    assert!(!t.apply(&ServerMsg::ContextFill {
        seq: EventSeq::new(6),
        context: fill(1, None),
    }));
}

#[test]
fn the_gauge_reads_the_same_at_every_width_and_warns_from_80_percent() {
    let now = Instant::now();
    let mut view = PodView {
        name: "demo".into(),
        state: PodState::Running,
        running_since: now.checked_sub(Duration::from_secs(12)),
        provider: "openai".into(),
        model: "gpt-5".into(),
        tokens_in: 48_000,
        tokens_out: 2_100,
        queue: vec![queued_run(1, "next")],
        context: fill(9_920, Some(16_000)),
        ..PodView::default()
    };
    let mut out = String::new();
    for (label, context) in [
        ("62%", fill(9_920, Some(16_000))),
        ("85%", fill(13_600, Some(16_000))),
        ("unknown window", fill(5_200, None)),
    ] {
        view.context = context;
        out.push_str(&format!("── {label}\n"));
        for width in [30u16, 40, 60, 80, 120] {
            let text = status_line_at(
                &view,
                &ConnectionState::Connected,
                width,
                &Theme::plain(),
                now,
            );
            assert!(text.width() <= usize::from(width));
            out.push_str(&format!(
                "{:<w$}|\n",
                text.to_string(),
                w = usize::from(width)
            ));
        }
    }
    insta::assert_snapshot!("gauge", out);

    let colored = |context| {
        let view = PodView {
            context,
            ..view.clone()
        };
        let line = status_line_at(
            &view,
            &ConnectionState::Connected,
            120,
            &Theme::colored(),
            now,
        );
        let span = line
            .spans
            .iter()
            .find(|s| s.content.starts_with("ctx "))
            .cloned()
            .expect("a gauge");
        span.style
    };
    let warn = Theme::colored().style(seedpod_transcript::Role::Warn);
    let dim = Theme::colored().style(seedpod_transcript::Role::Dim);
    assert_eq!(colored(fill(12_799, Some(16_000))), dim, "79%");
    assert_eq!(colored(fill(12_800, Some(16_000))), warn, "80%");
    assert_eq!(colored(fill(17_000, Some(16_000))), warn, "past the window");
}

#[test]
fn a_full_context_outlasts_the_model_tokens_and_queue_when_narrow() {
    let view = PodView {
        name: "demo".into(),
        provider: "openai".into(),
        model: "gpt-5".into(),
        tokens_in: 48_000,
        tokens_out: 2_100,
        queue: vec![queued_run(1, "next")],
        context: fill(15_000, Some(16_000)),
        ..PodView::default()
    };
    assert_eq!(line(&view, 35), "demo · idle · ctx 93% of 16k");
    let calm = PodView {
        context: fill(1_000, Some(16_000)),
        ..view.clone()
    };
    assert_eq!(line(&calm, 35), "demo · idle · 1 queued");
    assert_eq!(
        line(&calm, 60),
        "demo · idle · ctx 6% of 16k · 1 queued · connected"
    );
    // A pod that does not say how full it is shows no gauge.
    let silent = PodView {
        context: ContextFill::default(),
        ..view
    };
    assert!(!line(&silent, 200).contains("ctx"));
}

#[test]
fn compacting_has_a_clock_and_a_run_keeps_its_own_through_it() {
    let mut t = attached();
    t.apply(&committed(5, entry(1, run_start())));
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(6),
        state: PodState::Running,
    });
    let started = t.status().running_since.expect("running");
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(7),
        state: PodState::Compacting,
    });
    let since = t.status().compacting_since.expect("compacting");
    assert_eq!(t.status().running_since, Some(started), "the run goes on");
    let later = since + Duration::from_secs(4);
    let text = status_line_at(
        t.status(),
        &ConnectionState::Connected,
        80,
        &Theme::plain(),
        later,
    );
    assert!(text.to_string().contains("compacting 4s"), "{text}");
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(8),
        state: PodState::Running,
    });
    assert_eq!(t.status().running_since, Some(started));
    assert_eq!(t.status().compacting_since, None);

    // Between runs there is no run to time.
    let mut idle = attached();
    idle.apply(&ServerMsg::State {
        seq: EventSeq::new(5),
        state: PodState::Compacting,
    });
    assert!(idle.status().compacting_since.is_some());
    assert_eq!(idle.status().running_since, None);
    idle.apply(&ServerMsg::State {
        seq: EventSeq::new(6),
        state: PodState::Idle,
    });
    assert_eq!(idle.status().compacting_since, None);
}

#[test]
fn a_live_compaction_draws_a_separator_and_a_folded_cell_that_opens_on_the_summary() {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, run_start())),
            committed(6, entry(2, user_text("hello"))),
            committed(7, entry(3, answer("hi"))),
            committed(8, entry(4, usage(1000, 20))),
            committed(
                9,
                entry(5, run_end(seedpod_protocol::RunEndReason::Completed)),
            ),
            committed(
                10,
                entry(0, compacted_start("new", "old", CompactionTrigger::Command)),
            ),
        ],
    );
    assert_eq!(
        kinds(&t),
        [
            "segment_start",
            "user",
            "text",
            "run_end",
            "segment_start",
            "compaction"
        ]
    );
    assert_eq!(t.status().segment_id, SegmentId::new("new"));
    assert_eq!(t.status().tokens_in, 0, "tokens count the active segment");
    let at = t.cells().len() - 1;
    assert!(t.is_toggleable(at));
    let folded = text_of(&cell_lines(&t.cells()[at], 80, &Theme::plain()));
    assert!(folded[0].starts_with("▸ ⇣ compacted 143 messages → summary of"));
    assert!(!folded.join("\n").contains("line and column"));
    assert!(t.toggle(at));
    let open = text_of(&cell_lines(&t.cells()[at], 80, &Theme::plain()));
    assert!(open[0].starts_with("▾ ⇣ compacted"));
    assert!(
        open.join("\n")
            .contains("Make the parser report line and column")
    );
}

#[test]
fn a_snapshot_of_a_compacted_segment_shows_the_same_cells() {
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(4, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![
                    entry(0, compacted_start("new", "old", CompactionTrigger::Auto)),
                    entry(1, run_start()),
                    entry(2, user_text("and now?")),
                ],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(4),
            },
        ],
    );
    // The head says the log goes further back (it is the segment before this one).
    assert_eq!(kinds(&t), ["head", "segment_start", "compaction", "user"]);
    let lines = text_of(&cell_lines(&t.cells()[2], 120, &Theme::plain()));
    assert!(
        lines.join("\n").contains("automatic"),
        "the trigger shows when it was not a person's /compact: {lines:?}"
    );
}

#[test]
fn pruning_and_a_learned_window_leave_dim_notes_and_other_windows_nothing() {
    let mut t = attached();
    let trim = |call_id: &str| ToolResultTrim {
        index: 3,
        call_id: CallId::new(call_id),
        mode: TrimMode::Soft,
        content: "head … tail".into(),
    };
    apply_all(
        &mut t,
        &[
            committed(
                5,
                entry(
                    1,
                    EntryKind::ContextPruned {
                        trims: vec![trim("a"), trim("b"), trim("c")],
                    },
                ),
            ),
            committed(6, entry(2, EntryKind::ContextPruned { trims: vec![] })),
            committed(
                7,
                entry(
                    3,
                    EntryKind::ContextWindow(ContextWindow {
                        tokens: 16_000,
                        source: WindowSource::Learned,
                    }),
                ),
            ),
            committed(
                8,
                entry(
                    4,
                    EntryKind::ContextWindow(ContextWindow {
                        tokens: 8_192,
                        source: WindowSource::Server,
                    }),
                ),
            ),
        ],
    );
    assert_eq!(kinds(&t), ["segment_start", "pruned", "window"]);
    let note = |i: usize| text_of(&cell_lines(&t.cells()[i], 80, &Theme::plain())).join("\n");
    assert_eq!(note(1), "· trimmed 3 old tool results to save context");
    assert_eq!(
        note(2),
        "· the model server's window is 16k tokens (learned from its error)"
    );
    assert!(matches!(
        t.cells()[1].kind,
        CellKind::ContextPruned { results: 3 }
    ));
}

#[test]
fn a_run_that_read_from_the_prompt_cache_says_how_much() {
    let mut t = Transcript::new();
    let cached = EntryKind::Usage(seedpod_protocol::Usage {
        input_tokens: 300,
        output_tokens: 20,
        cache_read_tokens: 12_000,
        cache_creation_tokens: 0,
    });
    apply_all(
        &mut t,
        &[
            snapshot_begin(1, PodState::Idle),
            committed(2, entry(0, segment_start())),
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(2),
            },
            committed(3, entry(1, run_start())),
            committed(4, entry(2, user_text("hello"))),
            committed(5, entry(3, cached)),
            committed(6, entry(4, answer("hi"))),
            committed(
                7,
                entry(5, run_end(seedpod_protocol::RunEndReason::Completed)),
            ),
        ],
    );
    let end = t.cells().len() - 1;
    let line = text_of(&cell_lines(&t.cells()[end], 120, &Theme::plain())).join("\n");
    assert!(line.contains("12.3k in · 20 out · 12.0k cached"), "{line}");
}

#[test]
fn the_compaction_cell_names_what_the_memory_flush_wrote() {
    let mut record = compaction_record(CompactionTrigger::Auto, None);
    record.memory_flush = vec!["write_file AGENTS.md".into()];
    let start = EntryKind::SegmentStart(SegmentStart {
        date: None,
        segment_id: SegmentId::new("new"),
        system_prompt: "You are demo.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin: Origin::CompactedFrom {
            segment_id: SegmentId::new("old"),
        },
        context_window: None,
        compaction: Some(record),
        tasks: Vec::new(),
        totals: None,
    });
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(1, PodState::Idle),
            committed(2, entry(0, start)),
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(2),
            },
        ],
    );
    let at = t.cells().len() - 1;
    let lines = text_of(&cell_lines(&t.cells()[at], 120, &Theme::plain())).join("\n");
    assert!(lines.contains("memory: write_file AGENTS.md"), "{lines}");
}
