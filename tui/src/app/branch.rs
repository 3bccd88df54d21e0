//! `/fork` and `/rewind`: the TUI is only a client of `seedpod fork` and `seedpod rewind`
//! (docs/storage.md §Fork and rewind). It picks the turn, shows the rewind's plan before
//! anything changes, and moves to the fork or the rewound pod afterwards; the event loop runs
//! the commands (`Effect::Branch`).

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use seedpod_protocol::PodName;

use super::{App, Effect, FlashLevel, Overlay};
use crate::commands::Turn;

/// What the person does with a turn they pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BranchKind {
    Fork,
    Rewind,
}

/// What a rewind takes back (`seedpod rewind --both | --conversation | --files`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindScope {
    Both,
    Conversation,
    Files,
}

impl RewindScope {
    pub fn flag(self) -> &'static str {
        match self {
            RewindScope::Both => "--both",
            RewindScope::Conversation => "--conversation",
            RewindScope::Files => "--files",
        }
    }
}

/// A `seedpod` command for the event loop to run; its answer comes back through
/// `App::on_branch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchCommand {
    /// `seedpod fork SOURCE NEW --at TURN`, NEW being `SOURCE-fork-K` with the first free K.
    Fork { source: PodName, turn: usize },
    /// `seedpod rewind POD --to TURN --both --dry-run`: what a rewind would change.
    Plan { pod: PodName, turn: usize },
    /// `seedpod rewind POD --to TURN SCOPE --yes`.
    Rewind {
        pod: PodName,
        turn: usize,
        scope: RewindScope,
    },
}

/// How a command went: its standard output, or its error as one line.
pub type BranchResult = Result<String, String>;

/// The list of the person's messages to pick a turn from, newest last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPicker {
    pub kind: BranchKind,
    /// Turn number and the first line of its message.
    pub turns: Vec<(usize, String)>,
    pub selected: usize,
}

/// The turns a picker offers, read from the pod's log (`crate::branch::turns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnList {
    /// Turn number and the first line of its message, oldest first.
    pub turns: Vec<(usize, String)>,
    /// Why the numbers start from the pod's own start rather than the conversation's.
    pub note: Option<String>,
}

/// A rewind's plan, shown before anything changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindConfirm {
    pub turn: usize,
    pub plan: String,
    pub top: u16,
}

impl App {
    pub(super) fn branch_command(
        &mut self,
        kind: BranchKind,
        turn: Turn,
        now: Instant,
    ) -> Vec<Effect> {
        match turn {
            Turn::At(turn) => self.branch_at(kind, turn, now),
            Turn::Invalid(said) => {
                let name = match kind {
                    BranchKind::Fork => "fork",
                    BranchKind::Rewind => "rewind",
                };
                self.flash(
                    FlashLevel::Warn,
                    format!(
                        "\"{}\" is no turn number — /{name} N (the person's messages, from 1), \
                         or /{name} alone to pick one",
                        seedpod_protocol::ellipsize(&said, 20)
                    ),
                    now,
                );
                Vec::new()
            }
            // The turns are numbered from the log, as the CLI numbers them: through a rewind's
            // earlier part and the pods a fork came from, which the screen does not show.
            Turn::Pick => vec![Effect::ListTurns {
                pod: self.pod.clone(),
                kind,
            }],
        }
    }

    /// The turns read from the log for a picker (`Effect::ListTurns`).
    pub fn on_turns(
        &mut self,
        pod: PodName,
        kind: BranchKind,
        result: Result<TurnList, String>,
        now: Instant,
    ) -> Vec<Effect> {
        // The person may have moved on to another pod while the log was read.
        if pod != self.pod {
            return Vec::new();
        }
        let list = match result {
            Ok(list) => list,
            Err(said) => {
                self.flash(FlashLevel::Error, said, now);
                return Vec::new();
            }
        };
        if list.turns.is_empty() {
            self.flash(
                FlashLevel::Warn,
                "no message of yours to go back to yet",
                now,
            );
            return Vec::new();
        }
        if let Some(note) = list.note {
            self.flash(FlashLevel::Warn, note, now);
        }
        self.popup = None;
        self.overlay = Overlay::Turns(TurnPicker {
            kind,
            selected: list.turns.len() - 1,
            turns: list.turns,
        });
        Vec::new()
    }

    fn branch_at(&mut self, kind: BranchKind, turn: usize, now: Instant) -> Vec<Effect> {
        let pod = self.pod.clone();
        let (text, command) = match kind {
            BranchKind::Fork => (
                format!("forking {pod} after turn {turn}…"),
                BranchCommand::Fork { source: pod, turn },
            ),
            BranchKind::Rewind => (
                format!("working out what a rewind to turn {turn} changes…"),
                BranchCommand::Plan { pod, turn },
            ),
        };
        self.flash(FlashLevel::Info, text, now);
        vec![Effect::Branch(command)]
    }

    pub(super) fn turns_key(
        &mut self,
        mut picker: TurnPicker,
        key: &KeyEvent,
        now: Instant,
    ) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return (Overlay::None, Vec::new()),
            KeyCode::Char('c') if ctrl => return (Overlay::None, Vec::new()),
            KeyCode::Up | KeyCode::Char('k') => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                picker.selected = (picker.selected + 1).min(picker.turns.len().saturating_sub(1));
            }
            KeyCode::Enter => {
                let Some((turn, _)) = picker.turns.get(picker.selected) else {
                    return (Overlay::None, Vec::new());
                };
                let effects = self.branch_at(picker.kind, *turn, now);
                return (Overlay::None, effects);
            }
            _ => {}
        }
        (Overlay::Turns(picker), Vec::new())
    }

    pub(super) fn rewind_key(
        &mut self,
        mut confirm: RewindConfirm,
        key: &KeyEvent,
        now: Instant,
    ) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let scope = match key.code {
            KeyCode::Esc | KeyCode::Char('n') => {
                self.flash(FlashLevel::Info, "nothing was rewound", now);
                return (Overlay::None, Vec::new());
            }
            KeyCode::Char('c') if ctrl => return (Overlay::None, Vec::new()),
            KeyCode::Enter | KeyCode::Char('y' | 'Y') => RewindScope::Both,
            KeyCode::Char('c') => RewindScope::Conversation,
            KeyCode::Char('f') => RewindScope::Files,
            KeyCode::Up => {
                confirm.top = confirm.top.saturating_sub(1);
                return (Overlay::Rewind(confirm), Vec::new());
            }
            KeyCode::Down => {
                confirm.top = confirm.top.saturating_add(1);
                return (Overlay::Rewind(confirm), Vec::new());
            }
            KeyCode::PageUp => {
                confirm.top = confirm.top.saturating_sub(10);
                return (Overlay::Rewind(confirm), Vec::new());
            }
            KeyCode::PageDown => {
                confirm.top = confirm.top.saturating_add(10);
                return (Overlay::Rewind(confirm), Vec::new());
            }
            _ => return (Overlay::Rewind(confirm), Vec::new()),
        };
        self.flash(
            FlashLevel::Info,
            format!("rewinding {} to turn {}…", self.pod, confirm.turn),
            now,
        );
        let command = BranchCommand::Rewind {
            pod: self.pod.clone(),
            turn: confirm.turn,
            scope,
        };
        (Overlay::None, vec![Effect::Branch(command)])
    }

    /// What a `seedpod` command answered. A fork is attached to; a plan is shown to confirm; a
    /// rewound pod is attached to again, so its new segment arrives as a fresh snapshot.
    pub fn on_branch(
        &mut self,
        command: BranchCommand,
        result: BranchResult,
        now: Instant,
    ) -> Vec<Effect> {
        let output = match result {
            Ok(output) => output,
            Err(said) => {
                self.flash(FlashLevel::Error, said, now);
                return Vec::new();
            }
        };
        match command {
            BranchCommand::Fork { .. } => {
                match output.lines().last().map(|l| PodName::new(l.trim())) {
                    Some(Ok(new)) => vec![Effect::Attach(new)],
                    _ => {
                        self.flash(
                            FlashLevel::Error,
                            "the fork did not say its name; `seedpod ls` lists it",
                            now,
                        );
                        Vec::new()
                    }
                }
            }
            BranchCommand::Plan { pod, turn } => {
                // The person may have moved on to another pod while the plan was worked out.
                if pod == self.pod {
                    self.popup = None;
                    self.overlay = Overlay::Rewind(RewindConfirm {
                        turn,
                        plan: output,
                        top: 0,
                    });
                }
                Vec::new()
            }
            BranchCommand::Rewind { pod, .. } => {
                let said = output
                    .lines()
                    .last()
                    .unwrap_or("rewound")
                    .trim()
                    .to_string();
                self.flash(FlashLevel::Info, said, now);
                vec![Effect::Reattach(pod)]
            }
        }
    }
}
