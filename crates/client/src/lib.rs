//! What every seedpod client needs: where things live (`Home`), what a pod may be called, a
//! `Connection` that connects to a pod's socket, completes the handshake and exchanges frames,
//! and the listing of known pods with their liveness (`pods.rs`, for `ls` and the TUI picker).
//! `blocking.rs` asks a pod one thing without an async runtime, for one-shot commands.
//!
//! Used by the CLI, the TUI, parent pods and the end-to-end tests. Must not own: pod state,
//! rendering, or any policy about what to send — it is transport and paths only.
//!
//! Start reading at `connection.rs`.

pub mod blocking;
pub mod connection;
pub mod credentials;
pub mod deadline;
pub mod error;
pub mod launch;
pub mod names;
pub mod paths;
pub mod pods;
pub mod private;
pub mod remote;

pub use connection::{Connection, Welcome, reply_id};
pub use error::ClientError;
pub use names::sanitise_dir_name;
pub use paths::{HOME_ENV, Home, current_uid};
pub use pods::{Liveness, PodListing, known_pods, list_pods};
pub use remote::{Remote, Target};
pub use seedpod_protocol::{MAX_NAME_CHARS, NameError, PodName};
