//! The event loop: terminal input, pod frames, background results and a clock in one
//! `tokio::select!`; the app decides, this loop carries out its `Effect`s and draws — only
//! when something visible changed.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result};
use crossterm::event::{Event, EventStream, KeyEventKind};
use futures::StreamExt;
use futures::future::BoxFuture;
use seedpod_client::{Home, PodListing};
use seedpod_protocol::PodName;
use seedpod_transcript::Theme;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::app::branch::BranchCommand;
use crate::app::{App, Effect, ExitReason, FlashLevel};
use crate::connection::{self, CLIENT_NAME, ConnectionEvent, ConnectionHandle, LINK_QUEUE};
use crate::history::{InputHistory, append_line};
use crate::view_memory::ViewMemory;
use crate::{clipboard, terminal, ui};

/// How often the clock ticks while a turn runs (its timer moves); otherwise the loop sleeps
/// until the next thing that changes by itself (`App::next_tick`), or for good when idle.
pub const TICK: Duration = Duration::from_millis(250);

/// ConnectionState events applied before a redraw. Draining a burst (a 10,000-entry snapshot arrives as
/// 40 frames, a fast stream as many deltas) before drawing keeps the screen current without
/// drawing every intermediate state.
pub const MAX_EVENTS_PER_FRAME: usize = 1024;

/// While a snapshot arrives the screen is redrawn at most this often: every intermediate state
/// is about to be replaced (a big session arrives as many frames, each parsed as it comes), so
/// drawing them only delays the first real screen; a slow link still shows it is alive.
pub const SNAPSHOT_DRAW_EVERY: Duration = Duration::from_millis(500);

/// Starts (or restores) a stopped pod; the CLI passes its own `start`, which spawns the daemon
/// detached in its own session.
pub type Starter = Arc<dyn Fn(PodName) -> BoxFuture<'static, Result<()>> + Send + Sync>;

pub struct TuiOptions {
    pub home: Home,
    pub pod: PodName,
    /// A line above everything, e.g. the demo's label.
    pub banner: Option<String>,
    /// Keep input history in `data/pods/<name>/input-history.jsonl` (off for throwaway pods).
    pub persist_history: bool,
    pub starter: Starter,
    /// `[tui] notify`.
    pub notify: crate::notify::NotifyMode,
    /// `pod` is on another machine, reached this way (`seedpod attach HOST:NAME`).
    pub remote: Option<seedpod_client::Remote>,
    /// `[remote.hosts]`: the other machines whose pods the picker lists, and how long each
    /// may take to answer.
    pub hosts: Vec<seedpod_client::Remote>,
    pub hosts_timeout: std::time::Duration,
    /// The tools' declarations (the pod's catalogue), which say how a call is previewed.
    pub tools: crate::app::DeclLookup,
    /// `[tui] inline_paste_lines` and `inline_paste_chars`.
    pub paste: crate::composer::PasteLimits,
}

/// How the TUI ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The pod attached last (the picker may have switched).
    pub pod: PodName,
    pub reason: ExitReason,
}

impl Outcome {
    /// The line printed after the terminal is restored.
    pub fn message(&self) -> String {
        match self.reason {
            ExitReason::Detached => format!(
                "detached from pod {0} — seedpod attach {0} to return",
                self.pod
            ),
            ExitReason::Stopped => format!(
                "stopped pod {0} — seedpod start {0} restores it from its log",
                self.pod
            ),
        }
    }
}

/// Results of work the loop started in the background.
enum Background {
    Pods(Vec<PodListing>),
    RemotePods {
        host: String,
        result: Result<Vec<crate::picker::RemotePod>, String>,
    },
    Started {
        pod: PodName,
        result: Result<()>,
    },
    HistoryFailed(String),
    /// What `seedpod fork` or `seedpod rewind` answered.
    Branch {
        command: BranchCommand,
        result: crate::app::branch::BranchResult,
    },
    /// A pod's turns, read from its log for a picker.
    Turns {
        pod: PodName,
        kind: crate::app::branch::BranchKind,
        result: Result<crate::app::branch::TurnList, String>,
    },
}

struct Loop {
    options: TuiOptions,
    app: App,
    link: ConnectionHandle,
    link_rx: mpsc::Receiver<ConnectionEvent>,
    bg_tx: mpsc::UnboundedSender<Background>,
    dirty: bool,
    last_draw: Instant,
}

/// Run the TUI until the person detaches (or stops the pod). The terminal is restored before
/// this returns, also on error.
pub async fn run(options: TuiOptions) -> Result<Outcome> {
    let (mut term, guard) = terminal::enter().context("cannot set up the terminal")?;
    let (bg_tx, mut bg_rx) = mpsc::unbounded_channel();
    let history = load_history(&options, &options.pod);
    let mut app = App::new(&options.pod, history, Theme::from_env(), options.tools);
    app.load_view(load_view(&options, &options.pod));
    app.banner = options.banner.clone();
    app.composer.set_paste_limits(options.paste);
    let first = match &options.remote {
        Some(remote) => connection::Endpoint::Remote(remote.clone()),
        None => connection::Endpoint::Local(options.home.clone()),
    };
    let (link, link_rx) = attach(first, &options.pod);
    let mut state = Loop {
        options,
        app,
        link,
        link_rx,
        bg_tx,
        dirty: true,
        last_draw: Instant::now(),
    };
    // `kill` or a closed terminal: leave cleanly (terminal restored, pod untouched).
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut hangup = signal(SignalKind::hangup()).context("cannot watch SIGHUP")?;
    let mut events = EventStream::new();
    let reason = loop {
        if let Some(reason) = state.app.exit {
            break reason;
        }
        while state.dirty && state.held_until().is_none() {
            terminal::draw(&mut term, |frame| {
                ui::draw(frame, &mut state.app, Instant::now())
            })?;
            state.dirty = false;
            state.last_draw = Instant::now();
            // What a scroll reached is known once drawn: at the top, the app may ask for earlier
            // entries, and the screen says it is loading them (once: the ask is spent).
            for effect in state.app.after_draw() {
                state.dirty = true;
                state.carry_out(effect, &mut term)?;
            }
        }
        let wake = match (state.app.next_tick(Instant::now()), state.held_until()) {
            (Some(tick), Some(held)) => Some(tick.min(held)),
            (tick, held) => tick.or(held),
        };
        let effects = tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => state.terminal_event(event),
                Some(Err(err)) => return Err(err).context("reading the terminal"),
                // The terminal is gone: leave as if detached (the pod keeps running).
                None => break ExitReason::Detached,
            },
            _ = terminate.recv() => break ExitReason::Detached,
            _ = hangup.recv() => break ExitReason::Detached,
            Some(event) = state.link_rx.recv() => state.link_events(event),
            Some(result) = bg_rx.recv() => state.background(result),
            () = sleep_until(wake) => {
                state.dirty |= state.app.on_tick(Instant::now());
                Vec::new()
            }
        };
        for effect in effects {
            state.carry_out(effect, &mut term)?;
        }
    };
    drop(guard);
    // The last fold or expansion may still be on its way to the disk: write it once more here,
    // so the next attach finds it (a failure only loses a convenience).
    if let Some((path, text)) = state.app.view_to_save() {
        let _ = crate::view_memory::save(&path, &text);
    }
    Ok(Outcome {
        pod: state.app.pod.clone(),
        reason,
    })
}

/// Sleep until `at`, or forever for `None` (another branch of the loop's `select!` wins).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

fn attach(
    endpoint: connection::Endpoint,
    pod: &PodName,
) -> (ConnectionHandle, mpsc::Receiver<ConnectionEvent>) {
    // A channel per link: frames of a pod we switched away from can never reach the app.
    let (tx, rx) = mpsc::channel(LINK_QUEUE);
    (connection::spawn(endpoint, pod.clone(), tx), rx)
}

/// The fold state kept for `pod`, when its history is kept too (a pod on this machine).
fn load_view(options: &TuiOptions, pod: &PodName) -> ViewMemory {
    if options.persist_history {
        ViewMemory::load(&options.home.view_memory_path(pod))
    } else {
        ViewMemory::in_memory()
    }
}

fn load_history(options: &TuiOptions, pod: &PodName) -> InputHistory {
    if options.persist_history {
        InputHistory::load(&options.home.input_history_path(pod))
    } else {
        InputHistory::in_memory()
    }
}

impl Loop {
    fn terminal_event(&mut self, event: Event) -> Vec<Effect> {
        let now = Instant::now();
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                self.dirty = true;
                self.app.on_key(key, now)
            }
            Event::FocusGained => {
                self.app.focused = true;
                Vec::new()
            }
            Event::FocusLost => {
                self.app.focused = false;
                Vec::new()
            }
            Event::Key(_) => Vec::new(),
            Event::Paste(text) => {
                self.dirty = true;
                self.app.on_paste(&text, Instant::now())
            }
            Event::Mouse(mouse) => {
                self.dirty |= self.app.on_mouse(mouse);
                Vec::new()
            }
            Event::Resize(_, _) => {
                // Layout happens at draw time, so a redraw is the whole reflow.
                self.dirty = true;
                Vec::new()
            }
        }
    }

    /// When a pending redraw is held back because a snapshot is arriving: the moment it is due.
    fn held_until(&self) -> Option<Instant> {
        if !self.dirty || !self.app.snapshot_arriving() {
            return None;
        }
        let due = self.last_draw + SNAPSHOT_DRAW_EVERY;
        (due > Instant::now()).then_some(due)
    }

    fn link_events(&mut self, first: ConnectionEvent) -> Vec<Effect> {
        let now = Instant::now();
        let (changed, mut effects) = self.app.on_link(first, now);
        self.dirty |= changed;
        for _ in 1..MAX_EVENTS_PER_FRAME {
            let Ok(event) = self.link_rx.try_recv() else {
                break;
            };
            let (changed, more) = self.app.on_link(event, now);
            self.dirty |= changed;
            effects.extend(more);
        }
        effects
    }

    fn background(&mut self, result: Background) -> Vec<Effect> {
        let now = Instant::now();
        self.dirty = true;
        match result {
            Background::Pods(pods) => self.app.on_pods(pods, SystemTime::now()),
            Background::RemotePods { host, result } => self.app.on_remote_pods(&host, result),
            Background::Started {
                pod,
                result: Ok(()),
            } => self.attach_local(&pod, now),
            Background::Started {
                pod,
                result: Err(err),
            } => self.app.flash(
                FlashLevel::Error,
                format!("cannot start pod {pod}: {err:#}"),
                now,
            ),
            Background::HistoryFailed(err) => self.app.flash(
                FlashLevel::Warn,
                format!("input history not saved: {err}"),
                now,
            ),
            Background::Branch { command, result } => {
                return self.app.on_branch(command, result, now);
            }
            Background::Turns { pod, kind, result } => {
                return self.app.on_turns(pod, kind, result, now);
            }
        }
        Vec::new()
    }

    /// Attach to a pod on this machine: a fresh transcript from a new link.
    fn attach_local(&mut self, pod: &PodName, now: Instant) {
        let history = load_history(&self.options, pod);
        self.app.switch_pod(pod, history, now);
        self.app.load_view(load_view(&self.options, pod));
        let endpoint = connection::Endpoint::Local(self.options.home.clone());
        let (link, rx) = attach(endpoint, pod);
        self.link = link;
        self.link_rx = rx;
    }

    fn carry_out(&mut self, effect: Effect, term: &mut terminal::Term) -> Result<()> {
        let now = Instant::now();
        match effect {
            Effect::Request { tag, method } => {
                if !self.link.send(tag, method) {
                    let failed = ConnectionEvent::Failed {
                        tag,
                        reason: "too many requests in flight".into(),
                    };
                    let (changed, _) = self.app.on_link(failed, now);
                    self.dirty |= changed;
                }
            }
            // The loop sees `app.exit` on its next turn.
            Effect::Exit(_) => {}
            Effect::Attach(pod) => {
                self.app
                    .flash(FlashLevel::Info, format!("attaching to {pod}…"), now);
                let start = (self.options.starter)(pod.clone());
                let tx = self.bg_tx.clone();
                tokio::spawn(async move {
                    let result = start.await;
                    let _ = tx.send(Background::Started { pod, result });
                });
            }
            Effect::ListPods => {
                let home = self.options.home.clone();
                let tx = self.bg_tx.clone();
                tokio::spawn(async move {
                    let pods = seedpod_client::list_pods(&home, CLIENT_NAME).await;
                    let _ = tx.send(Background::Pods(pods));
                });
                let hosts: Vec<String> =
                    self.options.hosts.iter().map(|h| h.alias.clone()).collect();
                self.app.on_hosts(&hosts);
                // Each machine on its own task: a slow one never holds the others back.
                for remote in self.options.hosts.clone() {
                    let tx = self.bg_tx.clone();
                    let limit = self.options.hosts_timeout;
                    tokio::spawn(async move {
                        let result = match remote.run(&["ls", "--json"], limit).await {
                            Ok(out) if out.status.success() => Ok(crate::picker::remote_pods(
                                &String::from_utf8_lossy(&out.stdout),
                            )),
                            Ok(out) => {
                                let said = String::from_utf8_lossy(&out.stderr);
                                Err(said
                                    .trim()
                                    .lines()
                                    .last()
                                    .unwrap_or("unreachable")
                                    .to_owned())
                            }
                            Err(err) => Err(err.to_string()),
                        };
                        let host = remote.alias;
                        let _ = tx.send(Background::RemotePods { host, result });
                    });
                }
            }
            Effect::AttachRemote { host, name } => {
                match self.options.hosts.iter().find(|h| h.alias == host).cloned() {
                    Some(remote) => {
                        self.app.flash(
                            FlashLevel::Info,
                            format!("attaching to {name} on {host}…"),
                            now,
                        );
                        self.app.switch_pod(&name, InputHistory::in_memory(), now);
                        self.app.load_view(ViewMemory::in_memory());
                        let (link, rx) = attach(connection::Endpoint::Remote(remote), &name);
                        self.link = link;
                        self.link_rx = rx;
                    }
                    None => self.app.flash(
                        FlashLevel::Error,
                        format!("{host} is not in [remote.hosts]"),
                        now,
                    ),
                }
            }
            Effect::Copy(text) => match clipboard::osc52(&text) {
                Some(sequence) => {
                    terminal::write_raw(term, &sequence)?;
                    // tmux keeps OSC 52 to itself unless told otherwise: say so rather than
                    // "copied".
                    if std::env::var_os("TMUX").is_some() {
                        self.app.flash(FlashLevel::Info, clipboard::TMUX_NOTE, now);
                    }
                }
                None => self.app.flash(
                    FlashLevel::Warn,
                    "the answer is too long to copy through the terminal",
                    now,
                ),
            },
            Effect::Mouse(on) => terminal::set_mouse(on)?,
            Effect::Notify { title, body } => {
                let kind = std::env::var("TERM").unwrap_or_default();
                let program = std::env::var("TERM_PROGRAM").unwrap_or_default();
                if let Some(channel) = crate::notify::channel(self.options.notify, &kind, &program)
                {
                    let sequence = crate::notify::sequence(channel, &title, &body);
                    terminal::write_raw(term, &sequence)?;
                }
            }
            Effect::SaveHistory { path, line } => {
                let tx = self.bg_tx.clone();
                tokio::task::spawn_blocking(move || {
                    if let Err(err) = append_line(&path, &line) {
                        let _ = tx.send(Background::HistoryFailed(err.to_string()));
                    }
                });
            }
            Effect::SaveView { path, text } => {
                // Off the loop; a failure only loses a convenience, so it is not shown.
                tokio::task::spawn_blocking(move || {
                    if let Err(err) = crate::view_memory::save(&path, &text) {
                        tracing::debug!(event = "view_not_saved", error = %err);
                    }
                });
            }
            Effect::Branch(command) => {
                let home = self.options.home.clone();
                let tx = self.bg_tx.clone();
                tokio::spawn(async move {
                    let result = crate::branch::run(&home, &command).await;
                    let _ = tx.send(Background::Branch { command, result });
                });
            }
            Effect::ListTurns { pod, kind } => {
                let home = self.options.home.clone();
                let tx = self.bg_tx.clone();
                // Reading a log is file I/O: off the loop.
                tokio::task::spawn_blocking(move || {
                    let result = crate::branch::turns(&home, &pod, kind);
                    let _ = tx.send(Background::Turns { pod, kind, result });
                });
            }
            Effect::Reattach(pod) => self.attach_local(&pod, now),
            Effect::Repaint => {
                term.clear()?;
                self.dirty = true;
            }
        }
        Ok(())
    }
}
