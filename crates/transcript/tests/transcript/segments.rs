//! What pod commands change in the transcript: `/clear` starts a new segment under a separator
//! while the old cells stay on screen (a later snapshot holds only the new segment, with a way
//! back); `/model` changes the status line's model.

use crate::support::*;
use seedpod_protocol::{
    EntryKind, EntrySeq, EventSeq, ModelConfig, Origin, PodState, ProviderKind, SegmentId,
    SegmentStart, ServerMsg,
};
use seedpod_transcript::{CellKind, SegmentOrigin, Transcript};

fn cleared_start(segment_id: &str, from: &str) -> EntryKind {
    EntryKind::SegmentStart(SegmentStart {
        date: None,
        context_window: None,
        compaction: None,
        segment_id: SegmentId::new(segment_id),
        system_prompt: "You are demo.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin: Origin::ClearedFrom {
            segment_id: SegmentId::new(from),
        },
        tasks: Vec::new(),
        totals: None,
    })
}

/// One finished turn with tokens, then `/clear` (event seqs 5..=11).
fn cleared() -> Transcript {
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
        ],
    );
    assert_eq!(t.status().tokens_in, 1000);
    t.apply(&committed(
        10,
        entry(0, cleared_start("new-segment", "old-segment")),
    ));
    t
}

#[test]
fn clear_keeps_the_old_cells_above_a_separator() {
    let t = cleared();
    assert_eq!(
        kinds(&t),
        ["segment_start", "user", "text", "run_end", "segment_start"]
    );
    let Some(CellKind::SegmentStart {
        segment_id, origin, ..
    }) = t.cells().last().map(|c| &c.kind)
    else {
        panic!("no separator");
    };
    assert_eq!(*segment_id, SegmentId::new("new-segment"));
    assert_eq!(
        origin,
        &SegmentOrigin::ClearedFrom(SegmentId::new("old-segment"))
    );
    assert_eq!(t.status().segment_id, SegmentId::new("new-segment"));
    assert_eq!(
        (t.status().tokens_in, t.status().tokens_out),
        (0, 0),
        "tokens count the active segment"
    );
}

#[test]
fn the_new_segment_continues_live_and_a_later_snapshot_holds_only_it() {
    let mut t = cleared();
    // Entry seqs start again at 0 in the new segment; event seqs go on.
    apply_all(
        &mut t,
        &[
            committed(11, entry(1, run_start())),
            committed(12, entry(2, user_text("fresh start"))),
        ],
    );
    assert_eq!(kinds(&t).len(), 6);
    assert_eq!(t.turn_starts().last(), Some(&5));

    apply_all(
        &mut t,
        &[
            snapshot_begin(20, PodState::Running),
            ServerMsg::SnapshotEntries {
                entries: vec![
                    entry(0, cleared_start("new-segment", "old-segment")),
                    entry(1, run_start()),
                    entry(2, user_text("fresh start")),
                ],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(20),
            },
        ],
    );
    // The cleared segment is one page back: the head at the top says so.
    assert_eq!(kinds(&t), ["head", "segment_start", "user"]);
    assert_eq!(
        t.earlier_request(),
        Some((SegmentId::new("new-segment"), EntrySeq::new(0)))
    );
}

#[test]
fn model_changes_reach_the_status_line() {
    let mut t = attached();
    assert_eq!(t.status().model, "script");
    t.apply(&committed(
        5,
        entry(
            1,
            EntryKind::ConfigChanged {
                model: ModelConfig::new(ProviderKind::Scripted, "other-script"),
            },
        ),
    ));
    assert_eq!(t.status().model, "other-script");
    assert_eq!(kinds(&t), ["segment_start", "model"]);
}
