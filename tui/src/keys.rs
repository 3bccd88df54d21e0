//! Which key means what in the main screen. Pure: a key plus a little context in, an intent
//! out, so the whole key map is testable without a terminal and readable in one place.
//!
//! Keys that would otherwise move the composer's cursor (Home, End) navigate the transcript only
//! while the composer is empty. `[` and `]` are characters people type first (`[ ] todo`), so
//! they move between turns only while a cell is focused (Tab), when typing is plainly not what
//! the person is doing; scrolled up, they are typed like any character (a scroll is no
//! promise not to type). Alt-Up and Alt-Down move between turns always.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What the app needs to know to decide what a key means.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyContext {
    pub composer_empty: bool,
    /// The composer's cursor is on its first / last line (Up/Down leave the text there).
    pub on_first_line: bool,
    pub on_last_line: bool,
    /// A tool call waits for approval and its prompt is hidden (Ctrl-A shows it).
    pub approval_hidden: bool,
    /// A transcript cell is focused (Tab): the person is reading, not typing.
    pub cell_focused: bool,
    /// No pod process answers: Ctrl-S starts it again from its log.
    pub pod_stopped: bool,
    /// The composer's cursor touches a paste chip: Ctrl-X expands it into its text.
    pub on_chip: bool,
}

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Enter: send (or accept a completion, or toggle the focused cell).
    Submit,
    /// Shift-Enter, Alt-Enter, Ctrl-J.
    Newline,
    /// Esc: close what is open, else pause a running turn, else cancel a paused one.
    Escape,
    /// Ctrl-C: clear the composer; on an empty one, twice within a second detaches.
    Interrupt,
    /// Ctrl-D on an empty composer.
    Detach,
    /// Ctrl-P.
    Pods,
    /// Ctrl-G: go into the child pod that reported last (its `pod_event` banner) or was just
    /// started with `/spawn`.
    GoToChild,
    /// Ctrl-O: back to the pod attached before this one (like a shell's `cd -`, it toggles).
    GoBack,
    /// Ctrl-R.
    SearchHistory,
    /// Ctrl-S while the pod is stopped: start it again from its log and reattach.
    Restore,
    /// Ctrl-X on a paste chip: put its text in the composer instead, to read and edit.
    ExpandPaste,
    /// Ctrl-L: repaint everything.
    Redraw,
    /// Ctrl-T: fold or unfold the pinned task list.
    ToggleTasks,
    /// Ctrl-F: search the transcript.
    Find,
    /// Ctrl-A while an approval request waits behind a hidden prompt: show it again. Otherwise
    /// Ctrl-A stays the composer's (start of line).
    ShowApproval,
    HistoryOlder,
    HistoryNewer,
    PageUp,
    PageDown,
    Top,
    Bottom,
    PrevTurn,
    NextTurn,
    /// Tab: complete, or focus the next toggleable cell.
    Tab,
    /// Shift-Tab: focus the previous toggleable cell.
    BackTab,
    /// Anything else goes to the composer.
    Edit,
    /// Key releases and other noise.
    Ignore,
}

pub fn intent(key: &KeyEvent, ctx: KeyContext) -> Intent {
    if key.kind == KeyEventKind::Release {
        return Intent::Ignore;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    match key.code {
        KeyCode::Enter if shift || alt || ctrl => Intent::Newline,
        KeyCode::Enter => Intent::Submit,
        KeyCode::Char('j') if ctrl => Intent::Newline,
        KeyCode::Char('c') if ctrl => Intent::Interrupt,
        KeyCode::Char('d') if ctrl && ctx.composer_empty => Intent::Detach,
        KeyCode::Char('p') if ctrl => Intent::Pods,
        KeyCode::Char('g') if ctrl => Intent::GoToChild,
        KeyCode::Char('o') if ctrl => Intent::GoBack,
        KeyCode::Char('r') if ctrl => Intent::SearchHistory,
        KeyCode::Char('s') if ctrl && ctx.pod_stopped => Intent::Restore,
        KeyCode::Char('x') if ctrl && ctx.on_chip => Intent::ExpandPaste,
        KeyCode::Char('l') if ctrl => Intent::Redraw,
        KeyCode::Char('t') if ctrl => Intent::ToggleTasks,
        KeyCode::Char('f') if ctrl => Intent::Find,
        KeyCode::Char('a') if ctrl && ctx.approval_hidden => Intent::ShowApproval,
        KeyCode::Esc => Intent::Escape,
        KeyCode::Up if !ctrl && !alt && ctx.on_first_line => Intent::HistoryOlder,
        KeyCode::Down if !ctrl && !alt && ctx.on_last_line => Intent::HistoryNewer,
        KeyCode::PageUp => Intent::PageUp,
        KeyCode::PageDown => Intent::PageDown,
        KeyCode::Home if ctx.composer_empty || ctrl => Intent::Top,
        KeyCode::End if ctx.composer_empty || ctrl => Intent::Bottom,
        KeyCode::Up if alt && !ctrl => Intent::PrevTurn,
        KeyCode::Down if alt && !ctrl => Intent::NextTurn,
        KeyCode::Char('[') if ctx.composer_empty && ctx.cell_focused && !ctrl && !alt => {
            Intent::PrevTurn
        }
        KeyCode::Char(']') if ctx.composer_empty && ctx.cell_focused && !ctrl && !alt => {
            Intent::NextTurn
        }
        KeyCode::Tab if !ctrl && !alt && !shift => Intent::Tab,
        KeyCode::BackTab => Intent::BackTab,
        _ => Intent::Edit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    const EMPTY: KeyContext = KeyContext {
        composer_empty: true,
        on_first_line: true,
        on_last_line: true,
        approval_hidden: false,
        cell_focused: false,
        pod_stopped: false,
        on_chip: false,
    };
    const TYPING: KeyContext = KeyContext {
        composer_empty: false,
        on_first_line: false,
        on_last_line: false,
        approval_hidden: false,
        cell_focused: false,
        pod_stopped: false,
        on_chip: false,
    };
    const READING: KeyContext = KeyContext {
        cell_focused: true,
        ..EMPTY
    };

    #[test]
    fn enter_sends_and_modified_enter_breaks_the_line() {
        let none = KeyModifiers::NONE;
        assert_eq!(intent(&k(KeyCode::Enter, none), TYPING), Intent::Submit);
        for m in [KeyModifiers::SHIFT, KeyModifiers::ALT] {
            assert_eq!(intent(&k(KeyCode::Enter, m), TYPING), Intent::Newline);
        }
        assert_eq!(
            intent(&k(KeyCode::Char('j'), KeyModifiers::CONTROL), TYPING),
            Intent::Newline
        );
    }

    #[test]
    fn navigation_keys_type_when_the_composer_has_text() {
        let none = KeyModifiers::NONE;
        assert_eq!(
            intent(&k(KeyCode::Char('['), none), READING),
            Intent::PrevTurn
        );
        assert_eq!(
            intent(&k(KeyCode::Char(']'), none), READING),
            Intent::NextTurn
        );
        assert_eq!(intent(&k(KeyCode::Char('['), none), TYPING), Intent::Edit);
        // At the bottom of the transcript a first `[` or `]` is typed (`[ ] todo`).
        assert_eq!(intent(&k(KeyCode::Char('['), none), EMPTY), Intent::Edit);
        assert_eq!(intent(&k(KeyCode::Char(']'), none), EMPTY), Intent::Edit);
        // Alt-Up and Alt-Down move between turns whatever the composer holds.
        for ctx in [EMPTY, TYPING, READING] {
            assert_eq!(
                intent(&k(KeyCode::Up, KeyModifiers::ALT), ctx),
                Intent::PrevTurn
            );
            assert_eq!(
                intent(&k(KeyCode::Down, KeyModifiers::ALT), ctx),
                Intent::NextTurn
            );
        }
        assert_eq!(intent(&k(KeyCode::Home, none), EMPTY), Intent::Top);
        assert_eq!(intent(&k(KeyCode::Home, none), TYPING), Intent::Edit);
        assert_eq!(intent(&k(KeyCode::End, none), EMPTY), Intent::Bottom);
        assert_eq!(intent(&k(KeyCode::Up, none), EMPTY), Intent::HistoryOlder);
        assert_eq!(intent(&k(KeyCode::Up, none), TYPING), Intent::Edit);
        assert_eq!(intent(&k(KeyCode::PageUp, none), TYPING), Intent::PageUp);
    }

    #[test]
    fn ctrl_d_detaches_only_from_an_empty_composer() {
        let d = k(KeyCode::Char('d'), KeyModifiers::CONTROL);
        assert_eq!(intent(&d, EMPTY), Intent::Detach);
        assert_eq!(intent(&d, TYPING), Intent::Edit);
    }

    #[test]
    fn ctrl_a_shows_a_hidden_approval_and_otherwise_edits() {
        let a = k(KeyCode::Char('a'), KeyModifiers::CONTROL);
        assert_eq!(intent(&a, TYPING), Intent::Edit);
        let hidden = KeyContext {
            approval_hidden: true,
            ..TYPING
        };
        assert_eq!(intent(&a, hidden), Intent::ShowApproval);
    }

    #[test]
    fn ctrl_g_and_ctrl_o_move_between_pods_even_while_typing() {
        let g = k(KeyCode::Char('g'), KeyModifiers::CONTROL);
        let o = k(KeyCode::Char('o'), KeyModifiers::CONTROL);
        for ctx in [EMPTY, TYPING] {
            assert_eq!(intent(&g, ctx), Intent::GoToChild);
            assert_eq!(intent(&o, ctx), Intent::GoBack);
        }
        let plain_g = k(KeyCode::Char('g'), KeyModifiers::NONE);
        assert_eq!(intent(&plain_g, EMPTY), Intent::Edit);
    }

    #[test]
    fn ctrl_s_restores_only_a_stopped_pod() {
        let s = k(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(intent(&s, EMPTY), Intent::Edit);
        let stopped = KeyContext {
            pod_stopped: true,
            ..TYPING
        };
        assert_eq!(intent(&s, stopped), Intent::Restore);
    }

    #[test]
    fn releases_are_ignored() {
        let mut release = k(KeyCode::Char('a'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(intent(&release, TYPING), Intent::Ignore);
    }
}
