//! Drawing the whole screen from the app: banner · transcript · status line · the model's task
//! list (`tasks.rs`) · queued inputs · composer · footer, and the popups over them (`popups.rs`), topmost the approval modal
//! (`approval.rs`). Pure: the same app state
//! always draws the same screen, which is what the `TestBackend` snapshots pin.

mod approval;
mod branch;
mod footer;
mod popups;
mod tasks;
mod words;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use seedpod_protocol::{QueuedItem, flatten_to_text};
use std::time::Instant;

use seedpod_transcript::render::status_line_at;
use seedpod_transcript::{Role, TranscriptView};
use unicode_width::UnicodeWidthStr;

use crate::app::App;

/// Queued inputs shown above the composer; more are summarised in one line.
pub const QUEUE_ROWS: usize = 3;

/// The composer's prompt, drawn in a gutter left of the text.
const PROMPT: &str = "› ";

/// Rows the banner may take: wrapped rather than cut, so a narrow terminal still reads it.
const BANNER_ROWS: usize = 3;

/// Draw the screen as it reads at `now` (the running clock in the status line).
pub fn draw(frame: &mut Frame, app: &mut App, now: Instant) {
    app.approval_drawn(now);
    let area = frame.area();
    let queue = queue_lines(app, area.width);
    // The pinned list never takes more than a quarter of the screen from the transcript.
    let task_list = tasks::task_lines(app, area.width, usize::from(area.height / 4));
    let gutter = PROMPT.width() as u16;
    let composer_rows = app.composer.height(area.width.saturating_sub(gutter));
    let banner_lines: Vec<Line> = app
        .banner
        .iter()
        .flat_map(|text| words::wrap_words(text, area.width, BANNER_ROWS))
        .map(|row| Line::from(Span::styled(row, app.theme.style(Role::Focus))))
        .collect();
    let footer_lines = footer::footer(app, area.width, now);
    let [banner, transcript, status, pinned, queued, composer, footer] = Layout::vertical([
        Constraint::Length(banner_lines.len() as u16),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(task_list.len() as u16),
        Constraint::Length(queue.len() as u16),
        Constraint::Length(composer_rows),
        Constraint::Length(footer_lines.len() as u16),
    ])
    .areas(area);

    frame.render_widget(Paragraph::new(banner_lines), banner);
    let view = TranscriptView {
        transcript: &app.transcript,
        theme: &app.theme,
    };
    frame.render_stateful_widget(view, transcript, &mut app.view);
    let line = status_line_at(
        app.transcript.status(),
        &app.link,
        status.width,
        &app.theme,
        now,
    );
    frame.render_widget(Paragraph::new(line), status);
    frame.render_widget(Paragraph::new(task_list), pinned);
    frame.render_widget(Paragraph::new(queue), queued);
    draw_composer(frame, app, composer, gutter);
    frame.render_widget(Paragraph::new(footer_lines), footer);
    // Completion opens upwards from just above the status line, over the transcript's end.
    popups::draw(frame, app, transcript);
    let laid_out = app
        .approval_modal()
        .map(|modal| approval::draw(frame, &modal, &app.theme, transcript, now));
    if let Some(laid_out) = laid_out {
        app.approval_laid_out(laid_out.len, laid_out.room, laid_out.hunks);
    }
}

fn draw_composer(frame: &mut Frame, app: &App, area: Rect, gutter: u16) {
    let [prompt, text] =
        Layout::horizontal([Constraint::Length(gutter), Constraint::Min(1)]).areas(area);
    frame.render_widget(
        Paragraph::new(Span::styled(PROMPT, app.theme.style(Role::User))),
        prompt,
    );
    frame.render_widget(app.composer.textarea(), text);
}

/// One line per queued item (they are sent, in order, when the current turn ends).
fn queue_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let queue = &app.transcript.status().queue;
    let style = app.theme.style(Role::Dim);
    let mut lines: Vec<Line<'static>> = queue
        .iter()
        .take(QUEUE_ROWS)
        .map(|entry| {
            let what = match &entry.item {
                QueuedItem::Run { segments } => {
                    format!(
                        "queued (↑ to edit): {}",
                        flatten_to_text(segments).replace('\n', " ⏎ ")
                    )
                }
                QueuedItem::Delegated { segments } => format!(
                    "queued from the parent pod: {}",
                    flatten_to_text(segments).replace('\n', " ⏎ ")
                ),
                QueuedItem::Notify { message, .. } => format!("queued notification: {message}"),
                QueuedItem::PodEvent { event, .. } => format!(
                    "queued report from child pod {}",
                    event.pod().unwrap_or("(unknown)")
                ),
                QueuedItem::Unknown => "queued: an item this seedpod does not know".into(),
            };
            Line::from(Span::styled(fit(&format!("  ⋯ {what}"), width), style))
        })
        .collect();
    if queue.len() > QUEUE_ROWS {
        let more = format!("  ⋯ and {} more queued", queue.len() - QUEUE_ROWS);
        lines.push(Line::from(Span::styled(fit(&more, width), style)));
    }
    lines
}

/// `text` cut to `width` display columns, with `…` when cut: the transcript's one
/// grapheme-aware cut, for the TUI's `u16` widths. Wide characters (CJK, emoji) count as two,
/// and a combining mark or joined emoji is never split, so nothing spills past the edge.
pub fn fit(text: &str, width: u16) -> String {
    seedpod_transcript::render::truncate(text, usize::from(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_counts_display_columns() {
        assert_eq!(fit("hello", 10), "hello");
        assert_eq!(fit("hello world", 6), "hello…");
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(fit("日本語のテキスト", 7).width(), 7);
        assert_eq!(fit("abc", 0), "");
    }
}
