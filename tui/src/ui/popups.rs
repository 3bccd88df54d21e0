//! Popups drawn over the screen: completion (above the composer), help, the stop
//! confirmation and the pod picker (centred).

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph};
use seedpod_client::pods::ago;
use seedpod_protocol::{PodName, SLASH_COMMANDS};
use seedpod_transcript::{Role, Theme};
use unicode_width::UnicodeWidthStr;

use super::fit;
use crate::app::{App, Overlay, Popup};
use crate::picker::Picker;

/// Draw what is open; `above` is the area the completion popup grows up from the bottom of.
pub fn draw(frame: &mut Frame, app: &App, above: Rect) {
    if let Some(popup) = &app.popup
        && !popup.is_empty()
    {
        completion(frame, &app.theme, popup, above);
    }
    match &app.overlay {
        Overlay::None | Overlay::Search(_) | Overlay::Find(_) => {}
        Overlay::Help(top) => help(frame, &app.theme, *top),
        Overlay::ConfirmStop => confirm_stop(frame, &app.theme, &app.pod),
        Overlay::Picker(picker) => pods(frame, &app.theme, picker),
        Overlay::Approvals(standing) => approvals(frame, &app.theme, standing),
        Overlay::Mcp(popup) => mcp_servers(frame, &app.theme, popup),
        Overlay::Text { title, text, top } => text_popup(frame, &app.theme, title, text, *top),
        Overlay::Turns(picker) => super::branch::turns(frame, &app.theme, picker),
        Overlay::Rewind(confirm) => super::branch::rewind(frame, &app.theme, confirm),
    }
}

/// A listing from the pod, wrapped to the popup's width (up to 100 columns) and scrolled.
fn text_popup(frame: &mut Frame, theme: &Theme, title: &str, text: &str, top: u16) {
    let area_width = frame.area().width.min(100);
    // Inside the borders and a column of padding each side: text never touches the box.
    let inner = area_width.saturating_sub(2 + 2 * PADDING).max(10);
    let mut lines: Vec<Line> = Vec::new();
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let style = if indent == 0 {
            theme.style(Role::Heading)
        } else {
            ratatui::style::Style::default()
        };
        for piece in super::words::wrap_indented(line, inner) {
            lines.push(Line::styled(piece, style));
        }
    }
    let height = (lines.len() as u16 + 2).min(frame.area().height);
    let visible = usize::from(height.saturating_sub(2));
    let top = usize::from(top).min(lines.len().saturating_sub(visible));
    let area = centred(frame.area(), area_width, height);
    frame.render_widget(Clear, area);
    let shown: Vec<Line> = lines.into_iter().skip(top).collect();
    let block = boxed(title, theme).padding(Padding::horizontal(PADDING));
    frame.render_widget(Paragraph::new(shown).block(block), area);
}

/// Columns between a popup's border and its text.
const PADDING: u16 = 1;

pub(super) fn boxed<'a>(title: &'a str, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::Dim))
        .title(Span::styled(
            format!(" {title} "),
            theme.style(Role::Heading),
        ))
}

/// A centred rectangle at most `width` × `height`, inside `area`.
pub(super) fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    rect
}

fn completion(frame: &mut Frame, theme: &Theme, popup: &Popup, above: Rect) {
    let (start, rows) = popup.window();
    let inner_width = rows
        .iter()
        .map(|(_, c)| c.value.width() + 3 + c.detail.width())
        .max()
        .unwrap_or(10)
        .clamp(16, 72) as u16;
    let width = (inner_width + 2).min(above.width);
    let height = (rows.len() as u16 + 2).min(above.height);
    let bottom = above.y + above.height;
    let area = Rect::new(above.x, bottom - height, width, height);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(i, (_, item))| {
            let selected = start + i == popup.selected;
            let mut spans = vec![Span::raw(format!("{}{}", popup.sigil, item.value))];
            if !item.detail.is_empty() {
                spans.push(Span::styled(
                    format!("  {}", item.detail),
                    theme.style(Role::Dim),
                ));
            }
            let line = Line::from(spans);
            if selected {
                line.style(theme.style(Role::Focus))
            } else {
                line
            }
        })
        .collect();
    let title = if popup.truncated {
        "more: keep typing"
    } else {
        "complete"
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(boxed(title, theme)), area);
}

fn help(frame: &mut Frame, theme: &Theme, top: u16) {
    const KEYS: &[(&str, &str)] = &[
        ("Enter", "send (queued while a turn runs)"),
        ("Shift-Enter Alt-Enter Ctrl-J", "new line"),
        ("Esc", "pause the running turn; again: cancel it"),
        ("Ctrl-C", "clear the composer; twice on empty: detach"),
        ("Ctrl-D", "detach (on an empty composer)"),
        ("Up/Down  Ctrl-R", "input history / search it"),
        (
            "PgUp/PgDn  Home/End",
            "scroll / top (then earlier), bottom (follow)",
        ),
        (
            "Alt-↑ Alt-↓",
            "previous / next turn ([ ] with a cell focused)",
        ),
        ("Tab  Enter", "focus a cell / expand it, or go into a child"),
        ("@  #  /", "complete files, knowledge, commands"),
        ("Ctrl-P", "pods (children under their parent)"),
        ("Ctrl-G", "go into the child pod that reported last"),
        ("Ctrl-O", "back to the pod you came from"),
        ("Ctrl-A", "show a hidden approval request"),
        ("Ctrl-T", "show or fold the model's task list"),
        ("Ctrl-S", "restore the pod when it is stopped"),
        ("Ctrl-X", "expand the paste chip at the cursor"),
        (
            "Ctrl-F  n  N",
            "find in the transcript, older / newer match",
        ),
        ("y  a  n", "approve, always (confirm), deny — after 0.4s"),
        ("↑↓", "scroll an edit's diff in the approval modal"),
    ];
    let commands: Vec<(String, &str)> = SLASH_COMMANDS
        .iter()
        .map(|(name, what)| (format!("/{name}"), *what))
        .collect();
    let key_width = KEYS
        .iter()
        .map(|(key, _)| key.width())
        .chain(commands.iter().map(|(key, _)| key.width()))
        .max()
        .unwrap_or(0)
        + 2;
    // As wide as the screen allows (up to 100 columns); descriptions wrap under themselves
    // rather than being cut.
    let area_width = frame.area().width.min(100);
    let text_width = usize::from(area_width.saturating_sub(2 + 2 * PADDING))
        .saturating_sub(key_width)
        .max(10);
    let mut lines: Vec<Line> = Vec::new();
    for (key, what) in KEYS.iter().map(|(k, w)| (k.to_string(), *w)) {
        lines.extend(key_lines(theme, &key, what, key_width, text_width));
    }
    lines.push(Line::raw(""));
    for (key, what) in &commands {
        lines.extend(key_lines(theme, key, what, key_width, text_width));
    }
    let height = (lines.len() as u16 + 2).min(frame.area().height);
    let visible = height.saturating_sub(2);
    let top = top.min((lines.len() as u16).saturating_sub(visible));
    let area = centred(frame.area(), area_width, height);
    let title = if lines.len() as u16 > visible {
        "help · ↑↓ scroll"
    } else {
        "help"
    };
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((top, 0))
            .block(boxed(title, theme).padding(Padding::horizontal(PADDING))),
        area,
    );
}

/// A key and its description, the description word-wrapped to `text_width` and indented
/// under itself.
fn key_lines(
    theme: &Theme,
    key: &str,
    what: &str,
    key_width: usize,
    text_width: usize,
) -> Vec<Line<'static>> {
    let mut rows: Vec<String> = vec![String::new()];
    for word in what.split(' ') {
        let current = rows.last_mut().map(|r| r.width()).unwrap_or(0);
        let needed = if current == 0 {
            word.width()
        } else {
            current + 1 + word.width()
        };
        if current > 0 && needed > text_width {
            rows.push(String::new());
        }
        if let Some(row) = rows.last_mut() {
            if !row.is_empty() {
                row.push(' ');
            }
            row.push_str(word);
        }
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let label = if i == 0 { key } else { "" };
            let pad = key_width.saturating_sub(label.width());
            Line::from(vec![
                Span::styled(
                    format!("{label}{}", " ".repeat(pad)),
                    theme.style(Role::Code),
                ),
                Span::raw(row),
            ])
        })
        .collect()
}

fn approvals(frame: &mut Frame, theme: &Theme, standing: &crate::app::Standing) {
    let lines: Vec<Line> = match &standing.rules {
        None => vec![Line::styled("asking the pod…", theme.style(Role::Dim))],
        Some(rules) if rules.is_empty() => vec![
            Line::raw("No standing approvals."),
            Line::styled(
                "Answering `a` on an approval makes one; it shows here, and d revokes it.",
                theme.style(Role::Dim),
            ),
        ],
        Some(rules) => rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                let text: String = rule
                    .display()
                    .chars()
                    .map(|c| if c.is_control() { '⏎' } else { c })
                    .collect();
                let line = Line::raw(format!("{:>3}  {text}", i + 1));
                if i == standing.selected {
                    line.style(theme.style(Role::Focus))
                } else {
                    line
                }
            })
            .collect(),
    };
    let width = lines
        .iter()
        .map(|l| l.width() as u16 + 4)
        .max()
        .unwrap_or(40)
        .clamp(40, 100);
    let area = centred(frame.area(), width, lines.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(boxed("standing approvals", theme)),
        area,
    );
}

/// `/mcp`: each server's block as `seedpod mcp ls` prints it, the selected one's head marked,
/// scrolled so that head is in view.
fn mcp_servers(frame: &mut Frame, theme: &Theme, popup: &crate::app::McpPopup) {
    let area_width = frame.area().width.min(100);
    let inner = area_width.saturating_sub(2 + 2 * PADDING).max(10);
    let mut lines: Vec<Line> = Vec::new();
    let mut selected_at = 0;
    match &popup.servers {
        None => lines.push(Line::styled("asking the pod…", theme.style(Role::Dim))),
        Some(servers) if servers.is_empty() => {
            for line in seedpod_protocol::mcp::render_servers(&[]).lines() {
                lines.extend(
                    super::words::wrap_indented(line, inner)
                        .into_iter()
                        .map(Line::raw),
                );
            }
        }
        Some(servers) => {
            for (i, server) in servers.iter().enumerate() {
                let block = seedpod_protocol::mcp::render_servers(std::slice::from_ref(server));
                let chosen = i == popup.selected;
                if chosen {
                    selected_at = lines.len();
                }
                for (n, line) in block.lines().enumerate() {
                    let (text, style) = match (n, chosen) {
                        (0, true) => (format!("▸ {line}"), theme.style(Role::Focus)),
                        (0, false) => (format!("  {line}"), theme.style(Role::Heading)),
                        _ => (format!("  {line}"), ratatui::style::Style::default()),
                    };
                    for piece in super::words::wrap_indented(&text, inner) {
                        lines.push(Line::styled(piece, style));
                    }
                }
            }
        }
    }
    let height = (lines.len() as u16 + 2).min(frame.area().height);
    let visible = usize::from(height.saturating_sub(2)).max(1);
    let top = selected_at
        .saturating_sub(visible / 2)
        .min(lines.len().saturating_sub(visible));
    let area = centred(frame.area(), area_width, height);
    frame.render_widget(Clear, area);
    let shown: Vec<Line> = lines.into_iter().skip(top).collect();
    let block = boxed("MCP servers", theme).padding(Padding::horizontal(PADDING));
    frame.render_widget(Paragraph::new(shown).block(block), area);
}

fn confirm_stop(frame: &mut Frame, theme: &Theme, pod: &PodName) {
    let lines = vec![
        Line::raw(format!("Stop pod {pod}?")),
        Line::styled(
            format!("`seedpod start {pod}` restores it exactly from its log."),
            theme.style(Role::Dim),
        ),
        Line::raw(""),
        Line::from(vec![
            Span::styled("y", theme.style(Role::Warn)),
            Span::raw(" stop it   "),
            Span::styled("n", theme.style(Role::Ok)),
            Span::raw(" keep it running"),
        ]),
    ];
    let width = lines.iter().map(Line::width).max().unwrap_or(20) as u16 + 4;
    let area = centred(frame.area(), width, lines.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(boxed("stop", theme)), area);
}

/// The name column: the tree's guides and the name, cut to fit.
const NAME_COLUMN: u16 = 24;

/// The narrowest the state column is (`unresponsive`).
const MIN_STATE_COLUMN: usize = 12;

/// The picker's keys, on its bottom border: the box covers the middle of the screen, where the
/// eye is, and the footer alone was missed.
const PICKER_KEYS: &str = " ↑↓ choose · Enter attach · r refresh · Esc close ";

fn pods(frame: &mut Frame, theme: &Theme, picker: &Picker) {
    let screen = frame.area();
    let width = screen.width.saturating_sub(4).min(100);
    let inner = width.saturating_sub(2);
    // As wide as the longest state listed (`waiting_for_approval`), so every row's columns
    // line up whatever its state.
    let state_column = picker
        .rows
        .iter()
        .flatten()
        .map(|row| row.pod.state().len())
        .max()
        .unwrap_or(0)
        .max(MIN_STATE_COLUMN);
    let mut lines: Vec<Line> = match &picker.rows {
        None => vec![Line::styled("listing pods…", theme.style(Role::Dim))],
        Some(rows) if rows.is_empty() => vec![Line::styled(
            "no pods yet; `seedpod start` creates one",
            theme.style(Role::Dim),
        )],
        Some(rows) => rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let pod = &row.pod;
                let marker = if pod.name == picker.current {
                    "●"
                } else {
                    " "
                };
                let activity = pod
                    .last_activity_ms
                    .map(|ms| ago(ms, picker.listed_at))
                    .unwrap_or_else(|| "-".into());
                let name = fit(&format!("{}{}", row.guide, pod.name), NAME_COLUMN);
                let pad = usize::from(NAME_COLUMN).saturating_sub(name.width());
                let text = format!(
                    "{marker} {name}{:pad$} {:<state_column$} {:>8}  {}",
                    "",
                    pod.state(),
                    activity,
                    pod.cwd().display()
                );
                let line = Line::raw(fit(&text, inner));
                if i == picker.selected {
                    line.style(theme.style(Role::Focus))
                } else {
                    line
                }
            })
            .collect(),
    };
    // The line the selection is on (host headings take lines of their own).
    let mut selected_line = picker.selected;
    let local = picker.rows.as_ref().map_or(0, Vec::len);
    let mut index = local;
    for group in &picker.hosts {
        if index <= picker.selected {
            selected_line += 1;
        }
        lines.push(Line::styled(
            fit(&format!("── {} ", group.host), inner),
            theme.style(Role::Heading),
        ));
        match &group.pods {
            None => {
                if index <= picker.selected {
                    selected_line += 1;
                }
                lines.push(Line::styled("  listing…", theme.style(Role::Dim)));
            }
            Some(Err(why)) => {
                if index <= picker.selected {
                    selected_line += 1;
                }
                lines.push(Line::styled(
                    fit(&format!("  unreachable: {why}"), inner),
                    theme.style(Role::Warn),
                ));
            }
            Some(Ok(pods)) if pods.is_empty() => {
                if index <= picker.selected {
                    selected_line += 1;
                }
                lines.push(Line::styled("  no pods", theme.style(Role::Dim)));
            }
            Some(Ok(pods)) => {
                for pod in pods {
                    let name = fit(pod.name.as_str(), NAME_COLUMN);
                    let pad = usize::from(NAME_COLUMN).saturating_sub(name.width());
                    let text = format!("  {name}{:pad$} {:<12} {}", "", pod.state, pod.cwd);
                    let line = Line::raw(fit(&text, inner));
                    lines.push(if index == picker.selected {
                        line.style(theme.style(Role::Focus))
                    } else {
                        line
                    });
                    index += 1;
                }
            }
        }
    }
    let height = (lines.len() as u16 + 2).min(screen.height.saturating_sub(2));
    // Scrolled just enough to keep the selection in the box.
    let rows = usize::from(height.saturating_sub(2)).max(1);
    let scroll = selected_line.saturating_sub(rows - 1) as u16;
    let area = centred(screen, width, height);
    frame.render_widget(Clear, area);
    let keys = Line::styled(PICKER_KEYS, theme.style(Role::Dim));
    let list = Paragraph::new(lines)
        .block(boxed("pods", theme).title_bottom(keys))
        .scroll((scroll, 0));
    frame.render_widget(list, area);
}
