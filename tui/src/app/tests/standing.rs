//! `/approvals`: the popup asks the pod, lists the rules, revokes the selected one with `d`, and
//! refreshes when a rule is granted or revoked elsewhere.

use crossterm::event::KeyCode;
use seedpod_protocol::{
    ApprovalDecision, CallId, CommandRule, EntryKind, EntrySeq, ErrorCode, EventSeq, Method,
    RequestId, ServerMsg, StandingApproval,
};

use super::{Harness, key, request};
use crate::app::Overlay;
use crate::connection::ConnectionEvent;

fn rule(words: &[&str]) -> StandingApproval {
    StandingApproval {
        tool: "shell".into(),
        rule: Some(CommandRule::Prefix(
            words.iter().map(|w| w.to_string()).collect(),
        )),
    }
}

fn listed(h: &Harness) -> Option<Vec<StandingApproval>> {
    match &h.app.overlay {
        Overlay::Approvals(standing) => standing.rules.clone(),
        other => panic!("the popup is not open: {other:?}"),
    }
}

#[test]
fn approvals_lists_and_revokes_the_selected_rule() {
    let mut h = Harness::connected();
    h.type_text("/approvals");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(method, Method::ListApprovals);
    assert_eq!(listed(&h), None, "waiting for the pod");

    let rules = vec![rule(&["git", "status"]), rule(&["cargo", "test"])];
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Approvals {
            id: RequestId::new(1),
            standing: rules.clone(),
        },
    });
    assert_eq!(listed(&h), Some(rules.clone()));

    // Down past the end stays on the last; d revokes the selected one.
    assert!(h.key(key(KeyCode::Down)).is_empty());
    assert!(h.key(key(KeyCode::Down)).is_empty());
    let (tag, method) = request(&h.key(key(KeyCode::Char('d'))));
    assert_eq!(
        method,
        Method::RevokeApproval {
            standing: Some(rules[1].clone())
        }
    );
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Approvals {
            id: RequestId::new(2),
            standing: vec![rules[0].clone()],
        },
    });
    assert_eq!(listed(&h), Some(vec![rules[0].clone()]));
    if let Overlay::Approvals(standing) = &h.app.overlay {
        assert_eq!(standing.selected, 0, "the selection stays on the list");
    }

    // A rule granted elsewhere while the popup is open: the popup asks again.
    h.commit(EntryKind::ApprovalAnswer {
        call_id: CallId::new("c"),
        decision: ApprovalDecision::ApproveAlways(rule(&["make", "test"])),
    });
    assert!(matches!(h.app.overlay, Overlay::Approvals(_)), "still open");
    h.key(key(KeyCode::Esc));
    assert_eq!(h.app.overlay, Overlay::None);
}

#[test]
fn a_refused_list_closes_the_popup_and_says_why() {
    let mut h = Harness::connected();
    h.type_text("/approvals");
    let (tag, _) = request(&h.key(key(KeyCode::Enter)));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(1)),
            code: ErrorCode::InvalidRequest,
            message: "unknown method list_approvals".into(),
        },
    });
    assert_eq!(h.app.overlay, Overlay::None);
    assert!(h.flash().contains("unknown method"), "{}", h.flash());
}

#[test]
fn a_grant_elsewhere_refreshes_an_open_popup() {
    let mut h = Harness::connected();
    h.type_text("/approvals");
    let (tag, _) = request(&h.key(key(KeyCode::Enter)));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Approvals {
            id: RequestId::new(1),
            standing: Vec::new(),
        },
    });
    h.seq += 1;
    let effects = h.link(ConnectionEvent::Frame(ServerMsg::Committed {
        seq: EventSeq::new(h.seq),
        entry: seedpod_protocol::Entry {
            v: 1,
            seq: EntrySeq::new(h.seq),
            ts: 1,
            kind: EntryKind::ApprovalRevoked {
                standing: rule(&["git", "status"]),
            },
        },
    }));
    let (_, method) = request(&effects);
    assert_eq!(method, Method::ListApprovals);
}
