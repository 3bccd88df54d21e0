//! A server's messages to the pod that are not answers: a changed tool list wakes its
//! supervisor; a progress report goes to the call it is about (`progress.rs`); all are logged
//! at debug, within a budget, since a server decides how many it sends.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::Notify;

use super::progress::ProgressRoutes;

/// Answers the server's notifications: a changed tool list wakes the supervisor; the rest are
/// logged at debug, within a budget.
#[derive(Clone)]
pub(super) struct Handler {
    server: Arc<str>,
    tools_changed: Arc<Notify>,
    /// The calls on this connection that show their progress (`progress.rs`).
    pub(super) progress: ProgressRoutes,
    /// Wakes the supervisor to list prompts and resources again (`catalogue.rs`).
    catalogue_changed: Option<Arc<Notify>>,
    budget: Arc<Mutex<NotificationBudget>>,
}

/// Server notifications the pod's log takes per `NOTIFICATION_WINDOW`; the rest are counted
/// and the count logged once the window ends. A server decides how many it sends, and the log
/// must not grow by megabytes because one is chatty (docs/configuration.md §MCP servers).
const NOTIFICATIONS_PER_WINDOW: u32 = 20;
const NOTIFICATION_WINDOW: Duration = Duration::from_secs(10);
/// Most characters of a notification's text that reach the log.
const NOTIFICATION_CHARS: usize = 200;

#[derive(Debug)]
struct NotificationBudget {
    window_start: Instant,
    logged: u32,
    dropped: u64,
}

impl NotificationBudget {
    fn new(now: Instant) -> NotificationBudget {
        NotificationBudget {
            window_start: now,
            logged: 0,
            dropped: 0,
        }
    }

    /// Whether a notification arriving `now` may be logged; and, when a window ended with
    /// some left unlogged, how many.
    fn take(&mut self, now: Instant) -> (bool, Option<u64>) {
        let mut ended = None;
        if now.duration_since(self.window_start) >= NOTIFICATION_WINDOW {
            if self.dropped > 0 {
                ended = Some(self.dropped);
            }
            *self = NotificationBudget::new(now);
        }
        if self.logged < NOTIFICATIONS_PER_WINDOW {
            self.logged += 1;
            (true, ended)
        } else {
            self.dropped += 1;
            (false, ended)
        }
    }
}

impl Handler {
    pub(super) fn new(server: &str, tools_changed: Arc<Notify>) -> Handler {
        Handler {
            server: server.into(),
            tools_changed,
            progress: ProgressRoutes::default(),
            catalogue_changed: None,
            budget: Arc::new(Mutex::new(NotificationBudget::new(Instant::now()))),
        }
    }

    /// Also wake `changed` when the server says its prompts or resources changed.
    pub(super) fn with_catalogue(mut self, changed: Arc<Notify>) -> Handler {
        self.catalogue_changed = Some(changed);
        self
    }

    fn catalogue_changed(&self) {
        if let Some(changed) = &self.catalogue_changed {
            changed.notify_one();
        }
    }

    /// Log one notification of `kind` at debug, if the budget allows.
    fn note(&self, kind: &str, text: impl FnOnce() -> String) {
        let (log, unlogged) = match self.budget.lock() {
            Ok(mut budget) => budget.take(Instant::now()),
            Err(_) => (false, None),
        };
        if let Some(count) = unlogged {
            tracing::debug!(event = "mcp_notifications_unlogged", server = %self.server, count);
        }
        if log {
            let text = text();
            let text = seedpod_protocol::char_prefix(&text, NOTIFICATION_CHARS).unwrap_or(&text);
            tracing::debug!(event = "mcp_notification", server = %self.server, kind, text);
        }
    }
}

impl rmcp::ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.note("tools/list_changed", String::new);
        self.tools_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.note("prompts/list_changed", String::new);
        self.catalogue_changed();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.note("resources/list_changed", String::new);
        self.catalogue_changed();
    }

    // Servers on protocol versions before SEP-2577 deprecated logging still send these, and
    // they are what a chatty server floods with.
    #[allow(deprecated, reason = "older servers still send notifications/message")]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.note("message", || params.data.to_string());
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(&params);
        self.note("progress", || {
            format!("{} of {:?}", params.progress, params.total)
        });
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("seedpod", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_past_the_budget_are_counted_not_logged() {
        let start = Instant::now();
        let mut budget = NotificationBudget::new(start);
        let logged = (0..100_000).filter(|_| budget.take(start).0).count();
        assert_eq!(logged, NOTIFICATIONS_PER_WINDOW as usize);
        // The next window logs again, and says how many the last one left out.
        let later = start + NOTIFICATION_WINDOW;
        assert_eq!(
            budget.take(later),
            (true, Some(100_000 - u64::from(NOTIFICATIONS_PER_WINDOW)))
        );
        assert_eq!(budget.take(later), (true, None));
    }
}
