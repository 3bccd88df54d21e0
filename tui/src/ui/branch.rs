//! The `/fork` and `/rewind` popups: the turn picker and the rewind's plan to confirm
//! (`app/branch.rs`).

use ratatui::Frame;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Padding, Paragraph};
use seedpod_transcript::{Role, Theme};

use super::popups::{boxed, centred};
use crate::app::branch::{BranchKind, RewindConfirm, TurnPicker};

const TURN_KEYS: &str = " ↑↓ choose · Enter pick · Esc close ";
const REWIND_KEYS: &str = " Enter/y both · c conversation · f files · Esc cancel · ↑↓ scroll ";

/// What the CLI printed, as text that cannot steer the terminal: a file name may hold anything.
fn printable(line: &str) -> String {
    line.chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
}

pub fn turns(frame: &mut Frame, theme: &Theme, picker: &TurnPicker) {
    let screen = frame.area();
    let width = screen.width.saturating_sub(4).min(100);
    let inner = usize::from(width.saturating_sub(4));
    let lines: Vec<Line> = picker
        .turns
        .iter()
        .enumerate()
        .map(|(at, (turn, text))| {
            let row = seedpod_protocol::ellipsize(&printable(&format!("{turn:>3}  {text}")), inner);
            let line = Line::raw(row);
            if at == picker.selected {
                line.style(theme.style(Role::Focus))
            } else {
                line
            }
        })
        .collect();
    let height = (lines.len() as u16 + 2).min(screen.height);
    let visible = usize::from(height.saturating_sub(2)).max(1);
    // Keep the chosen row in view; newest last, so a long list opens at its bottom.
    let scroll = (picker.selected + 1).saturating_sub(visible) as u16;
    let title = match picker.kind {
        BranchKind::Fork => "fork after which turn?",
        BranchKind::Rewind => "rewind to the end of which turn?",
    };
    let area = centred(screen, width, height);
    frame.render_widget(Clear, area);
    let keys = Line::styled(TURN_KEYS, theme.style(Role::Dim));
    let list = Paragraph::new(lines)
        .block(
            boxed(title, theme)
                .title_bottom(keys)
                .padding(Padding::horizontal(1)),
        )
        .scroll((scroll, 0));
    frame.render_widget(list, area);
}

pub fn rewind(frame: &mut Frame, theme: &Theme, confirm: &RewindConfirm) {
    let screen = frame.area();
    let width = screen.width.saturating_sub(4).min(100);
    let inner = width.saturating_sub(4).max(10);
    let mut lines: Vec<Line> = Vec::new();
    for line in confirm.plan.lines() {
        for piece in super::words::wrap_indented(&printable(line), inner) {
            lines.push(Line::raw(piece));
        }
    }
    let height = (lines.len() as u16 + 2).min(screen.height);
    let visible = usize::from(height.saturating_sub(2));
    let top = usize::from(confirm.top).min(lines.len().saturating_sub(visible)) as u16;
    let area = centred(screen, width, height);
    frame.render_widget(Clear, area);
    let title = format!("rewind to the end of turn {}?", confirm.turn);
    let keys = Line::styled(REWIND_KEYS, theme.style(Role::Dim));
    let body = Paragraph::new(lines)
        .block(
            boxed(&title, theme)
                .title_bottom(keys)
                .padding(Padding::horizontal(1)),
        )
        .scroll((top, 0));
    frame.render_widget(body, area);
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn a_file_name_in_the_plan_cannot_steer_the_terminal() {
        let shown = printable("restore    /w/\x1b]52;c;cHduZWQ=\x07evil\r.txt\tok");
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\t'),
            "{shown:?}"
        );
        assert!(
            shown.contains("evil") && shown.ends_with(".txt\tok"),
            "{shown:?}"
        );
    }
}
