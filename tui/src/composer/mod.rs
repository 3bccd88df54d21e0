//! The composer: a multi-line `ratatui-textarea` plus what plain text cannot hold — paste chips
//! (`paste.rs`) and accepted completions, turned into typed segments on send (`segments.rs`).
//!
//! It only edits; which key does what is decided by `keys.rs` and the app.

pub mod paste;
pub mod segments;
mod wrap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};
use seedpod_protocol::Segment;
use seedpod_transcript::render::{join_emoji, split_emoji};

pub use self::paste::{Paste, PasteLimits};
pub use self::segments::{Reference, Sigil};
use crate::history::HistoryEntry;

/// Rows the composer may grow to before it scrolls inside itself.
pub const MAX_COMPOSER_ROWS: u16 = 8;

/// The token "sigil" of a `/model NAME` name being typed: no character a person types, so it
/// cannot collide with `@`, `#` or `/`. Completion popups show it as a space.
pub const MODEL_SIGIL: char = ' ';

const PLACEHOLDER: &str = "Message the pod · / commands · @ files · # knowledge";

/// A word being typed that completion can help with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// `@`, `#` or `/`; `MODEL_SIGIL` for the name after `/model `.
    pub sigil: char,
    /// What follows the sigil up to the cursor.
    pub prefix: String,
}

pub struct Composer {
    area: TextArea<'static>,
    /// Chips currently standing in the text; dropped when their label is deleted.
    pastes: Vec<Paste>,
    next_paste: u32,
    references: Vec<Reference>,
    /// How big a paste may be and still go in as text.
    paste_limits: PasteLimits,
}

impl Default for Composer {
    fn default() -> Self {
        Composer::new()
    }
}

fn new_area(lines: Vec<String>) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_cursor_line_style(Style::default());
    area.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
    area.set_placeholder_text(PLACEHOLDER);
    area.set_placeholder_style(Style::default().add_modifier(Modifier::DIM));
    area
}

impl Composer {
    pub fn new() -> Composer {
        Composer {
            area: new_area(Vec::new()),
            pastes: Vec::new(),
            next_paste: 1,
            references: Vec::new(),
            paste_limits: PasteLimits::default(),
        }
    }

    /// Set how big a paste may be and still go in as text (`[tui] inline_paste_*`).
    pub fn set_paste_limits(&mut self, limits: PasteLimits) {
        self.paste_limits = limits;
    }

    pub fn is_empty(&self) -> bool {
        self.area.is_empty()
    }

    /// What was typed. The text area holds emoji sequences split as the transcript draws them
    /// (`seedpod_transcript::render::split_emoji`), so both look the same in every terminal;
    /// this is the text joined back.
    pub fn text(&self) -> String {
        join_emoji(&self.area.lines().join("\n")).into_owned()
    }

    pub fn lines(&self) -> &[String] {
        self.area.lines()
    }

    pub fn pastes(&self) -> &[Paste] {
        &self.pastes
    }

    pub fn clear(&mut self) {
        let limits = self.paste_limits;
        *self = Composer::new();
        self.paste_limits = limits;
    }

    /// Replace the contents (history recall), cursor at the end.
    pub fn set(&mut self, entry: &HistoryEntry) {
        let lines = split_emoji(&entry.text)
            .split('\n')
            .map(str::to_string)
            .collect();
        self.area = new_area(lines);
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
        self.pastes = entry.pastes.clone();
        self.next_paste = self.pastes.iter().map(|p| p.id + 1).max().unwrap_or(1);
        self.references.clear();
    }

    /// What history keeps of the current input.
    pub fn entry(&self) -> HistoryEntry {
        HistoryEntry {
            text: self.text(),
            pastes: self.live_pastes(),
        }
    }

    /// The typed segments to send.
    pub fn segments(&self) -> Vec<Segment> {
        segments::to_segments(&self.text(), &self.live_pastes(), &self.references)
    }

    fn live_pastes(&self) -> Vec<Paste> {
        let text = self.text();
        self.pastes
            .iter()
            .filter(|p| text.contains(&p.label()))
            .cloned()
            .collect()
    }

    /// A bracketed paste: a chip when it is big, inline text otherwise. Returns the chip's
    /// label when one was made.
    pub fn paste(&mut self, raw: &str) -> Option<String> {
        let content = paste::normalise(raw);
        if !paste::wants_chip(&content, self.paste_limits) {
            self.area.insert_str(split_emoji(&content));
            return None;
        }
        let chip = Paste {
            id: self.next_paste,
            content,
        };
        self.next_paste += 1;
        let label = chip.label();
        self.area.insert_str(&label);
        self.pastes.push(chip);
        Some(label)
    }

    pub fn insert_newline(&mut self) {
        self.area.insert_newline();
    }

    pub fn insert_str(&mut self, text: &str) {
        self.area.insert_str(split_emoji(text));
    }

    /// An editing key. Backspace right after a chip (or Delete right before one) removes the
    /// whole chip: half a chip would silently turn into plain text.
    pub fn edit(&mut self, key: KeyEvent) -> bool {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if plain && key.code == KeyCode::Backspace && self.delete_chip_before() {
            return true;
        }
        if plain && key.code == KeyCode::Delete && self.delete_chip_after() {
            return true;
        }
        // A skin tone or a joiner typed after an emoji is split from it as the transcript
        // splits it, so the composer draws what the transcript will.
        if plain && let KeyCode::Char(c) = key.code {
            let (before, _) = self.line_split();
            let prev = before.chars().next_back().unwrap_or(' ').to_string();
            let alone = format!("{}{c}", split_emoji(&prev));
            let split = split_emoji(&format!("{prev}{c}")).into_owned();
            if split != alone
                && let Some(piece) = split.strip_prefix(split_emoji(&prev).as_ref())
            {
                self.area.insert_str(piece);
                return true;
            }
        }
        self.area.input(key)
    }

    fn line_split(&self) -> (String, String) {
        let (row, col) = self.cursor();
        let line = self.area.lines().get(row).cloned().unwrap_or_default();
        let split = line
            .char_indices()
            .nth(col)
            .map(|(i, _)| i)
            .unwrap_or(line.len());
        (line[..split].to_string(), line[split..].to_string())
    }

    /// Whether the cursor touches a chip (right after or right before its label).
    pub fn on_chip(&self) -> bool {
        let (before, after) = self.line_split();
        self.pastes
            .iter()
            .any(|p| before.ends_with(&p.label()) || after.starts_with(&p.label()))
    }

    /// Replace the chip the cursor touches with its text, to read and edit before sending.
    /// False when the cursor touches none.
    pub fn expand_chip(&mut self) -> bool {
        let (before, after) = self.line_split();
        let Some(index) = self
            .pastes
            .iter()
            .position(|p| before.ends_with(&p.label()))
        else {
            return match self
                .pastes
                .iter()
                .position(|p| after.starts_with(&p.label()))
            {
                Some(index) => {
                    let paste = self.pastes.remove(index);
                    self.area.delete_str(paste.label().chars().count());
                    self.area.insert_str(split_emoji(&paste.content));
                    true
                }
                None => false,
            };
        };
        let paste = self.pastes.remove(index);
        let chars = paste.label().chars().count();
        for _ in 0..chars {
            self.area.move_cursor(CursorMove::Back);
        }
        self.area.delete_str(chars);
        self.area.insert_str(split_emoji(&paste.content));
        true
    }

    fn delete_chip_before(&mut self) -> bool {
        let (before, _) = self.line_split();
        let Some(index) = self
            .pastes
            .iter()
            .position(|p| before.ends_with(&p.label()))
        else {
            return false;
        };
        let chars = self.pastes[index].label().chars().count();
        for _ in 0..chars {
            self.area.move_cursor(CursorMove::Back);
        }
        self.area.delete_str(chars);
        self.pastes.remove(index);
        true
    }

    fn delete_chip_after(&mut self) -> bool {
        let (_, after) = self.line_split();
        let Some(index) = self
            .pastes
            .iter()
            .position(|p| after.starts_with(&p.label()))
        else {
            return false;
        };
        self.area
            .delete_str(self.pastes[index].label().chars().count());
        self.pastes.remove(index);
        true
    }

    /// (row, column in chars).
    pub fn cursor(&self) -> (usize, usize) {
        let cursor = self.area.cursor();
        (cursor.0, cursor.1)
    }

    pub fn on_first_line(&self) -> bool {
        self.cursor().0 == 0
    }

    pub fn on_last_line(&self) -> bool {
        self.cursor().0 + 1 >= self.area.lines().len()
    }

    /// The completable word under the cursor: `@…` or `#…` anywhere, `/…` only as the very
    /// first word (elsewhere a slash is just a path or a fraction).
    pub fn token(&self) -> Option<Token> {
        let (row, _) = self.cursor();
        let (before, _) = self.line_split();
        // `/model NAME`: the name completes from the server's models.
        if row == 0
            && let Some(name) = before.strip_prefix("/model ")
            && !name.contains(char::is_whitespace)
        {
            return Some(Token {
                sigil: MODEL_SIGIL,
                prefix: name.to_string(),
            });
        }
        let start = before
            .rfind(char::is_whitespace)
            .map(|i| i + before[i..].chars().next().map_or(1, char::len_utf8))
            .unwrap_or(0);
        let word = &before[start..];
        let sigil = word.chars().next()?;
        let allowed = match sigil {
            '@' | '#' => true,
            '/' => row == 0 && start == 0,
            _ => false,
        };
        if !allowed {
            return None;
        }
        Some(Token {
            sigil,
            prefix: word[sigil.len_utf8()..].to_string(),
        })
    }

    /// Replace the token's prefix with `value`. A final choice is followed by a space and, when
    /// it names something (`reference`), recorded so it is sent as a typed segment; a directory
    /// is not final and keeps completing.
    pub fn accept(&mut self, value: &str, reference: Option<Sigil>, is_final: bool) {
        let Some(token) = self.token() else { return };
        let typed = token.prefix.chars().count();
        for _ in 0..typed {
            self.area.move_cursor(CursorMove::Back);
        }
        self.area.delete_str(typed);
        self.area.insert_str(value);
        if !is_final {
            return;
        }
        self.area.insert_char(' ');
        if let Some(sigil) = reference {
            self.references.push(Reference {
                sigil,
                value: value.to_string(),
            });
        }
    }

    /// Rows needed at `width` columns, soft-wrapped as the text area wraps (`wrap.rs`), between 1
    /// and `MAX_COMPOSER_ROWS`. A cursor after a full last row takes one more.
    pub fn height(&self, width: u16) -> u16 {
        let width = usize::from(width.max(1));
        let (cursor_row, cursor_col) = self.cursor();
        let rows: usize = self
            .area
            .lines()
            .iter()
            .enumerate()
            .map(|(row, line)| {
                let laid = wrap::layout(line, width);
                let cursor_at_end = row == cursor_row && cursor_col == line.chars().count();
                laid.rows + usize::from(cursor_at_end && laid.last_row >= width)
            })
            .sum();
        u16::try_from(rows)
            .unwrap_or(MAX_COMPOSER_ROWS)
            .clamp(1, MAX_COMPOSER_ROWS)
    }

    pub fn textarea(&self) -> &TextArea<'static> {
        &self.area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(text: &str) -> Composer {
        let mut composer = Composer::new();
        composer.insert_str(text);
        composer
    }

    #[test]
    fn big_pastes_become_chips_and_small_ones_stay_inline() {
        let mut composer = typed("look: ");
        assert_eq!(composer.paste("tiny"), None);
        let big = "line\r\n".repeat(40);
        let label = composer.paste(&big).expect("a chip");
        assert_eq!(label, "[Paste #1 · 200 chars · 40 lines]");
        assert_eq!(composer.text(), format!("look: tiny{label}"));
        let segments = composer.segments();
        assert_eq!(segments.len(), 2);
        assert!(
            matches!(&segments[1], Segment::Paste { id: 1, lines: 40, content, .. } if !content.contains('\r'))
        );
    }

    #[test]
    fn paste_limits_are_lines_and_characters() {
        let mut composer = Composer::new();
        assert_eq!(composer.paste("fn main() {\n    run();\n}\n"), None);
        assert_eq!(composer.text(), "fn main() {\n    run();\n}\n");
        let mut strict = Composer::new();
        strict.set_paste_limits(PasteLimits {
            lines: 1,
            chars: 100,
        });
        assert!(strict.paste("two\nlines").is_some());
        assert!(strict.paste(&"x".repeat(101)).is_some());
        assert_eq!(strict.paste("one line"), None);
    }

    #[test]
    fn a_chip_expands_into_its_text() {
        let mut composer = typed("see ");
        let content = "line\n".repeat(40);
        composer.paste(&content).expect("a chip");
        assert!(composer.on_chip());
        assert!(composer.expand_chip());
        assert_eq!(composer.text(), format!("see {content}"));
        assert!(composer.pastes().is_empty());
        assert!(!composer.expand_chip());
        assert_eq!(
            composer.segments(),
            vec![Segment::text(format!("see {content}"))]
        );
    }

    #[test]
    fn emoji_sequences_are_split_as_the_transcript_splits_them() {
        let typed = "A 👍🏽 B 👨\u{200D}👩\u{200D}👧 C";
        let mut composer = Composer::new();
        for c in typed.chars() {
            composer.edit(key(KeyCode::Char(c)));
        }
        assert_eq!(composer.text(), typed, "sent as typed");
        assert_eq!(
            composer.lines()[0],
            seedpod_transcript::render::sanitize(typed),
            "drawn as the transcript draws it"
        );
        let mut pasted = Composer::new();
        pasted.paste(typed);
        assert_eq!(pasted.text(), typed);
        assert_eq!(pasted.lines()[0], composer.lines()[0]);
    }

    #[test]
    fn backspace_after_a_chip_removes_all_of_it() {
        let mut composer = typed("a ");
        composer.paste(&"x".repeat(1_500));
        assert!(composer.edit(key(KeyCode::Backspace)));
        assert_eq!(composer.text(), "a ");
        assert!(composer.pastes().is_empty());
        assert!(composer.edit(key(KeyCode::Backspace)));
        assert_eq!(composer.text(), "a");
    }

    #[test]
    fn delete_before_a_chip_removes_all_of_it() {
        let mut composer = Composer::new();
        composer.paste(&"x".repeat(1_500));
        composer.area.move_cursor(CursorMove::Head);
        assert!(composer.edit(key(KeyCode::Delete)));
        assert!(composer.is_empty());
    }

    #[test]
    fn tokens_follow_the_cursor() {
        assert_eq!(
            typed("look at @src/ma").token(),
            Some(Token {
                sigil: '@',
                prefix: "src/ma".into()
            })
        );
        assert_eq!(typed("#sty").token().map(|t| t.sigil), Some('#'));
        assert_eq!(typed("/he").token().map(|t| t.prefix), Some("he".into()));
        assert_eq!(typed("a /he").token(), None, "slash only starts commands");
        assert_eq!(typed("plain").token(), None);
        assert_eq!(typed("ends with space @x ").token(), None);
    }

    #[test]
    fn accepting_a_completion_records_a_reference() {
        let mut composer = typed("read @src/ma");
        composer.accept("src/", Some(Sigil::File), false);
        assert_eq!(composer.text(), "read @src/");
        composer.accept("src/main.rs", Some(Sigil::File), true);
        assert_eq!(composer.text(), "read @src/main.rs ");
        assert_eq!(
            composer.segments(),
            vec![
                Segment::text("read "),
                Segment::FileRef {
                    path: "src/main.rs".into()
                },
                Segment::text(" "),
            ]
        );
    }

    #[test]
    fn height_grows_with_wrapped_lines_up_to_a_cap() {
        assert_eq!(Composer::new().height(20), 1);
        assert_eq!(typed(&"x".repeat(25)).height(20), 2);
        assert_eq!(typed("a\nb\nc").height(20), 3);
        assert_eq!(typed(&"l\n".repeat(30)).height(20), MAX_COMPOSER_ROWS);
    }

    #[test]
    fn history_entries_round_trip_chips() {
        let mut composer = typed("x ");
        composer.paste(&"y".repeat(2_000));
        let entry = composer.entry();
        let mut again = Composer::new();
        again.set(&entry);
        assert_eq!(again.text(), composer.text());
        assert_eq!(again.segments(), composer.segments());
        assert_eq!(
            again.paste(&"z".repeat(2_000)).as_deref().map(|l| &l[..9]),
            Some("[Paste #2")
        );
    }
}
