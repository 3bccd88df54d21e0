//! `[tui] notify`: whether the TUI tells the desktop when a turn ends or an approval waits
//! while its terminal is not focused. A preference of the person's terminal, read by the TUI
//! when it starts; nothing the pod does depends on it.

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

/// `[tui]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuiFile {
    pub notify: Option<TuiNotify>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TuiSettings {
    pub notify: Setting<TuiNotify>,
}

impl TuiSettings {
    pub(crate) fn defaults() -> TuiSettings {
        TuiSettings {
            notify: Setting::default(TuiNotify::Auto),
        }
    }

    pub(crate) fn layer(&mut self, file: TuiFile, source: &Source) {
        self.notify.layer(file.notify, source);
    }
}
