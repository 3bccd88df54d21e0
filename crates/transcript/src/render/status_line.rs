//! The status line: pod name, state (with run time, retry notice or approval wait), model,
//! tokens, how full the model's context is, queue, the last notice and the connection. When the
//! width is short, the least important parts go first; name, state and connection stay, and a
//! context nearly full outlasts everything but trouble.

use std::time::Instant;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use seedpod_protocol::{AlertLevel, PodState};

use super::format::{compact, seconds};
use super::text::{sanitize, truncate, width as text_width};
use super::theme::{Role, Theme};
use crate::model::{ConnectionState, PodView};

const SEPARATOR: &str = " · ";

/// One part of the status line and how much it matters when space is short.
struct Part {
    text: String,
    style: Style,
    priority: u8,
}

/// The status line now. See [`status_line_at`] for a fixed clock.
pub fn status_line(
    view: &PodView,
    link: &ConnectionState,
    width: u16,
    theme: &Theme,
) -> Line<'static> {
    status_line_at(view, link, width, theme, Instant::now())
}

/// The status line as it reads at `now` (run time is measured from `view.running_since`).
pub fn status_line_at(
    view: &PodView,
    link: &ConnectionState,
    width: u16,
    theme: &Theme,
    now: Instant,
) -> Line<'static> {
    let available = usize::from(width);
    let mut parts = parts(view, link, theme, now);
    while total_width(&parts) > available {
        let lowest = parts
            .iter()
            .enumerate()
            .filter(|(_, part)| part.priority < ESSENTIAL)
            .min_by_key(|(_, part)| part.priority)
            .map(|(index, _)| index);
        match lowest {
            Some(index) => {
                parts.remove(index);
            }
            None => break,
        }
    }
    shrink_to_fit(&mut parts, available);
    let mut spans = Vec::new();
    for (n, part) in parts.into_iter().enumerate() {
        if n > 0 {
            spans.push(Span::styled(SEPARATOR, theme.style(Role::Dim)));
        }
        spans.push(Span::styled(part.text, part.style));
    }
    super::wrap::clip(Line::from(spans), available)
}

/// Still too long with only the essentials: cut the widest part (never below
/// `MIN_PART` columns) until the line fits, so every part keeps its start.
fn shrink_to_fit(parts: &mut [Part], available: usize) {
    loop {
        let over = total_width(parts).saturating_sub(available);
        if over == 0 {
            return;
        }
        let widest = parts
            .iter_mut()
            .map(|part| (text_width(&part.text), part))
            .filter(|(width, _)| *width > MIN_PART)
            .max_by_key(|(width, _)| *width);
        let Some((width, part)) = widest else {
            return;
        };
        let target = width.saturating_sub(over).max(MIN_PART);
        part.text = truncate(&part.text, target);
    }
}

/// The narrowest a part is cut to.
const MIN_PART: usize = 8;

/// Parts at or above this priority are never dropped.
const ESSENTIAL: u8 = 9;

fn parts(view: &PodView, link: &ConnectionState, theme: &Theme, now: Instant) -> Vec<Part> {
    let mut parts = Vec::new();
    let name = if view.name.is_empty() {
        "seedpod"
    } else {
        &view.name
    };
    parts.push(Part {
        text: one_line(name),
        style: theme.style(Role::Heading).add_modifier(Modifier::BOLD),
        priority: 10,
    });
    // A stopped pod has no state to speak of; its last one would read as if it were live.
    if *link != ConnectionState::Stopped {
        parts.push(state_part(view, theme, now));
    }
    if !view.model.is_empty() {
        parts.push(Part {
            text: one_line(&format!("{}/{}", view.provider, view.model)),
            style: theme.style(Role::Dim),
            priority: 4,
        });
    }
    if view.tokens_in + view.tokens_out > 0 {
        parts.push(Part {
            text: format!("↑{} ↓{}", compact(view.tokens_in), compact(view.tokens_out)),
            style: theme.style(Role::Dim),
            priority: 3,
        });
    }
    if let Some(part) = context_part(view, theme) {
        parts.push(part);
    }
    if !view.queue.is_empty() {
        parts.push(Part {
            text: format!("{} queued", view.queue.len()),
            style: theme.style(Role::Warn),
            priority: 6,
        });
    }
    if let Some(notice) = &view.notice {
        let role = match notice.level {
            AlertLevel::Error => Role::Error,
            AlertLevel::Warn => Role::Warn,
            AlertLevel::Info | AlertLevel::Unknown => Role::Dim,
        };
        parts.push(Part {
            text: one_line(&notice.message),
            style: theme.style(role),
            priority: 7,
        });
    }
    parts.push(link_part(link, theme));
    parts
}

fn state_part(view: &PodView, theme: &Theme, now: Instant) -> Part {
    let (text, role) = if view.waiting_for_approval {
        ("waiting for approval".to_string(), Role::Warn)
    } else if let Some(retry) = &view.retry_notice {
        (retrying(&one_line(retry)), Role::Warn)
    } else {
        match view.state {
            PodState::Running => {
                let text = match view.running_since {
                    Some(since) => {
                        let secs = now.saturating_duration_since(since).as_secs();
                        format!("running {}", seconds(secs))
                    }
                    None => "running".to_string(),
                };
                (text, Role::Ok)
            }
            PodState::Idle => ("idle".to_string(), Role::Dim),
            PodState::Paused => ("paused".to_string(), Role::Warn),
            PodState::WaitingForApproval => ("waiting for approval".to_string(), Role::Warn),
            PodState::Compacting => {
                let text = match view.compacting_since {
                    Some(since) => {
                        let secs = now.saturating_duration_since(since).as_secs();
                        format!("compacting {}", seconds(secs))
                    }
                    None => "compacting".to_string(),
                };
                (text, Role::Warn)
            }
            PodState::Stopping => ("stopping".to_string(), Role::Warn),
            PodState::Unknown => ("unknown state".to_string(), Role::Dim),
        }
    };
    Part {
        text,
        style: theme.style(role),
        priority: 10,
    }
}

/// A retry notice with when and which attempt first: the status line cuts a long part at its
/// end, and the provider's message ("Provider error: … . Retrying in 4s (attempt 2/5)") puts
/// them last.
fn retrying(notice: &str) -> String {
    match notice.rsplit_once(". Retrying in ") {
        Some((why, when)) => format!("retrying in {when} · {why}"),
        None => format!("retrying: {notice}"),
    }
}

/// From this fill on, the gauge takes the warning colour (and stays when space is short): the
/// pod compacts by default at 75%, so 80% means it is about to, or could not.
pub const CONTEXT_WARN_PERCENT: u64 = 80;

/// `ctx 62% of 16k`, or `ctx 5.2k` while the window is unknown; nothing from a pod that does not
/// say how full its context is.
fn context_part(view: &PodView, theme: &Theme) -> Option<Part> {
    let fill = view.context;
    if fill.tokens == 0 && fill.window.is_none() {
        return None;
    }
    // The same words `seedpod ls` prints (`ContextFill::label`): `~` marks an estimate.
    let full = fill
        .percent()
        .is_some_and(|percent| percent >= CONTEXT_WARN_PERCENT);
    Some(Part {
        text: format!("ctx {}", fill.label()),
        style: theme.style(if full { Role::Warn } else { Role::Dim }),
        priority: if full { 8 } else { 6 },
    })
}

/// What the status line says of a pod no process answers for, and the key that brings it
/// back (the app binds it: `tui/src/keys.rs`).
pub const STOPPED: &str = "pod stopped · Ctrl-S restores it";

fn link_part(link: &ConnectionState, theme: &Theme) -> Part {
    // "connected" is the normal case and goes first when space is short; trouble stays.
    let priority = match link {
        ConnectionState::Connected => 5,
        ConnectionState::Connecting
        | ConnectionState::Reconnecting { .. }
        | ConnectionState::Stopped
        | ConnectionState::Incompatible { .. } => 9,
    };
    let (text, role) = match link {
        ConnectionState::Connecting => ("connecting…".to_string(), Role::Warn),
        ConnectionState::Connected => ("connected".to_string(), Role::Dim),
        // A remote link says it itself: "link lost — reconnecting to HOST (why)".
        ConnectionState::Reconnecting { attempt, reason } if reason.starts_with("link lost") => (
            format!("{} · attempt {attempt}", one_line(reason)),
            Role::Warn,
        ),
        ConnectionState::Reconnecting { attempt, reason } => (
            format!("reconnecting (attempt {attempt}): {}", one_line(reason)),
            Role::Warn,
        ),
        ConnectionState::Stopped => (STOPPED.to_string(), Role::Error),
        ConnectionState::Incompatible { message } => {
            (format!("incompatible: {}", one_line(message)), Role::Error)
        }
    };
    Part {
        text,
        style: theme.style(role),
        priority,
    }
}

fn total_width(parts: &[Part]) -> usize {
    let separators = text_width(SEPARATOR) * parts.len().saturating_sub(1);
    parts.iter().map(|p| text_width(&p.text)).sum::<usize>() + separators
}

/// Outside text on one line: no controls, no newlines.
fn one_line(text: &str) -> String {
    sanitize(text).replace('\n', " ")
}
