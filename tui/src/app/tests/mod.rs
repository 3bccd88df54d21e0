//! The app without a terminal: keys and frames in, effects and state out.

use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use seedpod_client::Welcome;
use seedpod_protocol::{
    AckOutcome, ApprovalAnswer, ApprovalDecision, ApprovalRequest, CallId, Completion,
    CompletionKind, Entry, EntryKind, EntrySeq, ErrorCode, EventSeq, InstanceId, Method, ModelItem,
    PodCommand, PodName, PodState, QueueId, RequestId, RunEndReason, Segment, SegmentId, ServerMsg,
};
use seedpod_transcript::{ConnectionState, Theme};

use super::{App, Effect, ExitReason, Overlay, Pending, TYPING_PAUSE};
use crate::connection::{ConnectionEvent, RequestTag};
use crate::history::{HistoryEntry, InputHistory};

mod branch;
mod children;
mod earlier;
mod mcp_popup;
mod standing;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

struct Harness {
    app: App,
    now: Instant,
    seq: u64,
}

impl Harness {
    /// An app attached to an idle pod `p` with an empty transcript.
    fn connected() -> Harness {
        let mut h = Harness {
            app: App::new(
                &PodName::new("p").unwrap(),
                InputHistory::in_memory(),
                Theme::plain(),
                crate::test_support::DECLS,
            ),
            now: Instant::now(),
            seq: 10,
        };
        h.link(ConnectionEvent::Connected(Welcome {
            pod: "p".parse().unwrap(),
            server_version: "0.1.0".into(),
            state: PodState::Idle,
            instance: InstanceId::new("i"),
            seq: EventSeq::new(10),
        }));
        h.frame(ServerMsg::SnapshotBegin {
            context: Default::default(),
            seq: EventSeq::new(10),
            state: PodState::Idle,
            greeting: "pod p".into(),
            segment_id: SegmentId::new("s"),
            entries: 0,
            message_cap: None,
        });
        h.frame(ServerMsg::SnapshotEnd {
            seq: EventSeq::new(10),
        });
        h
    }

    fn link(&mut self, event: ConnectionEvent) -> Vec<Effect> {
        self.app.on_link(event, self.now).1
    }

    fn frame(&mut self, msg: ServerMsg) {
        self.link(ConnectionEvent::Frame(msg));
    }

    fn state(&mut self, state: PodState) {
        self.seq += 1;
        self.frame(ServerMsg::State {
            seq: EventSeq::new(self.seq),
            state,
        });
    }

    /// A live `committed` event.
    fn commit(&mut self, kind: EntryKind) {
        self.seq += 1;
        let entry = Entry {
            v: 1,
            seq: EntrySeq::new(self.seq),
            ts: 1,
            kind,
        };
        self.frame(ServerMsg::Committed {
            seq: EventSeq::new(self.seq),
            entry,
        });
    }

    /// A run that made a shell call and now waits for approval of it.
    fn asking(&mut self) {
        self.state(PodState::Running);
        self.commit(EntryKind::ApprovalRequest(ApprovalRequest {
            call_id: CallId::new("call_1"),
            tool: "shell".into(),
            arguments: r#"{"command":"cargo test"}"#.into(),
            summary: "shell: cargo test".into(),
            always: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
            replaces: None,
        }));
        self.state(PodState::WaitingForApproval);
    }

    /// `asking`, and a pause in typing since: keys answer it.
    fn asking_ready(&mut self) {
        self.asking();
        self.later(TYPING_PAUSE);
    }

    fn key(&mut self, key: KeyEvent) -> Vec<Effect> {
        self.app.on_key(key, self.now)
    }

    fn type_text(&mut self, text: &str) -> Vec<Effect> {
        let mut effects = Vec::new();
        for c in text.chars() {
            effects.extend(self.key(key(KeyCode::Char(c))));
        }
        effects
    }

    fn later(&mut self, by: Duration) {
        self.now += by;
    }

    fn flash(&self) -> String {
        self.app
            .flash
            .as_ref()
            .map(|f| f.text.clone())
            .unwrap_or_default()
    }
}

/// The single request among `effects`.
fn request(effects: &[Effect]) -> (RequestTag, Method) {
    let requests: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request { tag, method } => Some((*tag, method.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(requests.len(), 1, "{effects:?}");
    requests
        .into_iter()
        .next()
        .unwrap_or((RequestTag::new(0), Method::Unknown))
}

#[test]
fn enter_sends_the_composer_as_segments_and_clears_it() {
    let mut h = Harness::connected();
    assert!(h.type_text("hello").is_empty());
    let effects = h.key(key(KeyCode::Enter));
    let (_, method) = request(&effects);
    assert_eq!(
        method,
        Method::Run {
            segments: vec![Segment::text("hello")]
        }
    );
    assert!(h.app.composer.is_empty());
    assert_eq!(h.app.history.len(), 1);
}

/// An MCP server's prompt typed out by hand is sent as the invocation (the pod runs it or says
/// why not); another unknown `/name` is still refused here.
#[test]
fn a_hand_typed_mcp_prompt_is_sent_as_an_invocation() {
    let mut h = Harness::connected();
    h.type_text("/mcp__t__greet \"Ann Lee\" style=warm ");
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Run {
            segments: vec![Segment::WorkflowInvoke {
                slug: "mcp__t__greet".into(),
                args: "\"Ann Lee\" style=warm".into(),
            }]
        }
    );
    let mut h = Harness::connected();
    h.type_text("/greet Ann");
    assert!(h.key(key(KeyCode::Enter)).is_empty());
    assert!(
        h.flash().contains("unknown command /greet"),
        "{}",
        h.flash()
    );
}

#[test]
fn modified_enter_and_ctrl_j_insert_newlines() {
    let mut h = Harness::connected();
    h.type_text("a");
    h.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    h.type_text("b");
    h.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    h.type_text("c");
    h.key(ctrl('j'));
    h.type_text("d");
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Run {
            segments: vec![Segment::text("a\nb\nc\nd")]
        }
    );
}

#[test]
fn input_is_kept_while_disconnected() {
    let mut h = Harness::connected();
    h.link(ConnectionEvent::Down {
        attempt: 1,
        reason: "the pod closed the connection".into(),
    });
    assert!(matches!(
        h.app.link,
        ConnectionState::Reconnecting { attempt: 1, .. }
    ));
    h.type_text("keep me");
    assert!(h.key(key(KeyCode::Enter)).is_empty());
    assert_eq!(h.app.composer.text(), "keep me");
    assert!(h.flash().contains("not connected"), "{}", h.flash());
    h.link(ConnectionEvent::Connected(Welcome {
        pod: "p".parse().unwrap(),
        server_version: "0.1.0".into(),
        state: PodState::Idle,
        instance: InstanceId::new("j"),
        seq: EventSeq::new(0),
    }));
    assert_eq!(h.app.link, ConnectionState::Connected);
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert!(
        matches!(method, Method::Run { .. }),
        "sent once reconnected"
    );
}

#[test]
fn a_big_paste_is_sent_as_a_paste_segment() {
    let mut h = Harness::connected();
    h.type_text("see ");
    let log = "error: boom\n".repeat(50);
    assert!(h.app.on_paste(&log, h.now).is_empty());
    assert_eq!(
        h.app.composer.text(),
        "see [Paste #1 · 600 chars · 50 lines]"
    );
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    let Method::Run { segments } = method else {
        panic!("not a run");
    };
    assert_eq!(segments[0], Segment::text("see "));
    assert!(
        matches!(&segments[1], Segment::Paste { id: 1, lines: 50, chars: 600, content } if *content == log)
    );
}

#[test]
fn esc_pauses_then_cancels() {
    let mut h = Harness::connected();
    assert!(h.key(key(KeyCode::Esc)).is_empty(), "idle: nothing to stop");
    h.state(PodState::Running);
    let (_, first) = request(&h.key(key(KeyCode::Esc)));
    assert_eq!(first, Method::Pause);
    // Before the pod reports `paused`, a second Esc already means cancel.
    let (_, second) = request(&h.key(key(KeyCode::Esc)));
    assert_eq!(second, Method::Cancel);
    h.state(PodState::Paused);
    let (tag, third) = request(&h.key(key(KeyCode::Esc)));
    assert_eq!(third, Method::Cancel);
    let flash = |h: &Harness| h.app.flash.as_ref().map(|f| f.text.clone());
    assert_eq!(flash(&h).as_deref(), Some("cancelling the turn"));
    // Once the pod has cancelled, the footer says so rather than "cancelling" for seconds.
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Ack {
            id: RequestId::new(3),
            outcome: AckOutcome::Done,
            queue_id: None,
            entry_seq: None,
        },
    });
    assert_eq!(flash(&h).as_deref(), Some("cancelled the turn"));
}

#[test]
fn esc_while_compacting_asks_the_pod_to_stop_once() {
    let mut h = Harness::connected();
    h.state(PodState::Compacting);
    let (_, first) = request(&h.key(key(KeyCode::Esc)));
    assert_eq!(first, Method::Pause, "the pod stops the compaction");
    assert!(h.key(key(KeyCode::Esc)).is_empty(), "one request at a time");
}

#[test]
fn ctrl_c_clears_then_detaches_on_a_quick_double_press() {
    let mut h = Harness::connected();
    h.type_text("draft");
    assert!(h.key(ctrl('c')).is_empty());
    assert!(h.app.composer.is_empty());
    assert!(h.key(ctrl('c')).is_empty());
    assert!(h.flash().contains("again to detach"));
    h.later(Duration::from_millis(1500));
    assert!(h.key(ctrl('c')).is_empty(), "too slow: starts over");
    h.later(Duration::from_millis(300));
    assert_eq!(h.key(ctrl('c')), vec![Effect::Exit(ExitReason::Detached)]);
}

#[test]
fn ctrl_d_detaches_only_from_an_empty_composer() {
    let mut h = Harness::connected();
    h.type_text("ab");
    h.key(key(KeyCode::Left));
    assert!(h.key(ctrl('d')).is_empty());
    assert_eq!(
        h.app.composer.text(),
        "a",
        "Ctrl-D deleted the next character"
    );
    h.key(ctrl('c'));
    assert_eq!(h.key(ctrl('d')), vec![Effect::Exit(ExitReason::Detached)]);
    assert_eq!(h.app.exit, Some(ExitReason::Detached));
}

#[test]
fn stop_asks_first_and_ends_the_tui_when_the_pod_stops() {
    let mut h = Harness::connected();
    h.type_text("/stop");
    assert!(h.key(key(KeyCode::Enter)).is_empty());
    assert_eq!(h.app.overlay, Overlay::ConfirmStop);
    assert!(h.key(key(KeyCode::Char('n'))).is_empty());
    assert_eq!(h.app.overlay, Overlay::None);
    h.type_text("/stop");
    h.key(key(KeyCode::Enter));
    let (tag, method) = request(&h.key(key(KeyCode::Char('y'))));
    assert_eq!(method, Method::Shutdown);
    let effects = h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Ack {
            id: RequestId::new(3),
            outcome: AckOutcome::Done,
            queue_id: None,
            entry_seq: None,
        },
    });
    assert_eq!(effects, vec![Effect::Exit(ExitReason::Stopped)]);
}

#[test]
fn pod_commands_are_sent_to_the_pod_and_their_answers_shown() {
    let mut h = Harness::connected();
    h.type_text("/clear");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Command {
            name: PodCommand::Clear,
            args: String::new()
        }
    );
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::CommandDone {
            id: RequestId::new(1),
            command: PodCommand::Clear,
            message: "started a new segment 0193…; the old one (0192…) stays in the log".into(),
        },
    });
    assert!(h.flash().contains("started a new segment"), "{}", h.flash());
    assert!(
        h.flash().contains("old one stays in the log"),
        "{}",
        h.flash()
    );

    h.type_text("/model  gpt-5 ");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Command {
            name: PodCommand::Model,
            args: "gpt-5".into()
        }
    );
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::CommandDone {
            id: RequestId::new(2),
            command: PodCommand::Model,
            message: "switched to gpt-5 (was script)\nfor the next requests".into(),
        },
    });
    assert_eq!(
        h.flash(),
        "switched to gpt-5 (was script) for the next requests"
    );

    h.type_text("/memory use tabs in Makefiles");
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Command {
            name: PodCommand::Memory,
            args: "use tabs in Makefiles".into()
        }
    );
}

#[test]
fn pod_commands_without_their_argument_explain_themselves() {
    let mut h = Harness::connected();
    h.type_text("/memory");
    assert!(h.key(key(KeyCode::Enter)).is_empty());
    assert!(h.flash().contains("usage: /memory TEXT"), "{}", h.flash());
    h.type_text("/bogus");
    assert!(h.key(key(KeyCode::Enter)).is_empty());
    assert!(h.flash().contains("unknown command /bogus"));
    assert_eq!(h.app.composer.text(), "/bogus", "kept for fixing");
}

#[test]
fn a_refused_pod_command_says_why() {
    let mut h = Harness::connected();
    h.state(PodState::Running);
    h.type_text("/clear");
    let (tag, _) = request(&h.key(key(KeyCode::Enter)));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(1)),
            code: ErrorCode::Busy,
            message: "the pod is running; /clear starts a new segment only between turns".into(),
        },
    });
    assert!(
        h.flash().starts_with("/clear: the pod is running"),
        "{}",
        h.flash()
    );
}

#[test]
fn copy_takes_the_last_answer() {
    let mut h = Harness::connected();
    h.type_text("/copy");
    assert!(h.key(key(KeyCode::Enter)).is_empty());
    assert!(h.flash().contains("no answer"));
    h.seq += 1;
    h.frame(ServerMsg::Committed {
        seq: EventSeq::new(h.seq),
        entry: Entry {
            v: 1,
            seq: EntrySeq::new(1),
            ts: 1,
            kind: EntryKind::AssistantItem {
                item: ModelItem::AssistantText {
                    text: "the answer".into(),
                },
            },
        },
    });
    h.type_text("/copy");
    assert_eq!(
        h.key(key(KeyCode::Enter)),
        vec![Effect::Copy("the answer".into())]
    );
}

#[test]
fn up_and_down_walk_the_history_and_keep_the_draft() {
    let mut h = Harness::connected();
    for text in ["first", "second"] {
        h.type_text(text);
        h.key(key(KeyCode::Enter));
    }
    h.type_text("dra");
    h.key(key(KeyCode::Up));
    assert_eq!(h.app.composer.text(), "second");
    h.key(key(KeyCode::Up));
    assert_eq!(h.app.composer.text(), "first");
    h.key(key(KeyCode::Down));
    h.key(key(KeyCode::Down));
    assert_eq!(h.app.composer.text(), "dra");
}

#[test]
fn ctrl_r_searches_the_history() {
    let mut h = Harness::connected();
    for text in ["fix the parser", "run the tests", "parser again"] {
        h.type_text(text);
        h.key(key(KeyCode::Enter));
    }
    h.key(ctrl('r'));
    h.type_text("pars");
    assert_eq!(h.app.search_match(), Some("parser again"));
    h.key(ctrl('r'));
    assert_eq!(h.app.search_match(), Some("fix the parser"));
    h.key(key(KeyCode::Enter));
    assert_eq!(h.app.overlay, Overlay::None);
    assert_eq!(h.app.composer.text(), "fix the parser");
}

#[test]
fn file_completion_asks_the_pod_and_sends_a_file_reference() {
    let mut h = Harness::connected();
    let effects = h.type_text("read @sr");
    let asks: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request {
                tag,
                method: Method::ListCompletions { kind, prefix },
            } => Some((*tag, *kind, prefix.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(asks.len(), 3, "one per keystroke from @ on: {asks:?}");
    let (tag, kind, prefix) = asks[2].clone();
    assert_eq!((kind, prefix.as_str()), (CompletionKind::File, "sr"));
    // The answer to the older prefix arrives late and is ignored.
    h.link(ConnectionEvent::Reply {
        tag: asks[1].0,
        msg: ServerMsg::Completions {
            id: RequestId::new(1),
            kind,
            items: vec![Completion::new("stale/", "")],
            truncated: false,
        },
    });
    assert!(h.app.popup.as_ref().is_some_and(|p| p.is_empty()));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Completions {
            id: RequestId::new(2),
            kind,
            items: vec![Completion::new("src/main.rs", "")],
            truncated: false,
        },
    });
    h.key(key(KeyCode::Tab));
    assert_eq!(h.app.composer.text(), "read @src/main.rs ");
    assert!(h.app.popup.is_none());
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Run {
            segments: vec![
                Segment::text("read "),
                Segment::FileRef {
                    path: "src/main.rs".into()
                },
                Segment::text(" "),
            ]
        }
    );
}

#[test]
fn a_refused_input_goes_back_into_the_composer() {
    let mut h = Harness::connected();
    h.type_text("important");
    let (tag, _) = request(&h.key(key(KeyCode::Enter)));
    assert!(h.app.composer.is_empty());
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(1)),
            code: ErrorCode::StorageFailed,
            message: "disk full".into(),
        },
    });
    assert_eq!(h.app.composer.text(), "important");
    assert!(h.flash().contains("disk full"));
}

#[test]
fn input_sent_while_running_is_queued_by_the_pod() {
    let mut h = Harness::connected();
    h.state(PodState::Running);
    h.type_text("later");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert!(matches!(method, Method::Run { .. }));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Ack {
            id: RequestId::new(1),
            outcome: AckOutcome::Queued,
            queue_id: Some(QueueId::new(1)),
            entry_seq: Some(EntrySeq::new(4)),
        },
    });
    assert!(h.flash().contains("queued"));
}

#[test]
fn the_picker_lists_pods_and_attaches_to_the_chosen_one() {
    let mut h = Harness::connected();
    assert_eq!(h.key(ctrl('p')), vec![Effect::ListPods]);
    let listing = |name: &str| seedpod_client::PodListing {
        name: name.parse().unwrap(),
        meta: seedpod_store_meta(name),
        liveness: seedpod_client::Liveness::Stopped,
        last_activity_ms: None,
    };
    h.app.on_pods(
        vec![listing("a"), listing("p"), listing("z")],
        SystemTime::now(),
    );
    let Overlay::Picker(picker) = &h.app.overlay else {
        panic!("no picker");
    };
    assert_eq!(picker.selected, 1, "the current pod is preselected");
    h.key(key(KeyCode::Down));
    assert_eq!(
        h.key(key(KeyCode::Enter)),
        vec![Effect::Attach("z".parse().unwrap())]
    );
    assert_eq!(h.app.overlay, Overlay::None);
}

#[test]
fn a_lost_connection_fails_pending_requests_and_a_pending_stop_ends_the_tui() {
    let mut h = Harness::connected();
    h.state(PodState::Running);
    let (tag, _) = request(&h.key(key(KeyCode::Esc)));
    h.link(ConnectionEvent::Failed {
        tag,
        reason: "the connection was lost before the pod answered".into(),
    });
    assert!(h.flash().contains("connection was lost"));
    assert!(!h.app.pending.values().any(|p| *p == Pending::Pause));
    h.type_text("/stop");
    h.key(key(KeyCode::Enter));
    h.key(key(KeyCode::Char('y')));
    let effects = h.link(ConnectionEvent::Down {
        attempt: 1,
        reason: "the pod is stopping".into(),
    });
    assert_eq!(effects, vec![Effect::Exit(ExitReason::Stopped)]);
}

#[test]
fn history_entries_keep_their_chips() {
    let mut h = Harness::connected();
    h.app.on_paste(&"x\n".repeat(15), h.now);
    h.key(key(KeyCode::Enter));
    h.key(key(KeyCode::Up));
    let HistoryEntry { text, pastes } = h.app.composer.entry();
    assert_eq!(text, "[Paste #1 · 30 chars · 15 lines]");
    assert_eq!(pastes.len(), 1);
}

fn seedpod_store_meta(name: &str) -> seedpod_client::pods::PodMeta {
    let config =
        seedpod_client::pods::PodConfig::new(seedpod_protocol::ProviderKind::Scripted, "m");
    seedpod_client::pods::PodMeta::new(
        PodName::new(name.to_string()).unwrap(),
        format!("/work/{name}").into(),
        SegmentId::new("s"),
        config,
        0,
    )
}

#[test]
fn a_command_typed_in_full_runs_on_the_first_enter() {
    let mut h = Harness::connected();
    let effects = h.type_text("/help");
    let (tag, _) = effects
        .iter()
        .rev()
        .find_map(|e| match e {
            Effect::Request {
                tag,
                method: Method::ListCompletions { kind, .. },
            } if *kind == CompletionKind::Command => Some((*tag, *kind)),
            _ => None,
        })
        .expect("asked for commands");
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Completions {
            id: RequestId::new(1),
            kind: CompletionKind::Command,
            items: vec![Completion::new("help", "keys and commands")],
            truncated: false,
        },
    });
    assert!(h.app.popup.as_ref().is_some_and(|p| !p.is_empty()));
    h.key(key(KeyCode::Enter));
    assert_eq!(h.app.overlay, Overlay::Help(0));
}

#[test]
fn up_on_an_empty_composer_takes_back_the_newest_queued_input() {
    let mut h = Harness::connected();
    h.state(PodState::Running);
    h.seq += 1;
    h.frame(ServerMsg::Queued {
        seq: EventSeq::new(h.seq),
        queue: vec![
            seedpod_protocol::QueueEntry {
                queue_id: QueueId::new(3),
                item: seedpod_protocol::QueuedItem::Run {
                    segments: vec![Segment::text("older")],
                },
            },
            seedpod_protocol::QueueEntry {
                queue_id: QueueId::new(4),
                item: seedpod_protocol::QueuedItem::Run {
                    segments: vec![Segment::text("newer")],
                },
            },
            seedpod_protocol::QueueEntry {
                queue_id: QueueId::new(5),
                item: seedpod_protocol::QueuedItem::Notify {
                    message: "not mine to take".into(),
                    wake: true,
                },
            },
        ],
    });
    let effects = h.key(key(KeyCode::Up));
    let (tag, method) = request(&effects);
    assert_eq!(
        method,
        Method::CancelQueued {
            queue_id: QueueId::new(4)
        }
    );
    assert!(
        h.app.composer.is_empty(),
        "nothing moves before the pod agrees"
    );

    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Ack {
            id: RequestId::new(1),
            outcome: AckOutcome::Done,
            queue_id: None,
            entry_seq: None,
        },
    });
    assert_eq!(h.app.composer.text(), "newer");
    assert!(h.flash().contains("withdrawn"), "{}", h.flash());

    // Too late (it was already sent): the composer stays as it is and says why.
    h.key(ctrl('c'));
    let effects = h.key(key(KeyCode::Up));
    let (tag, _) = request(&effects);
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(2)),
            code: ErrorCode::InvalidRequest,
            message: "nothing is queued as #4: it may already have been sent".into(),
        },
    });
    assert!(h.flash().contains("not withdrawn"), "{}", h.flash());
}

/// The call id the approval modal asks about, if it shows.
fn modal_call(h: &Harness) -> Option<CallId> {
    h.app.approval_modal().map(|m| m.request.call_id.clone())
}

fn answer_entry(decision: ApprovalDecision) -> EntryKind {
    EntryKind::ApprovalAnswer {
        call_id: CallId::new("call_1"),
        decision,
    }
}

#[test]
fn a_pending_request_opens_the_modal_and_y_approves_it() {
    let mut h = Harness::connected();
    assert_eq!(modal_call(&h), None);
    h.asking();
    assert_eq!(modal_call(&h), Some(CallId::new("call_1")));
    assert!(h.app.transcript.status().waiting_for_approval);
    h.later(TYPING_PAUSE);

    let (tag, method) = request(&h.key(key(KeyCode::Char('y'))));
    assert_eq!(
        method,
        Method::Approve {
            call_id: Some(CallId::new("call_1")),
            answer: ApprovalAnswer::Approve,
            reason: None,
        }
    );
    assert!(h.app.approval_modal().is_some_and(|m| m.sending));
    h.later(TYPING_PAUSE);
    assert!(
        h.key(key(KeyCode::Char('y'))).is_empty(),
        "one answer per request"
    );
    assert!(h.app.composer.is_empty(), "the modal keeps the keys");

    // The pod commits the answer before it acknowledges it.
    h.commit(answer_entry(ApprovalDecision::Approve));
    assert_eq!(modal_call(&h), None);
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Ack {
            id: RequestId::new(1),
            outcome: AckOutcome::Done,
            queue_id: None,
            entry_seq: Some(EntrySeq::new(3)),
        },
    });
    assert!(h.flash().starts_with("approved"), "{}", h.flash());
    h.type_text("y");
    assert_eq!(h.app.composer.text(), "y", "keys are the composer's again");
}

/// Keys at `interval` apart, as a person types `text`; the effects of all of them.
fn type_steadily(h: &mut Harness, text: &str, interval: Duration) -> Vec<Effect> {
    let mut effects = Vec::new();
    for c in text.chars() {
        h.later(interval);
        effects.extend(h.key(key(KeyCode::Char(c))));
    }
    effects
}

/// Eight keys a second: a steady typist.
const STEADY: Duration = Duration::from_millis(125);

#[test]
fn keys_typed_as_the_modal_opens_go_to_the_composer() {
    let mut h = Harness::connected();
    h.type_text("fix the b");
    h.asking();
    let opened = h.now;
    // Typing goes on while the modal shows, for longer than the pause it waits for.
    let effects = type_steadily(&mut h, "ug, then say yes and any answer is no", STEADY);
    assert!(effects.is_empty(), "typing answered: {effects:?}");
    assert!(
        h.key(key(KeyCode::Enter)).is_empty(),
        "Enter sent the draft"
    );
    let modal = h.app.approval_modal().expect("still asking");
    assert!(!modal.confirming && modal.reason.is_none() && !modal.sending);
    assert!(h.now > opened + TYPING_PAUSE * 4);
    assert_eq!(modal.ready_at, Some(h.now + TYPING_PAUSE));
    assert_eq!(
        h.app.composer.text(),
        "fix the bug, then say yes and any answer is no",
        "every key typed is in the composer"
    );
    // The redraw that says the modal takes answers is on the clock.
    assert_eq!(h.app.next_tick(h.now), Some(h.now + TYPING_PAUSE));

    h.later(TYPING_PAUSE - Duration::from_millis(1));
    assert!(
        h.key(key(KeyCode::Char('y'))).is_empty(),
        "y before the pause"
    );
    assert!(h.app.composer.text().ends_with("noy"));
    h.later(TYPING_PAUSE);
    let (_, method) = request(&h.key(key(KeyCode::Char('y'))));
    assert!(
        matches!(
            method,
            Method::Approve {
                answer: ApprovalAnswer::Approve,
                ..
            }
        ),
        "{method:?}"
    );
}

#[test]
fn a_y_inside_a_word_typed_after_a_pause_never_approves() {
    let mut h = Harness::connected();
    h.asking_ready();
    // The pause is over; then a sentence, at any ordinary speed.
    for interval in [STEADY, Duration::from_millis(400)] {
        let effects = type_steadily(&mut h, "ok so my tests say yes", interval);
        assert!(effects.is_empty(), "typing answered: {effects:?}");
        assert!(h.app.approval_modal().is_some_and(|m| m.reason.is_none()));
        h.app.composer.clear();
        h.later(TYPING_PAUSE);
    }
    // A paste is typing too.
    h.app.on_paste("pasted", h.now);
    h.later(Duration::from_millis(200));
    assert!(
        h.key(key(KeyCode::Char('y'))).is_empty(),
        "y right after a paste"
    );
}

#[test]
fn the_first_key_after_a_pause_that_is_not_an_answer_is_typed() {
    let mut h = Harness::connected();
    h.asking_ready();
    assert!(h.key(key(KeyCode::Char('o'))).is_empty());
    assert_eq!(h.app.composer.text(), "o");
    // Esc hides the modal whenever it comes: it answers nothing.
    h.later(Duration::from_millis(10));
    assert!(h.key(key(KeyCode::Esc)).is_empty());
    assert_eq!(modal_call(&h), None);
    assert_eq!(h.app.composer.text(), "o");
}

#[test]
fn a_modal_shown_again_waits_again() {
    let mut h = Harness::connected();
    h.asking_ready();
    h.key(key(KeyCode::Esc));
    h.later(Duration::from_secs(5));
    h.key(ctrl('a'));
    assert_eq!(modal_call(&h), Some(CallId::new("call_1")));
    h.later(Duration::from_millis(100));
    assert!(
        h.key(key(KeyCode::Char('y'))).is_empty(),
        "too soon after Ctrl-A"
    );
    h.later(TYPING_PAUSE);
    assert_eq!(
        request(&h.key(key(KeyCode::Char('y')))).0,
        RequestTag::new(1)
    );
}

#[test]
fn arrows_scroll_an_edits_diff_and_answer_nothing() {
    let mut h = Harness::connected();
    h.state(PodState::Running);
    let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
    h.commit(EntryKind::ApprovalRequest(ApprovalRequest {
        call_id: CallId::new("call_1"),
        tool: "edit_file".into(),
        arguments: serde_json::json!({"path": "a.rs", "old": old, "new": ""}).to_string(),
        summary: "edit_file: a.rs".into(),
        always: None,
        replaces: None,
    }));
    // As the frame laid it out: 30 rows in 10.
    h.app.approval_laid_out(30, 10, vec![]);
    // From the start, pause or not: scrolling is not an answer, and not typing either.
    assert!(h.key(key(KeyCode::Down)).is_empty());
    assert!(h.key(key(KeyCode::Down)).is_empty());
    h.key(key(KeyCode::Up));
    assert_eq!(h.app.approval_modal().map(|m| m.scroll.top()), Some(1));
    h.key(key(KeyCode::End));
    assert_eq!(
        h.app.approval_modal().map(|m| m.scroll.window().below),
        Some(0),
        "End shows the last row"
    );
    h.key(key(KeyCode::Home));
    assert_eq!(h.app.approval_modal().map(|m| m.scroll.top()), Some(0));
    assert!(h.app.composer.is_empty());
}

#[test]
fn a_asks_to_confirm_before_approving_always() {
    let mut h = Harness::connected();
    h.asking_ready();
    assert!(
        h.key(key(KeyCode::Char('a'))).is_empty(),
        "a alone sends nothing"
    );
    assert!(h.app.approval_modal().is_some_and(|m| m.confirming));
    h.later(TYPING_PAUSE);
    let (_, method) = request(&h.key(key(KeyCode::Char('a'))));
    assert_eq!(
        method,
        Method::Approve {
            call_id: Some(CallId::new("call_1")),
            answer: ApprovalAnswer::ApproveAlways,
            reason: None,
        }
    );
    assert!(h.app.composer.is_empty());
}

#[test]
fn enter_confirms_and_esc_or_another_key_backs_out() {
    let mut h = Harness::connected();
    h.asking_ready();
    h.key(key(KeyCode::Char('a')));
    h.later(TYPING_PAUSE);
    assert!(h.key(key(KeyCode::Esc)).is_empty(), "Esc sends nothing");
    let modal = h
        .app
        .approval_modal()
        .expect("back to the question, not hidden");
    assert!(!modal.confirming);
    h.later(TYPING_PAUSE);
    h.key(key(KeyCode::Char('a')));
    h.later(TYPING_PAUSE);
    assert!(h.key(key(KeyCode::Char('y'))).is_empty(), "y backs out too");
    assert!(h.app.approval_modal().is_some_and(|m| !m.confirming));
    assert_eq!(h.app.composer.text(), "y", "and is typed, as text");
    h.app.composer.clear();

    h.later(TYPING_PAUSE);
    h.key(key(KeyCode::Char('a')));
    h.later(TYPING_PAUSE);
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert!(
        matches!(
            method,
            Method::Approve {
                answer: ApprovalAnswer::ApproveAlways,
                ..
            }
        ),
        "{method:?}"
    );
}

#[test]
fn n_asks_for_a_reason_then_denies() {
    let mut h = Harness::connected();
    h.asking_ready();
    assert!(h.key(key(KeyCode::Char('n'))).is_empty());
    assert_eq!(h.app.approval_modal().and_then(|m| m.reason), Some(""));
    h.type_text("nope");
    assert_eq!(h.app.approval_modal().and_then(|m| m.reason), Some("nope"));
    // Esc goes back to the question without sending anything.
    assert!(h.key(key(KeyCode::Esc)).is_empty());
    let modal = h.app.approval_modal().expect("still asking");
    assert_eq!(modal.reason, None);

    h.later(TYPING_PAUSE);
    h.key(key(KeyCode::Char('n')));
    h.type_text("not on mainx");
    h.key(key(KeyCode::Backspace));
    h.app.on_paste("\nbranch", h.now);
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Approve {
            call_id: Some(CallId::new("call_1")),
            answer: ApprovalAnswer::Deny,
            reason: Some("not on main branch".into()),
        }
    );
    assert!(
        h.app.composer.is_empty(),
        "nothing leaked into the composer"
    );
}

#[test]
fn a_denial_without_a_reason_sends_none() {
    let mut h = Harness::connected();
    h.asking_ready();
    h.key(key(KeyCode::Char('n')));
    h.type_text("  ");
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert!(
        matches!(
            method,
            Method::Approve {
                answer: ApprovalAnswer::Deny,
                reason: None,
                ..
            }
        ),
        "{method:?}"
    );
}

#[test]
fn esc_hides_the_modal_and_ctrl_a_brings_it_back() {
    let mut h = Harness::connected();
    h.asking_ready();
    assert!(h.key(key(KeyCode::Esc)).is_empty(), "hiding sends nothing");
    assert_eq!(modal_call(&h), None);
    assert!(h.app.approval_hidden());
    assert!(h.flash().contains("Ctrl-A"), "{}", h.flash());
    assert!(h.app.transcript.status().waiting_for_approval);
    h.type_text("yes");
    assert_eq!(h.app.composer.text(), "yes", "keys type again");

    h.key(ctrl('a'));
    assert_eq!(modal_call(&h), Some(CallId::new("call_1")));
    assert_eq!(h.app.composer.text(), "yes", "the draft is kept");

    // Hidden again (once the modal, shown again, takes keys), Esc on an empty composer
    // cancels the waiting turn.
    h.later(TYPING_PAUSE);
    h.key(key(KeyCode::Esc));
    h.key(ctrl('c'));
    let (_, method) = request(&h.key(key(KeyCode::Esc)));
    assert_eq!(method, Method::Cancel);
}

#[test]
fn ctrl_a_edits_when_no_request_is_hidden() {
    let mut h = Harness::connected();
    h.type_text("ab");
    h.key(ctrl('a'));
    h.type_text("x");
    assert_eq!(
        h.app.composer.text(),
        "xab",
        "Ctrl-A moved to the line start"
    );
}

#[test]
fn an_answer_from_elsewhere_closes_the_modal() {
    let mut h = Harness::connected();
    h.asking_ready();
    h.key(key(KeyCode::Char('n')));
    h.type_text("hm");
    h.commit(answer_entry(ApprovalDecision::Approve));
    assert_eq!(modal_call(&h), None);
    assert!(!h.app.approval_hidden());
    h.type_text("!");
    assert_eq!(h.app.composer.text(), "!");
}

#[test]
fn an_answer_that_lost_the_race_shows_why() {
    let mut h = Harness::connected();
    h.asking_ready();
    let (tag, _) = request(&h.key(key(KeyCode::Char('y'))));
    h.commit(answer_entry(ApprovalDecision::Deny {
        reason: "from another terminal".into(),
    }));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(1)),
            code: ErrorCode::NothingPending,
            message: "call call_1 is not waiting for approval: it was answered already".into(),
        },
    });
    assert!(h.flash().contains("answered already"), "{}", h.flash());
    assert_eq!(modal_call(&h), None);
}

#[test]
fn the_end_of_the_run_closes_the_modal() {
    let mut h = Harness::connected();
    h.asking();
    h.commit(EntryKind::RunEnd {
        reason: RunEndReason::Cancelled,
        message: None,
    });
    assert_eq!(modal_call(&h), None);
    h.state(PodState::Idle);
    assert!(!h.app.transcript.status().waiting_for_approval);
}

#[test]
fn other_overlays_come_first_and_the_modal_waits_behind_them() {
    let mut h = Harness::connected();
    h.type_text("/help");
    h.key(key(KeyCode::Enter));
    h.asking();
    assert_eq!(h.app.overlay, Overlay::Help(0));
    assert_eq!(modal_call(&h), None);
    h.key(key(KeyCode::Char('q')));
    assert_eq!(modal_call(&h), Some(CallId::new("call_1")));
}

#[test]
fn an_idle_tui_sleeps_until_something_changes_by_itself() {
    let mut h = Harness::connected();
    let now = h.now;
    assert_eq!(
        h.app.next_tick(now),
        None,
        "idle, nothing to expire: no wake-ups"
    );
    h.app.flash(super::FlashLevel::Info, "saved", now);
    let expires = h.app.next_tick(now).expect("the flash expires");
    assert!(expires > now);
    assert!(
        h.app.on_tick(expires),
        "the expired flash is cleared and redrawn"
    );
    assert_eq!(h.app.next_tick(expires), None);
    h.state(PodState::Running);
    let tick = h.app.next_tick(now).expect("a running turn's timer moves");
    assert_eq!(tick, now + crate::run::TICK);
}

#[test]
fn the_always_confirmation_waits_for_its_own_pause_so_aa_sets_no_rule() {
    let mut h = Harness::connected();
    h.asking_ready();
    assert!(h.key(key(KeyCode::Char('a'))).is_empty());
    let modal = h.app.approval_modal().expect("asking");
    assert!(modal.confirming, "a asks to confirm");
    assert_eq!(modal.ready_at, Some(h.now + TYPING_PAUSE));
    // A second `a` (or Enter) typed right away is not the confirmation.
    h.later(Duration::from_millis(50));
    assert!(h.key(key(KeyCode::Char('a'))).is_empty(), "aa answered");
    assert_eq!(h.app.composer.text(), "a", "the second a is typed");
    assert!(h.key(key(KeyCode::Enter)).is_empty(), "a⏎ answered");
    assert!(h.app.approval_modal().is_some_and(|m| m.confirming));
    h.later(TYPING_PAUSE);
    let (_, method) = request(&h.key(key(KeyCode::Char('a'))));
    assert!(
        matches!(
            method,
            Method::Approve {
                answer: ApprovalAnswer::ApproveAlways,
                ..
            }
        ),
        "{method:?}"
    );
}

#[test]
fn an_approval_waiting_while_unfocused_asks_for_attention_once_and_not_when_focused() {
    let mut h = Harness::connected();
    let request = |seq: u64, call: &str| ServerMsg::Committed {
        seq: EventSeq::new(seq),
        entry: Entry {
            v: 1,
            seq: EntrySeq::new(seq),
            ts: 1,
            kind: EntryKind::ApprovalRequest(ApprovalRequest {
                call_id: CallId::new(call),
                tool: "shell".into(),
                arguments: r#"{"command":"cargo test"}"#.into(),
                summary: "shell: cargo test".into(),
                always: None,
                replaces: None,
            }),
        },
    };
    let notifications = |effects: &[Effect]| -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Notify { body, .. } => Some(body.clone()),
                _ => None,
            })
            .collect()
    };
    let focused = h.link(ConnectionEvent::Frame(request(11, "c1")));
    assert!(notifications(&focused).is_empty(), "focused: nothing");
    h.app.focused = false;
    let away = h.link(ConnectionEvent::Frame(request(12, "c2")));
    assert_eq!(
        notifications(&away),
        ["waiting for your approval: shell: cargo test"]
    );
}

#[test]
fn ctrl_f_finds_cells_and_n_moves_to_older_matches() {
    let mut h = Harness::connected();
    for (question, answer) in [
        ("first", "the needle is here"),
        ("second", "nothing"),
        ("third", "a NEEDLE again"),
    ] {
        h.commit(EntryKind::UserInput {
            segments: vec![Segment::text(question)],
            text: question.into(),
            queue_id: None,
        });
        h.commit(EntryKind::AssistantItem {
            item: seedpod_protocol::ModelItem::AssistantText {
                text: answer.into(),
            },
        });
    }
    let answer_cell = |h: &Harness, text: &str| {
        h.app.transcript.cells().iter().position(|c| {
            matches!(&c.kind, seedpod_transcript::CellKind::AssistantText { text: t, .. } if t == text)
        })
    };
    let newest = answer_cell(&h, "a NEEDLE again");
    let oldest = answer_cell(&h, "the needle is here");
    h.key(KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL));
    h.type_text("needle");
    assert_eq!(
        h.app.view.focused(),
        newest,
        "the newest match first, any case"
    );
    h.key(key(KeyCode::Enter));
    h.key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
    assert_eq!(h.app.view.focused(), oldest);
    h.key(KeyEvent::new(KeyCode::Char('N'), KeyModifiers::SHIFT));
    assert_eq!(h.app.view.focused(), newest);
    assert!(
        h.app.composer.is_empty(),
        "the search keys never reach the composer"
    );
    // Esc ends the search and leaves the match focused (for `/copy`); Esc again drops it.
    h.key(key(KeyCode::Esc));
    assert_eq!(h.app.view.focused(), newest);
    assert_eq!(h.app.overlay, Overlay::None);
    h.key(key(KeyCode::Esc));
    assert_eq!(h.app.view.focused(), None);

    // `/find TEXT` runs at once; "2 of 2" is where it stands.
    h.type_text("/find needle");
    h.key(key(KeyCode::Enter));
    let Overlay::Find(find) = &h.app.overlay else {
        panic!("the search is open: {:?}", h.app.overlay);
    };
    assert_eq!(find.position(), "2 of 2");
    assert!(!find.typing);
}

#[test]
fn copy_takes_the_focused_cell_or_a_code_block() {
    let mut h = Harness::connected();
    h.commit(EntryKind::AssistantItem {
        item: seedpod_protocol::ModelItem::AssistantText {
            text: "First:\n```sh\nmake build\n```\nthen\n```\ncargo test\n```".into(),
        },
    });
    h.commit(EntryKind::AssistantItem {
        item: seedpod_protocol::ModelItem::AssistantText {
            text: "The last answer.".into(),
        },
    });
    let copied = |effects: Vec<Effect>| -> Vec<String> {
        effects
            .into_iter()
            .filter_map(|e| match e {
                Effect::Copy(text) => Some(text),
                _ => None,
            })
            .collect()
    };
    h.type_text("/copy");
    assert_eq!(copied(h.key(key(KeyCode::Enter))), ["The last answer."]);

    let first = h
        .app
        .transcript
        .cells()
        .iter()
        .position(|c| matches!(&c.kind, seedpod_transcript::CellKind::AssistantText { text, .. } if text.starts_with("First")));
    h.app.view.set_focus(first);
    h.type_text("/copy code");
    assert_eq!(copied(h.key(key(KeyCode::Enter))), ["cargo test"]);
    h.type_text("/copy");
    let whole = copied(h.key(key(KeyCode::Enter)));
    assert!(
        whole[0].starts_with("First:\n```sh\nmake build"),
        "{whole:?}"
    );
}

#[test]
fn a_model_name_completes_from_the_servers_list() {
    let mut h = Harness::connected();
    h.type_text("/model");
    let effects = h.key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE));
    let asked: Vec<(RequestTag, Method)> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request { tag, method } => Some((*tag, method.clone())),
            _ => None,
        })
        .collect();
    let (tag, method) = asked.last().cloned().expect("a completion request");
    assert_eq!(
        method,
        Method::ListCompletions {
            kind: CompletionKind::Model,
            prefix: String::new()
        }
    );
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Completions {
            id: RequestId::new(1),
            kind: CompletionKind::Model,
            items: vec![
                Completion::new("llama3.2", "model"),
                Completion::new("qwen3:8b", "model"),
            ],
            truncated: false,
        },
    });
    // Typing narrows the list the popup already holds; Tab takes the choice.
    h.type_text("q");
    h.key(key(KeyCode::Tab));
    assert_eq!(h.app.composer.text(), "/model qwen3:8b ");
}

#[test]
fn find_counts_occurrences_not_cells() {
    let mut h = Harness::connected();
    h.commit(EntryKind::AssistantItem {
        item: seedpod_protocol::ModelItem::AssistantText {
            text: "END4 then END40, END41 and end49".into(),
        },
    });
    h.type_text("/find END4");
    h.key(key(KeyCode::Enter));
    let Overlay::Find(find) = &h.app.overlay else {
        panic!("the search is open: {:?}", h.app.overlay);
    };
    assert_eq!(find.position(), "4 of 4");
}

#[test]
fn tab_reaches_an_earlier_answer_for_copy() {
    let mut h = Harness::connected();
    for answer in ["The first answer.", "The second answer."] {
        h.commit(EntryKind::AssistantItem {
            item: seedpod_protocol::ModelItem::AssistantText {
                text: answer.into(),
            },
        });
    }
    // Nothing drawn yet, so Tab starts from the top: the first answer.
    h.key(key(KeyCode::Tab));
    h.type_text("/copy");
    let copied: Vec<String> = h
        .key(key(KeyCode::Enter))
        .into_iter()
        .filter_map(|e| match e {
            Effect::Copy(text) => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(copied, ["The first answer."]);
}

#[test]
fn model_alone_asks_the_pod_and_lists_its_answer() {
    let mut h = Harness::connected();
    h.type_text("/model");
    let effects = h.key(key(KeyCode::Enter));
    let tag = match effects.as_slice() {
        [
            Effect::Request {
                tag,
                method:
                    Method::Command {
                        name: PodCommand::Model,
                        args,
                    },
            },
        ] if args.is_empty() => *tag,
        other => panic!("expected /model to ask the pod, got {other:?}"),
    };
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::CommandDone {
            id: RequestId::new(1),
            command: PodCommand::Model,
            message: "model: m1 (openai); the server offers 2: m1, m2; /model NAME switches".into(),
        },
    });
    let Overlay::Text { text, .. } = &h.app.overlay else {
        panic!("a listing: {:?}", h.app.overlay);
    };
    assert!(text.contains("\n  m2\n"), "{text}");
}

#[test]
fn a_bracket_typed_while_scrolled_up_is_typed() {
    let mut h = Harness::connected();
    for n in 0..3 {
        h.commit(EntryKind::AssistantItem {
            item: seedpod_protocol::ModelItem::AssistantText {
                text: format!("answer {n}"),
            },
        });
    }
    h.key(key(KeyCode::PageUp));
    assert!(!h.app.view.is_following(), "scrolled up");
    h.type_text("[ ] todo");
    assert_eq!(h.app.composer.text(), "[ ] todo");
}
