//! Which keys the approval modal takes while it shows, and what they do.
//!
//! - The scroll keys (↑↓ PgUp PgDn Home End, Tab/Shift-Tab between a diff's hunks) are always
//!   the modal's: they answer nothing.
//! - Esc and Ctrl-C hide the modal (or leave the confirmation); Enter never sends the composer
//!   while the modal shows. Neither is an answer, so neither waits for a pause.
//! - Answer keys (`y` `a` `n`, and `a`/Enter to confirm a standing rule) answer only once the
//!   modal takes answers (`ApprovalModal::takes_answers`). Before that, and for every other
//!   key, the key is the composer's: typing goes on below the modal and nothing typed is lost.
//! - While a reason for a denial is typed, every key is the reason's.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use seedpod_protocol::{ApprovalAnswer, CallId};

use super::scroll::ScrollKey;
use crate::app::{App, Effect};

impl App {
    /// A key while the modal shows: `Some` with what it did when the modal took it, `None`
    /// when the key is the composer's (or no modal shows).
    pub(in crate::app) fn approval_key(
        &mut self,
        key: &KeyEvent,
        now: Instant,
    ) -> Option<Vec<Effect>> {
        // The first moment the app sees this modal may be this key: it opens now.
        self.sync_approval(now);
        let modal = self.approval_modal()?;
        let call_id = modal.request.call_id.clone();
        let ready = modal.takes_answers(now);
        let (typing_reason, sending, confirming) =
            (modal.reason.is_some(), modal.sending, modal.confirming);
        if key.kind == KeyEventKind::Release {
            return Some(Vec::new());
        }
        if typing_reason {
            return Some(self.reason_key(key, call_id, now));
        }
        if let Some(scroll) = scroll_key(key) {
            self.approval.scroll.press(scroll);
            return Some(Vec::new());
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let plain = !ctrl && !key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => return Some(self.leave(confirming, call_id, now)),
            KeyCode::Char('c') if ctrl => return Some(self.leave(confirming, call_id, now)),
            KeyCode::Enter if confirming && ready && !sending => {
                return Some(self.answer(call_id, ApprovalAnswer::ApproveAlways, None, now));
            }
            KeyCode::Enter => return Some(Vec::new()),
            _ => {}
        }
        let answer_key = match key.code {
            KeyCode::Char(c) if plain => Some(c.to_ascii_lowercase()),
            _ => None,
        };
        if !ready {
            // Typing goes on: the key is the composer's, whatever it is.
            return None;
        }
        if sending {
            return matches!(answer_key, Some('y' | 'a' | 'n')).then(Vec::new);
        }
        if confirming {
            if answer_key == Some('a') {
                return Some(self.answer(call_id, ApprovalAnswer::ApproveAlways, None, now));
            }
            // Anything else backs out of the confirmation, and is typed if it is text.
            self.approval.confirming = None;
            return None;
        }
        match answer_key {
            Some('y') => Some(self.answer(call_id, ApprovalAnswer::Approve, None, now)),
            Some('a') => {
                // The confirmation is a new question: it waits for its own pause, so `aa` typed
                // in one go never makes a standing rule.
                self.approval.opened = Some((call_id.clone(), now));
                self.approval.confirming = Some(call_id);
                Some(Vec::new())
            }
            Some('n') => {
                self.approval.reason = Some((call_id, String::new()));
                Some(Vec::new())
            }
            _ => None,
        }
    }

    /// Whether the modal, showing at `now`, takes `key` to scroll its body.
    pub(in crate::app) fn approval_scroll_key(&mut self, key: &KeyEvent, now: Instant) -> bool {
        self.sync_approval(now);
        self.approval_modal()
            .is_some_and(|modal| modal.reason.is_none())
            && scroll_key(key).is_some()
    }

    /// A paste while the modal shows goes into the reason, if one is being typed; otherwise
    /// it is the composer's (false).
    pub(in crate::app) fn approval_paste(&mut self, text: &str) -> bool {
        if self
            .approval_modal()
            .is_none_or(|modal| modal.reason.is_none())
        {
            return false;
        }
        if let Some((_, reason)) = &mut self.approval.reason {
            reason.push_str(&one_line(text));
        }
        true
    }

    /// Esc or Ctrl-C: out of the confirmation, back to the question; else hide the modal.
    fn leave(&mut self, confirming: bool, call_id: CallId, now: Instant) -> Vec<Effect> {
        if confirming {
            self.approval.confirming = None;
            Vec::new()
        } else {
            self.hide_approval(call_id, now)
        }
    }

    fn reason_key(&mut self, key: &KeyEvent, call_id: CallId, now: Instant) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some((_, reason)) = &mut self.approval.reason else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Enter => {
                let reason = std::mem::take(reason);
                let reason = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
                self.answer(call_id, ApprovalAnswer::Deny, reason, now)
            }
            // Back to the question; nothing is sent.
            KeyCode::Esc => {
                self.approval.reason = None;
                Vec::new()
            }
            KeyCode::Char('c') if ctrl => {
                self.approval.reason = None;
                Vec::new()
            }
            KeyCode::Backspace => {
                reason.pop();
                Vec::new()
            }
            KeyCode::Char(c) if !ctrl => {
                reason.push(c);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

/// The keys that move the modal's body.
fn scroll_key(key: &KeyEvent) -> Option<ScrollKey> {
    Some(match key.code {
        KeyCode::Up => ScrollKey::Up,
        KeyCode::Down => ScrollKey::Down,
        KeyCode::PageUp => ScrollKey::PageUp,
        KeyCode::PageDown => ScrollKey::PageDown,
        KeyCode::Home => ScrollKey::Home,
        KeyCode::End => ScrollKey::End,
        KeyCode::Tab => ScrollKey::NextHunk,
        KeyCode::BackTab => ScrollKey::PrevHunk,
        _ => return None,
    })
}

/// Pasted text for a one-line input: line breaks become spaces, other controls go.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect()
}
