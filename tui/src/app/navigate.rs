//! Moving around the transcript: the mouse wheel, `[` / `]` between turns, and Tab focus over
//! the cells that expand and collapse and the banners of child pods' reports (Enter goes into
//! that child). Scrolling by lines and pages is `ViewState`'s own.

use crossterm::event::{MouseEvent, MouseEventKind};
use seedpod_protocol::PodName;

use seedpod_transcript::CellKind;

use super::{App, WHEEL_LINES};

impl App {
    /// Only the wheel is used; clicks and drags belong to the terminal's own selection
    /// (and are not even reported unless `/mouse` turned capture on).
    pub fn on_mouse(&mut self, mouse: MouseEvent) -> bool {
        match mouse.kind {
            MouseEventKind::ScrollUp => {
                self.view.scroll_up(WHEEL_LINES);
                self.moved_up();
            }
            MouseEventKind::ScrollDown => self.view.scroll_down(WHEEL_LINES),
            MouseEventKind::Down(_)
            | MouseEventKind::Up(_)
            | MouseEventKind::Drag(_)
            | MouseEventKind::Moved
            | MouseEventKind::ScrollLeft
            | MouseEventKind::ScrollRight => return false,
        }
        true
    }

    /// `[` / `]`: the start of the previous / next turn relative to the top of the screen.
    pub(super) fn jump_turn(&mut self, forward: bool) {
        let starts = self.transcript.turn_starts();
        let here = self.view.visible_cells().start;
        let target = if forward {
            starts.into_iter().find(|s| *s > here)
        } else {
            starts.into_iter().rev().find(|s| *s < here)
        };
        match target {
            Some(index) => self.view.jump_to_cell(index),
            None if forward => self.view.end(),
            None => self.view.home(),
        }
    }

    /// Tab / Shift-Tab over the cells that expand and collapse, the model's answers (for
    /// `/copy`), and child pods' reports.
    pub(super) fn cycle_focus(&mut self, forward: bool) {
        let cells = self.transcript.cells();
        let toggleable: Vec<usize> = (0..cells.len())
            .filter(|i| {
                self.transcript.is_toggleable(*i)
                    || matches!(cells[*i].kind, CellKind::AssistantText { .. })
                    || self.reporter_at(*i).is_some()
            })
            .collect();
        if toggleable.is_empty() {
            return;
        }
        let next = match (self.view.focused(), forward) {
            (Some(at), true) => toggleable.iter().find(|i| **i > at).or(toggleable.first()),
            (Some(at), false) => toggleable
                .iter()
                .rev()
                .find(|i| **i < at)
                .or(toggleable.last()),
            // Start from what is on screen, newest first; with nothing to focus on screen, the
            // nearest one past its edge in the direction of the key, never a jump to the far
            // end of the transcript (Tab after Home stays near the top).
            (None, forward) => {
                let visible = self.view.visible_cells();
                let on_screen = toggleable.iter().rev().find(|i| visible.contains(i));
                let below = || toggleable.iter().find(|i| **i >= visible.end);
                let above = || toggleable.iter().rev().find(|i| **i < visible.start);
                on_screen
                    .or_else(|| if forward { below() } else { above() })
                    .or_else(|| if forward { above() } else { below() })
            }
        };
        if let Some(index) = next.copied() {
            self.view.set_focus(Some(index));
            self.view.jump_to_cell(index);
        }
    }

    /// The child pod whose report is cell `index`, if it is one.
    /// The pod whose report is the cell at `index`, if its name is one a pod can have.
    pub(super) fn reporter_at(&self, index: usize) -> Option<PodName> {
        match &self.transcript.cells().get(index)?.kind {
            CellKind::PodEvent { event } => event.pod().and_then(|pod| PodName::new(pod).ok()),
            _ => None,
        }
    }
}
