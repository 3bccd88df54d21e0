//! The transcript widget on a whole `TestBackend` screen: following the tail, scrolling away
//! from it with the "N new below" marker, paging, jumping, focus, resize, and laying out only
//! what is on screen.

use crate::support::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use seedpod_protocol::{EventSeq, PodState, ServerMsg};
use seedpod_transcript::{Theme, Transcript, TranscriptView, ViewState};

/// A transcript of `n` one-line user inputs, `message 1` … `message n`.
fn messages(n: u64) -> Transcript {
    let mut t = Transcript::new();
    t.apply(&snapshot_begin(0, PodState::Idle));
    t.apply(&ServerMsg::SnapshotEnd {
        seq: EventSeq::new(0),
    });
    for i in 1..=n {
        t.apply(&committed(i, entry(i, user_text(&format!("message {i}")))));
    }
    t
}

fn push(t: &mut Transcript, i: u64) {
    t.apply(&committed(i, entry(i, user_text(&format!("message {i}")))));
}

struct Screen {
    terminal: Terminal<TestBackend>,
    theme: Theme,
}

impl Screen {
    fn new(width: u16, height: u16) -> Screen {
        Screen {
            terminal: Terminal::new(TestBackend::new(width, height)).expect("test backend"),
            theme: Theme::plain(),
        }
    }

    fn draw(&mut self, transcript: &Transcript, state: &mut ViewState) -> String {
        let theme = &self.theme;
        self.terminal
            .draw(|frame| {
                let view = TranscriptView { transcript, theme };
                frame.render_stateful_widget(view, frame.area(), state);
            })
            .expect("draw");
        screen(self.terminal.backend().buffer())
    }
}

#[test]
fn follows_the_tail_as_cells_arrive() {
    let mut t = messages(20);
    let mut state = ViewState::new();
    let mut screen = Screen::new(30, 7);
    let first = screen.draw(&t, &mut state);
    insta::assert_snapshot!("tail", first);
    assert!(state.is_following());
    assert!(first.contains("message 20"));
    push(&mut t, 21);
    let second = screen.draw(&t, &mut state);
    assert!(second.contains("message 21"));
    assert!(!second.contains("message 17"));
    assert_eq!(state.new_below(), 0);
    assert_eq!(state.visible_cells(), 17..21);
}

#[test]
fn scrolled_up_shows_how_many_new_cells_are_below() {
    let mut t = messages(20);
    let mut state = ViewState::new();
    let mut screen = Screen::new(30, 7);
    screen.draw(&t, &mut state);
    state.scroll_up(4);
    assert!(!state.is_following());
    let scrolled = screen.draw(&t, &mut state);
    assert!(!state.is_following());
    assert!(scrolled.contains("message 16"));
    assert!(scrolled.contains("↓ more below"));
    assert!(!scrolled.contains("message 19"));
    push(&mut t, 21);
    push(&mut t, 22);
    let marked = screen.draw(&t, &mut state);
    insta::assert_snapshot!("scrolled_up_with_new_below", marked);
    assert_eq!(state.new_below(), 2);
    assert!(marked.contains("↓ 2 new below"));
    // The view stayed where the reader left it; only the marker row changed.
    let rows = |s: &str| s.lines().take(6).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(rows(&marked), rows(&scrolled));
    state.end();
    let back = screen.draw(&t, &mut state);
    assert!(state.is_following());
    assert!(back.contains("message 22"));
    assert!(!back.contains("new below"));
}

#[test]
fn scrolling_down_to_the_bottom_follows_again() {
    let t = messages(20);
    let mut state = ViewState::new();
    let mut screen = Screen::new(30, 7);
    screen.draw(&t, &mut state);
    state.scroll_up(5);
    screen.draw(&t, &mut state);
    assert!(!state.is_following());
    state.scroll_down(100);
    screen.draw(&t, &mut state);
    assert!(state.is_following());
}

#[test]
fn paging_home_and_jumping() {
    let t = messages(50);
    let mut state = ViewState::new();
    let mut screen = Screen::new(30, 10);
    screen.draw(&t, &mut state);
    state.home();
    let top = screen.draw(&t, &mut state);
    assert!(top.starts_with("› message 1 "), "{top}");
    assert_eq!(state.visible_cells().start, 0);
    state.page_down();
    screen.draw(&t, &mut state);
    // A page is the screen less two rows of context: 8 rows = 4 two-row cells.
    assert_eq!(state.visible_cells().start, 4);
    state.page_up();
    screen.draw(&t, &mut state);
    assert_eq!(state.visible_cells().start, 0);
    state.jump_to_cell(30);
    let jumped = screen.draw(&t, &mut state);
    assert!(jumped.starts_with("› message 31 "), "{jumped}");
    assert_eq!(state.visible_cells().start, 30);
    // Jumping near the end shows the tail and follows it.
    state.jump_to_cell(49);
    screen.draw(&t, &mut state);
    assert!(state.is_following());
}

#[test]
fn focus_highlights_and_reveals_its_cell() {
    let t = messages(40);
    let mut state = ViewState::new();
    let mut screen = Screen::new(30, 6);
    screen.draw(&t, &mut state);
    state.set_focus(Some(5));
    let shown = screen.draw(&t, &mut state);
    assert!(shown.contains("message 6 "), "{shown}");
    assert_eq!(state.focused(), Some(5));
    let buffer = screen.terminal.backend().buffer().clone();
    let row = (0..6)
        .find(|y| {
            (0..30)
                .map(|x| buffer[(x, *y)].symbol())
                .collect::<String>()
                .contains("message 6 ")
        })
        .expect("focused row on screen");
    assert!(
        buffer[(0, row)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    );
}

#[test]
fn resize_reflows_without_losing_the_tail() {
    let mut t = messages(3);
    t.apply(&committed(4, entry(4, answer(&format!("{CJK} {CJK}")))));
    let mut state = ViewState::new();
    let wide = Screen::new(80, 12).draw(&t, &mut state);
    let narrow = Screen::new(20, 12).draw(&t, &mut state);
    assert!(state.is_following());
    assert!(wide.contains("two columns wide."));
    assert!(narrow.contains("wide."));
    for row in narrow.lines() {
        assert!(unicode_width::UnicodeWidthStr::width(row) <= 21, "{row}");
    }
}

#[test]
fn a_frame_lays_out_only_what_is_on_screen() {
    let t = messages(10_000);
    let mut state = ViewState::new();
    let mut screen = Screen::new(120, 40);
    screen.draw(&t, &mut state);
    assert!(
        state.cached_lines() <= 40,
        "{} lines cached",
        state.cached_lines()
    );
    state.home();
    screen.draw(&t, &mut state);
    assert!(
        state.cached_lines() <= 80,
        "{} lines cached",
        state.cached_lines()
    );
}

#[test]
fn the_cache_stays_bounded_while_reading_the_whole_transcript() {
    let t = messages(10_000);
    let mut state = ViewState::new();
    let mut screen = Screen::new(60, 40);
    state.home();
    screen.draw(&t, &mut state);
    while !state.is_following() {
        state.page_down();
        screen.draw(&t, &mut state);
    }
    // Every cell was laid out once on the way down; far fewer are still held.
    assert!(
        state.cached_lines() <= 8_000 + 40,
        "{}",
        state.cached_lines()
    );
    assert!(state.cached_lines() >= 40);
}

/// A hostile corpus at three widths, checked cell by cell. No cell of the drawn
/// buffer holds more than a terminal draws in that many columns (its characters' widths add up
/// to at most the cell's width), so no glyph spills into the next cell or vanishes under it;
/// and every glyph of the corpus is on screen.
#[test]
fn a_hostile_corpus_draws_cell_for_cell_as_terminals_do() {
    use unicode_width::UnicodeWidthChar;
    let corpus = [
        "flags 🇫🇷🇯🇵🇺🇸 end",
        "tones 👍🏽👋🏿 end",
        "family 👨\u{200D}👩\u{200D}👧 and 🏳\u{FE0F}\u{200D}🌈 end",
        "marks e\u{301}a\u{308}o\u{302}\u{323} end",
        "wide 日本語のテキスト、中文 end",
        "mixed 👍🏽日本🇯🇵e\u{301}👨\u{200D}💻 end",
    ];
    for width in [20u16, 33, 80] {
        let mut t = Transcript::new();
        t.apply(&snapshot_begin(0, PodState::Idle));
        t.apply(&ServerMsg::SnapshotEnd {
            seq: EventSeq::new(0),
        });
        for (i, line) in corpus.iter().enumerate() {
            let seq = i as u64 + 1;
            t.apply(&committed(seq, entry(seq, user_text(line))));
        }
        let mut state = ViewState::new();
        let mut screen = Screen::new(width, 40);
        screen.draw(&t, &mut state);
        let buffer = screen.terminal.backend().buffer().clone();
        let mut drawn = String::new();
        for y in 0..buffer.area.height {
            let mut x = 0;
            while x < buffer.area.width {
                let symbol = buffer[(x, y)].symbol();
                let cell_width = unicode_width::UnicodeWidthStr::width(symbol).max(1);
                let terminal_width: usize = symbol.chars().map(|c| c.width().unwrap_or(0)).sum();
                // Wider than its cell, a glyph covers the next one (or is covered by it). A
                // narrower one (a text-style symbol with VS16) leaves a blank column, since
                // ratatui places the cell after a wide one by moving the cursor.
                assert!(
                    terminal_width <= cell_width,
                    "width {width}, row {y}, column {x}: {symbol:?} is {cell_width} cell(s) \
                     to ratatui but {terminal_width} column(s) to a terminal"
                );
                drawn.push_str(symbol);
                x += cell_width as u16;
            }
        }
        for glyph in ['🏽', '🏿', '👩', '👧', '🌈', '💻', '\u{323}', '中'] {
            assert!(
                drawn.contains(glyph),
                "width {width}: {glyph:?} missing from\n{drawn}"
            );
        }
    }
}
