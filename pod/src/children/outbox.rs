//! A child's outbox delivery (DESIGN §7): a task that sends this pod's reports to its parent
//! until each is acknowledged, retrying with backoff while the parent is away.
//!
//! The reports themselves are log entries (the outbox lives in the log, so nothing is lost on
//! a crash); this task only holds copies to send. Each acknowledgement goes back to the
//! controller, which commits `outbox_delivered`. A parent that comes back sends
//! `deliver_reports`, which ends the wait at once instead of at the next retry.

use std::collections::VecDeque;
use std::time::Duration;

use seedpod_client::{Connection, Home};
use seedpod_protocol::{ClientMode, Method, PodEvent, PodName, ReportId, ServerMsg};
use tokio::sync::{mpsc, oneshot};

use super::ChildMsg;

/// Reports waiting in the task are few (one per parent-started turn); a full queue only slows
/// the controller's send, never loses a report (the log has it).
const OUTBOX_QUEUE: usize = 64;
const FIRST_RETRY: Duration = Duration::from_millis(200);
const MAX_RETRY: Duration = Duration::from_secs(5);
/// How long a stopping pod waits for its parent to take its last reports.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(2);
/// One delivery attempt, connect to ack; a wedged parent must not stall the outbox forever.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

enum OutboxMsg {
    Report(PodEvent),
    Nudge,
    /// Try everything once more now; answer with the ids delivered meanwhile.
    Flush(oneshot::Sender<Vec<ReportId>>),
}

/// The controller's handle on its delivery task.
pub struct OutboxHandle {
    tx: mpsc::Sender<OutboxMsg>,
}

impl OutboxHandle {
    pub fn send(&self, event: PodEvent) {
        if self.tx.try_send(OutboxMsg::Report(event)).is_err() {
            // Full or gone: the report is in the log and is sent again on the next start.
            tracing::warn!(event = "outbox_queue_full");
        }
    }

    pub fn nudge(&self) {
        let _ = self.tx.try_send(OutboxMsg::Nudge);
    }

    /// Deliver what is pending, bounded by `FLUSH_TIMEOUT`; the ids the parent acknowledged.
    pub async fn flush(&self) -> Vec<ReportId> {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(OutboxMsg::Flush(reply)).await.is_err() {
            return Vec::new();
        }
        tokio::time::timeout(FLUSH_TIMEOUT, rx)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    }
}

/// Start delivering `pod`'s reports to `parent`.
pub fn start(
    home: Home,
    pod: PodName,
    parent: PodName,
    controller: mpsc::Sender<ChildMsg>,
) -> OutboxHandle {
    let (tx, rx) = mpsc::channel(OUTBOX_QUEUE);
    tokio::spawn(deliver(home, pod, parent, rx, controller));
    OutboxHandle { tx }
}

async fn deliver(
    home: Home,
    pod: PodName,
    parent: PodName,
    mut rx: mpsc::Receiver<OutboxMsg>,
    controller: mpsc::Sender<ChildMsg>,
) {
    let mut pending: VecDeque<PodEvent> = VecDeque::new();
    let mut flush = None;
    let mut retry = FIRST_RETRY;
    let mut failures: u32 = 0;
    let client = format!("seedpod-pod:{pod}");
    loop {
        if pending.is_empty() && flush.is_none() {
            match rx.recv().await {
                Some(msg) => absorb(msg, &mut pending, &mut flush),
                None => return,
            }
        }
        while let Ok(msg) = rx.try_recv() {
            absorb(msg, &mut pending, &mut flush);
        }
        let (delivered, failure) = send_all(&home, &parent, &client, &mut pending).await;
        match failure {
            // Said once per outage at info; a parent stopped for a day must not fill the log.
            Some(error) if failures == 0 => {
                tracing::info!(event = "outbox_waiting", parent = %parent, error = %error);
            }
            Some(error) => {
                tracing::debug!(event = "outbox_retry", parent = %parent, error = %error)
            }
            None if failures > 0 => {
                tracing::info!(event = "outbox_resumed", parent = %parent, failures);
            }
            None => {}
        }
        failures = if pending.is_empty() { 0 } else { failures + 1 };
        if let Some(reply) = flush.take() {
            // The stopping controller commits these itself; it no longer reads commands.
            let _ = reply.send(delivered);
            continue;
        }
        for event_id in delivered {
            let msg = ChildMsg::Delivered { event_id };
            let _ = controller.send(msg).await;
        }
        if pending.is_empty() {
            retry = FIRST_RETRY;
            continue;
        }
        // The parent is away: wait for the next retry, a nudge, or more reports.
        tokio::select! {
            () = tokio::time::sleep(retry) => retry = (retry * 2).min(MAX_RETRY),
            msg = rx.recv() => match msg {
                Some(OutboxMsg::Nudge) => retry = FIRST_RETRY,
                Some(msg) => absorb(msg, &mut pending, &mut flush),
                None => return,
            },
        }
    }
}

fn absorb(
    msg: OutboxMsg,
    pending: &mut VecDeque<PodEvent>,
    flush: &mut Option<oneshot::Sender<Vec<ReportId>>>,
) {
    match msg {
        OutboxMsg::Report(event) => {
            if !pending.iter().any(|p| p.event_id() == event.event_id()) {
                pending.push_back(event);
            }
        }
        OutboxMsg::Nudge => {}
        OutboxMsg::Flush(reply) => *flush = Some(reply),
    }
}

/// Send pending reports in order over one connection, stopping at the first failure. Returns
/// the ids the parent acknowledged, and what went wrong if not all were.
async fn send_all(
    home: &Home,
    parent: &PodName,
    client: &str,
    pending: &mut VecDeque<PodEvent>,
) -> (Vec<ReportId>, Option<String>) {
    let mut delivered = Vec::new();
    let attempt = async {
        let mut conn = Connection::connect(home, parent, client, ClientMode::Control).await?;
        while let Some(event) = pending.front() {
            let method = Method::PodEvent {
                event: event.clone(),
                wake: super::report_wakes(event),
            };
            match conn.call(method).await? {
                ServerMsg::Ack { .. } => {
                    if let Some(id) = event.event_id() {
                        delivered.push(id.clone());
                    }
                    pending.pop_front();
                }
                other => {
                    return Err(seedpod_client::ClientError::Protocol(format!(
                        "the parent answered a report with {other:?}"
                    )));
                }
            }
        }
        Ok::<(), seedpod_client::ClientError>(())
    };
    let failure = match tokio::time::timeout(ATTEMPT_TIMEOUT, attempt).await {
        Ok(Ok(())) => None,
        Ok(Err(err)) => Some(err.to_string()),
        Err(_) => Some(format!(
            "{parent} did not answer within {}s",
            ATTEMPT_TIMEOUT.as_secs()
        )),
    };
    (delivered, failure)
}
