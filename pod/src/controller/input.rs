//! What happens to a person's input on its way into history: the injection guard (at receipt,
//! so `block` refuses before anything is acknowledged), the length cap, and the `@path`,
//! `#slug` and `/slug` references, each committed as its own system item right after the input
//! and so before the request that follows (invariant 1; `attach.rs`).

use seedpod_protocol::{AlertLevel, EntryKind, QueueId, Segment, flatten_to_text};

use super::Controller;
use crate::guard::{self, GuardMode};

/// The most bytes of one `@path` file that go into history.
pub const MAX_ATTACHMENT_BYTES: usize = 100 * 1024;

/// A `user_input` entry before it is committed: typed, so a run can only start from an input.
pub(super) struct UserInput {
    pub segments: Vec<Segment>,
    pub text: String,
    pub queue_id: Option<QueueId>,
}

impl UserInput {
    pub(super) fn into_entry(self) -> EntryKind {
        EntryKind::UserInput {
            segments: self.segments,
            text: self.text,
            queue_id: self.queue_id,
        }
    }
}

/// What the guard found in an input or a notification, as the alerts say it.
#[derive(Debug)]
pub(super) struct Suspicion {
    /// What was scanned: `input` or `notification`.
    what: &'static str,
    patterns: Vec<String>,
    /// The first match, as found.
    excerpt: String,
}

impl std::fmt::Display for Suspicion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "possible prompt injection in this {} ({}: \"{}\")",
            self.what,
            self.patterns.join(", "),
            self.excerpt
        )
    }
}

/// An input or a notification the guard refused (`[input] guard = "block"`); the text is the
/// sender's error reply and the person's alert.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0}; it was refused and not recorded ([input] guard = \"block\"; rephrase, or set guard = \
     \"warn\")"
)]
pub(super) struct InjectionRefused(Suspicion);

impl Controller {
    /// Scan `text` (an input or a notification, as `what` says) for injection patterns. `Err`
    /// carries the refusal when the guard blocks it.
    pub(super) fn guard(&mut self, what: &'static str, text: &str) -> Result<(), InjectionRefused> {
        let mode = self.session.guard;
        if mode == GuardMode::Off {
            return Ok(());
        }
        let found = guard::scan(text);
        if found.is_empty() {
            return Ok(());
        }
        let patterns: Vec<&str> = found.iter().map(|d| d.pattern.as_str()).collect();
        let excerpts: Vec<&str> = found.iter().map(|d| d.excerpt.as_str()).collect();
        tracing::warn!(
            event = "security.injection_detected",
            source = what,
            mode = ?mode,
            patterns = ?patterns,
            excerpts = ?excerpts,
        );
        let suspicion = Suspicion {
            what,
            patterns: patterns.iter().map(|p| (*p).to_owned()).collect(),
            excerpt: excerpts.first().copied().unwrap_or_default().to_owned(),
        };
        match mode {
            GuardMode::Off | GuardMode::Log => Ok(()),
            GuardMode::Warn => {
                self.publish_alert(
                    AlertLevel::Warn,
                    format!("{suspicion}; it was passed on ([input] guard = \"warn\")"),
                );
                Ok(())
            }
            GuardMode::Block => {
                let refused = InjectionRefused(suspicion);
                self.publish_alert(AlertLevel::Warn, refused.to_string());
                Err(refused)
            }
        }
    }

    /// A person's input as it will be committed: its model-visible text is cut to the configured
    /// length with a note the model reads.
    pub(super) fn user_input(
        &self,
        segments: Vec<Segment>,
        queue_id: Option<QueueId>,
    ) -> UserInput {
        let (text, fitted) = crate::paste::model_text(&segments, self.session.max_message_chars);
        if fitted {
            tracing::info!(
                event = "input_truncated",
                chars = flatten_to_text(&segments).chars().count(),
                max = self.session.max_message_chars
            );
        }
        UserInput {
            segments,
            text,
            queue_id,
        }
    }
}
