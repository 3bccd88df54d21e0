//! What the turn loop needs from whoever owns the pod's state.
//!
//! The loop never owns history. It asks the host for a request built from *committed* history and
//! hands every model-visible fact back through `commit`, which returns only once the fact is in the
//! log and then in history (DESIGN §1, invariant 1). The pod's controller implements this by
//! sending commands to itself; tests use the in-memory host in `testing.rs`.

use seedpod_protocol::EntryKind;

use crate::brakes::CallRecord;
use crate::pending::PendingCall;
use crate::provider::{ProviderError, ProviderEvent};

/// What a prepared request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The next step of the turn: its response is committed.
    Answer,
    /// The host wants the conversation summarised before the turn goes on (compaction): the
    /// response is not committed; its text goes to `RunHost::compacted`.
    Summary,
}

/// The next request, built by the host from committed history.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedRequest {
    pub purpose: Purpose,
    /// The exact request body (`Provider::request_body` of the committed context).
    pub body: String,
    /// tool calls at the tail of history that have no result yet (resume after pause/crash)
    pub unanswered: Vec<PendingCall>,
    /// `turn_end` entries committed so far in this run; the iteration cap counts these.
    pub iteration: u32,
    /// The run's answered tool calls so far, in order (`brakes::calls_in` of the run's part of
    /// history); the loop brakes judge these.
    pub run_calls: Vec<CallRecord>,
}

/// Whether a tool call may run, as the host's policy (and perhaps a person) decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authorization {
    Allowed,
    /// Not run; the model reads `reason` as the call's error result.
    Denied {
        reason: String,
    },
}

/// Why the host cannot go on with a run; the run must stop without committing more.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The host ended this run (pause, cancel, shutdown, a newer run took over).
    #[error("the pod stopped this run")]
    Stopped,
    /// The log refused an entry (a full disk, a broken writer): the host's own error, which
    /// says which entry and why.
    ///
    /// Boxed rather than an enum of the engine's: the log belongs to the host (the pod's store,
    /// which the engine does not depend on), and the loop only stops on it and passes it up.
    /// The box keeps the host's typed error whole — its text, its chain, a downcast for the
    /// host that knows the type — without the engine copying the store's variants.
    /// Transparent, because that error already says its cause (docs/decisions.md, "Errors
    /// carry their cause in their own message").
    #[error(transparent)]
    Log(Box<dyn std::error::Error + Send + Sync>),
    /// The host was asked for something it does not do (a bug, not a condition of the world).
    #[error("internal error: {0}")]
    Internal(String),
}

impl HostError {
    /// The log refused an entry, for this reason.
    pub fn log(cause: impl std::error::Error + Send + Sync + 'static) -> HostError {
        HostError::Log(Box::new(cause))
    }
}

pub trait RunHost: Send {
    /// Commit anything queued that must precede the next request (the host commits notifications
    /// here), then build the request body from committed history.
    fn prepare_request(
        &mut self,
    ) -> impl Future<Output = Result<PreparedRequest, HostError>> + Send;

    /// A provisional event to broadcast (deltas, status). Never committed.
    fn provisional(&mut self, event: ProviderEvent) -> impl Future<Output = ()> + Send;

    /// Append one entry to the log and then to history; returns once durable-in-order.
    fn commit(&mut self, kind: EntryKind) -> impl Future<Output = Result<(), HostError>> + Send;

    /// May `call` run? Asked for each call of a registered tool, in call order, before any of
    /// them runs (a call naming no registered tool is answered by the registry). A host whose
    /// policy asks a person commits the request and returns only once the answer is committed,
    /// so this may wait for as long as it takes. Hosts without a policy allow everything.
    fn authorize(
        &mut self,
        call: &PendingCall,
    ) -> impl Future<Output = Result<Authorization, HostError>> + Send {
        let _ = call;
        async { Ok(Authorization::Allowed) }
    }

    /// The summary asked for by a `Purpose::Summary` request, or why it could not be had. The
    /// host commits the compaction (or notes the failure so it does not ask again at once).
    fn compacted(
        &mut self,
        summary: Result<String, ProviderError>,
    ) -> impl Future<Output = Result<(), HostError>> + Send {
        let _ = summary;
        async { Ok(()) }
    }

    /// The provider refused a request for good (`err` is permanent). Returns true when the host
    /// changed something that makes the next prepared request different — it learned a smaller
    /// context window from the error and will compact or trim — so the loop prepares again
    /// instead of failing the run. Hosts that manage no context return false.
    fn refused(
        &mut self,
        err: &ProviderError,
    ) -> impl Future<Output = Result<bool, HostError>> + Send {
        let _ = err;
        async { Ok(false) }
    }
}
