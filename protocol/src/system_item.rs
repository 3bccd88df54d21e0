//! `SystemItem`: everything injected into history that the person did not type and the model did
//! not say (DESIGN §6). Each carries its exact rendered `body`, fixed at commit time, so replay
//! never re-renders (invariant 2). Clients dispatch on `kind`; the model sees only `body`.

use serde::{Deserialize, Serialize};

use crate::pod_event::PodEvent;
use crate::tasks::ReminderSource;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SystemItem {
    /// Something a script or person told the pod with `notify`.
    Notification { message: String, body: String },
    /// A report from a child pod.
    PodEvent { event: PodEvent, body: String },
    /// The content of an `@path` reference.
    FileAttachment { path: String, body: String },
    /// A `#slug` knowledge note.
    Knowledge { slug: String, body: String },
    /// A `/slug` workflow's instructions.
    Workflow { slug: String, body: String },
    /// A reminder the pod adds before a request (open tasks left untouched); `body` is wrapped
    /// in `<system-reminder>` exactly once.
    TaskReminder {
        #[serde(default)]
        source: ReminderSource,
        body: String,
    },
    /// Left in history when a turn was paused-then-abandoned or cancelled.
    Interrupt { body: String },
    /// The day changed since the model was last told the date (the system prompt's "Today is
    /// …", or the last of these): `date` is the new UTC day, `YYYY-MM-DD`; `body` is wrapped
    /// in `<system-reminder>`. Rendered prompts are never re-rendered, so this is how a pod
    /// that lives for weeks keeps its model's calendar right.
    DateChanged { date: String, body: String },
    /// A kind this binary does not know (written by a newer seedpod). Clients render it as a
    /// labelled raw line; the store refuses to replay it (its body is unknown).
    #[serde(other)]
    Unknown,
}

impl SystemItem {
    /// The text the model sees for this item.
    pub fn history_text(&self) -> &str {
        match self {
            SystemItem::Notification { body, .. }
            | SystemItem::PodEvent { body, .. }
            | SystemItem::FileAttachment { body, .. }
            | SystemItem::Knowledge { body, .. }
            | SystemItem::Workflow { body, .. }
            | SystemItem::TaskReminder { body, .. }
            | SystemItem::Interrupt { body }
            | SystemItem::DateChanged { body, .. } => body,
            SystemItem::Unknown => "",
        }
    }

    /// The `kind` tag as written on the wire.
    pub fn kind_name(&self) -> &'static str {
        match self {
            SystemItem::Notification { .. } => "notification",
            SystemItem::PodEvent { .. } => "pod_event",
            SystemItem::FileAttachment { .. } => "file_attachment",
            SystemItem::Knowledge { .. } => "knowledge",
            SystemItem::Workflow { .. } => "workflow",
            SystemItem::TaskReminder { .. } => "task_reminder",
            SystemItem::Interrupt { .. } => "interrupt",
            SystemItem::DateChanged { .. } => "date_changed",
            SystemItem::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_text_is_the_body() {
        let item = SystemItem::Notification {
            message: "build done".into(),
            body: "[notification] build done".into(),
        };
        assert_eq!(item.history_text(), "[notification] build done");
        assert_eq!(item.kind_name(), "notification");
    }

    #[test]
    fn golden_notification_json() {
        let item = SystemItem::Notification {
            message: "m".into(),
            body: "b".into(),
        };
        assert_eq!(
            serde_json::to_string(&item).unwrap(),
            r#"{"kind":"notification","message":"m","body":"b"}"#
        );
    }

    #[test]
    fn unknown_kind_decodes() {
        let item: SystemItem = serde_json::from_str(r#"{"kind":"telepathy","body":"x"}"#).unwrap();
        assert_eq!(item, SystemItem::Unknown);
        assert_eq!(item.history_text(), "");
    }
}
