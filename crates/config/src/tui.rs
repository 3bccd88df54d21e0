//! `[tui]`: the terminal app's own preferences, read by the TUI when it starts; nothing the
//! pod does depends on them. `notify`: whether the TUI tells the desktop when a turn ends or
//! an approval waits while its terminal is not focused. `inline_paste_lines` and
//! `inline_paste_chars`: how big a paste may be and still go into the composer as text (one
//! bigger in either becomes a chip).

use serde::Deserialize;

use crate::source::{Setting, Source};

/// How the TUI gets a person's attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TuiNotify {
    /// A desktop notification where the terminal is known to show one (OSC 9 or OSC 777),
    /// else the bell.
    Auto,
    /// The terminal bell only.
    Bell,
    Off,
}

impl TuiNotify {
    pub fn as_str(self) -> &'static str {
        match self {
            TuiNotify::Auto => "auto",
            TuiNotify::Bell => "bell",
            TuiNotify::Off => "off",
        }
    }
}

/// A paste of at most this many lines goes into the composer as text.
pub const DEFAULT_INLINE_PASTE_LINES: usize = 10;

/// A paste of at most this many characters goes into the composer as text.
pub const DEFAULT_INLINE_PASTE_CHARS: usize = 1_000;

/// `[tui]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiFile {
    pub notify: Option<TuiNotify>,
    pub inline_paste_lines: Option<usize>,
    pub inline_paste_chars: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TuiSettings {
    pub notify: Setting<TuiNotify>,
    pub inline_paste_lines: Setting<usize>,
    pub inline_paste_chars: Setting<usize>,
}

impl TuiSettings {
    pub(crate) fn defaults() -> TuiSettings {
        TuiSettings {
            notify: Setting::default(TuiNotify::Auto),
            inline_paste_lines: Setting::default(DEFAULT_INLINE_PASTE_LINES),
            inline_paste_chars: Setting::default(DEFAULT_INLINE_PASTE_CHARS),
        }
    }

    pub(crate) fn layer(&mut self, file: TuiFile, source: &Source) {
        self.notify.layer(file.notify, source);
        self.inline_paste_lines
            .layer(file.inline_paste_lines, source);
        self.inline_paste_chars
            .layer(file.inline_paste_chars, source);
    }
}
