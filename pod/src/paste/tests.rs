use super::*;

fn paste(id: u32, content: &str) -> Segment {
    Segment::Paste {
        id,
        chars: content.chars().count(),
        lines: content.lines().count(),
        content: content.into(),
    }
}

/// A paste of `lines` numbered lines, each `width` characters long.
fn big(lines: usize, width: usize) -> String {
    (1..=lines)
        .map(|i| format!("{i:06}{}\n", "é".repeat(width.saturating_sub(6))))
        .collect()
}

#[test]
fn under_the_cap_nothing_changes() {
    let segments = [Segment::text("look: "), paste(1, "a\nb\n")];
    assert_eq!(model_text(&segments, 100), ("look: a\nb\n".into(), false));
}

#[test]
fn a_paste_over_the_cap_keeps_its_head_and_tail_and_the_typing_after_it() {
    let content = big(2_000, 80);
    let segments = [
        Segment::text("here is the log:\n"),
        paste(1, &content),
        Segment::text("\nsummarize this"),
    ];
    let (text, fitted) = model_text(&segments, 32_000);
    assert!(fitted);
    assert!(
        text.starts_with("here is the log:\n000001"),
        "{}",
        &text[..40]
    );
    assert!(text.ends_with("\nsummarize this"), "the typed text arrives");
    assert!(text.contains("002000"), "the tail is kept");
    assert!(!text.contains("001000"), "the middle is not inline");
    let key = paste_key(&content);
    assert!(
        text.contains(&format!("[paste {key}: 162,000 characters in 2,000 lines")),
        "{text}"
    );
    assert!(text.chars().count() < 32_000);
}

#[test]
fn typing_alone_over_the_cap_is_cut_with_the_note() {
    let typed = "x".repeat(200);
    let (text, fitted) = model_text(&[Segment::text(typed)], 100);
    assert!(fitted);
    assert!(
        text.contains("[truncated: this message had 200 characters"),
        "{text}"
    );
}

#[test]
fn keys_are_stable_and_tell_contents_apart() {
    assert_eq!(paste_key("hello"), paste_key("hello"));
    assert_ne!(paste_key("hello"), paste_key("hellp"));
    // Fixed by the algorithm, not by this build's std: an old log's names still resolve.
    assert_eq!(paste_key(""), "p-cbf29ce4");
    assert_eq!(paste_key("a").len(), 10);
}

#[test]
fn a_paste_is_read_back_by_lines_with_a_note_when_there_is_more() {
    let content = "one\ntwo\nthree\nfour\n";
    assert_eq!(
        lines_of(content, 1, 2),
        "     1\tone\n     2\ttwo\n[2 more lines; read_paste with offset 3 goes on]\n"
    );
    assert_eq!(lines_of(content, 4, 10), "     4\tfour\n");
    assert!(lines_of(content, 9, 1).contains("past its end"));
    // A call never returns more than its character budget, whatever the limit.
    let wide = big(2_000, 200);
    let out = lines_of(&wide, 1, 2_000);
    assert!(out.len() <= MAX_CALL_CHARS + 200, "{}", out.len());
    assert!(out.contains("more lines; read_paste with offset"));
}

#[test]
fn find_looks_in_the_persons_inputs_newest_first() {
    let entry = |seq: u64, kind: EntryKind| {
        Arc::new(Entry {
            v: 1,
            seq: seedpod_protocol::EntrySeq::new(seq),
            ts: 0,
            kind,
        })
    };
    let input = |content: &str| EntryKind::UserInput {
        segments: vec![Segment::text("x"), paste(1, content)],
        text: String::new(),
        queue_id: None,
    };
    let entries = vec![entry(1, input("first")), entry(2, input("second"))];
    assert_eq!(
        find(&entries, &paste_key("second")).as_deref(),
        Some("second")
    );
    assert_eq!(
        find(&entries, &paste_key("first")).as_deref(),
        Some("first")
    );
    assert_eq!(find(&entries, "p-00000000"), None);
}

#[test]
fn a_notification_within_the_cap_is_whole_and_a_longer_one_keeps_head_tail_and_its_name() {
    assert_eq!(within("ci is green", 200), "ci is green");
    let log = big(5_000, 40);
    let shown = within(&log, 4_000);
    assert!(shown.chars().count() <= 4_000, "{}", shown.chars().count());
    assert!(shown.starts_with("000001"), "the head stays");
    assert!(
        shown.trim_end().ends_with(&"é".repeat(34)),
        "the tail stays"
    );
    let key = paste_key(&log);
    let named = format!(
        "[notification {key}: {} characters in 5,000 lines",
        thousands(log.chars().count() as u64)
    );
    assert!(shown.contains(&named), "{named} in {shown}");
    assert!(shown.contains(&format!("read_paste with \"paste\": \"{key}\"")));
    // Exactly at the cap is whole; one more is shortened.
    let at_cap = "x".repeat(300);
    assert_eq!(within(&at_cap, 300), at_cap);
    assert_ne!(within(&format!("{at_cap}x"), 300), format!("{at_cap}x"));
}

#[test]
fn read_paste_finds_a_long_notification_kept_whole_in_the_log() {
    let message = big(100, 60);
    let entries = vec![Arc::new(Entry {
        v: 1,
        seq: seedpod_protocol::EntrySeq::new(1),
        ts: 0,
        kind: EntryKind::SystemItem {
            item: SystemItem::Notification {
                body: within(&message, 1_000),
                message: message.clone(),
            },
            queue_id: None,
        },
    })];
    assert_eq!(
        find(&entries, &paste_key(&message)).as_deref(),
        Some(message.as_str())
    );
}
