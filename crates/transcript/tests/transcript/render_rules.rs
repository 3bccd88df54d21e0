//! Rules every renderer keeps whatever the content: no line wider than the width (CJK, emoji,
//! tabs, escapes, tables), and the colour policy (errors in the error colour, no colour under
//! the plain theme).

use crate::support::{CJK, WIDE_TABLE, cell, every_cell, expanded};
use ratatui::style::Color;
use seedpod_protocol::CallId;
use seedpod_transcript::{CellKind, Role, Theme, ToolStatus, cell_lines};

fn drawn_width(line: &ratatui::text::Line<'_>) -> usize {
    use unicode_segmentation::UnicodeSegmentation;
    line.spans
        .iter()
        .flat_map(|s| s.content.graphemes(true))
        .map(unicode_width::UnicodeWidthStr::width)
        .sum()
}

/// Every narrow width, where prefixes and wide characters collide.
const NARROW: std::ops::RangeInclusive<u16> = 1..=16;
/// Then a spread of wider ones.
const WIDE: [u16; 9] = [20, 24, 33, 40, 57, 80, 99, 120, 130];

/// No line of any cell kind, folded or expanded, is wider than `widths` in `theme`. Split by
/// theme and width into four tests that run in parallel: together they took half a minute.
fn no_line_is_wider_than(theme: &Theme, widths: impl Iterator<Item = u16> + Clone) {
    let mut cells = every_cell();
    for (name, cell) in every_cell() {
        if cell.is_toggleable() {
            let mut open = cell.clone();
            open.expanded = true;
            cells.push((name, open));
        }
    }
    for (name, cell) in &cells {
        for width in widths.clone() {
            for line in cell_lines(cell, width, theme) {
                let w = usize::from(width);
                assert!(
                    line.width() <= w && drawn_width(&line) <= w,
                    "{name} at width {width}: {:?} is {} wide",
                    line.to_string(),
                    line.width()
                );
            }
        }
    }
}

#[test]
fn no_line_is_wider_than_a_narrow_width_plain() {
    no_line_is_wider_than(&Theme::plain(), NARROW);
}

#[test]
fn no_line_is_wider_than_a_narrow_width_colored() {
    no_line_is_wider_than(&Theme::colored(), NARROW);
}

#[test]
fn no_line_is_wider_than_a_wide_width_plain() {
    no_line_is_wider_than(&Theme::plain(), WIDE.into_iter());
}

#[test]
fn no_line_is_wider_than_a_wide_width_colored() {
    no_line_is_wider_than(&Theme::colored(), WIDE.into_iter());
}

#[test]
fn wide_table_keeps_its_columns_aligned_at_width_40() {
    let cell = cell(CellKind::AssistantText {
        text: WIDE_TABLE.into(),
        streaming: false,
        interrupted: false,
    });
    let lines = cell_lines(&cell, 40, &Theme::plain());
    assert!(lines.iter().all(|l| l.width() <= 40));
    // Six columns cannot shrink into 40 columns, so rows are stacked as `header: value`.
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    assert!(
        text.iter()
            .any(|l| l.starts_with("name: seedpod-transcript")),
        "{text:#?}"
    );
    // At 120 it is a grid: every row has its separators at the same columns.
    let lines = cell_lines(&cell, 120, &Theme::plain());
    let positions: Vec<Vec<usize>> = lines
        .iter()
        .map(|l| l.to_string())
        .filter(|l| l.contains('│'))
        .map(|l| {
            l.char_indices()
                .filter(|(_, c)| *c == '│')
                .map(|(i, _)| l[..i].chars().count())
                .collect()
        })
        .collect();
    assert!(positions.len() >= 4);
    assert!(positions.windows(2).all(|w| w[0] == w[1]), "{positions:?}");
}

#[test]
fn cjk_wraps_without_overflow() {
    let cell = cell(CellKind::AssistantText {
        text: CJK.into(),
        streaming: false,
        interrupted: false,
    });
    for width in [7u16, 10, 40] {
        let lines = cell_lines(&cell, width, &Theme::plain());
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.width() <= usize::from(width)));
    }
}

#[test]
fn tool_errors_use_the_error_colour() {
    let theme = Theme::colored();
    let cell = expanded(CellKind::ToolCall {
        call_id: CallId::new("c"),
        name: "read_file".into(),
        arguments: "{}".into(),
        status: ToolStatus::Error,
        output: "no such file".into(),
        duration_ms: None,
        outcome: None,
        progress: None,
    });
    let lines = cell_lines(&cell, 80, &theme);
    let error = theme.style(Role::Error);
    assert_eq!(error.fg, Some(Color::Red));
    let output = lines
        .iter()
        .flat_map(|l| &l.spans)
        .find(|s| s.content.contains("no such file"))
        .expect("the output is drawn");
    assert_eq!(output.style, error);
    let glyph = lines[0]
        .spans
        .iter()
        .find(|s| s.content.contains('✗'))
        .expect("error glyph");
    assert_eq!(glyph.style.fg, Some(Color::Red));
}

#[test]
fn plain_theme_draws_no_colour_at_all() {
    for (name, cell) in every_cell() {
        for line in cell_lines(&cell, 80, &Theme::plain()) {
            for span in &line.spans {
                assert!(
                    span.style.fg.is_none() && span.style.bg.is_none(),
                    "{name}: {:?} has a colour",
                    span.content
                );
            }
        }
    }
}

#[test]
fn colours_are_named_ansi_on_the_default_background() {
    for (name, cell) in every_cell() {
        for line in cell_lines(&cell, 80, &Theme::colored()) {
            for span in &line.spans {
                assert!(span.style.bg.is_none(), "{name}: background set");
                assert!(
                    !matches!(
                        span.style.fg,
                        Some(Color::Rgb(..) | Color::Indexed(_) | Color::White | Color::Black)
                    ),
                    "{name}: {:?} uses {:?}",
                    span.content,
                    span.style.fg
                );
            }
        }
    }
}

#[test]
fn fenced_code_is_highlighted_when_coloured() {
    let cell = cell(CellKind::AssistantText {
        text: "```rust\nfn main() {}\n```".into(),
        streaming: false,
        interrupted: false,
    });
    let lines = cell_lines(&cell, 80, &Theme::colored());
    let keyword = Theme::colored().style(Role::SyntaxKeyword);
    // Line 0 is the block's language.
    assert!(
        lines[1]
            .spans
            .iter()
            .any(|s| s.content == "fn" && s.style == keyword)
    );
}

#[test]
fn notification_shows_its_message_not_its_body() {
    let cell = cell(CellKind::Notification {
        message: "deploy finished".into(),
    });
    let text: Vec<String> = cell_lines(&cell, 80, &Theme::plain())
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(text, ["◆ deploy finished"]);
}
