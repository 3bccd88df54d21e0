//! Screens pinned at three widths (50, 80 and 120 columns): what must read at any of them.

use super::*;

const WIDTHS: [u16; 3] = [50, 80, 120];

fn screen_at(app: &mut App, width: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, HEIGHT)).expect("test terminal");
    terminal
        .draw(|frame| seedpod_tui::ui::draw(frame, app, Instant::now()))
        .expect("draw");
    terminal.backend().to_string()
}

/// One snapshot per width, named `NAME_WIDTH`; returns the screens.
fn at_widths(name: &str, app: &mut App) -> Vec<String> {
    WIDTHS
        .into_iter()
        .map(|width| {
            let screen = screen_at(app, width);
            insta::assert_snapshot!(format!("{name}_{width}"), screen);
            screen
        })
        .collect()
}

fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE), Instant::now());
}

/// A pod that stopped under the TUI: the status line says so and offers Ctrl-S, at every
/// width; nothing says "reconnecting".
#[test]
fn stopped_pod() {
    let mut app = attached(PodState::Idle);
    app.on_link(ConnectionEvent::Stopped { attempt: 21 }, Instant::now());
    for screen in at_widths("stopped_pod", &mut app) {
        assert!(screen.contains("pod stopped"), "{screen}");
        assert!(screen.contains("Ctrl-S"), "{screen}");
        assert!(!screen.contains("reconnecting"), "{screen}");
    }
}

/// A message with a big paste: the transcript shows what was pasted under its chip, folded to
/// its first lines; Enter on the focused message shows all of it.
#[test]
fn pasted_text_folded_then_expanded() {
    let content: Vec<String> = (1..=12).map(|n| format!("log line {n}: ok")).collect();
    let content = content.join("\n");
    let mut app = App::new(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    load(
        &mut app,
        PodState::Idle,
        vec![EntryKind::UserInput {
            segments: vec![
                Segment::text("what failed here? "),
                Segment::Paste {
                    id: 1,
                    chars: content.chars().count(),
                    lines: 12,
                    content: content.clone(),
                },
            ],
            text: format!("what failed here? {content}"),
            queue_id: None,
        }],
    );
    for screen in at_widths("paste_folded", &mut app) {
        assert!(screen.contains("log line 3: ok"), "{screen}");
        assert!(!screen.contains("log line 4: ok"), "{screen}");
    }
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Home);
    for screen in at_widths("paste_expanded", &mut app) {
        assert!(screen.contains("log line 8: ok"), "{screen}");
    }
}

/// What the pod writes for the model stays out of sight: an interrupted turn reads "turn
/// interrupted" (not "The user cancelled the previous turn…"), a task reminder says why it
/// came (not its internal source name).
#[test]
fn interrupt_and_reminder_in_a_persons_words() {
    let mut app = App::new(
        &PodName::new("demo").unwrap(),
        InputHistory::in_memory(),
        Theme::plain(),
        seedpod_pod::catalogue::decl_for,
    );
    load(
        &mut app,
        PodState::Idle,
        vec![
            EntryKind::SystemItem {
                item: SystemItem::Interrupt {
                    body: "[interrupted] The user cancelled the previous turn before it \
                           finished. Anything not shown above was not done."
                        .into(),
                },
                queue_id: None,
            },
            EntryKind::SystemItem {
                item: SystemItem::TaskReminder {
                    source: seedpod_protocol::ReminderSource::TaskInactivity,
                    body: "<system-reminder>Your task list has open tasks.</system-reminder>"
                        .into(),
                },
                queue_id: None,
            },
        ],
    );
    for screen in at_widths("interrupt_and_reminder", &mut app) {
        assert!(screen.contains("turn interrupted"), "{screen}");
        assert!(!screen.contains("The user cancelled"), "{screen}");
        assert!(!screen.contains("task_inactivity"), "{screen}");
    }
}

/// The picker says its keys in its own box, and a pod waiting for approval keeps its row's
/// columns in line with the others.
#[test]
fn picker_keys_and_aligned_states() {
    let mut app = attached(PodState::Idle);
    app.on_key(
        KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL),
        Instant::now(),
    );
    let mut asking = listing("review", None, Liveness::Stopped, Some(12));
    asking.liveness = Liveness::Running(Box::new(seedpod_protocol::PodStatus {
        name: PodName::new("review").unwrap(),
        state: PodState::WaitingForApproval,
        pid: 42,
        cwd: "/home/ada/review".into(),
        provider: "scripted".into(),
        model: "script".into(),
        segment_id: SegmentId::new("s"),
        entries: 3,
        queue: Vec::new(),
        usage: Usage::default(),
        clients: 0,
        server_version: "0.1.0".into(),
        pending_approval: None,
        context: Default::default(),
        log_broken: None,
        totals: None,
    }));
    let listed_at = UNIX_EPOCH + std::time::Duration::from_millis(2_000_000_000_000);
    app.on_pods(
        vec![
            listing("api", None, Liveness::Stopped, Some(3 * 86_400)),
            asking,
            listing("docs", None, Liveness::Stopped, Some(65)),
        ],
        listed_at,
    );
    for screen in at_widths("picker_keys_and_states", &mut app) {
        assert!(screen.contains("Enter attach"), "{screen}");
        let column = |name: &str| {
            screen
                .lines()
                .find(|l| l.contains(&format!(" {name} ")))
                .and_then(|l| l.find(" ago").or_else(|| l.find("  -")))
        };
        assert_eq!(column("api"), column("review"), "{screen}");
        assert_eq!(column("docs"), column("review"), "{screen}");
    }
}

/// Text a person must read whole wraps rather than being cut at 80 columns and below: the
/// demo's banner, and a retry's attempt and delay (they come first).
#[test]
fn banner_and_retry_read_whole() {
    let mut app = attached(PodState::Running);
    app.banner = Some(
        "DEMO · a scripted model, no API key · its tool calls are real (list_dir, an echo \
         you approve) · Ctrl-D ends the demo and deletes its pod"
            .into(),
    );
    app.on_link(
        ConnectionEvent::Frame(ServerMsg::Status {
            seq: EventSeq::new(6),
            message: "Provider error: the upstream server closed the connection before \
                      answering. Retrying in 4s (attempt 2/5)"
                .into(),
        }),
        Instant::now(),
    );
    for screen in at_widths("banner_and_retry", &mut app) {
        assert!(screen.contains("deletes its pod"), "{screen}");
        assert!(screen.contains("retrying in 4s (attempt 2/5)"), "{screen}");
    }
}

/// The warning about a paste over the pod's message cap wraps onto a few rows.
#[test]
fn paste_over_the_cap_warning_reads_whole() {
    let mut app = attached(PodState::Idle);
    app.on_link(
        ConnectionEvent::Frame(ServerMsg::SnapshotBegin {
            context: Default::default(),
            seq: EventSeq::new(5),
            state: PodState::Idle,
            greeting: "pod demo".into(),
            segment_id: SegmentId::new("s1"),
            entries: 0,
            message_cap: Some(2_000),
        }),
        Instant::now(),
    );
    app.on_link(
        ConnectionEvent::Frame(ServerMsg::SnapshotEnd {
            seq: EventSeq::new(5),
        }),
        Instant::now(),
    );
    app.on_paste(&"x".repeat(5_000), Instant::now());
    for screen in at_widths("paste_over_cap", &mut app) {
        assert!(screen.contains("read_paste"), "{screen}");
    }
}
