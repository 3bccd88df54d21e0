//! Tool calls: one header line (name, key argument, status, duration), a progress line while
//! a call that reports progress runs, then the output collapsed to a few lines until the cell
//! is expanded. Errors are drawn in the error colour.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::format::{count, duration_ms};
use super::text::{sanitize, truncate, width};
use super::theme::{Role, Theme};
use super::wrap::hard_wrap;
use crate::model::ToolStatus;
use seedpod_protocol::tasks::{UPDATE_TASKS, parse_update};
use seedpod_protocol::{Task, TaskStatus, ToolProgress};

/// Output lines shown while a call is collapsed.
pub const COLLAPSED_OUTPUT_LINES: usize = 4;
/// Tasks an `update_tasks` checklist shows while collapsed.
pub const COLLAPSED_TASKS: usize = 10;
/// Argument names that say best what a call is about, in order of preference.
const KEY_ARGUMENTS: [&str; 10] = [
    "path",
    "file_path",
    "file",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "name",
    "slug",
];

/// Cells of the bar a call's progress line draws when its tool said a total.
pub const PROGRESS_BAR_CELLS: usize = 12;
/// Below this width the progress line leaves out its bar and says only the count.
const PROGRESS_BAR_MIN_WIDTH: usize = 40;

/// Argument names of what a search looks for: shown before the path it looks in.
const SEARCH_ARGUMENTS: [&str; 2] = ["pattern", "query"];

/// The parts of a tool call cell a renderer needs.
pub(crate) struct ToolView<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a str,
    pub(crate) status: ToolStatus,
    pub(crate) output: &'a str,
    pub(crate) duration_ms: Option<u64>,
    /// "exit 3", "timed out": shown before the duration.
    pub(crate) outcome: Option<&'a str>,
    /// How far a running call is, as its tool last said.
    pub(crate) progress: Option<&'a ToolProgress>,
    pub(crate) expanded: bool,
}

pub(crate) fn tool_call(
    call: &ToolView<'_>,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = vec![header(call, available, theme)];
    if call.status == ToolStatus::Running
        && let Some(progress) = call.progress
    {
        out.push(progress_line(progress, available, theme));
    }
    // A task list reads as a checklist, not as its JSON and a one-line acknowledgement.
    if call.name == UPDATE_TASKS
        && call.status != ToolStatus::Error
        && let Ok(tasks) = parse_update(call.arguments)
    {
        out.extend(checklist(&tasks, call.expanded, available, theme));
        return out;
    }
    let output_style = match call.status {
        ToolStatus::Error => theme.style(Role::Error),
        ToolStatus::Ok | ToolStatus::Running | ToolStatus::AwaitingApproval => {
            theme.style(Role::Dim)
        }
    };
    let bar = [Span::styled("  │ ", theme.style(Role::Dim))];
    if call.expanded {
        let arguments = sanitize(call.arguments);
        if !arguments.trim().is_empty() {
            let label = [Span::styled("  args ", theme.style(Role::Dim))];
            let spans = [Span::styled(
                arguments.replace('\n', " "),
                theme.style(Role::Dim),
            )];
            out.extend(hard_wrap(
                &spans,
                available,
                &label,
                &[Span::raw("       ")],
            ));
        }
    }
    let output = sanitize(call.output);
    let output = output.trim_end_matches('\n');
    if output.is_empty() {
        if !matches!(
            call.status,
            ToolStatus::Running | ToolStatus::AwaitingApproval
        ) {
            out.push(Line::from(Span::styled(
                "  └ (no output)",
                theme.style(Role::Dim),
            )));
        }
        return out;
    }
    let total = output.split('\n').count();
    if call.expanded {
        for line in output.split('\n') {
            let spans = [Span::styled(line.to_string(), output_style)];
            out.extend(hard_wrap(&spans, available, &bar, &bar));
        }
        return out;
    }
    let room = available.saturating_sub(4);
    for line in output.split('\n').take(COLLAPSED_OUTPUT_LINES) {
        let mut spans = bar.to_vec();
        spans.push(Span::styled(truncate(line, room), output_style));
        out.push(Line::from(spans));
    }
    if total > COLLAPSED_OUTPUT_LINES {
        let more = count(total - COLLAPSED_OUTPUT_LINES, "more line", "more lines");
        out.push(Line::from(Span::styled(
            format!("  … {more}"),
            theme.style(Role::Dim),
        )));
    }
    out
}

fn header(call: &ToolView<'_>, available: usize, theme: &Theme) -> Line<'static> {
    let toggle = if call.expanded { "▾ " } else { "▸ " };
    let (glyph, glyph_role) = match call.status {
        ToolStatus::Running | ToolStatus::AwaitingApproval => ("◌ ", Role::Warn),
        ToolStatus::Ok => ("✓ ", Role::Ok),
        ToolStatus::Error => ("✗ ", Role::Error),
    };
    let name = if call.name.is_empty() {
        "tool".to_string()
    } else {
        sanitize(call.name).replace('\n', " ")
    };
    let tail = match (call.status, call.duration_ms) {
        (ToolStatus::Running, _) => " · running".to_string(),
        (ToolStatus::AwaitingApproval, _) => " · waiting for approval".to_string(),
        (ToolStatus::Ok | ToolStatus::Error, Some(ms)) => format!(" · {}", duration_ms(ms)),
        (ToolStatus::Ok | ToolStatus::Error, None) => String::new(),
    };
    let outcome = call
        .outcome
        .map(|o| format!(" · {}", sanitize(o).replace('\n', " ")))
        .unwrap_or_default();
    let mut spans = vec![
        Span::styled(toggle, theme.style(Role::Dim)),
        Span::styled(glyph, theme.style(glyph_role)),
        Span::styled(
            name.clone(),
            theme.style(Role::Tool).add_modifier(Modifier::BOLD),
        ),
    ];
    let fixed = width(toggle) + width(glyph) + width(&name) + width(&outcome) + width(&tail);
    let room = available.saturating_sub(fixed + 1);
    let argument = if call.name == UPDATE_TASKS {
        task_progress(call.arguments)
    } else {
        key_argument(call.arguments)
    };
    if let Some(argument) = argument
        && room > 1
    {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            truncate(&argument, room),
            theme.style(Role::Assistant),
        ));
    }
    if !outcome.is_empty() {
        spans.push(Span::styled(outcome, theme.style(Role::Error)));
    }
    spans.push(Span::styled(tail, theme.style(Role::Dim)));
    Line::from(spans)
}

/// `  ⋯ ████░░░░ 3/10 · indexing files`: a bar when the tool said a total, then the count and
/// its message, cut to the width. The pod already took control characters out of the message
/// (`ToolProgress::from_report`); it is sanitised again here, as everything a cell shows is.
fn progress_line(progress: &ToolProgress, available: usize, theme: &Theme) -> Line<'static> {
    let lead = "  ⋯ ";
    let mut spans = vec![Span::styled(lead, theme.style(Role::Dim))];
    let mut used = width(lead);
    if let Some(fraction) = progress.fraction()
        && available >= PROGRESS_BAR_MIN_WIDTH
    {
        let filled =
            ((fraction * PROGRESS_BAR_CELLS as f64).round() as usize).min(PROGRESS_BAR_CELLS);
        spans.push(Span::styled("█".repeat(filled), theme.style(Role::Warn)));
        spans.push(Span::styled(
            "░".repeat(PROGRESS_BAR_CELLS - filled),
            theme.style(Role::Dim),
        ));
        spans.push(Span::raw(" "));
        used += PROGRESS_BAR_CELLS + 1;
    }
    let label = sanitize(&progress.label()).replace('\n', " ");
    spans.push(Span::styled(
        truncate(&label, available.saturating_sub(used)),
        theme.style(Role::Assistant),
    ));
    Line::from(spans)
}

/// An `update_tasks` call's header: how far the list is, `2/5 done`.
fn task_progress(arguments: &str) -> Option<String> {
    let tasks = parse_update(arguments).ok()?;
    let done = tasks.iter().filter(|t| !t.is_open()).count();
    Some(format!("{done}/{} done", tasks.len()))
}

/// One line per task, `[x]` done (dim), `[~]` in progress (highlighted), `[ ]` pending; long
/// lists are cut while collapsed.
pub(crate) fn checklist(
    tasks: &[Task],
    expanded: bool,
    available: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let shown = if expanded {
        tasks.len()
    } else {
        tasks.len().min(COLLAPSED_TASKS)
    };
    let bar = [Span::styled("  │ ", theme.style(Role::Dim))];
    let mut out = Vec::new();
    for task in &tasks[..shown] {
        let style = match task.status {
            TaskStatus::Done => theme.style(Role::Dim),
            TaskStatus::InProgress => theme.style(Role::Warn).add_modifier(Modifier::BOLD),
            TaskStatus::Pending => theme.style(Role::Assistant),
        };
        let text = sanitize(&task.checkbox_line()).replace('\n', " ");
        out.extend(hard_wrap(
            &[Span::styled(text, style)],
            available,
            &bar,
            &[Span::styled("  │     ", theme.style(Role::Dim))],
        ));
    }
    if tasks.is_empty() {
        out.push(Line::from(Span::styled(
            "  └ (list cleared)",
            theme.style(Role::Dim),
        )));
    } else if shown < tasks.len() {
        let more = count(tasks.len() - shown, "more task", "more tasks");
        out.push(Line::from(Span::styled(
            format!("  … {more}"),
            theme.style(Role::Dim),
        )));
    }
    out
}

/// The one argument worth showing in the header: a well-known key, else the first string
/// value, else the raw text (arguments may still be streaming and not parse yet).
fn key_argument(arguments: &str) -> Option<String> {
    let one_line = |s: &str| sanitize(s).lines().next().unwrap_or("").trim().to_string();
    let trimmed = arguments.trim();
    if trimmed.is_empty() || trimmed == "{}" {
        return None;
    }
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(trimmed)
    else {
        return Some(one_line(trimmed));
    };
    let text = |key: &str| map.get(key).and_then(|v| v.as_str());
    // A search says what it looks for first, and where only when that narrows it (`grep .`
    // would say nothing of the call).
    if let Some(pattern) = SEARCH_ARGUMENTS.iter().find_map(|key| text(key)) {
        return Some(match text("path").map(str::trim) {
            Some(path) if !path.is_empty() && path != "." => {
                format!("{} in {}", one_line(pattern), one_line(path))
            }
            Some(_) | None => one_line(pattern),
        });
    }
    let preferred = KEY_ARGUMENTS.iter().find_map(|key| text(key));
    let first_string = || map.values().find_map(|v| v.as_str());
    match preferred.or_else(first_string) {
        Some(value) => Some(one_line(value)),
        None => Some(one_line(trimmed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_argument_prefers_well_known_names() {
        assert_eq!(
            key_argument(r#"{"limit":3,"path":"src/main.rs"}"#).as_deref(),
            Some("src/main.rs")
        );
        assert_eq!(key_argument(r#"{"x":"first"}"#).as_deref(), Some("first"));
        assert_eq!(key_argument(r#"{"pa"#).as_deref(), Some(r#"{"pa"#));
        assert_eq!(key_argument("{}"), None);
    }

    #[test]
    fn a_search_shows_its_pattern_before_its_path() {
        assert_eq!(
            key_argument(r#"{"path":".","pattern":"fn main"}"#).as_deref(),
            Some("fn main")
        );
        assert_eq!(
            key_argument(r#"{"path":"src","pattern":"TODO"}"#).as_deref(),
            Some("TODO in src")
        );
    }

    fn header_text(status: ToolStatus, outcome: Option<&str>) -> String {
        let view = ToolView {
            name: "shell",
            arguments: r#"{"command":"make test"}"#,
            status,
            output: "exit code 2",
            duration_ms: Some(1_500),
            outcome,
            progress: None,
            expanded: false,
        };
        let line = header(&view, 80, &Theme::colored());
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_task_list_call_renders_as_a_checklist() {
        let arguments = r#"{"tasks":[{"content":"read","status":"done"},{"content":"fix\nit","status":"in_progress"},{"content":"test","status":"pending"}]}"#;
        let view = ToolView {
            name: UPDATE_TASKS,
            arguments,
            status: ToolStatus::Ok,
            output: "task list updated: 3 tasks",
            duration_ms: None,
            outcome: None,
            progress: None,
            expanded: false,
        };
        let lines = text(&tool_call(&view, 60, &Theme::colored()));
        assert_eq!(
            lines,
            [
                "▸ ✓ update_tasks 1/3 done",
                "  │ [x] read",
                "  │ [~] fix it",
                "  │ [ ] test",
            ]
        );
        // A failed call is an ordinary error cell: the list did not change.
        let failed = ToolView {
            status: ToolStatus::Error,
            output: "the task list was not changed",
            ..view
        };
        let lines = text(&tool_call(&failed, 60, &Theme::colored()));
        assert!(lines[1].contains("not changed"), "{lines:?}");
    }

    #[test]
    fn a_long_task_list_is_cut_while_collapsed() {
        let tasks: Vec<Task> = (0..25)
            .map(|i| Task {
                content: format!("step {i}"),
                status: TaskStatus::Pending,
            })
            .collect();
        let collapsed = text(&checklist(&tasks, false, 40, &Theme::colored()));
        assert_eq!(collapsed.len(), COLLAPSED_TASKS + 1);
        assert_eq!(
            collapsed.last().map(String::as_str),
            Some("  … 15 more tasks")
        );
        let expanded = text(&checklist(&tasks, true, 40, &Theme::colored()));
        assert_eq!(expanded.len(), 25);
    }

    #[test]
    fn a_running_call_shows_its_progress_under_its_header_and_an_ended_one_does_not() {
        let counted = ToolProgress::from_report(3.0, Some(10.0), Some("indexing files"));
        let view = ToolView {
            name: "mcp__t__index",
            arguments: r#"{"path":"src"}"#,
            status: ToolStatus::Running,
            output: "",
            duration_ms: None,
            outcome: None,
            progress: counted.as_ref(),
            expanded: false,
        };
        let lines = text(&tool_call(&view, 60, &Theme::colored()));
        assert_eq!(
            lines,
            [
                "▸ ◌ mcp__t__index src · running",
                "  ⋯ ████░░░░░░░░ 3/10 · indexing files",
            ]
        );
        // Without a total: the count and the message, no bar.
        let open = ToolProgress::from_report(3.0, None, Some("indexing"));
        let lines = text(&tool_call(
            &ToolView {
                progress: open.as_ref(),
                ..view
            },
            60,
            &Theme::colored(),
        ));
        assert_eq!(lines[1], "  ⋯ 3 · indexing");
        // Narrow: no bar, the label cut to the width.
        let narrow = text(&tool_call(&view, 20, &Theme::colored()));
        assert!(narrow[1].starts_with("  ⋯ 3/10 · ind"), "{narrow:?}");
        assert!(width(&narrow[1]) <= 20, "{narrow:?}");
        // The call ended: its result shows, not its last report.
        let done = text(&tool_call(
            &ToolView {
                status: ToolStatus::Ok,
                output: "indexed",
                ..view
            },
            60,
            &Theme::colored(),
        ));
        assert!(done.iter().all(|l| !l.contains('⋯')), "{done:?}");
        // A message that reached the client unclean (a pod older than the cleaning) still
        // cannot steer the terminal.
        let raw = ToolProgress {
            progress: 1.0,
            total: None,
            message: Some("\u{1b}]0;pwned\u{7}\u{1b}[2Jok\nnext".into()),
        };
        let lines = text(&tool_call(
            &ToolView {
                progress: Some(&raw),
                ..view
            },
            60,
            &Theme::colored(),
        ));
        assert!(!lines[1].chars().any(char::is_control), "{lines:?}");
        assert!(lines[1].ends_with("ok next"), "{lines:?}");
    }

    #[test]
    fn a_failed_command_shows_how_it_ended_in_its_header() {
        let failed = header_text(ToolStatus::Error, Some("exit 2"));
        assert!(
            failed.starts_with("▸ ✗ shell make test · exit 2 · "),
            "{failed}"
        );
        let ok = header_text(ToolStatus::Ok, None);
        assert!(!ok.contains("exit"), "{ok}");
        // An outcome cannot smuggle a control sequence or a line break into the header.
        let hostile = header_text(ToolStatus::Error, Some("exit\n\u{1b}[2J1"));
        assert!(
            !hostile.contains('\u{1b}') && !hostile.contains('\n'),
            "{hostile:?}"
        );
    }
}
