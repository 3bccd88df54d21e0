//! The modal's body as a scrolled window: which of its rows are in view, and how the scroll
//! keys move it. The body (a command, its arguments, or a file's change) is laid out by the
//! drawing code at the terminal's width; each frame reports its length, the rows it had room
//! for and where each hunk of a diff starts, and the keys move within that. The same window
//! arithmetic serves both, so a key never scrolls to a place the frame would not draw.

/// A key that moves the modal's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollKey {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    /// The next (or previous) hunk of a diff at the top of the window.
    NextHunk,
    PrevHunk,
}

/// Where the body is scrolled and what the last frame laid out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyScroll {
    /// The first body row in view, as asked for; `window` clamps it to the body.
    top: usize,
    /// How many rows the body had in the last frame.
    len: usize,
    /// How many rows the last frame had room for, edge markers included.
    room: usize,
    /// The body rows at which each hunk of a diff starts (its `@@` header), in order.
    hunks: Vec<usize>,
}

/// The part of the body a frame shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The first body row shown.
    pub top: usize,
    /// How many body rows are shown.
    pub shown: usize,
    /// Rows hidden above and below; each side with any takes one row of room for its marker
    /// ("↑ 3 more lines"), so the body never hides rows without saying so.
    pub above: usize,
    pub below: usize,
}

/// Below this much room there is no space for edge markers: the rows that fit are shown bare.
const MIN_ROOM_FOR_MARKERS: usize = 3;

impl BodyScroll {
    /// The last frame's layout: `len` body rows, `room` rows to show them in, hunks starting at
    /// `hunks`. The asked-for top is clamped to what that frame showed.
    pub fn laid_out(&mut self, len: usize, room: usize, hunks: Vec<usize>) {
        self.len = len;
        self.room = room;
        self.hunks = hunks;
        self.top = self.window().top;
    }

    /// The rows in view for the current top.
    pub fn window(&self) -> Window {
        window(self.top, self.len, self.room)
    }

    /// The first row asked for (clamped once a frame has laid the body out).
    pub fn top(&self) -> usize {
        self.top
    }

    /// Whether the body has more than one hunk to move between.
    pub fn has_hunks(&self) -> bool {
        self.hunks.len() > 1
    }

    /// Move for `key`, within the last frame's layout.
    pub fn press(&mut self, key: ScrollKey) {
        let top = self.window().top;
        // A page keeps one row of the last one in view: the reader's place.
        let page = self.room.saturating_sub(3).max(1);
        self.top = match key {
            ScrollKey::Up => top.saturating_sub(1),
            ScrollKey::Down => top + 1,
            ScrollKey::PageUp => top.saturating_sub(page),
            ScrollKey::PageDown => top + page,
            ScrollKey::Home => 0,
            ScrollKey::End => self.len,
            ScrollKey::NextHunk => self.hunks.iter().copied().find(|&h| h > top).unwrap_or(top),
            ScrollKey::PrevHunk => self
                .hunks
                .iter()
                .copied()
                .rev()
                .find(|&h| h < top)
                .unwrap_or(0),
        };
        self.top = self.window().top;
    }
}

/// The window of `len` rows in `room` rows starting near `top`: everything when it fits, else
/// as many rows as the markers leave, the top clamped so the last window ends at the last row.
pub fn window(top: usize, len: usize, room: usize) -> Window {
    if len <= room {
        return Window {
            top: 0,
            shown: len,
            above: 0,
            below: 0,
        };
    }
    if room < MIN_ROOM_FOR_MARKERS {
        let top = top.min(len - room);
        return Window {
            top,
            shown: room,
            above: top,
            below: len - top - room,
        };
    }
    // At either end one marker; in between two.
    let last_top = len - (room - 1);
    let (top, shown) = if top == 0 {
        (0, room - 1)
    } else if top >= last_top {
        (last_top, room - 1)
    } else {
        (top, room - 2)
    };
    Window {
        top,
        shown,
        above: top,
        below: len - top - shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_fits_shows_whole() {
        assert_eq!(
            window(5, 10, 10),
            Window {
                top: 0,
                shown: 10,
                above: 0,
                below: 0
            }
        );
    }

    #[test]
    fn a_long_body_shows_markers_for_what_it_hides_and_ends_at_its_last_row() {
        // 20 rows in 8: from the top, 7 rows and "↓ 13 more".
        assert_eq!(
            window(0, 20, 8),
            Window {
                top: 0,
                shown: 7,
                above: 0,
                below: 13
            }
        );
        // In the middle both markers.
        assert_eq!(
            window(5, 20, 8),
            Window {
                top: 5,
                shown: 6,
                above: 5,
                below: 9
            }
        );
        // Past the end: the last 7 rows and "↑ 13 more".
        for top in [13, 14, 100, usize::MAX] {
            assert_eq!(
                window(top, 20, 8),
                Window {
                    top: 13,
                    shown: 7,
                    above: 13,
                    below: 0
                },
                "top {top}"
            );
        }
        // No room for markers: bare rows.
        assert_eq!(window(50, 20, 2).shown, 2);
        assert_eq!(window(50, 20, 2).top, 18);
    }

    #[test]
    fn keys_move_within_the_last_layout() {
        let mut scroll = BodyScroll::default();
        scroll.laid_out(30, 10, vec![2, 12, 25]);
        scroll.press(ScrollKey::Down);
        assert_eq!(scroll.top(), 1);
        scroll.press(ScrollKey::PageDown);
        assert_eq!(scroll.top(), 8);
        scroll.press(ScrollKey::End);
        assert_eq!(scroll.window().below, 0, "End shows the last row");
        assert_eq!(scroll.top(), 21);
        scroll.press(ScrollKey::Home);
        assert_eq!(scroll.top(), 0);
        scroll.press(ScrollKey::NextHunk);
        assert_eq!(scroll.top(), 2);
        scroll.press(ScrollKey::NextHunk);
        assert_eq!(scroll.top(), 12);
        scroll.press(ScrollKey::PrevHunk);
        assert_eq!(scroll.top(), 2);
        scroll.press(ScrollKey::PrevHunk);
        assert_eq!(scroll.top(), 0);
        scroll.press(ScrollKey::Up);
        assert_eq!(scroll.top(), 0);
        assert!(scroll.has_hunks());
    }
}
