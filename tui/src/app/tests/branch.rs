//! `/fork` and `/rewind`: the turn picker, the rewind's confirmation and what the commands'
//! answers do.

use crossterm::event::KeyCode;
use seedpod_protocol::{
    EntryKind, ModelConfig, ModelItem, Origin, PodName, ProviderKind, Segment, SegmentId,
    SegmentStart,
};

use super::{Harness, key};
use crate::app::Overlay;
use crate::app::branch::{BranchCommand, BranchKind, RewindScope, TurnList};
use crate::app::effect::Effect;

fn pod() -> PodName {
    PodName::new("p").unwrap()
}

fn segment_start(origin: Origin) -> EntryKind {
    EntryKind::SegmentStart(SegmentStart {
        date: None,
        segment_id: SegmentId::new("s2"),
        system_prompt: "You are p.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: Vec::new(),
        origin,
        context_window: None,
        compaction: None,
        tasks: Vec::new(),
        totals: None,
    })
}

/// A segment that starts with `origin`, then two turns: "first question\nmore" and "second".
fn two_turns_after(h: &mut Harness, origin: Origin) {
    h.commit(segment_start(origin));
    two_turns(h);
}

fn two_turns(h: &mut Harness) {
    for (question, answer) in [("first question\nmore", "one"), ("second", "two")] {
        h.commit(EntryKind::UserInput {
            segments: vec![Segment::text(question)],
            text: question.into(),
            queue_id: None,
        });
        h.commit(EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: answer.into(),
            },
        });
    }
}

fn submit(h: &mut Harness, line: &str) -> Vec<Effect> {
    h.type_text(line);
    // The `/` completion popup may be open: Esc closes it, Enter then submits.
    h.app.popup = None;
    h.key(key(KeyCode::Enter))
}

#[test]
fn fork_with_a_number_runs_the_fork_and_attaches_to_what_it_made() {
    let mut h = Harness::connected();
    let effects = submit(&mut h, "/fork 1");
    let fork = BranchCommand::Fork {
        source: pod(),
        turn: 1,
    };
    assert_eq!(effects, vec![Effect::Branch(fork.clone())]);
    let now = h.now;
    let effects = h.app.on_branch(fork, Ok("p-fork-1\n".into()), now);
    assert_eq!(
        effects,
        vec![Effect::Attach(PodName::new("p-fork-1").unwrap())]
    );
}

#[test]
fn a_failed_command_is_one_line_in_the_footer_and_nothing_else() {
    let mut h = Harness::connected();
    let now = h.now;
    let said = "pod \"p\" is in the middle of a turn; nothing was changed";
    let effects = h.app.on_branch(
        BranchCommand::Plan {
            pod: pod(),
            turn: 1,
        },
        Err(said.into()),
        now,
    );
    assert!(effects.is_empty());
    assert_eq!(h.flash(), said);
    assert_eq!(h.app.overlay, Overlay::None);
}

#[test]
fn a_fork_that_names_no_valid_pod_does_not_attach() {
    let mut h = Harness::connected();
    let now = h.now;
    let fork = BranchCommand::Fork {
        source: pod(),
        turn: 1,
    };
    assert!(
        h.app
            .on_branch(fork, Ok("../../etc\n".into()), now)
            .is_empty()
    );
    assert!(h.flash().contains("seedpod ls"), "{}", h.flash());
}

#[test]
fn a_bad_turn_number_is_explained_and_runs_nothing() {
    let mut h = Harness::connected();
    for line in ["/rewind two", "/fork -1"] {
        assert!(submit(&mut h, line).is_empty(), "{line}");
        assert!(h.flash().contains("no turn number"), "{}", h.flash());
    }
}

fn listed(turns: &[(usize, &str)], note: Option<&str>) -> Result<TurnList, String> {
    Ok(TurnList {
        turns: turns.iter().map(|(n, t)| (*n, (*t).to_string())).collect(),
        note: note.map(str::to_owned),
    })
}

#[test]
fn the_picker_asks_for_the_turns_from_the_log_and_enter_picks() {
    let mut h = Harness::connected();
    // What the screen shows does not number the turns: a rewound segment, whose conversation
    // goes on from an older segment's part, numbers them from the log.
    two_turns_after(
        &mut h,
        Origin::RewoundFrom {
            segment_id: SegmentId::new("s1"),
            seq: seedpod_protocol::EntrySeq::new(3),
        },
    );
    assert_eq!(
        submit(&mut h, "/rewind"),
        vec![Effect::ListTurns {
            pod: pod(),
            kind: BranchKind::Rewind
        }]
    );
    assert_eq!(
        h.app.overlay,
        Overlay::None,
        "nothing until the log is read"
    );
    let now = h.now;
    let list = listed(&[(1, "before"), (2, "first question"), (3, "second")], None);
    assert!(
        h.app
            .on_turns(pod(), BranchKind::Rewind, list, now)
            .is_empty()
    );
    let Overlay::Turns(picker) = &h.app.overlay else {
        panic!("no picker: {:?}", h.app.overlay);
    };
    assert_eq!(picker.turns.len(), 3);
    assert_eq!(picker.selected, 2, "the newest is chosen first");
    h.key(key(KeyCode::Up));
    let effects = h.key(key(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::Branch(BranchCommand::Plan {
            pod: pod(),
            turn: 2
        })]
    );
    assert_eq!(h.app.overlay, Overlay::None);
}

#[test]
fn the_picker_on_an_empty_pod_says_so() {
    let mut h = Harness::connected();
    h.commit(segment_start(Origin::New));
    let now = h.now;
    h.app
        .on_turns(pod(), BranchKind::Fork, listed(&[], None), now);
    assert_eq!(h.app.overlay, Overlay::None);
    assert!(h.flash().contains("no message"), "{}", h.flash());
}

#[test]
fn a_log_that_cannot_be_read_or_a_pod_left_since_opens_no_picker() {
    let mut h = Harness::connected();
    two_turns_after(&mut h, Origin::New);
    let now = h.now;
    let other = PodName::new("elsewhere").unwrap();
    h.app
        .on_turns(other, BranchKind::Fork, listed(&[(1, "x")], None), now);
    assert_eq!(h.app.overlay, Overlay::None);
    h.app.on_turns(
        pod(),
        BranchKind::Fork,
        Err("cannot read p's log: disk on fire".into()),
        now,
    );
    assert_eq!(h.app.overlay, Overlay::None);
    assert!(h.flash().contains("disk on fire"), "{}", h.flash());
    // A source that is gone: the picker opens, numbered from the pod's own start, and says so.
    let note = "turns are numbered from p's own start: a, which it comes from, is gone";
    h.app.on_turns(
        pod(),
        BranchKind::Fork,
        listed(&[(1, "x")], Some(note)),
        now,
    );
    assert!(matches!(h.app.overlay, Overlay::Turns(_)));
    assert!(h.flash().contains("is gone"), "{}", h.flash());
}

/// The plan for turn 1 is on screen.
fn confirming(h: &mut Harness) {
    let now = h.now;
    let plan = "rewind p to the end of turn 1\n  restore notes.txt\n";
    h.app.on_branch(
        BranchCommand::Plan {
            pod: pod(),
            turn: 1,
        },
        Ok(plan.into()),
        now,
    );
    assert!(
        matches!(h.app.overlay, Overlay::Rewind(_)),
        "{:?}",
        h.app.overlay
    );
}

#[test]
fn the_plan_is_confirmed_with_the_scope_the_key_names() {
    for (code, scope) in [
        (KeyCode::Enter, RewindScope::Both),
        (KeyCode::Char('y'), RewindScope::Both),
        (KeyCode::Char('c'), RewindScope::Conversation),
        (KeyCode::Char('f'), RewindScope::Files),
    ] {
        let mut h = Harness::connected();
        confirming(&mut h);
        // Scrolling is no answer.
        assert!(h.key(key(KeyCode::Down)).is_empty());
        let effects = h.key(key(code));
        let rewind = BranchCommand::Rewind {
            pod: pod(),
            turn: 1,
            scope,
        };
        assert_eq!(effects, vec![Effect::Branch(rewind.clone())], "{code:?}");
        let now = h.now;
        let effects = h
            .app
            .on_branch(rewind, Ok("rewound p to the end of turn 1\n".into()), now);
        assert_eq!(effects, vec![Effect::Reattach(pod())]);
        assert_eq!(h.flash(), "rewound p to the end of turn 1");
    }
}

#[test]
fn esc_on_the_plan_changes_nothing() {
    let mut h = Harness::connected();
    confirming(&mut h);
    assert!(h.key(key(KeyCode::Esc)).is_empty());
    assert_eq!(h.app.overlay, Overlay::None);
    assert!(h.flash().contains("nothing was rewound"), "{}", h.flash());
}

#[test]
fn a_plan_for_a_pod_left_since_is_not_shown() {
    let mut h = Harness::connected();
    let now = h.now;
    let other = PodName::new("other").unwrap();
    h.app.on_branch(
        BranchCommand::Plan {
            pod: other,
            turn: 1,
        },
        Ok("rewind other\n".into()),
        now,
    );
    assert_eq!(h.app.overlay, Overlay::None);
}
