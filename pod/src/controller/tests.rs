//! The controller's state machine (DESIGN §5) without sockets or processes: a real segment file
//! in a temp dir, the scripted provider recording every request body it is sent, and the
//! controller driven through its command channel exactly as connections drive it.
//!
//! Each scenario ends by checking invariant 2 from the outside: the segment file, read back and
//! replayed, yields the entries, queue, open run and next request body the live controller
//! reports.
//!
//! Two tests drive the controller by hand (`Manual`) instead: they place a request at an exact
//! point between the run task's commands, an interleaving the channel allows but timing rarely
//! produces.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use seedpod_engine::testing::{CompletionLog, EchoTool, WaitTool, scripted_model};
use seedpod_engine::{
    Context, Provider, ScriptStep, ScriptToolCall, ScriptedProvider, ToolRegistry,
};
use seedpod_protocol::{
    AckOutcome, CallId, DequeueReason, Entry, EntryKind, EntrySeq, ErrorCode, Method, ModelItem,
    Origin, PodEvent, PodName, PodState, PodStatus, ProviderKind, QueueId, QueuedItem, ReportId,
    RequestId, RunEndReason, RunTrigger, Segment, SegmentStart, ServerMsg, SystemItem,
};
use seedpod_store::{
    PodConfig, PodMeta, SegmentState, SegmentWriter, new_segment_id, read_segment, segment_path,
};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Controller, ControllerHandle, ControllerMsg, ControllerParts};
use crate::render;

mod approvals;
mod children;
mod commands;
mod context;
mod input;
mod sandbox_alerts;
mod slow_disk;

/// Upper bound for any wait; only reached when a test is failing.
const WAIT: Duration = Duration::from_secs(30);

const POD: &str = "test-pod";

/// A file whose existence releases a scripted response held after its first text chunk.
struct Gate(PathBuf);

impl Gate {
    fn in_dir(dir: &tempfile::TempDir) -> Gate {
        Gate(dir.path().join("gate"))
    }

    /// A response that streams its first chunk of `text`, then waits for the gate.
    fn step(&self, text: &str) -> ScriptStep {
        ScriptStep {
            chunk_chars: Some(4),
            gate: Some(self.0.clone()),
            ..ScriptStep::text(text)
        }
    }

    fn open(&self) {
        std::fs::write(&self.0, b"open").expect("open the gate");
    }
}

/// A response that calls tool `name` once with empty-object arguments (call id `call_N_0`).
/// `method` as the connection hands it to the controller.
fn for_controller(method: Method) -> super::ControllerMethod {
    match super::route(method) {
        super::Route::Controller(method) => method,
        super::Route::Connection(method) => panic!("{method:?} is the connection's to answer"),
    }
}

fn calls(name: &str) -> ScriptStep {
    ScriptStep {
        tool_calls: vec![ScriptToolCall {
            id: None,
            name: name.into(),
            arguments: "{}".into(),
        }],
        ..ScriptStep::default()
    }
}

fn text(text: &str) -> ScriptStep {
    ScriptStep::text(text)
}

/// A `WaitTool` named "wait" and the handles a test needs to release it and see it finish.
fn wait_tool() -> (ToolRegistry, Arc<Notify>, CompletionLog) {
    let release = Arc::new(Notify::new());
    let finished: CompletionLog = Arc::new(Mutex::new(Vec::new()));
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(WaitTool {
        name: "wait".into(),
        release: release.clone(),
        finished: finished.clone(),
    }));
    (tools, release, finished)
}

fn echo_tool() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("echo")));
    tools
}

/// What a test keeps besides the controller: where things are written, and the provider.
struct Files {
    segment: PathBuf,
    record: PathBuf,
    provider: Arc<dyn Provider>,
    /// A clone of the controller's writer, so a test can break the log under it.
    writer: SegmentWriter,
}

/// A new pod's parts in `dir`, as `restore::create` builds them, on the scripted provider.
async fn parts(
    dir: &Path,
    steps: Vec<ScriptStep>,
    tools: ToolRegistry,
    session: crate::session::SessionSettings,
) -> (ControllerParts, Files) {
    // The test tools stand in for declared ones: each runs without asking unless the test
    // gives it a policy (a pod's own policies list every declared tool).
    let session = crate::session::SessionSettings {
        policies: session.policies.allowing_unlisted(&tools),
        ..session
    };
    let segment_id = new_segment_id();
    let segment = segment_path(dir, &segment_id);
    std::fs::create_dir_all(segment.parent().expect("segments dir")).expect("create segments");
    let start = SegmentStart {
        // As `restore::create` records the day its prompt says, and a configured window.
        date: Some(crate::calendar::today()),
        context_window: session
            .context
            .window
            .map(|tokens| seedpod_protocol::ContextWindow {
                tokens,
                source: seedpod_protocol::WindowSource::Config,
            }),
        compaction: None,
        segment_id: segment_id.clone(),
        system_prompt: format!("You are {POD}, a pod under test."),
        model: scripted_model(),
        tools: tools.specs(),
        seed: Vec::new(),
        standing_approvals: Vec::new(),
        origin: Origin::New,
        tasks: Vec::new(),
        totals: None,
    };
    let (writer, first) = SegmentWriter::create(segment.clone(), start)
        .await
        .expect("create the segment");
    let record = dir.join("requests.jsonl");
    let provider: Arc<dyn Provider> = Arc::new(
        ScriptedProvider::from_steps(steps, Some(record.clone())).expect("scripted provider"),
    );
    let config = PodConfig::new(ProviderKind::Scripted, "script");
    let meta = PodMeta::new(
        PodName::new(POD.to_string()).unwrap(),
        dir.to_path_buf(),
        segment_id,
        config,
        first.ts,
    );
    let parts = ControllerParts {
        name: POD.parse().unwrap(),
        pod_dir: dir.to_path_buf(),
        meta,
        writer: writer.clone(),
        state: SegmentState::start(&first).expect("fold segment_start"),
        entries: vec![first],
        provider: provider.clone(),
        tools,
        limits: seedpod_engine::RunLimits::default(),
        retry: seedpod_engine::RetryPolicy::default(),
        alerts: Vec::new(),
        session,
        home: seedpod_client::Home::under(dir),
        mcp: Default::default(),
    };
    let files = Files {
        segment,
        record,
        provider,
        writer,
    };
    (parts, files)
}

/// A running controller, a subscription to its events, and its files.
struct Pod {
    _dir: tempfile::TempDir,
    files: Files,
    handle: ControllerHandle,
    events: crate::bus::Subscription,
    next_id: RequestId,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl Pod {
    /// Build the controller in `dir`, spawn `Controller::run`, and subscribe to its events
    /// before anything happens.
    async fn start(dir: tempfile::TempDir, steps: Vec<ScriptStep>, tools: ToolRegistry) -> Pod {
        Pod::start_with(dir, steps, tools, Default::default()).await
    }

    async fn start_with(
        dir: tempfile::TempDir,
        steps: Vec<ScriptStep>,
        tools: ToolRegistry,
        session: crate::session::SessionSettings,
    ) -> Pod {
        let (parts, files) = parts(dir.path(), steps, tools, session).await;
        let shutdown = CancellationToken::new();
        let (controller, handle, rx) = Controller::new(parts, shutdown.clone());
        let task = tokio::spawn(controller.run(rx));
        let (reply, answer) = oneshot::channel();
        handle
            .tx
            .send(ControllerMsg::Subscribe { since: None, reply })
            .await
            .expect("controller accepts commands");
        let subscribed = answer.await.expect("controller answers subscribe");
        Pod {
            _dir: dir,
            files,
            handle,
            events: subscribed.subscription,
            next_id: RequestId::new(0),
            shutdown,
            task,
        }
    }

    /// One request, answered with one frame, as a connection sends it.
    async fn call(&mut self, method: Method) -> ServerMsg {
        self.next_id += 1;
        let (reply, answer) = oneshot::channel();
        let request = ControllerMsg::Request {
            id: self.next_id,
            method: for_controller(method),
            reply,
        };
        self.handle.tx.send(request).await.expect("controller runs");
        tokio::time::timeout(WAIT, answer)
            .await
            .expect("the controller answered in time")
            .expect("the controller answered")
    }

    /// The outcome of an acknowledged request; panics on any other reply.
    async fn acked(&mut self, method: Method) -> AckOutcome {
        acked(&self.call(method).await)
    }

    async fn run(&mut self, input: &str) -> ServerMsg {
        self.call(Method::Run {
            segments: vec![Segment::text(input)],
        })
        .await
    }

    async fn notify(&mut self, message: &str, wake: bool) -> ServerMsg {
        let message = message.into();
        self.call(Method::Notify { message, wake }).await
    }

    /// What `get_history` answers (its connection encodes these entries).
    async fn history(&mut self) -> Vec<Entry> {
        let (reply, answer) = oneshot::channel();
        let request = ControllerMsg::History { reply };
        self.handle.tx.send(request).await.expect("controller runs");
        let (_, entries) = tokio::time::timeout(WAIT, answer)
            .await
            .expect("the controller answered in time")
            .expect("the controller answered");
        entries.iter().map(|e| Entry::clone(e)).collect()
    }

    async fn context(&mut self) -> String {
        match self.call(Method::GetContext).await {
            ServerMsg::Context { body, .. } => body,
            other => panic!("expected context, got {other:?}"),
        }
    }

    async fn status(&mut self) -> PodStatus {
        match self.call(Method::Status).await {
            ServerMsg::StatusReply { status, .. } => status,
            other => panic!("expected status, got {other:?}"),
        }
    }

    /// Read events until `pick` matches one. Events are consumed in order, so a test waits
    /// for things in the order they happen.
    async fn wait_for<T>(&mut self, mut pick: impl FnMut(&ServerMsg) -> Option<T>) -> T {
        let events = &mut self.events;
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let line = events
                    .recv()
                    .await
                    .expect("the controller keeps publishing");
                let msg: ServerMsg = serde_json::from_str(&line).expect("events decode");
                if let Some(found) = pick(&msg) {
                    return found;
                }
            }
        })
        .await;
        found.unwrap_or_else(|_| panic!("timed out; the log holds {:?}", names(&self.log())))
    }

    /// Wait for the next committed `run_end` and the `idle` state that follows it, and return
    /// the run's end reason. The run task commits `run_end` before it reports that it finished,
    /// so until `idle` is broadcast the controller still counts the run as running.
    async fn run_end(&mut self) -> RunEndReason {
        let reason = self
            .wait_for(|msg| match msg {
                ServerMsg::Committed { entry, .. } => match entry.kind {
                    EntryKind::RunEnd { reason, .. } => Some(reason),
                    _ => None,
                },
                _ => None,
            })
            .await;
        self.state(PodState::Idle).await;
        reason
    }

    /// Wait until the provider is streaming (and, for a gated step, holding) a response.
    async fn streaming(&mut self) {
        self.wait_for(|msg| matches!(msg, ServerMsg::TextDelta { .. }).then_some(()))
            .await;
    }

    async fn state(&mut self, state: PodState) {
        self.wait_for(|msg| {
            matches!(msg, ServerMsg::State { state: s, .. } if *s == state).then_some(())
        })
        .await;
    }

    /// Wait until a tool call is committed: the turn loop is now running its tool.
    async fn tool_called(&mut self) {
        self.wait_for(|msg| match msg {
            ServerMsg::Committed { entry, .. } => matches!(
                &entry.kind,
                EntryKind::AssistantItem {
                    item: ModelItem::ToolCall { .. }
                }
            )
            .then_some(()),
            _ => None,
        })
        .await;
    }

    /// The segment file as a restore would read it.
    fn log(&self) -> Vec<Entry> {
        read_segment(&self.files.segment)
            .expect("the segment reads back")
            .entries
    }

    /// Request bodies the provider received, in order.
    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.files.record)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Invariant 2: the log read back and replayed is what the live controller holds.
    async fn assert_replay_matches_live(&mut self) {
        let disk = self.log();
        assert_eq!(
            disk,
            self.history().await,
            "the log holds exactly the live entries"
        );
        let replayed = SegmentState::replay(&disk).expect("the log replays");
        let body = self.files.provider.request_body(&Context {
            model: &replayed.model,
            system_prompt: &replayed.system_prompt,
            tools: &replayed.tools,
            items: &replayed.history,
        });
        assert_eq!(body, self.context().await, "replayed request body");
        let live = self.status().await;
        assert_eq!(live.queue, replayed.pending, "replayed queue");
        let live_open = matches!(
            live.state,
            PodState::Running | PodState::Paused | PodState::WaitingForApproval
        );
        assert_eq!(
            live_open,
            replayed.open_run.is_some(),
            "the live pod is {:?}; the replayed log has open run {:?}",
            live.state,
            replayed.open_run
        );
    }

    /// Shut down the way `seedpod stop` does and wait for the log to be closed.
    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("the controller stopped in time")
            .expect("the controller did not panic");
    }
}

/// The outcome, queue id and entry seq of an ack; panics on any other reply.
fn ack(reply: &ServerMsg) -> (AckOutcome, Option<QueueId>, Option<EntrySeq>) {
    match reply {
        ServerMsg::Ack {
            outcome,
            queue_id,
            entry_seq,
            ..
        } => (*outcome, *queue_id, *entry_seq),
        other => panic!("expected an ack, got {other:?}"),
    }
}

fn acked(reply: &ServerMsg) -> AckOutcome {
    ack(reply).0
}

/// The code of an error reply; panics on any other reply.
fn refused(reply: &ServerMsg) -> ErrorCode {
    match reply {
        ServerMsg::Error { code, .. } => *code,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn names(entries: &[Entry]) -> Vec<&'static str> {
    entries.iter().map(|e| e.kind.name()).collect()
}

fn entry_at(entries: &[Entry], seq: Option<EntrySeq>) -> &EntryKind {
    let seq = seq.expect("the ack names an entry");
    &entries
        .iter()
        .find(|e| e.seq == seq)
        .unwrap_or_else(|| panic!("no entry {seq} in the log"))
        .kind
}

fn run_ends(entries: &[Entry]) -> Vec<RunEndReason> {
    entries
        .iter()
        .filter_map(|e| match e.kind {
            EntryKind::RunEnd { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

fn run_starts(entries: &[Entry]) -> Vec<RunTrigger> {
    entries
        .iter()
        .filter_map(|e| match e.kind {
            EntryKind::RunStart { trigger } => Some(trigger),
            _ => None,
        })
        .collect()
}

fn user_inputs(entries: &[Entry]) -> Vec<(String, Option<QueueId>)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::UserInput { text, queue_id, .. } => Some((text.clone(), *queue_id)),
            _ => None,
        })
        .collect()
}

fn system_items(entries: &[Entry]) -> Vec<(SystemItem, Option<QueueId>)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::SystemItem { item, queue_id } => Some((item.clone(), *queue_id)),
            _ => None,
        })
        .collect()
}

/// Index of the first entry matching `pred`.
fn position(entries: &[Entry], what: &str, pred: impl Fn(&EntryKind) -> bool) -> usize {
    entries
        .iter()
        .position(|e| pred(&e.kind))
        .unwrap_or_else(|| panic!("no {what} in {:?}", names(entries)))
}

fn is_notification(kind: &EntryKind, text: &str) -> bool {
    matches!(kind, EntryKind::SystemItem { item: SystemItem::Notification { message, .. }, .. } if message == text)
}

fn turn_ended(event_id: &str) -> PodEvent {
    PodEvent::TurnEnded {
        pod: "child".into(),
        event_id: ReportId::new(event_id),
    }
}

fn pod_event_entries(entries: &[Entry], event_id: &str) -> (usize, usize) {
    let event_id = ReportId::new(event_id);
    let matches_id = |event: &PodEvent| event.event_id() == Some(&event_id);
    let committed = entries
        .iter()
        .filter(|e| matches!(&e.kind, EntryKind::SystemItem { item: SystemItem::PodEvent { event, .. }, .. } if matches_id(event)))
        .count();
    let queued = entries
        .iter()
        .filter(|e| matches!(&e.kind, EntryKind::Queued { item: QueuedItem::PodEvent { event, .. }, .. } if matches_id(event)))
        .count();
    (committed, queued)
}

#[tokio::test]
async fn run_while_idle_starts_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut pod = Pod::start(dir, vec![text("hello there")], ToolRegistry::new()).await;

    let reply = pod.run("first-input").await;
    let (outcome, queue_id, entry_seq) = ack(&reply);
    assert_eq!(outcome, AckOutcome::Started);
    assert_eq!(queue_id, None);
    assert!(
        matches!(entry_at(&pod.log(), entry_seq), EntryKind::UserInput { text, .. } if text == "first-input"),
        "the ack points at the durable input"
    );
    pod.state(PodState::Running).await;
    assert_eq!(pod.run_end().await, RunEndReason::Completed);

    assert_eq!(
        names(&pod.log()),
        [
            "segment_start",
            "run_start",
            "user_input",
            "usage",
            "assistant_item",
            "turn_end",
            "run_end"
        ]
    );
    assert_eq!(run_starts(&pod.log()), [RunTrigger::User]);
    let requests = pod.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].contains("first-input"));
    assert_eq!(pod.status().await.state, PodState::Idle);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn run_while_running_is_queued_durably_and_started_in_fifo_order() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let steps = vec![
        gate.step("first answer"),
        text("second answer"),
        text("third answer"),
    ];
    let mut pod = Pod::start(dir, steps, ToolRegistry::new()).await;
    assert_eq!(acked(&pod.run("first-input").await), AckOutcome::Started);
    pod.streaming().await;

    for (input, expected_queue_id) in [("second-input", 1), ("third-input", 2)] {
        let (outcome, queue_id, entry_seq) = ack(&pod.run(input).await);
        assert_eq!(outcome, AckOutcome::Queued, "{input}");
        assert_eq!(queue_id, Some(QueueId::new(expected_queue_id)));
        // Durable before the ack: the `queued` entry is already in the file.
        let log = pod.log();
        let expected = EntryKind::Queued {
            queue_id: QueueId::new(expected_queue_id),
            item: QueuedItem::Run {
                segments: vec![Segment::text(input)],
            },
        };
        assert_eq!(entry_at(&log, entry_seq), &expected);
    }
    // Visible to clients: the queue is broadcast and reported by status.
    pod.wait_for(|msg| {
        matches!(msg, ServerMsg::Queued { queue, .. } if queue.len() == 2).then_some(())
    })
    .await;
    let status = pod.status().await;
    assert_eq!(status.state, PodState::Running);
    assert_eq!(status.queue.len(), 2);

    gate.open();
    for _ in 0..3 {
        assert_eq!(pod.run_end().await, RunEndReason::Completed);
    }
    let log = pod.log();
    assert_eq!(
        user_inputs(&log),
        [
            ("first-input".to_string(), None),
            ("second-input".to_string(), Some(QueueId::new(1))),
            ("third-input".to_string(), Some(QueueId::new(2))),
        ]
    );
    let requests = pod.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].contains("second-input") && !requests[1].contains("third-input"));
    assert!(requests[2].contains("third-input"));
    assert!(pod.status().await.queue.is_empty());
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn a_queued_input_can_be_withdrawn_but_a_notification_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let steps = vec![gate.step("first answer"), text("after the note")];
    let mut pod = Pod::start(dir, steps, ToolRegistry::new()).await;
    assert_eq!(acked(&pod.run("first-input").await), AckOutcome::Started);
    pod.streaming().await;
    let (_, input_id, _) = ack(&pod.run("second-input").await);
    let (_, note_id, _) = ack(&pod.notify("note", false).await);
    let (input_id, note_id) = (input_id.unwrap(), note_id.unwrap());

    let (outcome, _, entry_seq) = ack(&pod.call(Method::CancelQueued { queue_id: input_id }).await);
    assert_eq!(outcome, AckOutcome::Done);
    // Durable before the ack.
    assert_eq!(
        entry_at(&pod.log(), entry_seq),
        &EntryKind::Dequeued {
            queue_id: input_id,
            reason: DequeueReason::Cancelled
        }
    );
    for queue_id in [note_id, input_id, QueueId::new(99)] {
        let reply = pod.call(Method::CancelQueued { queue_id }).await;
        assert!(
            matches!(
                reply,
                ServerMsg::Error {
                    code: ErrorCode::InvalidRequest,
                    ..
                }
            ),
            "#{queue_id}: {reply:?}"
        );
    }
    assert_eq!(pod.status().await.queue.len(), 1, "only the note is left");

    gate.open();
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    // The note is drained after the run; wait for it so the log is complete.
    pod.wait_for(|msg| {
        matches!(msg, ServerMsg::Committed { entry, .. }
            if matches!(entry.kind, EntryKind::SystemItem { .. }))
        .then_some(())
    })
    .await;
    let log = pod.log();
    assert_eq!(user_inputs(&log), [("first-input".to_string(), None)]);
    assert!(
        pod.requests().iter().all(|r| !r.contains("second-input")),
        "a withdrawn input never reaches the model"
    );
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn notify_while_idle_commits_and_wakes_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut pod = Pod::start(dir, vec![text("noted")], ToolRegistry::new()).await;

    let (outcome, _, entry_seq) = ack(&pod.notify("quiet-note", false).await);
    assert_eq!(outcome, AckOutcome::Done);
    let expected = EntryKind::SystemItem {
        item: SystemItem::Notification {
            message: "quiet-note".into(),
            body: render::notification_body(
                seedpod_config::notify::DEFAULT_NOTIFY_WRAPPER,
                "quiet-note",
            ),
        },
        queue_id: None,
    };
    assert_eq!(entry_at(&pod.log(), entry_seq), &expected);
    // A wake would have committed its run_start before the ack; nothing ran.
    assert!(run_starts(&pod.history().await).is_empty());
    assert_eq!(pod.status().await.state, PodState::Idle);
    assert!(pod.requests().is_empty(), "no provider request");

    assert_eq!(
        acked(&pod.notify("loud-note", true).await),
        AckOutcome::Done
    );
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    assert_eq!(run_starts(&pod.log()), [RunTrigger::Notification]);
    let requests = pod.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].contains("[notification] quiet-note"));
    assert!(requests[0].contains("[notification] loud-note"));
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn notify_while_running_is_committed_before_the_next_provider_request() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let first = ScriptStep {
        tool_calls: calls("echo").tool_calls,
        ..gate.step("calling echo")
    };
    let mut pod = Pod::start(dir, vec![first, text("done")], echo_tool()).await;
    assert_eq!(acked(&pod.run("go").await), AckOutcome::Started);
    pod.streaming().await;

    let (outcome, queue_id, _) = ack(&pod.notify("mid-turn-note", true).await);
    assert_eq!(outcome, AckOutcome::Queued);
    assert_eq!(queue_id, Some(QueueId::new(1)));
    assert!(
        !pod.context().await.contains("mid-turn-note"),
        "queued, not yet history"
    );

    gate.open();
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let requests = pod.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].contains("[notification] mid-turn-note"));
    assert!(requests[1].contains("[notification] mid-turn-note"));

    // In the log: after the tool round, before the model's next answer.
    let log = pod.log();
    let note = position(&log, "notification", |k| {
        is_notification(k, "mid-turn-note")
    });
    let result = position(&log, "tool_result", |k| {
        matches!(k, EntryKind::ToolResult { .. })
    });
    let answer = position(
        &log,
        "final answer",
        |k| matches!(k, EntryKind::AssistantItem { item: ModelItem::AssistantText { text } } if text == "done"),
    );
    assert!(result < note && note < answer, "{:?}", names(&log));
    assert_eq!(
        system_items(&log)[0].1,
        Some(QueueId::new(1)),
        "committed from the queue"
    );
    // It was delivered inside the running turn, so it does not start another.
    assert_eq!(run_starts(&log).len(), 1);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn notify_while_paused_is_queued_and_delivered_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let steps = vec![gate.step("cut off by the pause"), text("resumed")];
    let mut pod = Pod::start(dir, steps, ToolRegistry::new()).await;
    pod.run("go").await;
    pod.streaming().await;
    assert_eq!(acked(&pod.call(Method::Pause).await), AckOutcome::Done);
    pod.state(PodState::Paused).await;

    let (outcome, queue_id, entry_seq) = ack(&pod.notify("paused-note", true).await);
    assert_eq!(outcome, AckOutcome::Queued);
    let expected = EntryKind::Queued {
        queue_id: queue_id.expect("a queue id"),
        item: QueuedItem::Notify {
            message: "paused-note".into(),
            wake: true,
        },
    };
    assert_eq!(entry_at(&pod.log(), entry_seq), &expected);
    assert!(!pod.context().await.contains("paused-note"));
    let status = pod.status().await;
    assert_eq!(
        status.state,
        PodState::Paused,
        "a notify does not wake a paused pod"
    );
    assert_eq!(status.queue.len(), 1);
    pod.assert_replay_matches_live().await;

    assert_eq!(pod.acked(Method::Resume).await, AckOutcome::Started);
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let requests = pod.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].contains("[notification] paused-note"));
    assert_eq!(run_starts(&pod.log()).len(), 1, "resumed, not restarted");
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn methods_that_need_a_run_are_refused_while_idle() {
    let dir = tempfile::tempdir().unwrap();
    let mut pod = Pod::start(dir, Vec::new(), ToolRegistry::new()).await;
    let before = pod.log();
    assert_eq!(
        refused(&pod.call(Method::Pause).await),
        ErrorCode::NotRunning
    );
    assert_eq!(
        refused(&pod.call(Method::Resume).await),
        ErrorCode::NotPaused
    );
    assert_eq!(
        refused(&pod.call(Method::Cancel).await),
        ErrorCode::NotRunning
    );
    assert_eq!(pod.log(), before, "a refused method writes nothing");
    assert_eq!(pod.status().await.state, PodState::Idle);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn resume_while_running_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let mut pod = Pod::start(dir, vec![gate.step("streaming")], ToolRegistry::new()).await;
    pod.run("go").await;
    pod.streaming().await;
    assert_eq!(
        refused(&pod.call(Method::Resume).await),
        ErrorCode::NotPaused
    );
    assert_eq!(pod.status().await.state, PodState::Running);
    gate.open();
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    assert_eq!(pod.requests().len(), 1, "the refused resume sent nothing");
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn pause_while_running_keeps_committed_items_then_cancel_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let steps = vec![calls("echo"), gate.step("second request")];
    let mut pod = Pod::start(dir, steps, echo_tool()).await;
    pod.run("go").await;
    // The first response (a tool call) and its result are committed; the second streams.
    pod.streaming().await;
    let before = pod.log();
    assert!(
        names(&before).contains(&"tool_result"),
        "{:?}",
        names(&before)
    );

    assert_eq!(pod.acked(Method::Pause).await, AckOutcome::Done);
    pod.state(PodState::Paused).await;
    let paused = pod.history().await;
    assert_eq!(
        paused[..before.len()],
        before[..],
        "committed items are kept"
    );
    assert_eq!(
        paused[before.len()..]
            .iter()
            .map(|e| e.kind.clone())
            .collect::<Vec<_>>(),
        [EntryKind::AssistantInterrupted {
            text: "seco".into()
        }],
        "and what had streamed of the second answer, marked interrupted"
    );
    let before = paused;
    assert!(run_ends(&before).is_empty(), "the run stays open");
    let context = pod.context().await;
    assert!(
        context.contains("call_1_0"),
        "the tool round is still history"
    );
    // Pausing a paused pod is a no-op.
    assert_eq!(pod.acked(Method::Pause).await, AckOutcome::Done);
    assert_eq!(pod.log(), before);
    assert_eq!(pod.status().await.state, PodState::Paused);
    pod.assert_replay_matches_live().await;

    // Cancel while paused abandons the turn and returns to idle.
    assert_eq!(pod.acked(Method::Cancel).await, AckOutcome::Done);
    let log = pod.log();
    assert_eq!(run_ends(&log), [RunEndReason::Cancelled]);
    assert_eq!(
        system_items(&log),
        [(
            SystemItem::Interrupt {
                body: render::cancelled_body()
            },
            None
        )]
    );
    assert_eq!(pod.status().await.state, PodState::Idle);
    assert_eq!(pod.requests().len(), 2);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn resume_reruns_unanswered_tool_calls_before_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, release, finished) = wait_tool();
    let steps = vec![calls("wait"), text("after the tool")];
    let mut pod = Pod::start(dir, steps, tools).await;
    pod.run("go").await;
    pod.tool_called().await;

    // Paused while the tool runs: the call is in history without its result.
    assert_eq!(pod.acked(Method::Pause).await, AckOutcome::Done);
    pod.state(PodState::Paused).await;
    assert!(!names(&pod.log()).contains(&"tool_result"));
    pod.assert_replay_matches_live().await;

    release.notify_one();
    assert_eq!(pod.acked(Method::Resume).await, AckOutcome::Started);
    assert_eq!(pod.run_end().await, RunEndReason::Completed);

    let log = pod.log();
    let result_at = position(&log, "tool_result", |k| {
        matches!(k, EntryKind::ToolResult { call_id, name, content, is_error: false, .. }
            if *call_id == CallId::new("call_1_0") && name == "wait" && content == "wait was released")
    });
    let answer_at = position(&log, "final answer", |k| {
        matches!(
            k,
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { .. }
            }
        )
    });
    assert!(result_at < answer_at, "{:?}", names(&log));
    assert_eq!(
        *finished.lock().unwrap(),
        ["wait"],
        "the tool ran to the end once"
    );
    let requests = pod.requests();
    assert_eq!(requests.len(), 2, "the first request is not sent again");
    assert!(requests[1].contains("wait was released"));
    assert_eq!(run_ends(&log), [RunEndReason::Completed]);
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn cancel_while_running_closes_orphans_and_records_an_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    let (tools, _release, finished) = wait_tool();
    let steps = vec![calls("wait"), text("fresh start")];
    let mut pod = Pod::start(dir, steps, tools).await;
    pod.run("go").await;
    pod.tool_called().await;

    assert_eq!(pod.acked(Method::Cancel).await, AckOutcome::Done);
    assert_eq!(pod.status().await.state, PodState::Idle);
    let log = pod.log();
    let tail: Vec<&EntryKind> = log.iter().rev().take(3).rev().map(|e| &e.kind).collect();
    assert_eq!(
        tail,
        [
            &EntryKind::ToolResult {
                call_id: CallId::new("call_1_0"),
                name: "wait".into(),
                content: render::orphan_result(),
                is_error: true,
                meta: Default::default(),
            },
            &EntryKind::SystemItem {
                item: SystemItem::Interrupt {
                    body: render::cancelled_body()
                },
                queue_id: None,
            },
            &EntryKind::RunEnd {
                reason: RunEndReason::Cancelled,
                message: None,
            },
        ]
    );
    assert!(finished.lock().unwrap().is_empty(), "the tool was stopped");
    pod.assert_replay_matches_live().await;

    // The interrupt is history before the next input.
    assert_eq!(pod.run_end().await, RunEndReason::Cancelled);
    assert_eq!(acked(&pod.run("next-input").await), AckOutcome::Started);
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let requests = pod.requests();
    assert_eq!(requests.len(), 2);
    let interrupt = requests[1]
        .find("[interrupted]")
        .expect("interrupt in context");
    let input = requests[1].find("next-input").expect("input in context");
    assert!(interrupt < input);
    assert!(requests[1].contains("[not run]"));
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn run_while_paused_abandons_the_paused_turn_then_starts() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let steps = vec![gate.step("never finished"), text("fresh answer")];
    let mut pod = Pod::start(dir, steps, ToolRegistry::new()).await;
    pod.run("old-input").await;
    pod.streaming().await;
    pod.call(Method::Pause).await;
    pod.state(PodState::Paused).await;

    assert_eq!(acked(&pod.run("new-input").await), AckOutcome::Started);
    assert_eq!(pod.run_end().await, RunEndReason::Abandoned);
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    let log = pod.log();
    assert_eq!(
        names(&log),
        [
            "segment_start",
            "run_start",
            "user_input",
            "assistant_interrupted",
            "system_item",
            "run_end",
            "run_start",
            "user_input",
            "usage",
            "assistant_item",
            "turn_end",
            "run_end"
        ]
    );
    assert_eq!(
        system_items(&log),
        [(
            SystemItem::Interrupt {
                body: render::abandoned_body()
            },
            None
        )]
    );
    assert_eq!(
        run_ends(&log),
        [RunEndReason::Abandoned, RunEndReason::Completed]
    );
    let requests = pod.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].contains("abandoned for new input") && requests[1].contains("new-input"));
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn a_duplicate_pod_event_is_acknowledged_but_committed_once() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::in_dir(&dir);
    let mut pod = Pod::start(dir, vec![gate.step("busy")], ToolRegistry::new()).await;
    let report = |event_id: &str| Method::PodEvent {
        event: turn_ended(event_id),
        wake: false,
    };

    // Idle: committed at once, the retry only acknowledged.
    assert_eq!(pod.acked(report("evt-idle")).await, AckOutcome::Done);
    assert_eq!(pod.acked(report("evt-idle")).await, AckOutcome::Done);
    assert_eq!(pod_event_entries(&pod.log(), "evt-idle"), (1, 0));

    // Running: queued once, the retry only acknowledged, committed once after the run.
    pod.run("go").await;
    pod.streaming().await;
    assert_eq!(pod.acked(report("evt-run")).await, AckOutcome::Queued);
    assert_eq!(pod.acked(report("evt-run")).await, AckOutcome::Done);
    assert_eq!(pod_event_entries(&pod.log(), "evt-run"), (0, 1));
    assert_eq!(pod.status().await.queue.len(), 1);
    gate.open();
    assert_eq!(pod.run_end().await, RunEndReason::Completed);
    pod.wait_for(|msg| match msg {
        ServerMsg::Committed { entry, .. } => matches!(
            &entry.kind,
            EntryKind::SystemItem {
                item: SystemItem::PodEvent { .. },
                queue_id: Some(_)
            }
        )
        .then_some(()),
        _ => None,
    })
    .await;
    let log = pod.log();
    assert_eq!(pod_event_entries(&log, "evt-run"), (1, 1));
    assert_eq!(pod_event_entries(&log, "evt-idle"), (1, 0));
    assert_eq!(run_starts(&log).len(), 1, "wake false starts nothing");
    pod.assert_replay_matches_live().await;
    pod.stop().await;
}

#[tokio::test]
async fn a_pod_event_the_log_refused_is_not_acknowledged_on_retry() {
    let dir = tempfile::tempdir().unwrap();
    let mut pod = Pod::start(dir, Vec::new(), ToolRegistry::new()).await;
    // Break the log under the controller: every later append fails.
    pod.files.writer.close().await.expect("close the writer");
    let report = Method::PodEvent {
        event: turn_ended("evt-lost"),
        wake: false,
    };
    assert_eq!(
        refused(&pod.call(report.clone()).await),
        ErrorCode::StorageFailed
    );
    // The child retries the same event: still nothing durable, so it must not be acknowledged.
    let retry = pod.call(report).await;
    assert!(
        matches!(
            retry,
            ServerMsg::Error {
                code: ErrorCode::StorageFailed,
                ..
            }
        ),
        "the retry was answered {retry:?}, but the log holds {:?}",
        pod_event_entries(&pod.log(), "evt-lost")
    );
    pod.stop().await;
}

/// Acks for queued and injected items wait for their fsync on a task of their own; when that
/// fsync fails the controller hears of it before the client does, so a child retrying the
/// report is refused instead of told "already taken", and nothing later is acknowledged.
#[tokio::test]
async fn a_failed_sync_behind_an_ack_breaks_the_log_before_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let mut pod = Pod::start(dir, Vec::new(), ToolRegistry::new()).await;
    let report = Method::PodEvent {
        event: turn_ended("evt-1"),
        wake: false,
    };
    assert_eq!(acked(&pod.call(report.clone()).await), AckOutcome::Done);
    // As the ack task reports a failed fsync.
    pod.handle
        .tx
        .send(ControllerMsg::SyncFailed {
            reason: "fsync failed: injected".into(),
        })
        .await
        .unwrap();
    let retry = pod.call(report).await;
    assert_eq!(refused(&retry), ErrorCode::StorageFailed, "{retry:?}");
    let notify = Method::Notify {
        message: "later".into(),
        wake: false,
    };
    assert_eq!(refused(&pod.call(notify).await), ErrorCode::StorageFailed);
    pod.stop().await;
}

/// Drive a controller by hand: handle commands from its channel one at a time, so a test can
/// place a client's request at an exact point between the run task's commands.
struct Manual {
    controller: Controller,
    rx: super::Receivers,
    next_id: RequestId,
}

impl Manual {
    async fn request(&mut self, method: Method) -> ServerMsg {
        self.next_id += 1;
        let (reply, answer) = oneshot::channel();
        self.controller
            .handle(ControllerMsg::Request {
                id: self.next_id,
                method: for_controller(method),
                reply,
            })
            .await;
        answer.await.expect("the controller answered")
    }

    /// Handle the run task's commands until `stop` matches one (which is handled too).
    async fn pump_until(&mut self, stop: impl Fn(&ControllerMsg) -> bool) {
        loop {
            let cmd = tokio::time::timeout(WAIT, self.rx.commands.recv())
                .await
                .expect("the run task sent a command in time")
                .expect("the run task is alive");
            let last = stop(&cmd);
            self.controller.handle(cmd).await;
            if last {
                return;
            }
        }
    }
}

#[tokio::test]
async fn a_pause_racing_the_end_of_a_run_does_not_pause_a_finished_run() {
    let dir = tempfile::tempdir().unwrap();
    let (parts, files) = parts(
        dir.path(),
        vec![text("done")],
        ToolRegistry::new(),
        Default::default(),
    )
    .await;
    let (controller, _handle, rx) = Controller::new(parts, CancellationToken::new());
    let mut pod = Manual {
        controller,
        rx,
        next_id: RequestId::new(0),
    };
    let run = Method::Run {
        segments: vec![Segment::text("go")],
    };
    assert_eq!(acked(&pod.request(run).await), AckOutcome::Started);
    // The run task commits run_end; its RunFinished is still on the way when the pause lands
    // (in the pod, a client's pause queued on the command channel between the two).
    pod.pump_until(|cmd| {
        matches!(
            cmd,
            ControllerMsg::Commit { kind, .. } if matches!(**kind, EntryKind::RunEnd { .. })
        )
    })
    .await;
    let pause = pod.request(Method::Pause).await;
    assert!(
        matches!(
            pause,
            ServerMsg::Error {
                code: ErrorCode::NotRunning,
                ..
            }
        ),
        "a run whose end is committed is not paused: {pause:?}"
    );
    // The run task still reports its end, which makes the pod idle.
    pod.pump_until(|cmd| matches!(cmd, ControllerMsg::RunFinished { .. }))
        .await;

    let replayed = SegmentState::replay(&read_segment(&files.segment).unwrap().entries).unwrap();
    assert!(replayed.open_run.is_none(), "the run ended in the log");
    assert_eq!(
        pod.controller.pod_state(),
        PodState::Idle,
        "a finished run cannot be paused; the pause was answered {pause:?}"
    );
}

/// Files an input references are read by the run task, not the controller; a pause that lands
/// while they are being read makes the stale attach a no-op, and the resumed run reads them
/// again: the model gets each attachment exactly once, after the input and before its answer.
#[tokio::test]
async fn references_paused_before_they_are_attached_are_attached_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the milk\n").unwrap();
    let (parts, files) = parts(
        dir.path(),
        vec![text("noted")],
        ToolRegistry::new(),
        Default::default(),
    )
    .await;
    let (controller, _handle, rx) = Controller::new(parts, CancellationToken::new());
    let mut pod = Manual {
        controller,
        rx,
        next_id: RequestId::new(0),
    };
    let run = Method::Run {
        segments: vec![
            Segment::text("read "),
            Segment::FileRef {
                path: "notes.txt".into(),
            },
        ],
    };
    assert_eq!(acked(&pod.request(run).await), AckOutcome::Started);
    let stale = tokio::time::timeout(WAIT, pod.rx.commands.recv())
        .await
        .expect("the run task sent a command in time")
        .expect("the run task is alive");
    assert!(
        matches!(stale, ControllerMsg::Attach { .. }),
        "the run's first command attaches its references"
    );
    assert_eq!(acked(&pod.request(Method::Pause).await), AckOutcome::Done);
    // The paused run's attach arrives late: refused, nothing committed.
    pod.controller.handle(stale).await;
    let attached = |entries: &[Entry]| {
        entries
            .iter()
            .filter(|e| {
                matches!(
                    &e.kind,
                    EntryKind::SystemItem {
                        item: SystemItem::FileAttachment { .. },
                        ..
                    }
                )
            })
            .count()
    };
    let log = read_segment(&files.segment).unwrap().entries;
    assert_eq!(attached(&log), 0, "{:?}", names(&log));

    assert_eq!(
        acked(&pod.request(Method::Resume).await),
        AckOutcome::Started
    );
    pod.pump_until(|cmd| matches!(cmd, ControllerMsg::RunFinished { .. }))
        .await;
    let log = read_segment(&files.segment).unwrap().entries;
    assert_eq!(attached(&log), 1, "{:?}", names(&log));
    let order = names(&log);
    let input = order.iter().position(|n| *n == "user_input").unwrap();
    let item = order.iter().position(|n| *n == "system_item").unwrap();
    let answer = order.iter().position(|n| *n == "assistant_item").unwrap();
    assert!(input < item && item < answer, "{order:?}");
    let sent = std::fs::read_to_string(&files.record).unwrap();
    assert!(sent.contains("remember the milk"), "the model saw the file");
}

/// A run that fails says why once, in its `run_end`, not a second time in an alert beside it.
#[tokio::test]
async fn a_failed_run_reports_its_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let failing = ScriptStep {
        error: Some(seedpod_engine::scripted::ScriptedFailure {
            kind: seedpod_engine::scripted::ScriptedErrorKind::Permanent,
            message: "the model is gone".into(),
        }),
        ..ScriptStep::text("")
    };
    let mut pod = Pod::start(dir, vec![failing], ToolRegistry::new()).await;
    pod.run("go").await;
    // Everything published until the pod is idle again: the run's end, and any alert.
    let mut alerts = Vec::new();
    let mut ended = None;
    pod.wait_for(|msg| match msg {
        ServerMsg::Alert { message, .. } => {
            alerts.push(message.clone());
            None
        }
        ServerMsg::Committed { entry, .. } => {
            if let EntryKind::RunEnd { reason, message } = &entry.kind {
                ended = Some((*reason, message.clone()));
            }
            None
        }
        ServerMsg::State {
            state: PodState::Idle,
            ..
        } if ended.is_some() => Some(()),
        _ => None,
    })
    .await;
    let (reason, message) = ended.expect("the run ended");
    assert_eq!(reason, RunEndReason::Error);
    assert!(
        message.is_some_and(|m| m.contains("the model is gone")),
        "the run_end says why"
    );
    assert!(
        alerts.iter().all(|a| !a.contains("the model is gone")),
        "{alerts:?}"
    );
    pod.stop().await;
}
