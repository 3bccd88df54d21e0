//! Popups that take over the keyboard until closed: help, the `/stop` confirmation, Ctrl-R
//! history search and the pod picker.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use seedpod_protocol::Method;

use super::{App, Effect, FlashLevel, Pending};
use crate::picker::Picker;

#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    /// `/help`, scrolled down by this many lines.
    Help(u16),
    ConfirmStop,
    Search(Search),
    /// Ctrl-F / `/find`: searching the transcript.
    Find(super::find::Find),
    Picker(Picker),
    /// `/approvals`.
    Approvals(super::standing::Standing),
    /// `/mcp`.
    Mcp(super::mcp_popup::McpPopup),
    /// A listing the pod sent (`/mcp`), scrolled down by `top` lines.
    Text {
        title: &'static str,
        text: String,
        top: u16,
    },
    /// `/fork` or `/rewind` without a number: pick the turn.
    Turns(super::branch::TurnPicker),
    /// `/rewind`: what it will change, before it does.
    Rewind(super::branch::RewindConfirm),
}

/// Ctrl-R state: the query typed so far and the history index it matched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Search {
    pub query: String,
    pub found: Option<usize>,
}

impl App {
    /// A key while an overlay is open. `None` when no overlay is open.
    pub(super) fn overlay_key(&mut self, key: &KeyEvent, now: Instant) -> Option<Vec<Effect>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let overlay = std::mem::replace(&mut self.overlay, super::Overlay::None);
        let (next, effects) = match overlay {
            Overlay::None => return None,
            // Up/Down and PgUp/PgDn scroll; any other key closes it.
            Overlay::Help(top) => match key.code {
                KeyCode::Up => (Overlay::Help(top.saturating_sub(1)), Vec::new()),
                KeyCode::Down => (Overlay::Help(top.saturating_add(1)), Vec::new()),
                KeyCode::PageUp => (Overlay::Help(top.saturating_sub(10)), Vec::new()),
                KeyCode::PageDown => (Overlay::Help(top.saturating_add(10)), Vec::new()),
                _ => (Overlay::None, Vec::new()),
            },
            Overlay::Text { title, text, top } => {
                let top = match key.code {
                    KeyCode::Up => top.saturating_sub(1),
                    KeyCode::Down => top.saturating_add(1),
                    KeyCode::PageUp => top.saturating_sub(10),
                    KeyCode::PageDown => top.saturating_add(10),
                    _ => return Some(Vec::new()),
                };
                (Overlay::Text { title, text, top }, Vec::new())
            }
            Overlay::ConfirmStop => match key.code {
                KeyCode::Char('y' | 'Y') if !self.is_connected() => {
                    self.flash(
                        FlashLevel::Warn,
                        "not connected to the pod; `seedpod stop NAME` stops it from a shell",
                        now,
                    );
                    (Overlay::None, Vec::new())
                }
                KeyCode::Char('y' | 'Y') => {
                    self.flash(FlashLevel::Info, "stopping the pod…", now);
                    let effect = self.request(Pending::Stop, Method::Shutdown);
                    (Overlay::None, vec![effect])
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => (Overlay::None, Vec::new()),
                KeyCode::Char('c') if ctrl => (Overlay::None, Vec::new()),
                _ => (Overlay::ConfirmStop, Vec::new()),
            },
            Overlay::Search(search) => self.search_key(search, key),
            Overlay::Find(find) => self.find_key(find, key),
            Overlay::Picker(picker) => self.picker_key(picker, key),
            Overlay::Approvals(standing) => self.approvals_key(standing, key),
            Overlay::Mcp(popup) => self.mcp_key(popup, key, now),
            Overlay::Turns(picker) => self.turns_key(picker, key, now),
            Overlay::Rewind(confirm) => self.rewind_key(confirm, key, now),
        };
        self.overlay = next;
        Some(effects)
    }

    fn search_key(&mut self, mut search: Search, key: &KeyEvent) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return (Overlay::None, Vec::new()),
            KeyCode::Char('c' | 'g') if ctrl => return (Overlay::None, Vec::new()),
            KeyCode::Enter => {
                if let Some(entry) = search.found.and_then(|at| {
                    self.history
                        .search(&search.query, Some(at + 1))
                        .map(|(_, e)| e.clone())
                }) {
                    self.composer.set(&entry);
                }
                return (Overlay::None, Vec::new());
            }
            KeyCode::Char('r') if ctrl => {
                // The next older match; stay on the current one when there is none.
                if let Some((at, _)) = self.history.search(&search.query, search.found) {
                    search.found = Some(at);
                }
            }
            KeyCode::Backspace => {
                search.query.pop();
                search.found = self.history.search(&search.query, None).map(|(at, _)| at);
            }
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                search.found = self.history.search(&search.query, None).map(|(at, _)| at);
            }
            _ => {}
        }
        (Overlay::Search(search), Vec::new())
    }

    fn picker_key(&mut self, mut picker: Picker, key: &KeyEvent) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return (Overlay::None, Vec::new()),
            KeyCode::Char('c') if ctrl => return (Overlay::None, Vec::new()),
            KeyCode::Up | KeyCode::Char('k') => picker.up(),
            KeyCode::Down | KeyCode::Char('j') => picker.down(),
            KeyCode::Char('p') if ctrl => picker.up(),
            KeyCode::Char('n') if ctrl => picker.down(),
            KeyCode::Char('r') => return (Overlay::Picker(picker), vec![Effect::ListPods]),
            KeyCode::Enter => {
                let effect = match picker.choice() {
                    None => return (Overlay::Picker(picker), Vec::new()),
                    Some(crate::picker::Choice::Local(chosen)) if chosen == self.pod => {
                        return (Overlay::None, Vec::new());
                    }
                    Some(crate::picker::Choice::Local(chosen)) => Effect::Attach(chosen),
                    Some(crate::picker::Choice::Remote { host, name }) => {
                        Effect::AttachRemote { host, name }
                    }
                };
                return (Overlay::None, vec![effect]);
            }
            _ => {}
        }
        (Overlay::Picker(picker), Vec::new())
    }

    /// The entry Ctrl-R currently matches, for the footer.
    pub fn search_match(&self) -> Option<&str> {
        let Overlay::Search(search) = &self.overlay else {
            return None;
        };
        let at = search.found?;
        self.history
            .search(&search.query, Some(at + 1))
            .map(|(_, e)| e.text.as_str())
    }
}
