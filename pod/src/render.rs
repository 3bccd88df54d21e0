//! Rendered text for items the pod injects into history. Rendered once, at commit time, and
//! stored as the item's `body` (invariant 2); changing these strings never changes a replay.

use seedpod_protocol::PodEvent;

/// A notification's body: `message` framed by the `[notify] wrapper` template.
pub fn notification_body(wrapper: &str, message: &str) -> String {
    seedpod_config::wrap_notification(wrapper, message)
}

pub fn pod_event_body(event: &PodEvent) -> String {
    match event {
        PodEvent::TurnEnded { pod, .. } => {
            format!("[pod {pod}] finished a turn — read_pod_output to see what it did")
        }
        PodEvent::Errored { pod, message, .. } => {
            format!("[pod {pod}] stopped with an error: {message}")
        }
        PodEvent::ShutDown { pod, .. } => format!("[pod {pod}] shut down"),
        PodEvent::ScopeSubDelegated {
            pod, child, scope, ..
        } => format!(
            "[pod {pod}] delegated write scope {} to its child {child}",
            scope.join(", ")
        ),
        PodEvent::Unknown => "[pod event] (an event this seedpod does not understand)".into(),
    }
}

pub fn cancelled_body() -> String {
    "[interrupted] The user cancelled the previous turn before it finished. Anything not shown \
     above was not done."
        .into()
}

pub fn abandoned_body() -> String {
    "[interrupted] The previous turn was paused and then abandoned for new input. Anything not \
     shown above was not done."
        .into()
}

/// The result recorded for a tool call that never ran because its turn was stopped.
pub fn orphan_result() -> String {
    "[not run] This tool call was not executed because the turn was stopped.".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::ReportId;

    #[test]
    fn pod_event_bodies_name_the_pod() {
        let body = pod_event_body(&PodEvent::TurnEnded {
            pod: "child-1".into(),
            event_id: ReportId::new("e"),
        });
        assert!(body.starts_with("[pod child-1] finished a turn"), "{body}");
    }

    #[test]
    fn notification_body_keeps_the_message() {
        assert_eq!(
            notification_body("[notification] {message}", "ci green"),
            "[notification] ci green"
        );
        let default = notification_body(seedpod_config::notify::DEFAULT_NOTIFY_WRAPPER, "ci");
        assert!(default.starts_with("[notification] ci\n"), "{default}");
    }
}
