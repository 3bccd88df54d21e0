//! The model's task list, pinned between the status line and the composer while any task is
//! open. Unfolded it shows a header and a window of the list around the task in progress;
//! folded (Ctrl-T) one line says how far along it is.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use seedpod_protocol::{Task, TaskStatus};
use seedpod_transcript::Role;
use seedpod_transcript::render::sanitize;

use super::fit;
use crate::app::App;

/// Tasks shown unfolded; the rest are counted on one line.
pub const TASK_ROWS: usize = 6;

/// The pinned lines for `app`'s task list, at most `max_rows` of them; none when no task is
/// open (a finished plan gets out of the way).
pub fn task_lines(app: &App, width: u16, max_rows: usize) -> Vec<Line<'static>> {
    let tasks = app.transcript.tasks();
    if max_rows == 0 || !tasks.iter().any(Task::is_open) {
        return Vec::new();
    }
    let theme = &app.theme;
    let dim = theme.style(Role::Dim);
    let done = tasks.iter().filter(|t| !t.is_open()).count();
    let current = tasks.iter().find(|t| t.status == TaskStatus::InProgress);
    if !app.tasks_expanded || max_rows == 1 {
        let now = current
            .map(|t| format!(" · now: {}", one_line(&t.content)))
            .unwrap_or_default();
        let text = format!("  tasks {done}/{}{now}  (Ctrl-T shows)", tasks.len());
        return vec![Line::from(Span::styled(fit(&text, width), dim))];
    }
    let header = format!("  tasks {done}/{} done  (Ctrl-T folds)", tasks.len());
    let mut lines = vec![Line::from(Span::styled(fit(&header, width), dim))];
    let rows = TASK_ROWS.min(max_rows - 1).max(1);
    // Keep one finished task for context, then what is next.
    let first_open = tasks.iter().position(Task::is_open).unwrap_or(0);
    let start = first_open.saturating_sub(1);
    let remaining = tasks.len() - start;
    let shown = if remaining <= rows {
        remaining
    } else {
        (rows - 1).max(1)
    };
    for task in &tasks[start..start + shown] {
        let style = match task.status {
            TaskStatus::Done => dim,
            TaskStatus::InProgress => theme.style(Role::Warn).add_modifier(Modifier::BOLD),
            TaskStatus::Pending => theme.style(Role::Assistant),
        };
        let text = format!("    {}", one_line(&task.checkbox_line()));
        lines.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    let hidden = remaining - shown;
    if hidden > 0 && lines.len() < max_rows {
        let more = if hidden == 1 {
            "    … 1 more task".to_owned()
        } else {
            format!("    … {hidden} more tasks")
        };
        lines.push(Line::from(Span::styled(fit(&more, width), dim)));
    }
    lines
}

/// A task's text on one line, with nothing that could move the cursor.
fn one_line(text: &str) -> String {
    sanitize(text).replace('\n', " ")
}
