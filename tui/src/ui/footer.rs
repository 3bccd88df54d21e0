//! The footer: the few keys that matter right now, or a flash message in its place. Keys take
//! one row; a message or warning that must be read whole wraps onto a few.

use std::time::Instant;

use ratatui::text::{Line, Span};
use seedpod_protocol::PodState;
use seedpod_transcript::{ConnectionState, Role};

use super::fit;
use crate::app::{App, FlashLevel, Overlay};

/// Rows a flash message or warning may take.
const MESSAGE_ROWS: usize = 3;

/// The footer's rows for the app's current situation.
pub fn footer(app: &App, width: u16, now: Instant) -> Vec<Line<'static>> {
    match message(app) {
        Some((text, role)) => super::words::wrap_words(&text, width, MESSAGE_ROWS)
            .into_iter()
            .map(|row| Line::from(Span::styled(row, app.theme.style(role))))
            .collect(),
        None => vec![line(app, width, now)],
    }
}

/// A flash message or the paste warning, which take the keys' place.
fn message(app: &App) -> Option<(String, Role)> {
    if matches!(app.overlay, Overlay::Search(_) | Overlay::Find(_)) {
        return None;
    }
    if let Some(flash) = &app.flash {
        let role = match flash.level {
            FlashLevel::Info => Role::Ok,
            FlashLevel::Warn => Role::Warn,
            FlashLevel::Error => Role::Error,
        };
        return Some((flash.text.clone(), role));
    }
    paste_over_cap(app).map(|warning| (warning, Role::Warn))
}

/// The one-row footer: a search's state, or the keys.
fn line(app: &App, width: u16, now: Instant) -> Line<'static> {
    let theme = &app.theme;
    if let Overlay::Search(search) = &app.overlay {
        let found = app
            .search_match()
            .map(|m| m.replace('\n', " ⏎ "))
            .unwrap_or_else(|| "no match".into());
        let text = format!("history search: {}_  → {found}", search.query);
        return Line::from(Span::styled(fit(&text, width), theme.style(Role::Focus)));
    }
    if let Overlay::Find(find) = &app.overlay {
        let position = find.position();
        let text = if find.typing {
            format!(
                "find: {}_  {position}  (Enter: done typing · Esc: stop)",
                find.query
            )
        } else {
            format!(
                "find: {}  {position}  · n older · N newer · / edit · Esc stop",
                find.query
            )
        };
        return Line::from(Span::styled(fit(&text, width), theme.style(Role::Focus)));
    }
    Line::from(Span::styled(
        fit(&hints(app, now).join(" · "), width),
        theme.style(Role::Dim),
    ))
}

/// Before sending: a paste over the pod's message cap is not sent whole in the message. Say
/// so, and what happens instead, while it is in the composer.
fn paste_over_cap(app: &App) -> Option<String> {
    let cap = app.transcript.status().message_cap?;
    let over = app
        .composer
        .pastes()
        .iter()
        .find(|p| p.chars() as u64 > cap)?;
    Some(format!(
        "Paste #{} is {} chars, over the {} cap: its head and tail go in the message, and the \
         model reads the rest with read_paste · Enter send",
        over.id,
        seedpod_transcript::render::thousands(over.chars() as u64),
        seedpod_transcript::render::thousands(cap),
    ))
}

/// The one hint that depends on the pod's name.
fn restart_hint(app: &App) -> String {
    format!("`seedpod restart {}` upgrades the pod", app.pod)
}

/// Key hints, most useful first; the line is cut at the terminal's width.
fn hints(app: &App, now: Instant) -> Vec<String> {
    match static_hints(app, now) {
        Some(Hints::Fixed(hints)) => hints.iter().map(|h| h.to_string()).collect(),
        // Moving between pods right after the first hint: after a jump, the way back matters
        // more than the reminders that follow.
        Some(Hints::Main(hints)) => {
            let mut out: Vec<String> = hints.iter().map(|h| h.to_string()).collect();
            let at = out.len().min(1);
            out.splice(at..at, pod_hints(app));
            out
        }
        // An incompatible pod (perhaps just jumped into): the way back still works.
        None => {
            let mut out = vec![restart_hint(app)];
            out.extend(pod_hints(app));
            out.push("Ctrl-D detach".into());
            out
        }
    }
}

/// Where Ctrl-G and Ctrl-O go, when they go anywhere.
fn pod_hints(app: &App) -> Vec<String> {
    let child = app.last_child().map(|pod| format!("Ctrl-G go to {pod}"));
    let back = app
        .previous_pod()
        .map(|pod| format!("Ctrl-O back to {pod}"));
    child.into_iter().chain(back).collect()
}

enum Hints {
    /// A popup or prompt has the keyboard: only its keys.
    Fixed(Vec<&'static str>),
    /// The main screen: the pod hints join these.
    Main(Vec<&'static str>),
}

/// The hints for everything but an incompatible pod (`None`).
fn static_hints(app: &App, now: Instant) -> Option<Hints> {
    match &app.overlay {
        Overlay::Help(_) => {
            return Some(Hints::Fixed(vec![
                "↑↓ PgUp PgDn scroll",
                "any other key closes help",
            ]));
        }
        Overlay::Text { .. } => {
            return Some(Hints::Fixed(vec![
                "↑↓ PgUp PgDn scroll",
                "any other key closes it",
            ]));
        }
        Overlay::Turns(_) => {
            return Some(Hints::Fixed(vec!["↑↓ choose", "Enter pick", "Esc close"]));
        }
        Overlay::Rewind(_) => {
            return Some(Hints::Fixed(vec![
                "Enter/y conversation and files",
                "c conversation",
                "f files",
                "Esc cancel",
            ]));
        }
        Overlay::ConfirmStop => {
            return Some(Hints::Fixed(vec!["y stop the pod", "n keep it running"]));
        }
        Overlay::Picker(_) => {
            return Some(Hints::Fixed(vec![
                "↑↓ choose",
                "Enter attach",
                "r refresh",
                "Esc close",
            ]));
        }
        Overlay::Approvals(_) => {
            return Some(Hints::Fixed(vec!["↑↓ choose", "d revoke", "Esc close"]));
        }
        Overlay::Mcp(_) => {
            return Some(Hints::Fixed(vec![
                "↑↓ choose",
                "r reconnect",
                "d disable",
                "e enable",
                "Esc close",
            ]));
        }
        Overlay::Search(_) | Overlay::Find(_) => return Some(Hints::Fixed(Vec::new())),
        Overlay::None => {}
    }
    if let Some(modal) = app.approval_modal() {
        return Some(Hints::Fixed(if modal.sending {
            vec!["sending your answer…"]
        } else if modal.reason.is_some() {
            vec!["Enter deny", "Esc back to the question"]
        } else if !modal.takes_answers(now) {
            vec![
                "waiting for a pause in typing: keys go to your message",
                "↑↓ PgUp/PgDn scroll",
            ]
        } else if modal.confirming {
            vec!["a/Enter approve always", "Esc back to the question"]
        } else {
            vec![
                "y approve",
                "a approve always",
                "n deny",
                "Esc hide",
                "↑↓ PgUp/PgDn scroll",
            ]
        }));
    }
    if app.popup.as_ref().is_some_and(|p| !p.is_empty()) {
        return Some(Hints::Fixed(vec![
            "↑↓ choose",
            "Tab/Enter accept",
            "Esc close",
        ]));
    }
    if app.composer.is_empty() && app.view.focused().is_some() {
        return Some(Hints::Fixed(vec![
            "Enter expand/collapse",
            "Tab next",
            "Esc unfocus",
        ]));
    }
    let mut hints = Vec::new();
    match &app.link {
        ConnectionState::Connected => {}
        ConnectionState::Connecting | ConnectionState::Reconnecting { .. } => {
            return Some(Hints::Main(vec![
                "waiting for the pod",
                "Ctrl-D detach",
                "Ctrl-P pods",
            ]));
        }
        ConnectionState::Stopped => {
            return Some(Hints::Main(vec![
                "Ctrl-S restore the pod",
                "Ctrl-D detach",
                "Ctrl-P pods",
            ]));
        }
        ConnectionState::Incompatible { .. } => return None,
    }
    if app.composer.on_chip() {
        hints.push("Ctrl-X expand the paste");
    }
    if !app.view.is_following() {
        hints.push("End follow");
    }
    match app.pod_state() {
        PodState::Running => hints.extend(["Esc pause", "Enter queue", "PgUp scroll"]),
        PodState::Paused => hints.extend(["Esc cancel", "/resume continue", "Enter new input"]),
        PodState::WaitingForApproval => {
            if app.approval_hidden() {
                hints.push("Ctrl-A answer the request");
            }
            hints.extend(["Esc cancel the turn", "Enter queue"]);
        }
        PodState::Compacting => hints.extend(["Esc stop", "Enter queue", "PgUp scroll"]),
        PodState::Idle | PodState::Stopping | PodState::Unknown => {
            if app.composer.is_empty() {
                hints.extend(["Enter send", "/ commands", "@ files", "Ctrl-P pods"]);
            } else {
                hints.extend(["Enter send", "Shift-Enter newline", "Ctrl-C clear"]);
            }
        }
    }
    if app.composer.is_empty() {
        hints.extend(["Tab focus", "Ctrl-D detach"]);
    }
    Some(Hints::Main(hints))
}
