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

impl Controller {
    /// Scan `text` (an input or a notification) for injection patterns. `Err` carries the
    /// refusal when the guard blocks it.
    pub(super) fn guard(&mut self, source: &str, text: &str) -> Result<(), String> {
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
            source,
            mode = ?mode,
            patterns = ?patterns,
            excerpts = ?excerpts,
        );
        let what = format!(
            "possible prompt injection in this {source} ({}: \"{}\")",
            patterns.join(", "),
            excerpts.first().copied().unwrap_or_default()
        );
        match mode {
            GuardMode::Off | GuardMode::Log => Ok(()),
            GuardMode::Warn => {
                self.publish_alert(
                    AlertLevel::Warn,
                    format!("{what}; it was passed on ([input] guard = \"warn\")"),
                );
                Ok(())
            }
            GuardMode::Block => {
                let message = format!(
                    "{what}; it was refused and not recorded ([input] guard = \"block\"; rephrase, \
                     or set guard = \"warn\")"
                );
                self.publish_alert(AlertLevel::Warn, message.clone());
                Err(message)
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
