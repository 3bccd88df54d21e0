//! Keys, pastes and the mouse on the main screen: the composer, sending, slash commands,
//! interrupting, navigation, completion.

use std::time::Instant;

use crossterm::event::KeyEvent;
use seedpod_protocol::{Method, PodCommand, PodState, QueuedItem};
use seedpod_transcript::ConnectionState;

use super::completion::{Popup, kinds_for};
use super::{App, DOUBLE_CTRL_C, Effect, ExitReason, FlashLevel, Overlay, Pending, Search};
use crate::commands::{self, Command, Parsed};
use crate::keys::{Intent, KeyContext, intent};
use crate::picker::Picker;

impl App {
    /// A key press.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        // Reading the modal (scrolling it) is not typing; every other key is.
        let typing = key.kind != crossterm::event::KeyEventKind::Release
            && !self.approval_scroll_key(&key, now);
        let effects = self.key_event(key, now);
        // A key that closed an overlay or showed a hidden request opens the modal now.
        self.sync_approval(now);
        if typing {
            self.typed(now);
        }
        effects
    }

    fn key_event(&mut self, key: KeyEvent, now: Instant) -> Vec<Effect> {
        if let Some(effects) = self.overlay_key(&key, now) {
            return effects;
        }
        if let Some(effects) = self.approval_key(&key, now) {
            return effects;
        }
        let ctx = KeyContext {
            composer_empty: self.composer.is_empty(),
            on_first_line: self.composer.on_first_line(),
            on_last_line: self.composer.on_last_line(),
            approval_hidden: self.approval_hidden(),
            cell_focused: self.view.focused().is_some(),
            pod_stopped: self.link == ConnectionState::Stopped,
            on_chip: self.composer.on_chip(),
        };
        match intent(&key, ctx) {
            Intent::Submit => self.submit(now),
            Intent::Newline => {
                self.composer.insert_newline();
                self.edited()
            }
            Intent::Escape => self.escape(now),
            Intent::Interrupt => self.ctrl_c(now),
            Intent::Detach => vec![self.exit(ExitReason::Detached)],
            Intent::Pods => self.open_picker(),
            Intent::GoToChild => self.go_to_child(now),
            Intent::GoBack => self.go_back(now),
            Intent::SearchHistory => {
                self.popup = None;
                self.overlay = Overlay::Search(Search::default());
                Vec::new()
            }
            Intent::Redraw => vec![Effect::Repaint],
            Intent::ExpandPaste => {
                self.composer.expand_chip();
                self.edited()
            }
            Intent::Restore => {
                self.flash(
                    FlashLevel::Info,
                    format!("restoring pod {}…", self.pod),
                    now,
                );
                // The picker's path: start it from its log, then attach afresh.
                vec![Effect::Attach(self.pod.clone())]
            }
            Intent::Find => {
                self.open_find(None);
                Vec::new()
            }
            Intent::ToggleTasks => {
                self.tasks_expanded = !self.tasks_expanded;
                self.view_memory.tasks_folded = !self.tasks_expanded;
                self.save_view()
            }
            Intent::ShowApproval => {
                self.popup = None;
                self.show_approval();
                Vec::new()
            }
            Intent::HistoryOlder => {
                if let Some(popup) = &mut self.popup {
                    popup.up();
                } else if let Some(effect) = self.withdraw_last_queued() {
                    return vec![effect];
                } else if let Some(entry) = self.history.older(self.composer.entry()) {
                    self.composer.set(&entry);
                }
                Vec::new()
            }
            Intent::HistoryNewer => {
                if let Some(popup) = &mut self.popup {
                    popup.down();
                } else if let Some(entry) = self.history.newer() {
                    self.composer.set(&entry);
                }
                Vec::new()
            }
            Intent::PageUp => {
                self.view.page_up();
                self.moved_up();
                Vec::new()
            }
            Intent::PageDown => {
                self.view.page_down();
                Vec::new()
            }
            Intent::Top => {
                self.view.home();
                self.moved_up();
                Vec::new()
            }
            Intent::Bottom => {
                self.view.end();
                Vec::new()
            }
            Intent::PrevTurn => {
                self.jump_turn(false);
                self.moved_up();
                Vec::new()
            }
            Intent::NextTurn => {
                self.jump_turn(true);
                Vec::new()
            }
            Intent::Tab => self.tab(),
            Intent::BackTab => {
                self.cycle_focus(false);
                Vec::new()
            }
            Intent::Edit => {
                if self.composer.edit(key) {
                    self.history.reset_walk();
                }
                self.edited()
            }
            Intent::Ignore => Vec::new(),
        }
    }

    /// A bracketed paste.
    pub fn on_paste(&mut self, text: &str, now: Instant) -> Vec<Effect> {
        self.typed(now);
        if self.overlay != Overlay::None || self.approval_paste(text) {
            return Vec::new();
        }
        self.composer.paste(text);
        self.history.reset_walk();
        self.edited()
    }

    /// After any edit: keep the completion popup on the word under the cursor.
    fn edited(&mut self) -> Vec<Effect> {
        let Some(token) = self.composer.token() else {
            self.popup = None;
            return Vec::new();
        };
        match &mut self.popup {
            Some(popup) if popup.sigil == token.sigil && popup.prefix == token.prefix => {
                return Vec::new();
            }
            Some(popup) if popup.sigil == token.sigil => popup.retarget(token.prefix.clone()),
            Some(_) | None => self.popup = Some(Popup::new(token.sigil, token.prefix.clone())),
        }
        if !self.is_connected() {
            return Vec::new();
        }
        kinds_for(token.sigil)
            .iter()
            .map(|kind| {
                self.request(
                    Pending::Completion {
                        kind: *kind,
                        prefix: token.prefix.clone(),
                    },
                    Method::ListCompletions {
                        kind: *kind,
                        prefix: token.prefix.clone(),
                    },
                )
            })
            .collect()
    }

    fn accept_completion(&mut self) -> Vec<Effect> {
        let Some((reference, value, is_final)) = self.popup.as_ref().and_then(Popup::choice) else {
            self.popup = None;
            return Vec::new();
        };
        self.composer.accept(&value, reference, is_final);
        self.popup = None;
        self.edited()
    }

    /// Enter accepts a suggestion only when it adds something: `/stop` typed out in full runs
    /// on the first Enter instead of being "completed" to itself.
    fn completion_would_change_text(&self) -> bool {
        let Some(popup) = self.popup.as_ref().filter(|p| !p.is_empty()) else {
            return false;
        };
        let typed = self.composer.token().map(|t| t.prefix);
        popup
            .choice()
            .is_some_and(|(_, value, _)| Some(value) != typed)
    }

    fn tab(&mut self) -> Vec<Effect> {
        if self.popup.as_ref().is_some_and(|p| !p.is_empty()) {
            return self.accept_completion();
        }
        if self.composer.is_empty() {
            self.cycle_focus(true);
        }
        Vec::new()
    }

    fn submit(&mut self, now: Instant) -> Vec<Effect> {
        if self.completion_would_change_text() {
            return self.accept_completion();
        }
        self.popup = None;
        if self.composer.is_empty() {
            if let Some(index) = self.view.focused() {
                // Enter on a child's report goes into that child; on anything else it folds.
                if let Some(child) = self.reporter_at(index).filter(|c| *c != self.pod) {
                    return vec![Effect::Attach(child)];
                }
                if self.transcript.toggle(index) {
                    return self.remember_toggle(index);
                }
            }
            return Vec::new();
        }
        let text = self.composer.text();
        match commands::parse(&text) {
            Parsed::Command(command) => {
                self.history.reset_walk();
                // `/commit` is sent as typed (below), so the composer keeps it until then.
                if command != Command::Commit {
                    self.composer.clear();
                }
                self.command(command, now)
            }
            // An MCP server's prompt typed by hand: the pod runs it (or says why not).
            Parsed::Unknown(name) if name.starts_with(MCP_PROMPT_PREFIX) => self.send_input(now),
            Parsed::Unknown(name) if !self.composer.segments().iter().any(is_workflow) => {
                self.flash(
                    FlashLevel::Warn,
                    format!("unknown command /{name} — /help lists the commands"),
                    now,
                );
                Vec::new()
            }
            Parsed::Unknown(_) | Parsed::Input => self.send_input(now),
        }
    }

    /// Up on an empty composer while inputs wait in the pod's queue takes the newest one back
    /// to edit (the pod withdraws it durably first), before walking the history.
    fn withdraw_last_queued(&mut self) -> Option<Effect> {
        if !self.composer.is_empty() || self.is_pending(|p| matches!(p, Pending::Withdraw(_))) {
            return None;
        }
        let (queue_id, segments) =
            self.transcript
                .status()
                .queue
                .iter()
                .rev()
                .find_map(|entry| match &entry.item {
                    QueuedItem::Run { segments } => Some((entry.queue_id, segments.clone())),
                    // The parent's inputs are the parent's to withdraw.
                    QueuedItem::Notify { .. }
                    | QueuedItem::PodEvent { .. }
                    | QueuedItem::Delegated { .. }
                    | QueuedItem::Unknown => None,
                })?;
        let entry = crate::composer::segments::to_entry(&segments);
        Some(self.request(Pending::Withdraw(entry), Method::CancelQueued { queue_id }))
    }

    fn send_input(&mut self, now: Instant) -> Vec<Effect> {
        if !self.is_connected() {
            self.flash(
                FlashLevel::Warn,
                "not connected to the pod — your message is kept; send it when the pod is back",
                now,
            );
            return Vec::new();
        }
        let mut segments = self.composer.segments();
        // `/mcp__SERVER__PROMPT args` typed without the popup is the same invocation.
        if let [seedpod_protocol::Segment::Text { text }] = segments.as_slice()
            && let Parsed::Unknown(name) = commands::parse(text)
            && name.starts_with(MCP_PROMPT_PREFIX)
        {
            segments = seedpod_protocol::parse_typed(text.trim());
        }
        let entry = self.composer.entry();
        let mut effects = Vec::new();
        if let Some((path, line)) = self.history.push(entry.clone()) {
            effects.push(Effect::SaveHistory { path, line });
        }
        self.composer.clear();
        self.view.end();
        effects.push(self.request(Pending::Run(entry), Method::Run { segments }));
        effects
    }

    /// `/copy [code]`: the focused cell (Tab chooses one), else the last answer; with `code`,
    /// only its last fenced code block.
    fn copy(&mut self, code: bool, now: Instant) -> Vec<Effect> {
        let (source, text) = match self.view.focused() {
            Some(index) => ("the focused cell", self.transcript.cell_text(index)),
            None => ("the last answer", self.transcript.last_answer()),
        };
        let Some(text) = text else {
            self.flash(FlashLevel::Warn, "there is no answer to copy yet", now);
            return Vec::new();
        };
        if !code {
            self.flash(FlashLevel::Info, format!("copied {source}"), now);
            return vec![Effect::Copy(text)];
        }
        match seedpod_transcript::model::last_code_block(&text) {
            Some(block) => {
                self.flash(
                    FlashLevel::Info,
                    format!("copied the code block of {source}"),
                    now,
                );
                vec![Effect::Copy(block)]
            }
            None => {
                self.flash(FlashLevel::Warn, format!("{source} has no code block"), now);
                Vec::new()
            }
        }
    }

    fn command(&mut self, command: Command, now: Instant) -> Vec<Effect> {
        match command {
            Command::Help => self.overlay = Overlay::Help(0),
            Command::Detach => return vec![self.exit(ExitReason::Detached)],
            Command::Stop => self.overlay = Overlay::ConfirmStop,
            Command::Clear => return vec![self.pod_command(PodCommand::Clear, String::new())],
            Command::Compact(focus) => return vec![self.pod_command(PodCommand::Compact, focus)],
            Command::Model(Some(name)) => return vec![self.pod_command(PodCommand::Model, name)],
            // The pod answers with the model in use and what the server offers.
            Command::Model(None) => {
                let method = Method::Command {
                    name: PodCommand::Model,
                    args: String::new(),
                };
                return vec![self.request(Pending::Models, method)];
            }
            Command::Memory(Some(text)) => {
                return vec![self.pod_command(PodCommand::Memory, text)];
            }
            Command::Memory(None) => self.flash(
                FlashLevel::Warn,
                "usage: /memory TEXT — appends `* TEXT` to the project's AGENTS.md",
                now,
            ),
            Command::Spawn(spawn) => return self.spawn(spawn, now),
            Command::Pods => return self.open_picker(),
            Command::Approvals => return self.open_approvals(now),
            // The pod turns it into a run: acknowledged (or refused, and put back) like any
            // input.
            Command::Commit => return self.send_input(now),
            Command::Find(query) => self.open_find(query),
            Command::Mcp(args) if args.trim().is_empty() => return self.open_mcp(now),
            Command::Mcp(args) => return vec![self.pod_command(PodCommand::Mcp, args)],
            Command::Fork(turn) => {
                return self.branch_command(super::branch::BranchKind::Fork, turn, now);
            }
            Command::Rewind(turn) => {
                return self.branch_command(super::branch::BranchKind::Rewind, turn, now);
            }
            Command::Resume => return vec![self.request(Pending::Resume, Method::Resume)],
            Command::Cancel => return vec![self.request(Pending::Cancel, Method::Cancel)],
            Command::Copy { code } => return self.copy(code, now),
            Command::Mouse => {
                self.mouse_capture = !self.mouse_capture;
                let text = if self.mouse_capture {
                    "mouse wheel scrolls; hold Shift to select text"
                } else {
                    "mouse released: the terminal selects text again; PgUp/PgDn scroll"
                };
                self.flash(FlashLevel::Info, text, now);
                return vec![Effect::Mouse(self.mouse_capture)];
            }
        }
        Vec::new()
    }

    /// A command the pod carries out; its `command_done` answer is shown as a flash.
    fn pod_command(&mut self, name: PodCommand, args: String) -> Effect {
        self.request(Pending::Command(name), Method::Command { name, args })
    }

    fn open_picker(&mut self) -> Vec<Effect> {
        self.popup = None;
        self.overlay = Overlay::Picker(Picker::new(&self.pod));
        vec![Effect::ListPods]
    }

    /// Esc: close the popup, drop the focus, else pause a running turn, and once it is paused
    /// (or a pause is already on its way) cancel it. A turn waiting for approval is cancelled
    /// at once: nothing streams that a pause would keep.
    fn escape(&mut self, now: Instant) -> Vec<Effect> {
        if self.popup.take().is_some() {
            return Vec::new();
        }
        if self.view.focused().is_some() {
            self.view.set_focus(None);
            return Vec::new();
        }
        let pausing = self.is_pending(|p| matches!(p, Pending::Pause));
        match self.pod_state() {
            PodState::Running if !pausing => {
                self.flash(
                    FlashLevel::Info,
                    "pausing — Esc again cancels the turn",
                    now,
                );
                vec![self.request(Pending::Pause, Method::Pause)]
            }
            // While a request waits, the modal takes the first Esc (it hides); this one cancels.
            PodState::Running | PodState::Paused | PodState::WaitingForApproval => {
                self.flash(FlashLevel::Info, "cancelling the turn", now);
                vec![self.request(Pending::Cancel, Method::Cancel)]
            }
            // The pod stops the summary and changes nothing (between turns), or pauses the
            // turn it was compacting in.
            PodState::Compacting if !pausing => {
                self.flash(FlashLevel::Info, "stopping the compaction", now);
                vec![self.request(Pending::Pause, Method::Pause)]
            }
            PodState::Idle | PodState::Compacting | PodState::Stopping | PodState::Unknown => {
                Vec::new()
            }
        }
    }

    fn ctrl_c(&mut self, now: Instant) -> Vec<Effect> {
        self.popup = None;
        if !self.composer.is_empty() {
            self.composer.clear();
            self.history.reset_walk();
            return Vec::new();
        }
        if self
            .ctrl_c_at
            .is_some_and(|at| now.duration_since(at) <= DOUBLE_CTRL_C)
        {
            return vec![self.exit(ExitReason::Detached)];
        }
        self.ctrl_c_at = Some(now);
        self.flash(
            FlashLevel::Info,
            "Ctrl-C again to detach (the pod keeps running)",
            now,
        );
        Vec::new()
    }
}

/// What an MCP prompt's slash command starts with (`/mcp__SERVER__PROMPT`).
const MCP_PROMPT_PREFIX: &str = "mcp__";

fn is_workflow(segment: &seedpod_protocol::Segment) -> bool {
    matches!(segment, seedpod_protocol::Segment::WorkflowInvoke { .. })
}
