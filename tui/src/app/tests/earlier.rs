//! Compaction and paging back from the app's side: `/compact [FOCUS]`, the compacting clock,
//! Enter on the compaction cell, and scrolling to the top asking for earlier entries, one page
//! at a time, dropped when a snapshot replaced the transcript.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use seedpod_protocol::{
    CallId, Compaction, CompactionTrigger, Entry, EntryKind, EntrySeq, ErrorCode, EventSeq, Method,
    ModelConfig, ModelItem, Origin, PodCommand, PodState, ProviderKind, RequestId, RunEndReason,
    RunTrigger, Segment, SegmentId, SegmentStart, ServerMsg,
};
use seedpod_transcript::{CellKind, LogHead};

use super::{Harness, key, request};
use crate::app::{Effect, Pending};
use crate::connection::ConnectionEvent;

fn compacted_start(segment_id: &str, from: &str) -> EntryKind {
    EntryKind::SegmentStart(SegmentStart {
        date: None,
        segment_id: SegmentId::new(segment_id),
        system_prompt: "You are p.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin: Origin::CompactedFrom {
            segment_id: SegmentId::new(from),
        },
        context_window: None,
        compaction: Some(Compaction {
            summary: "## Task\n\nThe person asked about **numbers**.".into(),
            compacted_items: 12,
            kept_items: 2,
            tokens_before: 9_000,
            tokens_after: 1_200,
            trigger: CompactionTrigger::Command,
            focus: None,
            memory_flush: Vec::new(),
        }),
        tasks: Vec::new(),
        totals: None,
    })
}

fn at(seq: u64, kind: EntryKind) -> Entry {
    Entry {
        v: 1,
        seq: EntrySeq::new(seq),
        ts: 1_700_000_000_000 + seq,
        kind,
    }
}

fn turn(first_seq: u64, question: &str, reply: &str) -> Vec<Entry> {
    vec![
        at(
            first_seq,
            EntryKind::RunStart {
                trigger: RunTrigger::User,
            },
        ),
        at(
            first_seq + 1,
            EntryKind::UserInput {
                segments: vec![Segment::text(question)],
                text: question.into(),
                queue_id: None,
            },
        ),
        at(
            first_seq + 2,
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { text: reply.into() },
            },
        ),
        at(
            first_seq + 3,
            EntryKind::RunEnd {
                reason: RunEndReason::Completed,
                message: None,
            },
        ),
    ]
}

/// Attached to a pod whose active segment (`s2`) was compacted from `s1`.
fn after_compaction() -> Harness {
    let mut h = Harness::connected();
    h.seq = 20;
    let mut entries = vec![at(0, compacted_start("s2", "s1"))];
    entries.extend(turn(1, "and now?", "now this"));
    h.frame(ServerMsg::SnapshotBegin {
        context: Default::default(),
        seq: EventSeq::new(20),
        state: PodState::Idle,
        greeting: "pod p".into(),
        segment_id: SegmentId::new("s2"),
        entries: entries.len() as u64,
        message_cap: None,
    });
    h.frame(ServerMsg::SnapshotEntries { entries });
    h.frame(ServerMsg::SnapshotEnd {
        seq: EventSeq::new(20),
    });
    h
}

impl Harness {
    /// Draw a frame (as the event loop does), then what the frame decided.
    fn draw(&mut self) -> Vec<Effect> {
        let mut terminal = Terminal::new(TestBackend::new(60, 16)).expect("test terminal");
        let now = self.now;
        terminal
            .draw(|frame| crate::ui::draw(frame, &mut self.app, now))
            .expect("draw");
        self.app.after_draw()
    }

    fn head(&self) -> Option<LogHead> {
        match &self.app.transcript.cells().first()?.kind {
            CellKind::LogHead { head } => Some(head.clone()),
            _ => None,
        }
    }
}

#[test]
fn compact_goes_to_the_pod_with_its_focus() {
    let mut h = Harness::connected();
    h.type_text("/compact the parser work");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Command {
            name: PodCommand::Compact,
            args: "the parser work".into()
        }
    );
    assert!(h.app.composer.is_empty());
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::CommandDone {
            id: RequestId::new(1),
            command: PodCommand::Compact,
            message: "compacted 12 messages into a new segment".into(),
        },
    });
    assert_eq!(h.flash(), "compacted 12 messages into a new segment");

    h.type_text("/compact");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Command {
            name: PodCommand::Compact,
            args: String::new()
        }
    );
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(2)),
            code: ErrorCode::Busy,
            message: "a turn is running; /compact when it ends".into(),
        },
    });
    assert_eq!(
        h.flash(),
        "/compact: a turn is running; /compact when it ends"
    );
}

#[test]
fn compacting_keeps_the_clock_ticking() {
    let mut h = Harness::connected();
    assert_eq!(h.app.next_tick(h.now), None);
    h.state(PodState::Compacting);
    assert_eq!(h.app.next_tick(h.now), Some(h.now + crate::run::TICK));
    assert!(h.app.on_tick(h.now));
}

#[test]
fn tab_then_enter_opens_the_compaction_summary() {
    let mut h = after_compaction();
    h.draw();
    // Tab lands on the newest answer, Shift-Tab goes back to the compaction cell.
    h.key(key(KeyCode::Tab));
    h.key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    let focused = h
        .app
        .view
        .focused()
        .expect("the compaction cell takes the focus");
    assert!(matches!(
        h.app.transcript.cells()[focused].kind,
        CellKind::Compaction { .. }
    ));
    h.key(key(KeyCode::Enter));
    assert!(h.app.transcript.cells()[focused].expanded);
    h.draw();
    let mut terminal = Terminal::new(TestBackend::new(60, 16)).expect("test terminal");
    let now = h.now;
    terminal
        .draw(|frame| crate::ui::draw(frame, &mut h.app, now))
        .expect("draw");
    let screen = terminal.backend().to_string();
    assert!(
        screen.contains("The person asked about numbers."),
        "{screen}"
    );
}

#[test]
fn a_compacted_segment_that_fits_asks_for_the_page_before_and_puts_it_above() {
    let mut h = after_compaction();
    // The new segment fits on the screen with room to spare: the page before it, where the
    // turns the model kept are, is asked for at once.
    let effects = h.draw();
    let (tag, method) = request(&effects);
    assert_eq!(
        method,
        Method::Earlier {
            segment_id: SegmentId::new("s2"),
            before_seq: EntrySeq::new(0)
        }
    );
    assert_eq!(h.head(), Some(LogHead::Loading));
    // One request at a time: more keys at the top ask nothing more.
    h.key(key(KeyCode::PageUp));
    assert!(h.draw().is_empty());
    h.key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT));
    assert!(h.draw().is_empty());

    let model = h.app.transcript.status().model.clone();
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Earlier {
            id: RequestId::new(1),
            segment_id: SegmentId::new("s1"),
            entries: turn(30, "what is 6 × 7?", "42"),
            more: true,
        },
    });
    assert_eq!(h.head(), Some(LogHead::More));
    assert_eq!(h.app.transcript.status().model, model);
    let texts: Vec<&str> = h
        .app
        .transcript
        .cells()
        .iter()
        .filter_map(|c| match &c.kind {
            CellKind::AssistantText { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["42", "now this"]);

    // The page went in above the screen: the person is no longer at the top. Going there
    // asks for the page before it, in the older segment.
    assert!(h.draw().is_empty());
    h.key(key(KeyCode::Home));
    let (tag, method) = request(&h.draw());
    assert_eq!(
        method,
        Method::Earlier {
            segment_id: SegmentId::new("s1"),
            before_seq: EntrySeq::new(30)
        }
    );
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Earlier {
            id: RequestId::new(2),
            segment_id: SegmentId::new("s1"),
            entries: vec![],
            more: false,
        },
    });
    assert_eq!(h.head(), Some(LogHead::Beginning));
    h.key(key(KeyCode::Home));
    assert!(h.draw().is_empty(), "nothing before the beginning");
}

#[test]
fn pgup_reaching_the_top_asks_and_scrolling_elsewhere_does_not() {
    let mut h = after_compaction();
    let mut seq = h.seq;
    for n in 0..8 {
        for entry in turn(10 + n * 4, &format!("live question {n}"), "live answer") {
            seq += 1;
            h.frame(ServerMsg::Committed {
                seq: EventSeq::new(seq),
                entry,
            });
        }
    }
    h.draw();
    assert!(!h.app.view.at_top());
    h.key(key(KeyCode::PageUp));
    assert!(h.draw().is_empty(), "one page up is not the top yet");
    let mut asked = None;
    for _ in 0..40 {
        h.key(key(KeyCode::PageUp));
        if let Some(effect) = h.draw().into_iter().next() {
            asked = Some(effect);
            break;
        }
    }
    let Some(Effect::Request { method, .. }) = asked else {
        panic!("PgUp never reached the top");
    };
    assert!(matches!(method, Method::Earlier { .. }));

    // At the top without having scrolled (a short compacted segment): asked once, at once.
    let mut short = after_compaction();
    assert!(short.app.transcript.cells().len() < 8);
    assert!(matches!(request(&short.draw()).1, Method::Earlier { .. }));
    short.key(key(KeyCode::End));
    assert!(short.draw().is_empty());
}

#[test]
fn a_failed_page_says_why_and_the_next_scroll_asks_again() {
    let mut h = after_compaction();
    let (tag, _) = request(&h.draw());
    h.link(ConnectionEvent::Failed {
        tag,
        reason: "the connection was lost before the pod answered".into(),
    });
    assert_eq!(h.head(), Some(LogHead::More));
    assert!(
        h.flash().starts_with("earlier entries not loaded"),
        "{}",
        h.flash()
    );
    assert!(h.draw().is_empty(), "not asked again by itself");
    h.key(key(KeyCode::Home));
    let (_, method) = request(&h.draw());
    assert!(matches!(method, Method::Earlier { .. }));
}

#[test]
fn an_answer_for_a_replaced_transcript_is_dropped() {
    let mut h = after_compaction();
    let effects = h.draw();
    let (tag, _) = request(&effects);
    assert!(h.app.is_pending(|p| matches!(p, Pending::Earlier { .. })));
    // The pod resynced us meanwhile: a new snapshot of the same segment.
    let mut entries = vec![at(0, compacted_start("s2", "s1"))];
    entries.extend(turn(1, "and now?", "now this"));
    h.frame(ServerMsg::SnapshotBegin {
        context: Default::default(),
        seq: EventSeq::new(40),
        state: PodState::Idle,
        greeting: "pod p".into(),
        segment_id: SegmentId::new("s2"),
        entries: 5,
        message_cap: None,
    });
    h.frame(ServerMsg::SnapshotEntries { entries });
    h.frame(ServerMsg::SnapshotEnd {
        seq: EventSeq::new(40),
    });
    let cells = h.app.transcript.cells().len();
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Earlier {
            id: RequestId::new(1),
            segment_id: SegmentId::new("s1"),
            entries: turn(30, "old", "old answer"),
            more: true,
        },
    });
    assert_eq!(h.app.transcript.cells().len(), cells);
    assert_eq!(h.head(), Some(LogHead::More));
    // And the next scroll to the top asks afresh.
    h.key(key(KeyCode::Home));
    let (_, method) = request(&h.draw());
    assert!(matches!(method, Method::Earlier { .. }));
}

/// Tab right after Home focuses a cell near the top, not one at the bottom of the transcript.
#[test]
fn tab_after_home_stays_near_the_top() {
    let mut h = Harness::connected();
    let call = |id: &str| {
        [
            EntryKind::AssistantItem {
                item: ModelItem::ToolCall {
                    call_id: CallId::new(id),
                    name: "list_dir".into(),
                    arguments: "{}".into(),
                },
            },
            EntryKind::ToolResult {
                call_id: CallId::new(id),
                name: "list_dir".into(),
                content: "a\nb\n".into(),
                is_error: false,
                meta: Default::default(),
            },
        ]
    };
    let chat = |h: &mut Harness, n: u64| {
        for i in 0..n {
            for entry in turn(0, &format!("question {i}"), &format!("answer {i}")) {
                h.commit(entry.kind);
            }
        }
    };
    chat(&mut h, 6);
    for kind in call("early") {
        h.commit(kind);
    }
    chat(&mut h, 30);
    for kind in call("late") {
        h.commit(kind);
    }
    h.draw();
    h.key(key(KeyCode::Home));
    h.draw();
    h.key(key(KeyCode::Tab));
    let focused = h.app.view.focused().expect("a cell is focused");
    let early = h
        .app
        .transcript
        .cells()
        .iter()
        .position(|c| matches!(&c.kind, CellKind::ToolCall { call_id, .. } if *call_id == CallId::new("early")))
        .expect("the early call's cell");
    assert!(
        focused <= early,
        "a cell near the top ({focused}), not the last call"
    );
}
