//! The approval prompt. While the transcript has a pending approval request, a modal asks about
//! the oldest one: `y` approves, `a` asks to confirm the standing rule and then approves always,
//! `n` asks for an optional reason and then denies, Esc hides the modal (the request stays
//! pending; Ctrl-A brings it back).
//!
//! Type-ahead never answers: for `ANSWER_GRACE` after the modal opens (a request arrives, an
//! overlay closes over it, Ctrl-A shows it again) every key but PgUp/PgDn is swallowed — not
//! taken as an answer and not put in the composer either, since the person typing did not see
//! the modal take the keyboard. The modal counts the grace period down until it takes keys.
//!
//! The modal follows the transcript, not the keys: it shows whenever a request is pending and
//! goes as soon as the request is not — answered from this client, another client or
//! `seedpod approve`, or closed by the end of its run. So the only state kept here is what the
//! person is doing with it: hiding it, confirming `a`, typing a reason, waiting for the pod's
//! reply — and when it opened, for the grace period.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use seedpod_protocol::{ApprovalAnswer, ApprovalRequest, CallId, Method};

use super::{App, Effect, FlashLevel, Overlay, Pending};

/// How long after the modal opens keys are not answers. Long enough for the keys of a word
/// being typed when it opened to land, short enough that a person reading it never waits.
pub const ANSWER_GRACE: Duration = Duration::from_millis(400);

/// How often the grace countdown is redrawn while it runs.
pub const COUNTDOWN_STEP: Duration = Duration::from_millis(100);

/// What the person is doing with the pending request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalPrompt {
    /// The request hidden with Esc: no modal for it until Ctrl-A (a newer request shows).
    hidden: Option<CallId>,
    /// A denial's reason being typed: the request's call id and the text so far.
    reason: Option<(CallId, String)>,
    /// The request whose answer was sent and not yet replied to; keys wait for the reply.
    sent: Option<CallId>,
    /// The request whose modal shows and when it opened (in the app's clock): keys are not
    /// answers until `ANSWER_GRACE` after that. `None` while no modal shows.
    opened: Option<(CallId, Instant)>,
    /// `a` was pressed for this request: the modal says what the standing rule covers and
    /// waits for a second key before anything is sent.
    confirming: Option<CallId>,
    /// The last frame drew the countdown: the clock redraws until the modal takes keys.
    counting: bool,
    /// The first line of an edit's diff in view (↑↓), for the request that opened last.
    scroll: usize,
}

/// What the modal shows.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalModal<'a> {
    pub request: &'a ApprovalRequest,
    /// The reason typed so far, while asking why to deny.
    pub reason: Option<&'a str>,
    /// The answer is on its way to the pod.
    pub sending: bool,
    /// `a` was pressed: asking to confirm the standing rule.
    pub confirming: bool,
    /// When the modal opened; `None` until the app has seen it open (keys wait for that).
    pub opened: Option<Instant>,
    /// The first line of an edit's diff in view.
    pub scroll: usize,
}

impl ApprovalModal<'_> {
    /// How long keys are still swallowed at `now`; `None` once the modal takes answers.
    pub fn grace_left(&self, now: Instant) -> Option<Duration> {
        let Some(opened) = self.opened else {
            return Some(ANSWER_GRACE);
        };
        let left = (opened + ANSWER_GRACE).saturating_duration_since(now);
        (!left.is_zero()).then_some(left)
    }
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
        let opened = self
            .approval
            .opened
            .as_ref()
            .filter(|(id, _)| id == call_id)
            .map(|(_, at)| *at);
        Some(ApprovalModal {
            request,
            reason,
            sending: self.approval.sent.as_deref() == Some(call_id),
            confirming: self.approval.confirming.as_deref() == Some(call_id),
            opened,
            scroll: self.approval.scroll,
        })
    }

    /// Note at `now` whether the modal shows, after every update and every frame: the first
    /// time a request's modal shows starts its grace period; a modal that goes (hidden, behind
    /// an overlay, answered) starts a new one when it comes back.
    pub(super) fn sync_approval(&mut self, now: Instant) {
        let showing = self
            .approval_modal()
            .map(|modal| modal.request.call_id.clone());
        match showing {
            Some(call_id) => {
                if self.approval.opened.as_ref().map(|(id, _)| id) != Some(&call_id) {
                    self.approval.opened = Some((call_id, now));
                    self.approval.scroll = 0;
                }
            }
            None => {
                self.approval.opened = None;
                self.approval.confirming = None;
                self.approval.counting = false;
            }
        }
    }

    /// A frame is drawn at `now`: the modal counts as open from its first frame at the
    /// latest, and the clock keeps redrawing while its countdown shows.
    pub fn approval_drawn(&mut self, now: Instant) {
        self.sync_approval(now);
        self.approval.counting = self
            .approval_modal()
            .is_some_and(|modal| modal.grace_left(now).is_some());
    }

    /// The countdown showed in the last frame: redraw on the clock.
    pub(super) fn approval_counting(&self) -> bool {
        self.approval.counting
    }

    /// When the countdown next changes, while it shows.
    pub(super) fn approval_next_tick(&self, now: Instant) -> Option<Instant> {
        let left = self.approval_modal()?.grace_left(now)?;
        Some(now + left.min(COUNTDOWN_STEP))
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
        // The first moment the app sees this modal may be this key: it opens now.
        self.sync_approval(now);
        let modal = self.approval_modal()?;
        let call_id = modal.request.call_id.clone();
        let early = modal.grace_left(now).is_some();
        let (typing, sending, confirming) =
            (modal.reason.is_some(), modal.sending, modal.confirming);
        if key.kind == KeyEventKind::Release {
            return Some(Vec::new());
        }
        // Scrolling is never an answer: it works from the start.
        if matches!(key.code, KeyCode::Up | KeyCode::Down) && !typing {
            self.scroll_diff(key.code == KeyCode::Down);
            return Some(Vec::new());
        }
        if early && !matches!(key.code, KeyCode::PageUp | KeyCode::PageDown) {
            return Some(Vec::new());
        }
        if typing {
            return Some(self.reason_key(key, call_id, now));
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if confirming {
            return Some(self.confirm_key(key, ctrl, call_id, now));
        }
        let effects = match key.code {
            KeyCode::Char('y' | 'Y') if !ctrl => {
                self.answer(call_id, ApprovalAnswer::Approve, None, now)
            }
            KeyCode::Char('a' | 'A') if !ctrl => {
                if !sending {
                    // The confirmation is a new question: its own grace, so `aa` typed in
                    // one go never makes a standing rule.
                    self.approval.opened = Some((call_id.clone(), now));
                    self.approval.confirming = Some(call_id);
                }
                Vec::new()
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

    /// ↑↓ move through an edit's diff a line at a time, no further than the last full window.
    fn scroll_diff(&mut self, down: bool) {
        let Some(modal) = self.approval_modal() else {
            return;
        };
        let lines = crate::diff::edit_diff(modal.request).map_or(0, |(_, diff)| diff.len());
        let scroll = &mut self.approval.scroll;
        *scroll = if down {
            (*scroll + 1).min(lines.saturating_sub(crate::diff::DIFF_ROWS - 1))
        } else {
            scroll.saturating_sub(1)
        };
    }

    /// The second key after `a`: `a` or Enter grants the standing rule; anything else goes
    /// back to the question with nothing sent (PgUp/PgDn still scroll).
    fn confirm_key(
        &mut self,
        key: &KeyEvent,
        ctrl: bool,
        call_id: CallId,
        now: Instant,
    ) -> Vec<Effect> {
        match key.code {
            KeyCode::Char('a' | 'A') if !ctrl => {
                self.answer(call_id, ApprovalAnswer::ApproveAlways, None, now)
            }
            KeyCode::Enter => self.answer(call_id, ApprovalAnswer::ApproveAlways, None, now),
            KeyCode::PageUp => {
                self.view.page_up();
                Vec::new()
            }
            KeyCode::PageDown => {
                self.view.page_down();
                Vec::new()
            }
            _ => {
                self.approval.confirming = None;
                Vec::new()
            }
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

    fn hide_approval(&mut self, call_id: CallId, now: Instant) -> Vec<Effect> {
        self.approval.hidden = Some(call_id);
        self.approval.reason = None;
        self.approval.confirming = None;
        self.flash(
            FlashLevel::Info,
            "the request still waits — Ctrl-A answers it, Esc cancels the turn",
            now,
        );
        Vec::new()
    }

    fn answer(
        &mut self,
        call_id: CallId,
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
        self.approval.confirming = None;
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
