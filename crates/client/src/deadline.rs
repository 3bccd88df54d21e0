//! How long a client waits for a pod before saying it is not answering.
//!
//! A pod that is stopped (SIGSTOP, Ctrl-Z in the terminal that started it) or wedged still has
//! its socket: `connect` succeeds and then nothing ever comes back. Without a deadline every
//! client — `notify` in a script, `history`, the TUI — would hang forever. Quick requests get a
//! short deadline; the few that legitimately take long (a compaction asks the model for a
//! summary, a spawn starts a process) get one sized for that work.

use std::time::Duration;

use seedpod_protocol::{Method, PodCommand};

/// The handshake and a quick request: a healthy pod answers in milliseconds, a busy one (a
/// durable commit on a slow disk) well within this.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Overrides `DEFAULT_REPLY_TIMEOUT`, in milliseconds: for scripts that would rather fail fast,
/// and for tests.
pub const TIMEOUT_ENV: &str = "SEEDPOD_CLIENT_TIMEOUT_MS";

/// A compaction waits for the model's summary, retries included.
pub const COMPACT_REPLY_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// A spawn starts a child process and waits for it to accept connections.
pub const SPAWN_REPLY_TIMEOUT: Duration = Duration::from_secs(2 * 60);

/// The deadline for quick answers, from the environment or the default.
pub fn reply_timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_REPLY_TIMEOUT, Duration::from_millis)
}

/// How long to wait for the reply to `method`. Never shorter than the quick deadline.
pub fn for_method(method: &Method, quick: Duration) -> Duration {
    let slow = match method {
        Method::Command {
            name: PodCommand::Compact,
            ..
        } => COMPACT_REPLY_TIMEOUT,
        // A typed `/compact` reaches the pod as a run and is answered when it is done.
        Method::Run { segments }
            if matches!(
                PodCommand::parse(&seedpod_protocol::flatten_to_text(segments)),
                Some((PodCommand::Compact, _))
            ) =>
        {
            COMPACT_REPLY_TIMEOUT
        }
        Method::Spawn(_) => SPAWN_REPLY_TIMEOUT,
        _ => return quick,
    };
    slow.max(quick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_methods_get_their_own_deadline_and_quick_ones_the_short_one() {
        let quick = Duration::from_millis(200);
        let compact = Method::Command {
            name: PodCommand::Compact,
            args: String::new(),
        };
        assert_eq!(for_method(&compact, quick), COMPACT_REPLY_TIMEOUT);
        let typed = Method::Run {
            segments: vec![seedpod_protocol::Segment::text(" /compact keep the plan")],
        };
        assert_eq!(for_method(&typed, quick), COMPACT_REPLY_TIMEOUT);
        let asked = Method::Run {
            segments: vec![seedpod_protocol::Segment::text("please /compact")],
        };
        assert_eq!(for_method(&asked, quick), quick);
        let notify = Method::Notify {
            message: "x".into(),
            wake: true,
        };
        assert_eq!(for_method(&notify, quick), quick);
        assert_eq!(for_method(&Method::GetHistory, quick), quick);
    }
}
