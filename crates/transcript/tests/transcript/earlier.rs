//! Paging back through the log: the head a snapshot gets when the log goes further back, what
//! to ask for, pages inserted above without touching live state, pairs joined across pages,
//! the beginning, the cap, and the view keeping its place while cells arrive above it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use seedpod_protocol::{
    ApprovalDecision, CompactionTrigger, Entry, EntryKind, EntrySeq, EventSeq, InstanceId,
    ModelConfig, Origin, PodState, ProviderKind, RunEndReason, SegmentId, SegmentStart, ServerMsg,
};
use seedpod_transcript::{
    ApprovalStatus, CellKind, EARLIER_ENTRIES_CAP, LogHead, Theme, ToolStatus, Transcript,
    TranscriptView, ViewState,
};

fn start(segment_id: &str, origin: Origin) -> EntryKind {
    let compaction = matches!(origin, Origin::CompactedFrom { .. })
        .then(|| compaction_record(CompactionTrigger::Command, None));
    EntryKind::SegmentStart(SegmentStart {
        date: None,
        segment_id: SegmentId::new(segment_id),
        system_prompt: "You are demo.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin,
        context_window: None,
        compaction,
        tasks: Vec::new(),
        totals: None,
    })
}

/// A client attached to segment `s2`, compacted from `s1`, in the middle of a run that waits
/// for approval, with tokens counted and an input queued.
fn attached_after_compaction() -> Transcript {
    let mut t = Transcript::new();
    let from_s1 = Origin::CompactedFrom {
        segment_id: SegmentId::new("s1"),
    };
    apply_all(
        &mut t,
        &[
            ServerMsg::Welcome {
                protocol: 1,
                pod: "demo".parse().unwrap(),
                server_version: "0.1.0".into(),
                state: PodState::WaitingForApproval,
                instance: InstanceId::new("i1"),
                seq: EventSeq::new(9),
            },
            snapshot_begin(9, PodState::WaitingForApproval),
            ServerMsg::SnapshotEntries {
                entries: vec![
                    entry(0, start("s2", from_s1)),
                    entry(1, run_start()),
                    entry(2, user_text("run the tests")),
                    entry(3, tool_call("live", "shell", r#"{"command":"cargo test"}"#)),
                    entry(4, approval_request(shell_request("live"))),
                    entry(5, usage(700, 30)),
                ],
            },
            ServerMsg::InFlight {
                text: String::new(),
                thinking: String::new(),
                tool_calls: vec![],
                queue: vec![queued_run(1, "after that")],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(9),
            },
        ],
    );
    t
}

/// One turn of the old segment: `question` asked, `reply` answered, then a run end.
fn turn(first_seq: u64, question: &str, reply: &str) -> Vec<Entry> {
    vec![
        entry(first_seq, run_start()),
        entry(first_seq + 1, user_text(question)),
        entry(first_seq + 2, answer(reply)),
        entry(first_seq + 3, usage(5_000, 100)),
        entry(first_seq + 4, run_end(RunEndReason::Completed)),
    ]
}

fn head(t: &Transcript) -> Option<LogHead> {
    match &t.cells().first()?.kind {
        CellKind::LogHead { head } => Some(head.clone()),
        _ => None,
    }
}

#[test]
fn a_pods_first_segment_has_nothing_before_it() {
    let t = attached();
    assert_eq!(t.earlier_request(), None);
    assert_eq!(head(&t), None);
    assert_eq!(kinds(&t), ["segment_start"]);
}

#[test]
fn a_snapshot_after_compaction_or_clear_asks_for_the_segment_before() {
    let t = attached_after_compaction();
    assert_eq!(head(&t), Some(LogHead::More));
    assert_eq!(
        t.earlier_request(),
        Some((SegmentId::new("s2"), EntrySeq::new(0)))
    );

    let mut cleared = Transcript::new();
    apply_all(
        &mut cleared,
        &[
            snapshot_begin(3, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![entry(
                    0,
                    start(
                        "s9",
                        Origin::ClearedFrom {
                            segment_id: SegmentId::new("s8"),
                        },
                    ),
                )],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(3),
            },
        ],
    );
    assert_eq!(
        cleared.earlier_request(),
        Some((SegmentId::new("s9"), EntrySeq::new(0)))
    );

    // A snapshot that starts inside its segment asks for what is before its first entry.
    let mut partial = Transcript::new();
    apply_all(
        &mut partial,
        &[
            snapshot_begin(3, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![entry(40, user_text("late in the segment"))],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(3),
            },
        ],
    );
    assert_eq!(
        partial.earlier_request(),
        Some((SegmentId::new("0193f0c2"), EntrySeq::new(40)))
    );
}

#[test]
fn one_request_at_a_time_and_a_failure_lets_the_next_scroll_ask_again() {
    let mut t = attached_after_compaction();
    assert!(t.earlier_loading());
    assert_eq!(head(&t), Some(LogHead::Loading));
    assert_eq!(t.earlier_request(), None, "a page is on its way");
    assert!(!t.earlier_loading());
    assert!(t.earlier_failed());
    assert_eq!(head(&t), Some(LogHead::More));
    assert_eq!(
        t.earlier_request(),
        Some((SegmentId::new("s2"), EntrySeq::new(0)))
    );
}

#[test]
fn a_page_goes_above_the_live_cells_and_changes_no_live_state() {
    let mut t = attached_after_compaction();
    let before = t.status().clone();
    let pending = t.pending_approval().cloned();
    let live_cells: Vec<_> = t.cells()[1..].to_vec();
    let live_turns = t.turn_starts();

    t.earlier_loading();
    let mut page = turn(10, "what is 6 × 7?", "42");
    page.push(entry(
        15,
        EntryKind::ConfigChanged {
            model: ModelConfig::new(ProviderKind::Openai, "old-model"),
        },
    ));
    page.push(entry(16, approval_request(shell_request("old"))));
    let inserted = t.prepend_earlier(&SegmentId::new("s1"), &page, true);

    assert_eq!(inserted, 5);
    assert_eq!(
        kinds(&t),
        [
            "head",
            "user",
            "text",
            "run_end",
            "model",
            "approval",
            "segment_start",
            "compaction",
            "user",
            "tool",
            "approval"
        ]
    );
    assert_eq!(t.prepended(), 5);
    assert_eq!(t.earlier_held(), 7);
    // Live state is the live segment's alone.
    assert_eq!(t.status(), &before);
    assert_eq!(t.status().model, "script");
    assert_eq!(t.status().tokens_in, 700);
    assert_eq!(t.status().queue.len(), 1);
    assert_eq!(t.pending_approval().cloned(), pending);
    assert_eq!(t.committed_len(), t.cells().len());
    // The live cells are the same cells (ids kept, so the view's cache stays valid).
    assert_eq!(&t.cells()[6..], live_cells.as_slice());
    // An old request nobody answered in view is not waiting any more.
    assert!(matches!(
        &t.cells()[5].kind,
        CellKind::Approval {
            status: ApprovalStatus::Closed,
            ..
        }
    ));
    // Turn starts cover the page too, for `[` / `]`.
    let mut expected = vec![1];
    expected.extend(live_turns.iter().map(|s| s + 5));
    assert_eq!(t.turn_starts(), expected);
    // The live run goes on where it was: its approval settles its own cell.
    t.apply(&committed(
        10,
        entry(6, approval_answer("live", ApprovalDecision::Approve)),
    ));
    assert!(matches!(
        &t.cells().last().map(|c| &c.kind),
        Some(CellKind::Approval {
            status: ApprovalStatus::Approved,
            ..
        })
    ));
    assert_eq!(t.pending_approval(), None);

    // Ids are unique across the page and the live cells.
    let mut ids: Vec<u64> = t.cells().iter().map(|c| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), t.cells().len());

    assert_eq!(head(&t), Some(LogHead::More));
    assert_eq!(
        t.earlier_request(),
        Some((SegmentId::new("s1"), EntrySeq::new(10)))
    );
}

#[test]
fn pages_stack_oldest_on_top_until_the_beginning() {
    let mut t = attached_after_compaction();
    t.earlier_loading();
    t.prepend_earlier(
        &SegmentId::new("s1"),
        &turn(6, "second question", "second answer"),
        true,
    );
    assert_eq!(
        t.earlier_request(),
        Some((SegmentId::new("s1"), EntrySeq::new(6)))
    );
    t.earlier_loading();
    let mut first = vec![entry(0, start("s1", Origin::New))];
    first.extend(turn(1, "first question", "first answer"));
    t.prepend_earlier(&SegmentId::new("s1"), &first, false);
    assert_eq!(head(&t), Some(LogHead::Beginning));
    assert_eq!(t.earlier_request(), None);
    let texts: Vec<String> = t
        .cells()
        .iter()
        .filter_map(|c| match &c.kind {
            CellKind::AssistantText { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["first answer", "second answer"]);
    assert_eq!(&kinds(&t)[..3], ["head", "segment_start", "user"]);
    // An empty last page still says where the log begins.
    let mut empty = attached_after_compaction();
    empty.earlier_loading();
    assert_eq!(empty.prepend_earlier(&SegmentId::new("s1"), &[], false), 0);
    assert_eq!(head(&empty), Some(LogHead::Beginning));
}

#[test]
fn a_call_and_its_result_split_across_pages_are_one_cell() {
    let mut t = attached_after_compaction();
    t.earlier_loading();
    // The newer page starts with the result of a call made in the page before it.
    let newer = vec![
        entry(12, tool_result("split", "read_file", "fn main() {}", false)),
        entry(13, approval_answer("asked", ApprovalDecision::Approve)),
        entry(14, tool_result("asked", "shell", "ok", false)),
        entry(15, answer("done")),
        entry(16, run_end(RunEndReason::Completed)),
    ];
    t.prepend_earlier(&SegmentId::new("s1"), &newer, true);
    assert_eq!(
        &kinds(&t)[..6],
        ["head", "tool", "tool", "text", "run_end", "segment_start"]
    );
    t.earlier_loading();
    let older = vec![
        entry(9, run_start()),
        entry(
            10,
            tool_call("split", "read_file", r#"{"path":"src/main.rs"}"#),
        ),
        entry(11, tool_call("asked", "shell", r#"{"command":"ls"}"#)),
        entry(11, approval_request(shell_request("asked"))),
    ];
    let inserted = t.prepend_earlier(&SegmentId::new("s1"), &older, true);
    // The call cells joined the results' cells; the approval shows how it was answered.
    assert_eq!(inserted, 1);
    assert_eq!(
        &kinds(&t)[..7],
        [
            "head",
            "approval",
            "tool",
            "tool",
            "text",
            "run_end",
            "segment_start"
        ]
    );
    assert!(matches!(
        &t.cells()[1].kind,
        CellKind::Approval {
            status: ApprovalStatus::Approved,
            ..
        }
    ));
    let CellKind::ToolCall {
        arguments,
        status,
        output,
        ..
    } = &t.cells()[2].kind
    else {
        panic!("{:?}", t.cells()[2]);
    };
    assert_eq!(arguments, r#"{"path":"src/main.rs"}"#);
    assert_eq!(*status, ToolStatus::Ok);
    assert_eq!(output, "fn main() {}");
}

#[test]
fn paging_stops_at_the_cap_and_says_where_the_rest_is() {
    let mut t = attached_after_compaction();
    let mut seq = 1_000_000;
    let mut pages = 0;
    while t.earlier_request().is_some() {
        t.earlier_loading();
        seq -= 400;
        let page: Vec<Entry> = (0..400)
            .map(|i| entry(seq + i, user_text("an old line")))
            .collect();
        t.prepend_earlier(&SegmentId::new("s1"), &page, true);
        pages += 1;
        assert!(pages <= EARLIER_ENTRIES_CAP / 400 + 1, "never stops");
    }
    assert_eq!(t.earlier_held(), EARLIER_ENTRIES_CAP);
    assert_eq!(head(&t), Some(LogHead::Capped { pod: "demo".into() }));
}

#[test]
fn a_snapshot_forgets_the_pages() {
    let mut t = attached_after_compaction();
    t.earlier_loading();
    t.prepend_earlier(&SegmentId::new("s1"), &turn(6, "q", "a"), true);
    apply_all(
        &mut t,
        &[
            snapshot_begin(20, PodState::Idle),
            ServerMsg::SnapshotEntries {
                entries: vec![entry(
                    0,
                    start(
                        "s2",
                        Origin::CompactedFrom {
                            segment_id: SegmentId::new("s1"),
                        },
                    ),
                )],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(20),
            },
        ],
    );
    assert_eq!(kinds(&t), ["head", "segment_start", "compaction"]);
    assert_eq!(t.prepended(), 0);
    assert_eq!(t.earlier_held(), 0);
    assert_eq!(
        t.earlier_request(),
        Some((SegmentId::new("s2"), EntrySeq::new(0)))
    );
}

fn draw(terminal: &mut Terminal<TestBackend>, t: &Transcript, state: &mut ViewState) -> String {
    let theme = Theme::plain();
    terminal
        .draw(|frame| {
            let view = TranscriptView {
                transcript: t,
                theme: &theme,
            };
            frame.render_stateful_widget(view, frame.area(), state);
        })
        .expect("draw");
    screen(terminal.backend().buffer())
}

/// Enough live turns that the transcript is taller than the screen.
fn long_live() -> Transcript {
    let mut t = attached_after_compaction();
    let mut seq = 10;
    for n in 0..6 {
        for e in turn(100 + n * 5, &format!("live question {n}"), "live answer") {
            seq += 1;
            t.apply(&committed(seq, e));
        }
    }
    t
}

#[test]
fn at_the_top_a_page_arrives_above_without_moving_what_is_on_screen() {
    let mut t = long_live();
    let mut terminal = Terminal::new(TestBackend::new(50, 8)).expect("terminal");
    let mut state = ViewState::new();
    draw(&mut terminal, &t, &mut state);
    assert!(!state.at_top());
    state.home();
    let before = draw(&mut terminal, &t, &mut state);
    assert!(state.at_top());
    assert!(
        before.starts_with("↑ the log goes further back"),
        "{before}"
    );

    t.earlier_loading();
    let loading = draw(&mut terminal, &t, &mut state);
    assert!(loading.starts_with("loading earlier…"), "{loading}");
    assert_eq!(
        loading.lines().skip(1).collect::<Vec<_>>(),
        before.lines().skip(1).collect::<Vec<_>>()
    );

    t.prepend_earlier(
        &SegmentId::new("s1"),
        &turn(20, "an old question", "an old answer"),
        true,
    );
    let after = draw(&mut terminal, &t, &mut state);
    // The row under the head keeps what it showed; the page's last line took the head's row.
    assert!(!state.at_top());
    assert_eq!(
        after.lines().skip(1).collect::<Vec<_>>(),
        before.lines().skip(1).collect::<Vec<_>>(),
        "\n{before}\n{after}"
    );
    insta::assert_snapshot!("page_arrives_at_the_top", format!("{before}\n{after}"));
    // Scrolling up shows the page, and at its top the head again.
    state.home();
    let top = draw(&mut terminal, &t, &mut state);
    assert!(state.at_top());
    assert!(top.contains("an old question"), "{top}");
}

#[test]
fn reading_further_down_nothing_moves_when_a_page_arrives() {
    let mut t = long_live();
    let mut terminal = Terminal::new(TestBackend::new(50, 8)).expect("terminal");
    let mut state = ViewState::new();
    draw(&mut terminal, &t, &mut state);
    state.home();
    state.scroll_down(5);
    state.set_focus(Some(3));
    let before = draw(&mut terminal, &t, &mut state);
    t.earlier_loading();
    t.prepend_earlier(
        &SegmentId::new("s1"),
        &turn(20, "an old question", "an old answer"),
        true,
    );
    let after = draw(&mut terminal, &t, &mut state);
    assert_eq!(before, after);
    assert_eq!(state.focused(), Some(6), "the focus stays on its cell");
    assert_eq!(state.new_below(), 0, "cells above are not new below");

    // Following the tail, the tail stays.
    let mut tail = ViewState::new();
    let bottom = draw(&mut terminal, &t, &mut tail);
    t.earlier_loading();
    t.prepend_earlier(
        &SegmentId::new("s1"),
        &turn(15, "older", "older answer"),
        true,
    );
    assert_eq!(draw(&mut terminal, &t, &mut tail), bottom);
    assert!(tail.is_following());
}
