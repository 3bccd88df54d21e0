//! The app: everything the screen shows and every decision about keys and frames, with no I/O.
//!
//! Update functions take an event and the current time and return `Effect`s for the event
//! loop to carry out (`effect.rs`). `input.rs` handles keys and pastes, `navigate.rs` the mouse
//! wheel, turn jumps and focus, `overlay.rs`
//! the popups that take over the keyboard (help, stop confirmation, history search, picker),
//! `link.rs` what the pod sends, `completion.rs` the completion popup, `approval/` the
//! approval prompt over everything while a tool call waits for a person, `children.rs` child
//! pods: `/spawn`, Ctrl-G into the child that reported last and Ctrl-O back, `earlier.rs`
//! paging back through the pod's log when a scroll reaches the top.

mod approval;
pub mod branch;
mod children;
pub mod completion;
mod earlier;
pub mod effect;
mod find;
mod input;
mod link;
mod mcp_popup;
mod navigate;
mod overlay;
mod standing;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use seedpod_client::PodListing;
use seedpod_protocol::{Method, PodName, PodState, ToolDecl};
use seedpod_transcript::{ConnectionState, Theme, Transcript, ViewState};

pub use self::approval::scroll::{BodyScroll, ScrollKey, Window, window};
pub use self::approval::{ApprovalModal, ApprovalPrompt, TYPING_PAUSE};
pub use self::completion::Popup;
pub use self::effect::{Effect, ExitReason, Pending};
pub use self::find::Find;
pub use self::mcp_popup::McpPopup;
pub use self::overlay::{Overlay, Search};
pub use self::standing::Standing;
use crate::composer::Composer;
use crate::connection::RequestTag;
use crate::history::InputHistory;
use crate::view_memory::ViewMemory;

/// How long a flash message stays in the footer.
pub const FLASH_FOR: Duration = Duration::from_secs(4);

/// Two Ctrl-C presses on an empty composer within this window detach.
pub const DOUBLE_CTRL_C: Duration = Duration::from_secs(1);

/// Lines one mouse-wheel notch scrolls.
pub const WHEEL_LINES: usize = 3;

/// How serious a flash message is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashLevel {
    Info,
    Warn,
    Error,
}

/// A short message in the footer that goes away by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub level: FlashLevel,
    pub text: String,
    pub until: Instant,
}

/// Finds the declaration of a tool by the name the model calls it (`seedpod_protocol::ToolDecl`).
/// The TUI knows no tool by its name: what it shows of a call before it runs (a command, a
/// file's diff) is what the declaration says (`ToolDecl::preview`). The declarations live with
/// the tools, above this crate, so the binary that wires the crates passes the pod's catalogue
/// in; nothing of it goes over the wire.
pub type DeclLookup = fn(&str) -> Option<&'static ToolDecl>;

pub struct App {
    pub pod: PodName,
    pub transcript: Transcript,
    pub view: ViewState,
    pub theme: Theme,
    pub link: ConnectionState,
    pub composer: Composer,
    pub history: InputHistory,
    pub overlay: Overlay,
    pub popup: Option<Popup>,
    pub flash: Option<Flash>,
    /// What the person is doing with a pending approval request (hidden, typing a reason).
    approval: ApprovalPrompt,
    /// A line above everything (the demo's label).
    pub banner: Option<String>,
    pub mouse_capture: bool,
    /// Requests in flight by tag, so each reply is understood.
    pending: HashMap<RequestTag, Pending>,
    next_tag: RequestTag,
    /// When Ctrl-C last hit an empty composer, for the double-press detach.
    ctrl_c_at: Option<Instant>,
    /// Set by `ExitReason` effects so tests and the loop can see the app is done.
    pub exit: Option<ExitReason>,
    /// The pod attached before this one, where Ctrl-O goes back to.
    previous_pod: Option<PodName>,
    /// The child pod Ctrl-G goes into: the one whose report (`pod_event`) arrived last, or the
    /// one `/spawn` started since.
    last_child: Option<PodName>,
    /// The person scrolled up since the last frame: if the frame shows the top, page back.
    moved_up: bool,
    /// The transcript generation whose compacted segment already asked for the page before it
    /// by itself (`earlier.rs`).
    filled: Option<u64>,
    /// The pinned task list shows its tasks (Ctrl-T folds it to one line).
    pub tasks_expanded: bool,
    /// What the person folded and expanded in this pod, kept across attaches.
    view_memory: ViewMemory,
    /// The terminal has focus (focus events; assumed until the terminal says otherwise).
    pub focused: bool,
    /// The tools' declarations, by name.
    tools: DeclLookup,
}

impl App {
    pub fn new(pod: &PodName, history: InputHistory, theme: Theme, tools: DeclLookup) -> App {
        App {
            pod: pod.clone(),
            transcript: Transcript::new(),
            view: ViewState::new(),
            theme,
            link: ConnectionState::Connecting,
            composer: Composer::new(),
            history,
            overlay: Overlay::None,
            popup: None,
            flash: None,
            approval: ApprovalPrompt::default(),
            banner: None,
            mouse_capture: false,
            pending: Default::default(),
            next_tag: RequestTag::new(1),
            ctrl_c_at: None,
            exit: None,
            previous_pod: None,
            last_child: None,
            moved_up: false,
            filled: None,
            tasks_expanded: true,
            view_memory: ViewMemory::in_memory(),
            focused: true,
            tools,
        }
    }

    /// Attach to another pod: a fresh transcript and history; what is typed stays typed. The
    /// pod left behind is remembered for Ctrl-O.
    pub fn switch_pod(&mut self, pod: &PodName, history: InputHistory, now: Instant) {
        if *pod != self.pod {
            let left = std::mem::replace(&mut self.pod, pod.clone());
            self.flash(
                FlashLevel::Info,
                format!("attached to {pod} — Ctrl-O goes back to {left}"),
                now,
            );
            self.previous_pod = Some(left);
        }
        self.last_child = None;
        self.transcript = Transcript::new();
        self.view = ViewState::new();
        self.link = ConnectionState::Connecting;
        self.history = history;
        self.overlay = Overlay::None;
        self.popup = None;
        self.pending.clear();
        self.moved_up = false;
        self.reset_approval();
    }

    /// How the person left this pod's transcript last time: the task list folded or not, the
    /// cells they expanded (opened again as the snapshot makes them).
    pub fn load_view(&mut self, memory: ViewMemory) {
        self.tasks_expanded = !memory.tasks_folded;
        self.transcript
            .remember_expanded(memory.expanded().copied());
        self.view_memory = memory;
    }

    /// What to write so the next attach looks the same, when this pod's view is kept.
    pub fn view_to_save(&self) -> Option<(std::path::PathBuf, String)> {
        self.view_memory.to_save()
    }

    fn save_view(&self) -> Vec<Effect> {
        self.view_to_save()
            .map(|(path, text)| Effect::SaveView { path, text })
            .into_iter()
            .collect()
    }

    /// The cell at `index` was expanded or folded: remember it by its entry.
    fn remember_toggle(&mut self, index: usize) -> Vec<Effect> {
        let Some(cell) = self.transcript.cells().get(index) else {
            return Vec::new();
        };
        let Some(key) = cell.key else {
            return Vec::new();
        };
        self.view_memory.set_expanded(key, cell.expanded);
        self.save_view()
    }

    /// The pod's state as last reported.
    pub fn pod_state(&self) -> PodState {
        self.transcript.status().state
    }

    pub fn is_connected(&self) -> bool {
        matches!(self.link, ConnectionState::Connected)
    }

    /// A snapshot is arriving on a live link: what the screen shows is about to be replaced.
    pub fn snapshot_arriving(&self) -> bool {
        self.is_connected() && self.transcript.in_snapshot()
    }

    pub fn flash(&mut self, level: FlashLevel, text: impl Into<String>, now: Instant) {
        self.flash = Some(Flash {
            level,
            text: text.into(),
            until: now + FLASH_FOR,
        });
    }

    /// Send a request, remembering what it was for.
    fn request(&mut self, pending: Pending, method: Method) -> Effect {
        let tag = self.next_tag;
        self.next_tag = tag.next();
        self.pending.insert(tag, pending);
        Effect::Request { tag, method }
    }

    fn is_pending(&self, want: impl Fn(&Pending) -> bool) -> bool {
        self.pending.values().any(want)
    }

    /// Time passed. True when the screen must be redrawn: a flash expired, or a turn is
    /// running (or the pod compacting) and its clock moves.
    pub fn on_tick(&mut self, now: Instant) -> bool {
        let mut changed = false;
        if self.flash.as_ref().is_some_and(|f| f.until <= now) {
            self.flash = None;
            changed = true;
        }
        if self
            .ctrl_c_at
            .is_some_and(|at| now.duration_since(at) >= DOUBLE_CTRL_C)
        {
            self.ctrl_c_at = None;
        }
        changed || self.has_clock() || self.approval_waiting()
    }

    /// A turn runs or the pod compacts: the status line's clock moves.
    fn has_clock(&self) -> bool {
        matches!(self.pod_state(), PodState::Running | PodState::Compacting)
    }

    /// When the screen next changes by itself, for the loop to sleep until: every tick while a
    /// turn runs or the pod compacts (its timer), when a flash message expires, when a first
    /// Ctrl-C stops counting, when an approval modal waiting for a pause in typing takes answers.
    /// `None`: nothing changes until an event arrives, so an idle TUI never wakes.
    pub fn next_tick(&self, now: Instant) -> Option<Instant> {
        let running = self.has_clock().then(|| now + crate::run::TICK);
        let flash = self.flash.as_ref().map(|f| f.until);
        let ctrl_c = self.ctrl_c_at.map(|at| at + DOUBLE_CTRL_C);
        let answers = self.approval_next_tick(now);
        [running, flash, ctrl_c, answers]
            .into_iter()
            .flatten()
            .min()
    }

    /// The listing the picker asked for.
    pub fn on_pods(&mut self, pods: Vec<PodListing>, now: SystemTime) {
        if let Overlay::Picker(picker) = &mut self.overlay {
            picker.set_pods(pods, now);
        }
    }

    /// The machines the picker is about to ask for their pods.
    pub fn on_hosts(&mut self, hosts: &[String]) {
        if let Overlay::Picker(picker) = &mut self.overlay {
            picker.set_hosts(hosts);
        }
    }

    /// What another machine answered for the picker.
    pub fn on_remote_pods(
        &mut self,
        host: &str,
        pods: Result<Vec<crate::picker::RemotePod>, String>,
    ) {
        if let Overlay::Picker(picker) = &mut self.overlay {
            picker.set_host_pods(host, pods);
        }
    }

    fn exit(&mut self, reason: ExitReason) -> Effect {
        self.exit = Some(reason);
        Effect::Exit(reason)
    }
}
