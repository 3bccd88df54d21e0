//! Ctrl-F and `/find TEXT`: search the transcript (every cell held, earlier pages included).
//! A match is one occurrence of the text, however many a cell holds. Typing narrows the
//! matches and shows the newest; Enter stops typing, then `n` goes to the older match and `N`
//! to the newer one: the line that holds it is scrolled into view, every occurrence on screen
//! is highlighted (the current one more strongly) and its cell is focused; Esc ends the search.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use seedpod_transcript::Occurrence;

use super::{App, Effect, Overlay};

/// The search in progress.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Find {
    pub query: String,
    /// Keys go to the query (until Enter).
    pub typing: bool,
    /// Every occurrence of the query, oldest first.
    pub matches: Vec<Occurrence>,
    /// Which of `matches` is shown.
    pub current: Option<usize>,
}

impl Find {
    /// "3 of 12", "no match".
    pub fn position(&self) -> String {
        match self.current {
            Some(at) => format!("{} of {}", at + 1, self.matches.len()),
            None if self.query.is_empty() => String::new(),
            None => "no match".into(),
        }
    }
}

impl App {
    /// Open the search; with `query`, run it at once and stop typing.
    pub(super) fn open_find(&mut self, query: Option<String>) {
        self.popup = None;
        let mut find = Find {
            typing: query.is_none(),
            query: query.unwrap_or_default(),
            ..Find::default()
        };
        self.refind(&mut find);
        self.overlay = Overlay::Find(find);
    }

    /// Look again for `find.query` and show the newest match.
    fn refind(&mut self, find: &mut Find) {
        find.matches = self.transcript.occurrences(&find.query);
        find.current = find.matches.len().checked_sub(1);
        self.show_match(find);
    }

    fn show_match(&mut self, find: &Find) {
        let current = find.current.and_then(|at| find.matches.get(at)).copied();
        self.view.set_search(&find.query, current);
    }

    /// The search is over: no marks. The match's cell stays focused, for `/copy` or Enter;
    /// Esc again drops it.
    fn end_find(&mut self) {
        self.view.clear_search();
    }

    pub(super) fn find_key(&mut self, mut find: Find, key: &KeyEvent) -> (Overlay, Vec<Effect>) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => {
                self.end_find();
                return (Overlay::None, Vec::new());
            }
            KeyCode::Char('c') if ctrl => {
                self.end_find();
                return (Overlay::None, Vec::new());
            }
            KeyCode::Char('f') if ctrl => find.typing = true,
            KeyCode::Enter if find.typing => find.typing = false,
            KeyCode::Backspace if find.typing => {
                find.query.pop();
                self.refind(&mut find);
            }
            KeyCode::Char(c) if find.typing && !ctrl => {
                find.query.push(c);
                self.refind(&mut find);
            }
            KeyCode::Char('n') | KeyCode::Up if !find.typing => {
                if let Some(at) = find.current {
                    find.current = Some(at.saturating_sub(1));
                    self.show_match(&find);
                }
            }
            KeyCode::Char('N') | KeyCode::Down if !find.typing => {
                if let Some(at) = find.current {
                    find.current = Some((at + 1).min(find.matches.len().saturating_sub(1)));
                    self.show_match(&find);
                }
            }
            KeyCode::Char('/') if !find.typing => find.typing = true,
            _ => {}
        }
        (Overlay::Find(find), Vec::new())
    }
}
