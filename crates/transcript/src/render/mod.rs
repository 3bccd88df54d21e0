//! Rendering: per-kind renderers (`cell_lines`, a pure function of cell and width), the status
//! line, the colour theme, and the scrolling transcript widget with its line cache.
//!
//! Renderers live one family per file: `user.rs`, `assistant.rs` (answer and thinking, with
//! `markdown.rs`, `table.rs`, `highlight.rs`), `tool.rs`, `approval.rs`, `system.rs`,
//! `context.rs` (compaction, pruning notes, the head of a log that goes further back).
//! `text.rs` and `wrap.rs` hold the width rules every renderer shares; `view.rs` and `cache.rs`
//! the widget.

mod approval;
mod assistant;
mod cache;
mod context;
mod format;

/// Counts as people read them (`1,234`); the composer's paste chips use the same form.
pub use format::thousands;
mod highlight;
mod markdown;
mod search;
mod status_line;
mod system;
mod table;
mod text;
mod theme;
mod tool;
mod user;
mod view;
mod wrap;

use ratatui::text::Line;

use crate::model::{Cell, CellKind};

pub use approval::{COLLAPSED_ARGUMENT_LINES, argument_lines, standing_scope};
pub use highlight::preload as preload_highlighting;
pub use status_line::{CONTEXT_WARN_PERCENT, STOPPED, status_line, status_line_at};
pub use text::{join_emoji, sanitize, split_emoji, tail, truncate, width, wrap_columns};
pub use theme::{Role, Theme};
pub use tool::COLLAPSED_OUTPUT_LINES;
pub use view::{TranscriptView, ViewState};

/// The lines of one cell at `width` columns. A pure function of the cell (its kind and
/// `expanded`), the width and the theme; no line is wider than `width`.
pub fn cell_lines(cell: &Cell, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let available = usize::from(width);
    if available == 0 {
        return Vec::new();
    }
    let lines = dispatch(cell, available, theme);
    // Renderers wrap to the width already; this keeps the promise even at absurd widths
    // (a prefix wider than the screen).
    lines
        .into_iter()
        .map(|line| wrap::clip(line, available))
        .collect()
}

fn dispatch(cell: &Cell, available: usize, theme: &Theme) -> Vec<Line<'static>> {
    match &cell.kind {
        CellKind::SegmentStart {
            segment_id,
            provider,
            model,
            origin,
        } => system::segment_start(segment_id, provider, model, origin, available, theme),
        CellKind::UserInput { segments } => {
            user::user_input(segments, cell.expanded, available, theme)
        }
        CellKind::AssistantText {
            text,
            streaming,
            interrupted,
        } => {
            let mut lines = assistant::assistant_text(text, *streaming, available, theme);
            if *interrupted {
                lines.push(assistant::interrupted(theme));
            }
            lines
        }
        CellKind::Thinking { text, streaming } => {
            assistant::thinking(text, *streaming, cell.expanded, available, theme)
        }
        CellKind::Noted => assistant::noted(theme),
        CellKind::ToolCall {
            name,
            arguments,
            status,
            output,
            duration_ms,
            outcome,
            progress,
            ..
        } => {
            let view = tool::ToolView {
                name,
                arguments,
                status: *status,
                output,
                duration_ms: *duration_ms,
                outcome: outcome.as_deref(),
                progress: progress.as_ref(),
                expanded: cell.expanded,
            };
            tool::tool_call(&view, available, theme)
        }
        CellKind::Approval { request, status } => {
            approval::approval(request, status, cell.expanded, available, theme)
        }
        CellKind::Notification { message } => system::notification(message, available, theme),
        CellKind::PodEvent { event } => system::pod_event(event, available, theme),
        CellKind::FileAttachment { path, body } => {
            let header = system::body_header(format!("@{path}"), None, body, theme);
            system::collapsible(header, body, cell.expanded, available, theme)
        }
        CellKind::Knowledge { slug, body } => {
            let header = system::body_header(format!("#{slug}"), Some("knowledge"), body, theme);
            system::collapsible(header, body, cell.expanded, available, theme)
        }
        CellKind::Workflow { slug, body } => {
            let header = system::body_header(format!("/{slug}"), Some("workflow"), body, theme);
            system::collapsible(header, body, cell.expanded, available, theme)
        }
        CellKind::TaskReminder { source, body } => {
            let why = system::reminder_reason(*source);
            let header = system::body_header("reminder".to_string(), why, body, theme);
            system::collapsible(header, body, cell.expanded, available, theme)
        }
        CellKind::Interrupt { body } => system::interrupt(body, cell.expanded, available, theme),
        CellKind::Alert { level, message } => system::alert(*level, message, available, theme),
        CellKind::RunEnd {
            reason,
            message,
            duration_ms,
            tokens,
        } => system::run_end(
            *reason,
            message.as_deref(),
            *duration_ms,
            tokens.as_ref(),
            available,
            theme,
        ),
        CellKind::ModelChanged { provider, model } => {
            system::model_changed(provider, model, available, theme)
        }
        CellKind::Compaction { record } => {
            context::compaction(record, cell.expanded, available, theme)
        }
        CellKind::ContextPruned { results } => context::context_pruned(*results, available, theme),
        CellKind::WindowLearned { tokens } => context::window_learned(*tokens, available, theme),
        CellKind::DateChanged { date } => context::date_changed(date, available, theme),
        CellKind::ApprovalRevoked { rule } => context::approval_revoked(rule, available, theme),
        CellKind::StandingAllowed { rule } => context::standing_allowed(rule, available, theme),
        CellKind::LogHead { head } => context::log_head(head, available, theme),
        CellKind::Unknown { label, raw } => system::unknown(label, raw, available, theme),
    }
}
