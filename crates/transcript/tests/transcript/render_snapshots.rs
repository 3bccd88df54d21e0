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
        progress: None,
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

/// Two segments made within a minute (UUIDv7 ids sharing their time prefix) get different
/// labels: the label shows the id's random tail.
#[test]
fn segments_made_a_minute_apart_have_different_labels() {
    use seedpod_protocol::SegmentId;
    use seedpod_transcript::SegmentOrigin;
    let start = |id: &str| {
        crate::support::cell(CellKind::SegmentStart {
            segment_id: SegmentId::new(id),
            provider: "openai".into(),
            model: "gpt-4o".into(),
            origin: SegmentOrigin::CompactedFrom(SegmentId::new(
                "01a2146a-0000-7000-8000-000000000000",
            )),
        })
    };
    let first = at_widths(&start("01a2146b-3c4d-7e5f-9a8b-1c2d3e4f5a6b"));
    let second = at_widths(&start("01a2146b-77aa-7e5f-8c01-9f8e7d6c5b4a"));
    assert_ne!(first, second);
    assert!(
        first.contains("3e4f5a6b") && second.contains("7d6c5b4a"),
        "{first}{second}"
    );
    insta::assert_snapshot!("segment_labels_a_minute_apart", format!("{first}{second}"));
}

/// A `grep` call's header says what it searched for, not only where (`grep .`).
#[test]
fn grep_header_shows_the_pattern() {
    let cell = crate::support::cell(CellKind::ToolCall {
        call_id: CallId::new("c"),
        name: "grep".into(),
        arguments: r#"{"path":".","pattern":"fn render_frame"}"#.into(),
        status: ToolStatus::Ok,
        output: "tui/src/ui/mod.rs:12:fn render_frame(".into(),
        duration_ms: Some(40),
        outcome: None,
        progress: None,
    });
    let text = at_widths(&cell);
    assert_eq!(text.matches("grep fn render_frame").count(), 3, "{text}");
    insta::assert_snapshot!("tool_grep_header", text);
}
