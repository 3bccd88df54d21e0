//! What the app asks the outside world to do. The app never does I/O itself: its update
//! functions return `Effect`s and the event loop (`run.rs`) carries them out, which is what
//! makes every key and frame testable without a terminal or a pod.

use std::path::PathBuf;

use seedpod_protocol::{ApprovalAnswer, CallId, CompletionKind, Method, PodCommand, PodName};

use crate::connection::RequestTag;
use crate::history::HistoryEntry;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send `method` to the pod; the reply comes back as `ConnectionEvent::Reply { tag }`.
    Request { tag: RequestTag, method: Method },
    /// Leave the TUI.
    Exit(ExitReason),
    /// Attach to another pod (starting it first if it is stopped).
    Attach(PodName),
    /// Attach to pod `name` on another machine (`[remote.hosts]`).
    AttachRemote { host: String, name: PodName },
    /// List the pods for the picker; the answer comes back through `App::on_pods` (and, per
    /// other machine, `App::on_remote_pods`).
    ListPods,
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Turn mouse-wheel capture on or off.
    Mouse(bool),
    /// Append one line to a history file.
    SaveHistory { path: PathBuf, line: String },
    /// Replace the file that keeps what the person folded and expanded (`view_memory.rs`).
    SaveView { path: PathBuf, text: String },
    /// Clear the terminal and repaint everything (Ctrl-L).
    Repaint,
    /// Get the person's attention (the terminal is not focused): a turn ended, or an approval
    /// waits. The loop picks the way (`[tui] notify`).
    Notify { title: String, body: String },
    /// Run `seedpod fork` or `seedpod rewind` (`branch.rs`); the answer comes back through
    /// `App::on_branch`.
    Branch(super::branch::BranchCommand),
    /// Read the pod's turns from its log for `/fork` or `/rewind`'s picker (`branch.rs`); the
    /// answer comes back through `App::on_turns`.
    ListTurns {
        pod: PodName,
        kind: super::branch::BranchKind,
    },
    /// Attach to this pod again from scratch (it was rewound and restarted): a new link, a
    /// fresh snapshot.
    Reattach(PodName),
}

/// Why the TUI ended. Neither ever stops the pod except `Stopped`, which the person asked for
/// with `/stop` and confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    Detached,
    Stopped,
}

/// What a request in flight was for, so its reply can be understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// Input sent; kept so a refused or lost input goes back into the composer.
    Run(HistoryEntry),
    Pause,
    Cancel,
    Resume,
    Stop,
    /// A queued input being withdrawn; on success it comes back into the composer to edit.
    Withdraw(HistoryEntry),
    Completion {
        kind: CompletionKind,
        prefix: String,
    },
    /// An answer to the approval request for `call_id`.
    Approve {
        call_id: CallId,
        answer: ApprovalAnswer,
    },
    /// A command the pod carries out (`/clear`, `/model NAME`, `/memory TEXT`).
    Command(PodCommand),
    /// `/model` alone: the model in use and what the server offers, shown as a listing.
    Models,
    /// `/approvals`: the list, or what is left after a revocation.
    Approvals,
    /// `/mcp`: the servers, after a listing or an action.
    McpServers,
    /// `/spawn NAME TASK`: the pod starts child `name`.
    Spawn {
        name: PodName,
    },
    /// A page of the log before what is loaded, for the transcript of this `generation` (a
    /// snapshot since makes the answer moot).
    Earlier {
        generation: u64,
    },
}
