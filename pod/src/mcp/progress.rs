//! A running call's progress, from its server's `notifications/progress` to the clients
//! showing the call's cell (docs/protocol.md §Tool progress).
//!
//! A server decides how often it reports, so the path is bounded at each step: the
//! connection's handler only replaces the call's latest report (a `watch`, never a queue),
//! and the call forwards the latest to the controller at most once per `FORWARD_INTERVAL`.
//! Reports are display state: nothing here reaches the model or the segment log.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use seedpod_protocol::{CallId, ToolProgress};
use tokio::sync::{mpsc, watch};

use super::McpEvent;

/// The shortest time between two reports of one call sent to clients: ten a second at most,
/// whatever the server sends; the latest report wins.
pub(super) const FORWARD_INTERVAL: Duration = Duration::from_millis(100);

/// The calls in flight on one connection that want their progress, by the token each
/// request carried. Shared by the connection's handler (which delivers) and its calls (which
/// open a route each).
#[derive(Clone, Default, Debug)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, watch::Sender<Option<ToolProgress>>>>>,
}

impl ProgressRoutes {
    /// Deliver a server's report to the call it names, if that call is listening; a report
    /// for no call (a finished one, a token never handed out) goes nowhere. Reports must rise
    /// (the MCP spec says each one's `progress` increases), and rmcp hands each notification
    /// to its own task, so they may arrive out of order: one below the latest is an older
    /// one, overtaken, and changes nothing.
    pub(super) fn deliver(&self, params: &ProgressNotificationParam) {
        let Ok(routes) = self.routes.lock() else {
            return;
        };
        let Some(latest) = routes.get(&params.progress_token) else {
            return;
        };
        if let Some(report) =
            ToolProgress::from_report(params.progress, params.total, params.message.as_deref())
        {
            latest.send_if_modified(|shown| {
                let newer = shown
                    .as_ref()
                    .is_none_or(|shown| report.progress >= shown.progress);
                if newer {
                    *shown = Some(report);
                }
                newer
            });
        }
    }

    /// Listen for the reports of the request that carried `token`, until the route is dropped.
    pub(super) fn open(&self, token: ProgressToken) -> Route {
        let (tx, rx) = watch::channel(None);
        if let Ok(mut routes) = self.routes.lock() {
            routes.insert(token.clone(), tx);
        }
        Route {
            routes: self.clone(),
            token,
            latest: rx,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.routes.lock().map(|r| r.len()).unwrap_or(0)
    }
}

/// One call's reports; dropping it (the call ended, or was dropped) stops their delivery.
pub(super) struct Route {
    routes: ProgressRoutes,
    token: ProgressToken,
    latest: watch::Receiver<Option<ToolProgress>>,
}

impl Route {
    /// Send the call's latest report to the controller each time there is a new one, at most
    /// once per `FORWARD_INTERVAL`. Never returns: it ends when the call's future is dropped.
    pub(super) async fn forward(
        mut self,
        call_id: CallId,
        events: mpsc::Sender<McpEvent>,
    ) -> Infallible {
        loop {
            if self.latest.changed().await.is_err() {
                break;
            }
            let Some(progress) = self.latest.borrow_and_update().clone() else {
                continue;
            };
            let event = McpEvent::Progress {
                call_id: call_id.clone(),
                progress,
            };
            if events.send(event).await.is_err() {
                break;
            }
            // Reports that come meanwhile replace each other; the next round sends the last.
            tokio::time::sleep(FORWARD_INTERVAL).await;
        }
        std::future::pending().await
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.routes.routes.lock() {
            routes.remove(&self.token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn report(token: i64, progress: f64, message: &str) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(token)), progress)
            .with_total(10.0)
            .with_message(message)
    }

    /// A flood of reports reaches the controller as a handful, the last of them the latest;
    /// a report for another call, or after the call ended, goes nowhere.
    #[tokio::test(start_paused = true)]
    async fn a_flood_of_reports_reaches_the_controller_as_the_latest_few() {
        let routes = ProgressRoutes::default();
        let route = routes.open(ProgressToken(NumberOrString::Number(7)));
        let (events, mut received) = mpsc::channel(1024);
        let forwarding = tokio::spawn(route.forward(CallId::new("c1"), events));
        for i in 0..10_000 {
            routes.deliver(&report(7, f64::from(i), &format!("step {i}")));
            routes.deliver(&report(8, 1.0, "someone else's"));
            if i % 1_000 == 999 {
                // Half an interval passes every thousand reports.
                tokio::time::sleep(FORWARD_INTERVAL / 2).await;
            }
        }
        tokio::time::sleep(FORWARD_INTERVAL * 2).await;
        let mut seen = Vec::new();
        while let Ok(event) = received.try_recv() {
            match event {
                McpEvent::Progress { call_id, progress } => {
                    assert_eq!(call_id, CallId::new("c1"));
                    seen.push(progress);
                }
                other => panic!("{other:?}"),
            }
        }
        // Ten rounds of reports half an interval apart, and the last: a dozen at most.
        assert!(!seen.is_empty() && seen.len() <= 12, "{}", seen.len());
        assert_eq!(
            seen.last().and_then(|p| p.message.as_deref()),
            Some("step 9999")
        );
        forwarding.abort();
        let _ = forwarding.await;
        assert_eq!(routes.len(), 0, "the ended call's route is gone");
        routes.deliver(&report(7, 1.0, "late"));
    }

    #[test]
    fn a_report_a_person_could_not_read_is_dropped() {
        let routes = ProgressRoutes::default();
        let route = routes.open(ProgressToken(NumberOrString::Number(1)));
        routes.deliver(&ProgressNotificationParam::new(
            ProgressToken(NumberOrString::Number(1)),
            -3.0,
        ));
        assert_eq!(*route.latest.borrow(), None);
        routes.deliver(&report(1, 2.0, "\u{1b}]0;pwned\u{7}ok"));
        let latest = route.latest.borrow().clone();
        assert_eq!(latest.and_then(|p| p.message).as_deref(), Some("ok"));
        // An older report that arrives late is overtaken; the same count may say more.
        routes.deliver(&report(1, 1.0, "older"));
        routes.deliver(&report(1, 2.0, "still two"));
        let latest = route.latest.borrow().clone();
        assert_eq!(latest.and_then(|p| p.message).as_deref(), Some("still two"));
    }
}
