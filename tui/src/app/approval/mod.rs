//! The approval prompt. While the transcript has a pending approval request, a modal asks about
//! the oldest one: `y` approves, `a` asks to confirm the standing rule and then approves always,
//! `n` asks for an optional reason and then denies, Esc hides the modal (the request stays
//! pending; Ctrl-A brings it back).
//!
//! Typing never answers: a key is an answer only once the modal has shown for `TYPING_PAUSE`
//! with no key pressed — after it opened and after the last keystroke. Until then, and again
//! from every key on while typing goes on, keys are the composer's (so nothing typed is lost,
//! and a `y` inside a word typed at any ordinary speed is a letter, not an approval). The modal
//! says it waits for a pause in typing until it takes answers. `keys.rs` sorts the keys.
//!
//! The modal follows the transcript, not the keys: it shows whenever a request is pending and
//! goes as soon as the request is not — answered from this client, another client or
//! `seedpod approve`, or closed by the end of its run. So the only state kept here is what the
//! person is doing with it: hiding it, confirming `a`, typing a reason, waiting for the pod's
//! reply, where its body is scrolled (`scroll.rs`) — and when it opened and when a key was last
//! pressed, for the pause.

mod keys;
pub mod scroll;

use std::time::{Duration, Instant};

use seedpod_protocol::{ApprovalAnswer, ApprovalRequest, CallId, Method, Preview};

use self::scroll::BodyScroll;
use super::{App, Effect, FlashLevel, Overlay, Pending};

/// How long the modal must have shown with no key pressed before a key answers it. Longer than
/// the gap between keys of anyone typing a sentence (a fast typist's is about 0.1 s, a slow
/// one's 0.4 s), short against the time a person takes to read what they are asked about.
pub const TYPING_PAUSE: Duration = Duration::from_secs(1);

/// What the person is doing with the pending request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalPrompt {
    /// The request hidden with Esc: no modal for it until Ctrl-A (a newer request shows).
    hidden: Option<CallId>,
    /// A denial's reason being typed: the request's call id and the text so far.
    reason: Option<(CallId, String)>,
    /// The request whose answer was sent and not yet replied to; keys wait for the reply.
    sent: Option<CallId>,
    /// The request whose modal shows and when it opened (in the app's clock), or when its
    /// current question did (`a` asks a new one): no answers until `TYPING_PAUSE` after that.
    /// `None` while no modal shows.
    opened: Option<(CallId, Instant)>,
    /// When the person last pressed a key or pasted, anywhere: no answers until
    /// `TYPING_PAUSE` after that either.
    last_key: Option<Instant>,
    /// `a` was pressed for this request: the modal says what the standing rule covers and
    /// waits for a second key before anything is sent.
    confirming: Option<CallId>,
    /// The last frame said the modal waits for a pause: the clock redraws when it ends.
    waiting: bool,
    /// Where the body of the request that opened last is scrolled.
    scroll: BodyScroll,
}

/// What the modal shows.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalModal<'a> {
    pub request: &'a ApprovalRequest,
    /// How the tool's declaration previews the call (`Arguments` for a tool this binary does
    /// not declare).
    pub preview: Preview,
    /// The reason typed so far, while asking why to deny.
    pub reason: Option<&'a str>,
    /// The answer is on its way to the pod.
    pub sending: bool,
    /// `a` was pressed: asking to confirm the standing rule.
    pub confirming: bool,
    /// From when keys answer: `TYPING_PAUSE` after the later of the modal's opening and the
    /// last key. `None` until the app has seen it open (keys wait for that).
    pub ready_at: Option<Instant>,
    /// Where the body is scrolled.
    pub scroll: &'a BodyScroll,
}

impl ApprovalModal<'_> {
    /// Whether a key at `now` may answer: the modal has shown, untyped-at, for `TYPING_PAUSE`.
    pub fn takes_answers(&self, now: Instant) -> bool {
        self.ready_at.is_some_and(|at| now >= at)
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
        let call_id = &request.call_id;
        if self.approval.hidden.as_ref() == Some(call_id) {
            return None;
        }
        let reason = self
            .approval
            .reason
            .as_ref()
            .filter(|(id, _)| id == call_id)
            .map(|(_, text)| text.as_str());
        let ready_at = self
            .approval
            .opened
            .as_ref()
            .filter(|(id, _)| id == call_id)
            .map(|(_, at)| self.approval.last_key.map_or(*at, |key| key.max(*at)) + TYPING_PAUSE);
        Some(ApprovalModal {
            request,
            preview: (self.tools)(&request.tool).map_or(Preview::Arguments, |decl| decl.preview),
            reason,
            sending: self.approval.sent.as_ref() == Some(call_id),
            confirming: self.approval.confirming.as_ref() == Some(call_id),
            ready_at,
            scroll: &self.approval.scroll,
        })
    }

    /// Note at `now` whether the modal shows, after every update and every frame: the first
    /// time a request's modal shows starts its wait for a pause; a modal that goes (hidden,
    /// behind an overlay, answered) waits again when it comes back.
    pub(super) fn sync_approval(&mut self, now: Instant) {
        let showing = self
            .approval_modal()
            .map(|modal| modal.request.call_id.clone());
        match showing {
            Some(call_id) => {
                if self.approval.opened.as_ref().map(|(id, _)| id) != Some(&call_id) {
                    self.approval.opened = Some((call_id, now));
                    self.approval.scroll = BodyScroll::default();
                }
            }
            None => {
                self.approval.opened = None;
                self.approval.confirming = None;
                self.approval.waiting = false;
            }
        }
    }

    /// A key was pressed or text pasted at `now`: typing, which answers nothing for a while.
    pub(super) fn typed(&mut self, now: Instant) {
        self.approval.last_key = Some(now);
    }

    /// A frame is drawn at `now`: the modal counts as open from its first frame at the
    /// latest, and the clock redraws when the wait for a pause that it shows ends.
    pub fn approval_drawn(&mut self, now: Instant) {
        self.sync_approval(now);
        self.approval.waiting = self
            .approval_modal()
            .is_some_and(|modal| !modal.takes_answers(now));
    }

    /// The frame laid the modal's body out: `len` rows in `room`, hunks starting at `hunks`.
    pub fn approval_laid_out(&mut self, len: usize, room: usize, hunks: Vec<usize>) {
        self.approval.scroll.laid_out(len, room, hunks);
    }

    /// The last frame said the modal waits for a pause: redraw on the clock.
    pub(super) fn approval_waiting(&self) -> bool {
        self.approval.waiting
    }

    /// When the modal starts taking answers, while it waits for a pause.
    pub(super) fn approval_next_tick(&self, now: Instant) -> Option<Instant> {
        let modal = self.approval_modal()?;
        modal.ready_at.filter(|_| !modal.takes_answers(now))
    }

    /// A request is pending but its modal is hidden (the footer offers Ctrl-A).
    pub fn approval_hidden(&self) -> bool {
        self.transcript
            .pending_approval()
            .is_some_and(|r| self.approval.hidden.as_ref() == Some(&r.call_id))
    }

    /// Ctrl-A: show the hidden request again.
    pub(super) fn show_approval(&mut self) {
        self.approval.hidden = None;
    }

    /// Forget everything about the prompt (another pod).
    pub(super) fn reset_approval(&mut self) {
        self.approval = ApprovalPrompt::default();
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
        if self.approval.sent.as_ref() == Some(&call_id) {
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
        call_id: &CallId,
        answer: ApprovalAnswer,
        result: Result<(), &str>,
        now: Instant,
    ) {
        if self.approval.sent.as_ref() == Some(call_id) {
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
