//! `/approvals`: the standing approvals ("always" answers) of the attached pod, asked from the
//! pod when the popup opens, and revoked with `d`. The pod's answer to a revocation is the list
//! that is left, so the popup always shows what the pod holds.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use seedpod_protocol::{ApprovalDecision, EntryKind, Method, ServerMsg, StandingApproval};

use super::{App, Effect, FlashLevel, Overlay, Pending};

/// The popup's state: `None` until the pod answers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Standing {
    pub rules: Option<Vec<StandingApproval>>,
    pub selected: usize,
}

impl App {
    /// `/approvals`: open the popup and ask the pod for the list.
    pub(super) fn open_approvals(&mut self, now: Instant) -> Vec<Effect> {
        if !self.is_connected() {
            self.flash(
                FlashLevel::Warn,
                "not connected to the pod; `seedpod approvals NAME` lists them from a shell",
                now,
            );
            return Vec::new();
        }
        self.overlay = Overlay::Approvals(Standing::default());
        vec![self.request(Pending::Approvals, Method::ListApprovals)]
    }

    pub(super) fn approvals_key(
        &mut self,
        mut standing: Standing,
        key: &KeyEvent,
    ) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let count = standing.rules.as_ref().map_or(0, Vec::len);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return (Overlay::None, Vec::new()),
            KeyCode::Char('c') if ctrl => return (Overlay::None, Vec::new()),
            KeyCode::Up | KeyCode::Char('k') => {
                standing.selected = standing.selected.saturating_sub(1)
            }
            KeyCode::Down | KeyCode::Char('j') => {
                standing.selected = (standing.selected + 1).min(count.saturating_sub(1));
            }
            KeyCode::Char('d') | KeyCode::Delete => {
                let rule = standing
                    .rules
                    .as_ref()
                    .and_then(|rules| rules.get(standing.selected))
                    .cloned();
                if let Some(rule) = rule {
                    let effect = self.request(
                        Pending::Approvals,
                        Method::RevokeApproval {
                            standing: Some(rule),
                        },
                    );
                    return (Overlay::Approvals(standing), vec![effect]);
                }
            }
            _ => {}
        }
        (Overlay::Approvals(standing), Vec::new())
    }

    /// The pod's list (after `list_approvals` or a revocation).
    pub(super) fn approvals_listed(&mut self, rules: Vec<StandingApproval>) {
        if let Overlay::Approvals(standing) = &mut self.overlay {
            standing.selected = standing.selected.min(rules.len().saturating_sub(1));
            standing.rules = Some(rules);
        }
    }

    pub(super) fn approvals_failed(&mut self, reason: &str, now: Instant) {
        if matches!(self.overlay, Overlay::Approvals(_)) {
            self.overlay = Overlay::None;
        }
        self.flash(
            FlashLevel::Error,
            format!("standing approvals: {reason}"),
            now,
        );
    }

    /// While the popup is open, a rule granted or revoked elsewhere (another terminal, `seedpod
    /// approvals --revoke`) refreshes it.
    pub(super) fn approvals_changed(&mut self, msg: &ServerMsg) -> Vec<Effect> {
        if !matches!(self.overlay, Overlay::Approvals(_)) {
            return Vec::new();
        }
        let ServerMsg::Committed { entry, .. } = msg else {
            return Vec::new();
        };
        let changed = matches!(
            &entry.kind,
            EntryKind::ApprovalRevoked { .. }
                | EntryKind::ApprovalAnswer {
                    decision: ApprovalDecision::ApproveAlways(_),
                    ..
                }
        );
        if changed && !self.is_pending(|p| matches!(p, Pending::Approvals)) {
            vec![self.request(Pending::Approvals, Method::ListApprovals)]
        } else {
            Vec::new()
        }
    }
}
