//! `[notify] wrapper`: how a `seedpod notify` message is put before the model. A template with
//! `{message}` exactly once; the pod renders it when the notification is committed and stores
//! the result as the item's body, so changing the template never changes a replay.
//!
//! The text reaches the model with every notification, so a project file's wrapper applies
//! only once the person trusts the project (`loosen.rs`).

use serde::Deserialize;

use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// The placeholder the message replaces.
pub const MESSAGE_PLACEHOLDER: &str = "{message}";

/// The default: the tag the system prompt explains, the message, and the non-blocking hint.
pub const DEFAULT_NOTIFY_WRAPPER: &str = "[notification] {message}\n\n(A notification, not \
     the user typing: it does not interrupt your work. Act on it if it matters to what you are \
     doing; if nothing in it needs an answer, reply NO_REPLY.)";

/// A wrapper is a frame around a message, not a place for a second prompt.
pub const MAX_WRAPPER_CHARS: usize = 2_000;

/// The longest notification the model reads whole. A longer one is kept whole in the log and
/// reaches the model as its head and tail with a line naming it (`read_paste` reads the rest):
/// a script that pipes a 200,000-character build log into `notify` must not fill the window.
pub const DEFAULT_NOTIFY_MAX_CHARS: usize = 4_000;

/// `max_chars` below this would leave no room for the head, the naming line and the tail.
pub const MIN_NOTIFY_MAX_CHARS: usize = 200;

/// `[notify]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyFile {
    pub wrapper: Option<String>,
    pub max_chars: Option<usize>,
}

/// The resolved `[notify]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifySettings {
    pub wrapper: Setting<String>,
    pub max_chars: Setting<usize>,
}

impl NotifySettings {
    pub(crate) fn defaults() -> NotifySettings {
        NotifySettings {
            wrapper: Setting::default(DEFAULT_NOTIFY_WRAPPER.to_owned()),
            max_chars: Setting::default(DEFAULT_NOTIFY_MAX_CHARS),
        }
    }

    pub(crate) fn layer(&mut self, file: NotifyFile, source: &Source) {
        self.wrapper.layer(file.wrapper, source);
        self.max_chars.layer(file.max_chars, source);
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.max_chars.value < MIN_NOTIFY_MAX_CHARS {
            return Err(ConfigError::invalid(
                "notify.max_chars",
                &self.max_chars,
                "must be at least 200 (room for the head, the tail and the line naming the rest)",
            ));
        }
        let wrapper = &self.wrapper;
        let reason = match wrapper.value.matches(MESSAGE_PLACEHOLDER).count() {
            0 => Some("must contain {message}, where the notification's text goes"),
            1 if wrapper.value.chars().count() > MAX_WRAPPER_CHARS => {
                Some("is too long (at most 2000 characters)")
            }
            1 => None,
            _ => Some("must contain {message} exactly once"),
        };
        match reason {
            Some(reason) => Err(ConfigError::Invalid {
                key: "notify.wrapper".into(),
                value: serde_json::to_string(&wrapper.value).unwrap_or_default(),
                origin: wrapper.source.clone(),
                reason: reason.into(),
            }),
            None => Ok(()),
        }
    }
}

/// `template` with `message` in place of its placeholder. Only the template's own placeholder
/// is replaced: a message that itself says `{message}` is kept as written.
pub fn wrap_notification(template: &str, message: &str) -> String {
    match template.split_once(MESSAGE_PLACEHOLDER) {
        Some((before, after)) => format!("{before}{message}{after}"),
        None => format!("{template}{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_goes_where_the_placeholder_is_and_only_there() {
        assert_eq!(wrap_notification("<{message}>", "ci green"), "<ci green>");
        assert_eq!(
            wrap_notification("[n] {message}", "literal {message} stays"),
            "[n] literal {message} stays"
        );
        let default = wrap_notification(DEFAULT_NOTIFY_WRAPPER, "deploy done");
        assert!(
            default.starts_with("[notification] deploy done\n\n("),
            "{default}"
        );
        assert!(default.contains("NO_REPLY"), "{default}");
    }

    #[test]
    fn a_template_needs_the_placeholder_once_and_a_modest_length() {
        let check = |text: &str| {
            NotifySettings {
                wrapper: Setting::default(text.to_owned()),
                max_chars: Setting::default(DEFAULT_NOTIFY_MAX_CHARS),
            }
            .validate()
            .map_err(|e| e.to_string())
        };
        assert!(check(DEFAULT_NOTIFY_WRAPPER).is_ok());
        assert!(check("{message}").is_ok());
        assert!(
            check("no placeholder")
                .unwrap_err()
                .contains("must contain {message}")
        );
        assert!(
            check("{message} and {message}")
                .unwrap_err()
                .contains("exactly once")
        );
        let long = format!("{{message}}{}", "x".repeat(MAX_WRAPPER_CHARS));
        assert!(check(&long).unwrap_err().contains("too long"));
    }
}
