//! Every renderer at widths 40, 80 and 120 (plain theme, so the snapshots show layout; colours
//! are checked by the assertions in `render_rules.rs`).

use crate::support::{at_widths, every_cell, expanded, long_output};
use seedpod_protocol::CallId;
use seedpod_transcript::{CellKind, Theme, ToolStatus, cell_lines};

#[test]
fn every_cell_kind_at_three_widths() {
    for (name, cell) in every_cell() {
        insta::assert_snapshot!(name, at_widths(&cell));
    }
}

#[test]
fn tool_output_of_2000_lines_expanded() {
    let cell = expanded(CellKind::ToolCall {
        call_id: CallId::new("c"),
        name: "shell".into(),
        arguments: r#"{"command":"cargo build -vv"}"#.into(),
        status: ToolStatus::Ok,
        output: long_output(2000),
        duration_ms: Some(65_000),
        outcome: None,
    });
    let text = at_widths(&cell);
    // Every output line is there at every width (wrapped at 40, so more rows there).
    assert!(text.lines().count() > 6_000);
    for n in [1, 1000, 2000] {
        let needle = format!("line {n:>4}:");
        assert_eq!(text.matches(&needle).count(), 3, "{needle}");
    }
    // The snapshot keeps each width's head and tail; the middle is the same pattern.
    insta::assert_snapshot!("tool_2000_lines_expanded", abbreviate(&text));
}

/// Each width section's first 8 and last 4 rows, with a count of what was left out.
fn abbreviate(text: &str) -> String {
    let mut out = String::new();
    for section in text.split("── width ").filter(|s| !s.is_empty()) {
        let rows: Vec<&str> = section.lines().collect();
        out.push_str("── width ");
        out.push_str(rows[0]);
        out.push('\n');
        let body = &rows[1..];
        for row in body.iter().take(8) {
            out.push_str(row);
            out.push('\n');
        }
        out.push_str(&format!("[… {} rows …]\n", body.len().saturating_sub(12)));
        for row in &body[body.len().saturating_sub(4)..] {
            out.push_str(row);
            out.push('\n');
        }
    }
    out
}

#[test]
fn narrow_widths_still_render_every_kind() {
    for (name, cell) in every_cell() {
        for width in [1u16, 2, 5, 12] {
            let lines = cell_lines(&cell, width, &Theme::colored());
            assert!(!lines.is_empty(), "{name} at {width} drew nothing");
        }
    }
}
