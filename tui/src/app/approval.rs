//! The approval prompt. While the transcript has a pending approval request, a modal asks about
//! the oldest one: `y` approves, `a` approves always, `n` asks for an optional reason and then
//! denies, Esc hides the modal (the request stays pending; Ctrl-A brings it back).
//!
//! The modal follows the transcript, not the keys: it shows whenever a request is pending and
//! goes as soon as the request is not — answered from this client, another client or
//! `seedpod approve`, or closed by the end of its run. So the only state kept here is what the
//! person is doing with it: hiding it, typing a reason, waiting for the pod's reply.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use seedpod_protocol::{ApprovalAnswer, ApprovalRequest, Method};

use super::{App, Effect, FlashLevel, Overlay, Pending};

/// What the person is doing with the pending request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalPrompt {
    /// The request hidden with Esc: no modal for it until Ctrl-A (a newer request shows).
    hidden: Option<String>,
    /// A denial's reason being typed: the request's call id and the text so far.
    reason: Option<(String, String)>,
    /// The request whose answer was sent and not yet replied to; keys wait for the reply.
    sent: Option<String>,
}

/// What the modal shows.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalModal<'a> {
    pub request: &'a ApprovalRequest,
    /// The reason typed so far, while asking why to deny.
    pub reason: Option<&'a str>,
    /// The answer is on its way to the pod.
    pub sending: bool,
}

impl App {
    /// The approval modal, when it is showing: a request is pending, the person has not hidden
    /// it, and no other overlay (help, picker, search) is open.
    pub fn approval_modal(&self) -> Option<ApprovalModal<'_>> {
        if self.overlay != Overlay::None {
            return None;
        }
        let request = self.transcript.pending_approval()?;
        let call_id = request.call_id.as_str();
        if self.approval.hidden.as_deref() == Some(call_id) {
            return None;
        }
        let reason = self
            .approval
            .reason
            .as_ref()
            .filter(|(id, _)| id == call_id)
            .map(|(_, text)| text.as_str());
        Some(ApprovalModal {
            request,
            reason,
            sending: self.approval.sent.as_deref() == Some(call_id),
        })
    }

    /// A request is pending but its modal is hidden (the footer offers Ctrl-A).
    pub fn approval_hidden(&self) -> bool {
        self.transcript
            .pending_approval()
            .is_some_and(|r| self.approval.hidden.as_deref() == Some(r.call_id.as_str()))
    }

    /// Ctrl-A: show the hidden request again.
    pub(super) fn show_approval(&mut self) {
        self.approval.hidden = None;
    }

    /// Forget everything about the prompt (another pod).
    pub(super) fn reset_approval(&mut self) {
        self.approval = ApprovalPrompt::default();
    }

    /// A key while the modal shows; `None` when it does not.
    pub(super) fn approval_key(&mut self, key: &KeyEvent, now: Instant) -> Option<Vec<Effect>> {
        let (call_id, typing, sending) = {
            let modal = self.approval_modal()?;
            let call_id = modal.request.call_id.clone();
            (call_id, modal.reason.is_some(), modal.sending)
        };
        if key.kind == KeyEventKind::Release {
            return Some(Vec::new());
        }
        if typing {
            return Some(self.reason_key(key, call_id, now));
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let effects = match key.code {
            KeyCode::Char('y' | 'Y') if !ctrl => {
                self.answer(call_id, ApprovalAnswer::Approve, None, now)
            }
            KeyCode::Char('a' | 'A') if !ctrl => {
                self.answer(call_id, ApprovalAnswer::ApproveAlways, None, now)
            }
            KeyCode::Char('n' | 'N') if !ctrl => {
                if !sending {
                    self.approval.reason = Some((call_id, String::new()));
                }
                Vec::new()
            }
            KeyCode::Esc => self.hide_approval(call_id, now),
            KeyCode::Char('c') if ctrl => self.hide_approval(call_id, now),
            // The transcript behind stays readable.
            KeyCode::PageUp => {
                self.view.page_up();
                Vec::new()
            }
            KeyCode::PageDown => {
                self.view.page_down();
                Vec::new()
            }
            _ => Vec::new(),
        };
        Some(effects)
    }

    /// A paste while the modal shows goes into the reason, if one is being typed.
    pub(super) fn approval_paste(&mut self, text: &str) -> bool {
        if self.approval_modal().is_none() {
            return false;
        }
        if let Some((_, reason)) = &mut self.approval.reason {
            reason.push_str(&one_line(text));
        }
        true
    }

    fn reason_key(&mut self, key: &KeyEvent, call_id: String, now: Instant) -> Vec<Effect> {
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

    fn hide_approval(&mut self, call_id: String, now: Instant) -> Vec<Effect> {
        self.approval.hidden = Some(call_id);
        self.approval.reason = None;
        self.flash(
            FlashLevel::Info,
            "the request still waits — Ctrl-A answers it, Esc cancels the turn",
            now,
        );
        Vec::new()
    }

    fn answer(
        &mut self,
        call_id: String,
        answer: ApprovalAnswer,
        reason: Option<String>,
        now: Instant,
    ) -> Vec<Effect> {
        if self.approval.sent.as_deref() == Some(call_id.as_str()) {
            return Vec::new();
        }
        if !self.is_connected() {
            self.flash(
                FlashLevel::Warn,
                "not connected to the pod — answer once it is back",
                now,
            );
            return Vec::new();
        }
        self.approval.sent = Some(call_id.clone());
        self.approval.reason = None;
        let method = Method::Approve {
            call_id: Some(call_id.clone()),
            answer,
            reason,
        };
        vec![self.request(Pending::Approve { call_id, answer }, method)]
    }

    /// The pod's reply to an answer: `Ok` once the answer is in the log (its entry has reached
    /// the transcript, which closes the modal), else why not.
    pub(super) fn approval_replied(
        &mut self,
        call_id: &str,
        answer: ApprovalAnswer,
        result: Result<(), &str>,
        now: Instant,
    ) {
        if self.approval.sent.as_deref() == Some(call_id) {
            self.approval.sent = None;
        }
        match result {
            Ok(()) => {
                let text = match answer {
                    ApprovalAnswer::Approve => "approved — the call runs now",
                    ApprovalAnswer::ApproveAlways => {
                        "approved — calls like it run without asking from now on"
                    }
                    ApprovalAnswer::Deny => "denied — the model is told why",
                    ApprovalAnswer::Unknown => "answered",
                };
                self.flash(FlashLevel::Info, text, now);
            }
            // Usually someone else answered first; the transcript shows their answer.
            Err(reason) => self.flash(FlashLevel::Error, format!("not answered: {reason}"), now),
        }
    }
}

/// Pasted text for a one-line input: line breaks become spaces, other controls go.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect()
}
