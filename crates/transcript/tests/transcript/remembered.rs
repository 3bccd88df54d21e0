//! Cells a person expanded open again when a snapshot rebuilds the transcript (a reattach, a
//! resync): they are named by the log entry they were made from, not by their place.

use crate::support::*;
use seedpod_protocol::{AlertLevel, EntryKind, PodState, ServerMsg};
use seedpod_transcript::{CellKey, CellKind, Transcript};

/// A snapshot of a turn with thinking and a tool call.
fn snapshot() -> Vec<ServerMsg> {
    vec![
        snapshot_begin(20, PodState::Idle),
        ServerMsg::SnapshotEntries {
            entries: vec![
                entry(0, segment_start()),
                entry(1, run_start()),
                entry(2, user_text("look")),
                entry(3, reasoning("first\nsecond")),
                entry(4, tool_call("c1", "read_file", r#"{"path":"a"}"#)),
                entry(5, tool_result("c1", "read_file", "x", false)),
                entry(
                    6,
                    EntryKind::Notice {
                        level: AlertLevel::Warn,
                        message: "the pod stopped in the middle of a turn".into(),
                    },
                ),
            ],
        },
        in_flight("", "", vec![]),
        ServerMsg::SnapshotEnd {
            seq: seedpod_protocol::EventSeq::new(20),
        },
    ]
}

fn index_of(t: &Transcript, want: fn(&CellKind) -> bool) -> usize {
    match t.cells().iter().position(|c| want(&c.kind)) {
        Some(index) => index,
        None => panic!("no such cell: {:?}", kinds(t)),
    }
}

#[test]
fn an_expanded_cell_opens_again_after_a_new_snapshot_and_a_folded_one_stays_folded() {
    let mut t = Transcript::new();
    apply_all(&mut t, &snapshot());
    let thinking = index_of(&t, |k| matches!(k, CellKind::Thinking { .. }));
    let tool = index_of(&t, |k| matches!(k, CellKind::ToolCall { .. }));
    assert_eq!(
        t.cells()[thinking].key,
        Some(CellKey {
            seq: seedpod_protocol::EntrySeq::new(3),
            ts: TS + 300
        })
    );
    assert!(t.toggle(thinking));
    assert!(t.toggle(tool));
    assert!(t.toggle(tool), "folded again");

    apply_all(&mut t, &snapshot());
    assert!(t.cells()[thinking].expanded, "remembered across the reset");
    assert!(!t.cells()[tool].expanded);

    // A new transcript told what was remembered (the app, after a restart of the TUI).
    let mut fresh = Transcript::new();
    fresh.remember_expanded([t.cells()[thinking].key.unwrap()]);
    apply_all(&mut fresh, &snapshot());
    assert!(fresh.cells()[thinking].expanded);
    assert!(!fresh.cells()[tool].expanded);
}

#[test]
fn a_notice_entry_is_drawn_as_an_alert() {
    let mut t = Transcript::new();
    apply_all(&mut t, &snapshot());
    let Some(last) = t.cells().last() else {
        panic!("no cells")
    };
    assert!(
        matches!(&last.kind, CellKind::Alert { level: AlertLevel::Warn, message } if message.contains("middle of a turn")),
        "{:?}",
        last.kind
    );
}
