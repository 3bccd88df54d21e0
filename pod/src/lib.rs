//! The seedpod pod daemon: one process per pod that owns its history and log and serves the
//! protocol on a local socket (DESIGN §2, §5).
//!
//! Owns: the controller state machine (`controller/`), the broadcast bus with bounded per-client
//! queues (`bus.rs`), the IPC server and per-connection handling (`server.rs`,
//! `connection.rs`), opening/restoring a pod (`restore.rs`), the one-process-per-pod lock
//! (`lock.rs`), the rendered text of injected items (`render.rs`), composer completion answers
//! (`completions.rs`), the list of every tool's declaration (`catalogue.rs`), and a pod
//! assembled from its configuration: scope, sandbox, policies, offered tools (`assemble/`).
//!
//! Must not own: the log file format (seedpod-store), provider wire formats and the turn loop
//! (seedpod-engine), message types (seedpod-protocol), argument parsing and logging setup (the
//! CLI). Start reading at `assemble/mod.rs` (what a pod is made of), `server.rs::serve`, then
//! `controller/mod.rs`.

pub mod accept;
pub mod agents;
pub mod archiver;
pub mod assemble;
pub mod bus;
pub mod calendar;
pub mod catalogue;
pub mod children;
pub mod completions;
pub mod connection;
pub mod context;
pub mod controller;
pub mod earlier;
pub mod error;
pub mod git_commit;
pub mod guard;
pub mod hooks;
pub mod lock;
pub mod mcp;
pub mod mcp_names;
#[cfg(test)]
mod module_graph;
pub mod offline;
pub mod paste;
pub mod policy;
pub mod project_file;
pub mod prompt;
pub mod providers;
pub mod references;
pub mod render;
pub mod restore;
pub mod segment_plan;
pub mod server;
pub mod session;
pub mod task_list;
pub mod tool_search;

pub use error::PodError;
pub use offline::{OfflinePod, offline_context, open_offline};
pub use providers::SCRIPTED_RECORD_FILE;
pub use server::{ServeOptions, serve};
