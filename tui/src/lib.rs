//! seedpod's terminal app: attach to a pod, read its transcript, talk to it, detach.
//!
//! Owns: the terminal (setup, restore, panic safety: `terminal.rs`), the event loop
//! (`run.rs`), the link to the pod with reconnection (`connection.rs`), the app's state and
//! every decision about keys and frames (`app/`, pure: events in, `Effect`s out, including the
//! approval prompt), the composer with paste chips and references (`composer/`), the key map
//! (`keys.rs`), slash commands (`commands.rs`; `/clear`, `/compact`, `/model`, `/memory` and
//! `/spawn` go to the pod), input history (`history.rs`), what the person folded and expanded per pod
//! (`view_memory.rs`), the pod picker with its tree of
//! parents and children (`picker/`), OSC 52 (`clipboard.rs`) and the screen layout (`ui/`).
//! Paging back through the pod's log when a scroll reaches the top is `app/earlier.rs`; the
//! line diff an edit shows in the approval modal is `diff.rs`.
//!
//! Must not own: any durable state (DESIGN §1.3) — the pod's log is the record; kill the TUI at
//! any moment and reattaching loses nothing (the input history file is a recall convenience,
//! not pod state, and neither is the fold state in `view_memory.rs`). Nor the transcript model and its renderers (`seedpod-transcript`), nor
//! spawning pods (the CLI passes a `Starter`; a child pod is started by its parent pod), nor
//! what any tool is: how a call is previewed is its declaration's to say, which the CLI passes in
//! (`DeclLookup`), so no tool's name is spelled here.
//!
//! Colours: every style comes from `seedpod_transcript::Theme` roles (semantic colours, named
//! ANSI only, `NO_COLOR` respected; the policy is `tui/STYLE.md`).
//!
//! Start reading at `run.rs`, then `app/mod.rs` and `app/input.rs`.

pub mod app;
pub mod branch;
pub mod clipboard;
pub mod commands;
pub mod composer;
pub mod connection;
pub mod diff;
pub mod history;
pub mod keys;
pub mod notify;
pub mod picker;
pub mod run;
pub mod terminal;
pub mod ui;
pub mod view_memory;

#[cfg(test)]
mod test_support;

pub use app::{App, DeclLookup, Effect, ExitReason};
pub use run::{Outcome, Starter, TuiOptions, run};
