//! Whole screens on ratatui's `TestBackend`, pinned with insta: what a person sees when idle,
//! while a turn runs with inputs queued, while the pod is away, in the pod picker (a tree of
//! parents and children), in a parent whose children report, and when a tool call waits for
//! approval.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "screens/widths.rs"]
mod widths;

use std::time::{Instant, UNIX_EPOCH};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use seedpod_client::pods::{PodConfig, PodMeta};
use seedpod_client::{Liveness, PodListing, Welcome};
use seedpod_protocol::{
    ApprovalRequest, CallId, Entry, EntryKind, EntrySeq, EventSeq, FillBasis, InstanceId,
    ModelItem, PodEvent, PodName, PodState, ProviderKind, QueueEntry, QueueId, QueuedItem,
    ReportId, RequestId, RunEndReason, RunTrigger, Segment, SegmentId, ServerMsg, SystemItem,
    Usage,
};
use seedpod_transcript::Theme;
use seedpod_tui::App;
use seedpod_tui::connection::ConnectionEvent;
use seedpod_tui::history::InputHistory;

const WIDTH: u16 = 80;
const HEIGHT: u16 = 20;

fn entry(seq: u64, kind: EntryKind) -> Entry {
    Entry {
        v: 1,
        seq: EntrySeq::new(seq),
        ts: 1_700_000_000_000 + seq * 1000,
        kind,
    }
}

/// An app attached to pod `demo` whose log holds one finished turn.
fn attached(state: PodState) -> App {
    let mut app = App::new(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    load(&mut app, state, Vec::new());
    app
}

/// The pod connects and its log arrives: one finished turn, then `more`.
fn load(app: &mut App, state: PodState, more: Vec<EntryKind>) {
    let now = Instant::now();
    let mut kinds = vec![
        EntryKind::RunStart {
            trigger: RunTrigger::User,
        },
        EntryKind::UserInput {
            segments: vec![Segment::text("What is in this directory?")],
            text: "What is in this directory?".into(),
            queue_id: None,
        },
        EntryKind::AssistantItem {
            item: ModelItem::AssistantText {
                text: "A **Rust** workspace: `protocol/`, `pod/` and `tui/`.".into(),
            },
        },
        EntryKind::Usage(Usage {
            input_tokens: 1200,
            output_tokens: 80,
            ..Usage::default()
        }),
        EntryKind::RunEnd {
            reason: RunEndReason::Completed,
            message: None,
        },
    ];
    kinds.extend(more);
    let seq = kinds.len() as u64;
    let entries: Vec<Entry> = kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| entry(i as u64, kind))
        .collect();
    app.on_link(
        ConnectionEvent::Connected(Welcome {
            pod: app.pod.clone(),
            server_version: "0.1.0".into(),
            state,
            instance: InstanceId::new("i"),
            seq: EventSeq::new(seq),
        }),
        now,
    );
    for msg in [
        ServerMsg::SnapshotBegin {
            context: Default::default(),
            seq: EventSeq::new(seq),
            state,
            greeting: format!("pod {}", app.pod),
            segment_id: SegmentId::new("s1"),
            entries: seq,
            message_cap: None,
        },
        ServerMsg::SnapshotEntries { entries },
        ServerMsg::SnapshotEnd {
            seq: EventSeq::new(seq),
        },
    ] {
        app.on_link(ConnectionEvent::Frame(msg), now);
    }
}

fn screen(app: &mut App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal");
    terminal
        .draw(|frame| seedpod_tui::ui::draw(frame, app, Instant::now()))
        .expect("draw");
    terminal.backend().to_string()
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(
            KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
            Instant::now(),
        );
    }
}

#[test]
fn idle() {
    let mut app = attached(PodState::Idle);
    insta::assert_snapshot!(screen(&mut app));
}

#[test]
fn running_with_queued_inputs() {
    let mut app = attached(PodState::Running);
    let now = Instant::now();
    let queue = vec![
        QueueEntry {
            queue_id: QueueId::new(1),
            item: QueuedItem::Run {
                segments: vec![Segment::text("and then run the tests")],
            },
        },
        QueueEntry {
            queue_id: QueueId::new(2),
            item: QueuedItem::Notify {
                message: "CI is green".into(),
                wake: true,
            },
        },
    ];
    for msg in [
        ServerMsg::Queued {
            seq: EventSeq::new(6),
            queue,
        },
        ServerMsg::TextDelta {
            seq: EventSeq::new(7),
            text: "Looking at the tests now".into(),
        },
    ] {
        app.on_link(ConnectionEvent::Frame(msg), now);
    }
    type_text(&mut app, "also check the docs");
    insta::assert_snapshot!(screen(&mut app));
}

#[test]
fn reconnecting() {
    let mut app = attached(PodState::Idle);
    app.on_link(
        ConnectionEvent::Down {
            attempt: 3,
            reason: "the pod is not running".into(),
        },
        Instant::now(),
    );
    insta::assert_snapshot!(screen(&mut app));
}

#[test]
fn incompatible() {
    let mut app = attached(PodState::Idle);
    app.on_link(
        ConnectionEvent::Incompatible {
            message: "the client speaks protocol 2 but this pod speaks 1: the pod is older; run `seedpod restart demo`".into(),
        },
        Instant::now(),
    );
    insta::assert_snapshot!(screen(&mut app));
}

fn listing(
    name: &str,
    parent: Option<&str>,
    liveness: Liveness,
    ago_secs: Option<u64>,
) -> PodListing {
    let listed_at = 2_000_000_000_000;
    PodListing {
        name: name.parse().unwrap(),
        meta: PodMeta {
            parent: parent.map(|p| PodName::new(p).unwrap()),
            ..PodMeta::new(
                PodName::new(name.to_string()).unwrap(),
                format!("/home/ada/{name}").into(),
                SegmentId::new("s"),
                PodConfig::new(ProviderKind::Scripted, "script"),
                0,
            )
        },
        liveness,
        last_activity_ms: ago_secs.map(|s| listed_at - s * 1000),
    }
}

#[test]
fn pod_picker() {
    let mut app = attached(PodState::Idle);
    app.on_key(
        KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL),
        Instant::now(),
    );
    let listed_at = UNIX_EPOCH + std::time::Duration::from_millis(2_000_000_000_000);
    app.on_pods(
        vec![
            listing("api", None, Liveness::Stopped, Some(3 * 86_400)),
            listing("demo", None, Liveness::Stopped, Some(42)),
            listing("demo-docs", Some("demo"), Liveness::Stopped, Some(30)),
            listing("demo-tests", Some("demo"), Liveness::Stopped, Some(5)),
            listing("unit", Some("demo-tests"), Liveness::Stopped, Some(65)),
            listing("docs", None, Liveness::Unresponsive("slow".into()), None),
        ],
        listed_at,
    );
    insta::assert_snapshot!(screen(&mut app));
}

#[test]
fn completion_popup_and_help() {
    let mut app = attached(PodState::Idle);
    type_text(&mut app, "/");
    let tag = match app
        .on_key(
            KeyEvent::new(KeyCode::Char('h'), KeyModifiers::NONE),
            Instant::now(),
        )
        .first()
    {
        Some(seedpod_tui::Effect::Request { tag, .. }) => *tag,
        other => panic!("expected a completion request, got {other:?}"),
    };
    app.on_link(
        ConnectionEvent::Reply {
            tag,
            msg: ServerMsg::Completions {
                id: RequestId::new(1),
                kind: seedpod_protocol::CompletionKind::Command,
                items: vec![seedpod_protocol::Completion::new(
                    "help",
                    "keys and commands",
                )],
                truncated: false,
            },
        },
        Instant::now(),
    );
    insta::assert_snapshot!("completion", screen(&mut app));
    app.on_key(
        KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
        Instant::now(),
    );
    app.on_key(
        KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
        Instant::now(),
    );
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, 30)).expect("test terminal");
    terminal
        .draw(|frame| seedpod_tui::ui::draw(frame, &mut app, Instant::now()))
        .expect("draw");
    insta::assert_snapshot!("help", terminal.backend().to_string());
    let help = terminal.backend().to_string();
    assert!(
        !help.contains("/mouse"),
        "the last commands are below the fold"
    );
    // Scrolling shows the rest, each description whole; another key closes the help.
    for _ in 0..3 {
        app.on_key(
            KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE),
            Instant::now(),
        );
    }
    terminal
        .draw(|frame| seedpod_tui::ui::draw(frame, &mut app, Instant::now()))
        .expect("draw");
    let scrolled = terminal.backend().to_string();
    assert!(scrolled.contains("/mouse"), "{scrolled}");
    // A description too long for the width wraps under itself instead of being cut.
    assert!(
        scrolled.contains("mouse-wheel scrolling on/off (then Shift-drag  │")
            && scrolled.contains("│                               selects)"),
        "{scrolled}"
    );
    app.on_key(
        KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE),
        Instant::now(),
    );
    terminal
        .draw(|frame| seedpod_tui::ui::draw(frame, &mut app, Instant::now()))
        .expect("draw");
    assert!(!terminal.backend().to_string().contains("/mouse"));
}

/// A pod whose run called `shell` and waits for a person to approve it.
fn waiting_for_approval() -> App {
    let mut app = attached(PodState::Running);
    let now = Instant::now();
    let arguments = r#"{"command":"cargo test --workspace && rm -rf target/tmp","timeout":600}"#;
    for (seq, kind) in [
        (
            6,
            EntryKind::AssistantItem {
                item: ModelItem::ToolCall {
                    call_id: CallId::new("call_1"),
                    name: "shell".into(),
                    arguments: arguments.into(),
                },
            },
        ),
        (
            7,
            EntryKind::ApprovalRequest(ApprovalRequest {
                call_id: CallId::new("call_1"),
                tool: "shell".into(),
                arguments: arguments.into(),
                summary: "shell: cargo test --workspace && rm -rf target/tmp".into(),
                always: Some(seedpod_protocol::CommandRule::Prefix(vec!["cargo".into()])),
                replaces: None,
            }),
        ),
    ] {
        let msg = ServerMsg::Committed {
            seq: EventSeq::new(seq),
            entry: entry(seq, kind),
        };
        app.on_link(ConnectionEvent::Frame(msg), now);
    }
    let state = ServerMsg::State {
        seq: EventSeq::new(8),
        state: PodState::WaitingForApproval,
    };
    app.on_link(ConnectionEvent::Frame(state), now);
    app
}

/// The screen drawn at `now`.
fn screen_at(app: &mut App, now: Instant) -> String {
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal");
    terminal
        .draw(|frame| seedpod_tui::ui::draw(frame, app, now))
        .expect("draw");
    terminal.backend().to_string()
}

/// Just opened, the modal counts down and takes no answers; `a` then asks to confirm what the
/// standing rule covers.
#[test]
fn approval_modal_in_grace_then_confirming_always() {
    let mut app = waiting_for_approval();
    let opened = Instant::now();
    insta::assert_snapshot!("approval_grace", screen_at(&mut app, opened));
    let later = opened + seedpod_tui::app::TYPING_PAUSE;
    app.on_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE), later);
    insta::assert_snapshot!("approval_confirm_always", screen_at(&mut app, later));
}

/// An `edit_file` call asks: the modal shows the file and a diff of the edit, ↓ scrolls it.
#[test]
fn approval_modal_shows_an_edits_diff() {
    let mut app = attached(PodState::Running);
    let now = Instant::now();
    let old: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 3\n", "line three\n") + "line 13\nline 14\n";
    let arguments = serde_json::json!({"path": "src/lib.rs", "old": old, "new": new}).to_string();
    let request = EntryKind::ApprovalRequest(ApprovalRequest {
        call_id: CallId::new("call_1"),
        tool: "edit_file".into(),
        arguments,
        summary: "edit_file: src/lib.rs".into(),
        always: None,
        replaces: None,
    });
    let msg = ServerMsg::Committed {
        seq: EventSeq::new(6),
        entry: entry(6, request),
    };
    app.on_link(ConnectionEvent::Frame(msg), now);
    let ready = now + seedpod_tui::app::TYPING_PAUSE;
    app.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE), ready);
    insta::assert_snapshot!("approval_edit_diff", screen_at(&mut app, ready));
}

/// A `write_file` of a file that does not exist yet is a "create", every line numbered and
/// added; the modal spans the terminal's width.
#[test]
fn approval_modal_shows_a_new_file_as_created() {
    let mut app = attached(PodState::Running);
    let now = Instant::now();
    let content: String = (1..=3).map(|i| format!("fn f{i}() {{}}\n")).collect();
    let arguments = serde_json::json!({"path": "src/new.rs", "content": content}).to_string();
    let request = EntryKind::ApprovalRequest(ApprovalRequest {
        call_id: CallId::new("call_1"),
        tool: "write_file".into(),
        arguments,
        summary: "write_file: src/new.rs".into(),
        always: None,
        replaces: None,
    });
    let msg = ServerMsg::Committed {
        seq: EventSeq::new(6),
        entry: entry(6, request),
    };
    app.on_link(ConnectionEvent::Frame(msg), now);
    screen_at(&mut app, now);
    let ready = now + seedpod_tui::app::TYPING_PAUSE;
    let screen = screen_at(&mut app, ready);
    assert!(screen.contains("wants to create a file"), "{screen}");
    assert!(screen.contains("create (a new file) · 3 lines"), "{screen}");
    assert!(screen.contains("3 + fn f3() {}"), "{screen}");
    insta::assert_snapshot!("approval_create", screen);
}

#[test]
fn approval_modal() {
    let mut app = waiting_for_approval();
    // Drawn once as it opens, then past the grace period: the keys are live.
    let opened = Instant::now();
    screen_at(&mut app, opened);
    let ready = opened + seedpod_tui::app::TYPING_PAUSE;
    insta::assert_snapshot!("approval_modal", screen_at(&mut app, ready));
    for c in "nnot the rm".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), ready);
    }
    insta::assert_snapshot!("approval_deny_reason", screen_at(&mut app, ready));
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), ready);
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), ready);
    insta::assert_snapshot!("approval_hidden", screen_at(&mut app, ready));
}

/// A parent pod, reached with a jump from its child `demo-tests`, whose children reported:
/// each banner says who and what happened (never the body the model reads), a report waits in
/// the queue, and the footer offers Ctrl-G into the last reporter and Ctrl-O back.
#[test]
fn a_parent_with_reports_from_its_children() {
    let mut app = App::new(
        &PodName::new("demo-tests").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    let now = Instant::now();
    app.switch_pod(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        now,
    );
    app.flash = None;
    let report = |event: PodEvent| EntryKind::SystemItem {
        item: SystemItem::PodEvent {
            event,
            body: "<pod_event>RAW BODY FOR THE MODEL</pod_event>".into(),
        },
        queue_id: None,
    };
    let reports = vec![
        report(PodEvent::TurnEnded {
            pod: "demo-docs".into(),
            event_id: ReportId::new("e1"),
        }),
        report(PodEvent::Errored {
            pod: "demo-tests".into(),
            event_id: ReportId::new("e2"),
            message: "the provider returned 529 overloaded".into(),
        }),
        report(PodEvent::ScopeSubDelegated {
            pod: "demo-tests".into(),
            event_id: ReportId::new("e3"),
            child: "unit".into(),
            scope: vec!["tests/".into()],
        }),
        report(PodEvent::ShutDown {
            pod: "demo-docs".into(),
            event_id: ReportId::new("e4"),
        }),
    ];
    load(&mut app, PodState::Idle, reports);
    let queue = vec![QueueEntry {
        queue_id: QueueId::new(1),
        item: QueuedItem::PodEvent {
            event: PodEvent::TurnEnded {
                pod: "unit".into(),
                event_id: ReportId::new("e5"),
            },
            wake: false,
        },
    }];
    app.on_link(
        ConnectionEvent::Frame(ServerMsg::Queued {
            seq: EventSeq::new(20),
            queue,
        }),
        now,
    );
    let shown = screen(&mut app);
    assert!(!shown.contains("RAW BODY"), "{shown}");
    insta::assert_snapshot!(shown);
}

/// Reattached after a compaction, the context nearly full: the head says the log goes further
/// back, the compaction cell sits under its separator and the gauge warns. Home asks for the
/// page before; once it arrives, the screen still shows what it showed, and the old turn is
/// above it.
#[test]
fn after_compaction_paging_back() {
    use seedpod_protocol::{
        Compaction, CompactionTrigger, ContextFill, Method, ModelConfig, Origin, SegmentStart,
        WindowSource,
    };
    let now = Instant::now();
    let mut app = App::new(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    let start = EntryKind::SegmentStart(SegmentStart {
        date: None,
        segment_id: SegmentId::new("0193f0c3-aaaa"),
        system_prompt: "You are demo.".into(),
        model: ModelConfig::new(ProviderKind::Scripted, "script"),
        tools: vec![],
        seed: vec![],
        standing_approvals: vec![],
        origin: Origin::CompactedFrom {
            segment_id: SegmentId::new("0193f0c2-bbbb"),
        },
        context_window: None,
        compaction: Some(Compaction {
            summary: "The person is mapping the workspace.".into(),
            compacted_items: 143,
            kept_items: 4,
            tokens_before: 13_900,
            tokens_after: 2_100,
            trigger: CompactionTrigger::Auto,
            focus: None,
            memory_flush: Vec::new(),
        }),
        tasks: Vec::new(),
        totals: None,
    });
    app.on_link(
        ConnectionEvent::Connected(Welcome {
            pod: "demo".parse().unwrap(),
            server_version: "0.1.0".into(),
            state: PodState::Idle,
            instance: InstanceId::new("i"),
            seq: EventSeq::new(3),
        }),
        now,
    );
    let user = |text: &str| EntryKind::UserInput {
        segments: vec![Segment::text(text)],
        text: text.into(),
        queue_id: None,
    };
    let reply = |text: &str| EntryKind::AssistantItem {
        item: ModelItem::AssistantText { text: text.into() },
    };
    for msg in [
        ServerMsg::SnapshotBegin {
            context: ContextFill {
                tokens: 13_600,
                window: Some(16_000),
                source: Some(WindowSource::Config),
                basis: FillBasis::LastRequest,
            },
            seq: EventSeq::new(3),
            state: PodState::Idle,
            greeting: "pod demo".into(),
            segment_id: SegmentId::new("0193f0c3-aaaa"),
            entries: 3,
            message_cap: None,
        },
        ServerMsg::SnapshotEntries {
            entries: vec![
                entry(0, start),
                entry(1, user("And the tests?")),
                entry(2, reply("They live in `tests/`.")),
            ],
        },
        ServerMsg::SnapshotEnd {
            seq: EventSeq::new(3),
        },
    ] {
        app.on_link(ConnectionEvent::Frame(msg), now);
    }
    // The compacted segment fits with room to spare: the page before it is asked for at once.
    let before = screen(&mut app);
    let effects = app.after_draw();
    let [seedpod_tui::Effect::Request { tag, method }] = effects.as_slice() else {
        panic!("{effects:?}");
    };
    assert_eq!(
        method,
        &Method::Earlier {
            segment_id: SegmentId::new("0193f0c3-aaaa"),
            before_seq: EntrySeq::new(0)
        }
    );
    let loading = screen(&mut app);
    app.on_link(
        ConnectionEvent::Reply {
            tag: *tag,
            msg: ServerMsg::Earlier {
                id: RequestId::new(1),
                segment_id: SegmentId::new("0193f0c2-bbbb"),
                entries: vec![
                    entry(40, user("What is in this directory?")),
                    entry(41, reply("A **Rust** workspace.")),
                ],
                more: true,
            },
        },
        now,
    );
    let after = screen(&mut app);
    insta::assert_snapshot!(format!("{before}\n{loading}\n{after}"));
    app.on_key(KeyEvent::new(KeyCode::Home, KeyModifiers::NONE), now);
    let top = screen(&mut app);
    assert!(top.contains("What is in this directory?"), "{top}");
}

/// The model keeps a task list: it is pinned above the composer, Ctrl-T folds it to one line,
/// and it goes away once every task is done.
#[test]
fn a_task_list_pinned_above_the_composer() {
    let call = |id: &str, tasks: &str| {
        [
            EntryKind::AssistantItem {
                item: ModelItem::ToolCall {
                    call_id: CallId::new(id),
                    name: "update_tasks".into(),
                    arguments: format!(r#"{{"tasks":{tasks}}}"#),
                },
            },
            EntryKind::ToolResult {
                call_id: CallId::new(id),
                name: "update_tasks".into(),
                content: "task list updated".into(),
                is_error: false,
                meta: Default::default(),
            },
        ]
    };
    let open = r#"[{"content":"read the failing test","status":"done"},{"content":"find the cause","status":"in_progress"},{"content":"fix it","status":"pending"},{"content":"run the suite","status":"pending"}]"#;
    let mut app = App::new(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    load(&mut app, PodState::Idle, call("t1", open).to_vec());
    let unfolded = screen(&mut app);
    insta::assert_snapshot!("tasks_unfolded", unfolded);
    assert!(unfolded.contains("[~] find the cause"), "{unfolded}");

    app.on_key(
        KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL),
        Instant::now(),
    );
    let folded = screen(&mut app);
    assert!(
        folded.contains("\"  tasks 1/4 · now: find the cause  (Ctrl-T shows)"),
        "{folded}"
    );
    assert!(!folded.contains("\"    [ ] run the suite"), "{folded}");

    let finished = r#"[{"content":"read the failing test","status":"done"},{"content":"fix it","status":"done"}]"#;
    let mut more = call("t1", open).to_vec();
    more.extend(call("t2", finished));
    let mut app = App::new(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    load(&mut app, PodState::Idle, more);
    let done = screen(&mut app);
    assert!(
        !done.contains("\"  tasks "),
        "a finished list is not pinned: {done}"
    );
}
