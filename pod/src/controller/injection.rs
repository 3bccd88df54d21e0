//! What reaches history from outside a turn: a notification or a child's report, committed at
//! once when the pod is idle or queued (durably) and committed before the next request. One
//! type and one rendering for both paths.

use seedpod_protocol::{PodEvent, QueuedItem, RunTrigger, SystemItem};

use crate::render;

/// Only these two can be injected, by type.
pub(super) enum Injection {
    Notify { message: String, wake: bool },
    PodEvent { event: PodEvent, wake: bool },
}

impl Injection {
    /// A queued item that is an injection (inputs and unknown items are not).
    pub(super) fn from_queued(item: QueuedItem) -> Option<Injection> {
        match item {
            QueuedItem::Notify { message, wake } => Some(Injection::Notify { message, wake }),
            QueuedItem::PodEvent { event, wake } => Some(Injection::PodEvent { event, wake }),
            QueuedItem::Run { .. } | QueuedItem::Delegated { .. } | QueuedItem::Unknown => None,
        }
    }

    pub(super) fn into_queued(self) -> QueuedItem {
        match self {
            Injection::Notify { message, wake } => QueuedItem::Notify { message, wake },
            Injection::PodEvent { event, wake } => QueuedItem::PodEvent { event, wake },
        }
    }

    /// The system item the model reads (its body rendered now with the `[notify] wrapper`
    /// template, invariant 2), whether it wakes an idle pod, and the trigger of the run it
    /// would start. A message over `max_chars` is kept whole in the item's `message` and
    /// reaches the model as its head and tail (`paste::shortened_to`).
    pub(super) fn into_system_item(
        self,
        wrapper: &str,
        max_chars: usize,
    ) -> (SystemItem, bool, RunTrigger) {
        match self {
            Injection::Notify { message, wake } => (
                SystemItem::Notification {
                    body: render::notification_body(
                        wrapper,
                        &crate::paste::within(&message, max_chars),
                    ),
                    message,
                },
                wake,
                RunTrigger::Notification,
            ),
            Injection::PodEvent { event, wake } => (
                SystemItem::PodEvent {
                    body: render::pod_event_body(&event),
                    event,
                },
                wake,
                RunTrigger::PodEvent,
            ),
        }
    }
}
