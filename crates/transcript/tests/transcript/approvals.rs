//! Approval requests and their answers, live and in snapshots: which request is pending, what
//! its cell says, and what the status line is told.

use crate::support::*;
use seedpod_protocol::{
    ApprovalDecision, ApprovalRequest, CallId, EventSeq, PodState, RunEndReason, ServerMsg,
    StandingApproval,
};
use seedpod_transcript::{ApprovalStatus, CellKind, Transcript};

/// The status of the approval cell for `call_id`.
fn approval_status(t: &Transcript, call_id: &str) -> ApprovalStatus {
    t.cells()
        .iter()
        .find_map(|cell| match &cell.kind {
            CellKind::Approval { request, status } if request.call_id == CallId::new(call_id) => {
                Some(status.clone())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no approval cell for {call_id}"))
}

fn pending_call(t: &Transcript) -> Option<&CallId> {
    t.pending_approval().map(|r| &r.call_id)
}

/// A live run that made a shell call and asked about it (event seqs 5..=9).
fn asking() -> Transcript {
    let mut t = attached();
    apply_all(
        &mut t,
        &[
            committed(5, entry(1, run_start())),
            committed(6, entry(2, user_text("run the tests"))),
            committed(
                7,
                entry(
                    3,
                    tool_call("call_1", "shell", r#"{"command":"cargo test"}"#),
                ),
            ),
            committed(8, entry(4, approval_request(shell_request("call_1")))),
            ServerMsg::State {
                seq: EventSeq::new(9),
                state: PodState::WaitingForApproval,
            },
        ],
    );
    t
}

#[test]
fn a_request_is_pending_until_its_answer_commits() {
    let mut t = asking();
    assert_eq!(
        kinds(&t),
        ["segment_start", "user", "tool", "approval"],
        "the request is a cell of its own after its call"
    );
    assert_eq!(pending_call(&t), Some(&CallId::new("call_1")));
    assert_eq!(t.status().pending_approval.as_ref(), t.pending_approval());
    assert!(t.status().waiting_for_approval);
    assert_eq!(approval_status(&t, "call_1"), ApprovalStatus::Waiting);

    let revision = t.cells()[3].revision;
    assert!(t.apply(&committed(
        10,
        entry(5, approval_answer("call_1", ApprovalDecision::Approve))
    )));
    assert_eq!(pending_call(&t), None);
    assert_eq!(approval_status(&t, "call_1"), ApprovalStatus::Approved);
    assert!(t.cells()[3].revision > revision, "the cell re-lays out");
    assert_eq!(kinds(&t).len(), 4, "the answer updates the request's cell");
    // The pod still says it waits until its next `state` event.
    assert!(t.status().waiting_for_approval);
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(11),
        state: PodState::Running,
    });
    assert!(!t.status().waiting_for_approval);
}

#[test]
fn denials_and_standing_approvals_show_on_the_cell() {
    let mut t = asking();
    let second = ApprovalRequest {
        call_id: CallId::new("call_2"),
        tool: "write_file".into(),
        arguments: r#"{"path":"a.txt","content":"x"}"#.into(),
        summary: "write_file: a.txt".into(),
        always: None,
        replaces: None,
    };
    t.apply(&committed(10, entry(5, approval_request(second))));
    assert_eq!(
        pending_call(&t),
        Some(&CallId::new("call_1")),
        "the oldest request first"
    );

    // Answering the newer one first leaves the older pending.
    let always = StandingApproval {
        tool: "write_file".into(),
        rule: None,
    };
    t.apply(&committed(
        11,
        entry(
            6,
            approval_answer("call_2", ApprovalDecision::ApproveAlways(always.clone())),
        ),
    ));
    assert_eq!(pending_call(&t), Some(&CallId::new("call_1")));
    assert_eq!(
        approval_status(&t, "call_2"),
        ApprovalStatus::ApprovedAlways(always)
    );

    let deny = ApprovalDecision::Deny {
        reason: "not now".into(),
    };
    t.apply(&committed(12, entry(7, approval_answer("call_1", deny))));
    assert_eq!(pending_call(&t), None);
    assert_eq!(
        approval_status(&t, "call_1"),
        ApprovalStatus::Denied {
            reason: "not now".into()
        }
    );
}

#[test]
fn an_answer_to_nothing_pending_changes_nothing() {
    let mut t = asking();
    t.apply(&committed(
        10,
        entry(5, approval_answer("call_1", ApprovalDecision::Approve)),
    ));
    let before = t.cells().to_vec();
    assert!(!t.apply(&committed(
        11,
        entry(6, approval_answer("call_1", ApprovalDecision::Approve))
    )));
    assert!(!t.apply(&committed(
        12,
        entry(7, approval_answer("nobody", ApprovalDecision::Approve))
    )));
    assert_eq!(t.cells(), before.as_slice());
}

#[test]
fn the_end_of_the_run_closes_what_nobody_answered() {
    let mut t = asking();
    t.apply(&committed(10, entry(5, run_end(RunEndReason::Cancelled))));
    assert_eq!(pending_call(&t), None);
    assert_eq!(approval_status(&t, "call_1"), ApprovalStatus::Closed);
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(11),
        state: PodState::Idle,
    });
    assert!(!t.status().waiting_for_approval);
}

/// A snapshot of a pod whose log holds `entries` after its segment start.
fn snapshot(state: PodState, entries: Vec<seedpod_protocol::EntryKind>) -> Transcript {
    let mut log = vec![entry(0, segment_start())];
    log.extend(
        entries
            .into_iter()
            .enumerate()
            .map(|(n, kind)| entry(n as u64 + 1, kind)),
    );
    let mut t = Transcript::new();
    apply_all(
        &mut t,
        &[
            snapshot_begin(20, state),
            ServerMsg::SnapshotEntries { entries: log },
            in_flight("", "", vec![]),
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(20),
            },
        ],
    );
    t
}

#[test]
fn a_snapshot_finds_the_same_pending_request_as_a_live_client() {
    let asked = || {
        vec![
            run_start(),
            user_text("run the tests"),
            tool_call("call_1", "shell", r#"{"command":"cargo test"}"#),
            approval_request(shell_request("call_1")),
        ]
    };
    let t = snapshot(PodState::WaitingForApproval, asked());
    assert_eq!(pending_call(&t), Some(&CallId::new("call_1")));
    assert!(t.status().waiting_for_approval);
    assert_eq!(kinds(&t), kinds(&asking()));

    let mut answered = asked();
    answered.push(approval_answer("call_1", ApprovalDecision::Approve));
    let t = snapshot(PodState::Running, answered);
    assert_eq!(pending_call(&t), None);
    assert!(!t.status().waiting_for_approval);
    assert_eq!(approval_status(&t, "call_1"), ApprovalStatus::Approved);

    let mut cancelled = asked();
    cancelled.push(run_end(RunEndReason::Cancelled));
    let t = snapshot(PodState::Idle, cancelled);
    assert_eq!(pending_call(&t), None);
    assert_eq!(approval_status(&t, "call_1"), ApprovalStatus::Closed);
}

#[test]
fn a_resync_while_asking_keeps_one_request() {
    let mut t = asking();
    apply_all(
        &mut t,
        &[
            snapshot_begin(30, PodState::WaitingForApproval),
            ServerMsg::SnapshotEntries {
                entries: vec![
                    entry(0, segment_start()),
                    entry(1, run_start()),
                    entry(
                        2,
                        tool_call("call_1", "shell", r#"{"command":"cargo test"}"#),
                    ),
                    entry(3, approval_request(shell_request("call_1"))),
                ],
            },
            ServerMsg::SnapshotEnd {
                seq: EventSeq::new(30),
            },
        ],
    );
    assert_eq!(pending_call(&t), Some(&CallId::new("call_1")));
    let approvals = kinds(&t).iter().filter(|k| **k == "approval").count();
    assert_eq!(approvals, 1);
}

#[test]
fn waiting_keeps_the_runs_clock() {
    let mut t = attached();
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(5),
        state: PodState::Running,
    });
    let since = t.status().running_since.expect("running");
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(6),
        state: PodState::WaitingForApproval,
    });
    assert!(t.status().waiting_for_approval);
    assert_eq!(t.status().running_since, Some(since));
    t.apply(&ServerMsg::State {
        seq: EventSeq::new(7),
        state: PodState::Running,
    });
    assert_eq!(
        t.status().running_since,
        Some(since),
        "the same run goes on"
    );
}

/// The status of the tool call cell for `call_id`.
fn call_status(t: &Transcript, call_id: &str) -> seedpod_transcript::ToolStatus {
    t.cells()
        .iter()
        .find_map(|cell| match &cell.kind {
            CellKind::ToolCall {
                call_id: id,
                status,
                ..
            } if *id == CallId::new(call_id) => Some(*status),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no call cell for {call_id}"))
}

#[test]
fn the_call_cell_says_it_waits_for_approval_until_answered() {
    use seedpod_transcript::ToolStatus;
    let mut t = asking();
    assert_eq!(call_status(&t, "call_1"), ToolStatus::AwaitingApproval);
    t.apply(&committed(
        10,
        entry(
            5,
            approval_answer(
                "call_1",
                ApprovalDecision::Deny {
                    reason: "no".into(),
                },
            ),
        ),
    ));
    assert_eq!(call_status(&t, "call_1"), ToolStatus::Running);
}

#[test]
fn a_revoked_standing_approval_leaves_a_line_in_the_transcript() {
    let mut t = asking();
    let standing = StandingApproval {
        tool: "shell".into(),
        rule: Some(seedpod_protocol::CommandRule::Prefix(vec![
            "git".into(),
            "status".into(),
        ])),
    };
    t.apply(&committed(
        20,
        entry(
            12,
            seedpod_protocol::EntryKind::ApprovalRevoked { standing },
        ),
    ));
    let revoked = t.cells().iter().find_map(|cell| match &cell.kind {
        CellKind::ApprovalRevoked { rule } => Some(rule.clone()),
        _ => None,
    });
    assert_eq!(revoked.as_deref(), Some("shell: git status …"));
}

#[test]
fn a_call_a_standing_rule_let_through_says_which_rule() {
    let mut t = asking();
    let standing = StandingApproval {
        tool: "shell".into(),
        rule: Some(seedpod_protocol::CommandRule::Prefix(vec![
            "cargo".into(),
            "test".into(),
        ])),
    };
    t.apply(&committed(
        20,
        entry(
            12,
            seedpod_protocol::EntryKind::ApprovalStanding {
                call_id: CallId::new("call_1"),
                standing,
            },
        ),
    ));
    let allowed = t.cells().iter().find_map(|cell| match &cell.kind {
        CellKind::StandingAllowed { rule } => Some(rule.clone()),
        _ => None,
    });
    assert_eq!(allowed.as_deref(), Some("shell: cargo test …"));
}
