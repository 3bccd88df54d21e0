//! `PodEvent`: what a child pod reports to its parent (DESIGN §7).

use serde::{Deserialize, Serialize};

use crate::ids::ReportId;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PodEvent {
    /// The child finished a turn its parent started.
    TurnEnded { pod: String, event_id: ReportId },
    /// The child's turn ended with an error.
    Errored {
        pod: String,
        event_id: ReportId,
        message: String,
    },
    /// The child stopped.
    ShutDown { pod: String, event_id: ReportId },
    /// The child delegated write scope to a grandchild; travels up to the root.
    ScopeSubDelegated {
        pod: String,
        event_id: ReportId,
        child: String,
        scope: Vec<String>,
    },
    #[serde(other)]
    Unknown,
}

impl PodEvent {
    /// The id the parent dedupes on; `None` for unknown kinds.
    pub fn event_id(&self) -> Option<&ReportId> {
        match self {
            PodEvent::TurnEnded { event_id, .. }
            | PodEvent::Errored { event_id, .. }
            | PodEvent::ShutDown { event_id, .. }
            | PodEvent::ScopeSubDelegated { event_id, .. } => Some(event_id),
            PodEvent::Unknown => None,
        }
    }

    /// The reporting pod's name.
    pub fn pod(&self) -> Option<&str> {
        match self {
            PodEvent::TurnEnded { pod, .. }
            | PodEvent::Errored { pod, .. }
            | PodEvent::ShutDown { pod, .. }
            | PodEvent::ScopeSubDelegated { pod, .. } => Some(pod),
            PodEvent::Unknown => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ReportId;

    #[test]
    fn golden_turn_ended() {
        let e = PodEvent::TurnEnded {
            pod: "child".into(),
            event_id: ReportId::new("e1"),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"type":"turn_ended","pod":"child","event_id":"e1"}"#
        );
        assert_eq!(e.event_id(), Some(&ReportId::new("e1")));
        assert_eq!(e.pod(), Some("child"));
    }

    #[test]
    fn unknown_event_decodes() {
        let e: PodEvent = serde_json::from_str(r#"{"type":"exploded","pod":"x"}"#).unwrap();
        assert_eq!(e, PodEvent::Unknown);
        assert_eq!(e.event_id(), None);
    }
}
