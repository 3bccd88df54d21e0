//! seedpod's configuration: `config.toml` in the config directory, `.seedpod/config.toml` in a
//! pod's working directory, environment variables and flags, resolved into one `Effective`
//! configuration in which every value knows the layer that set it.
//!
//! Owns: the file format and its errors, layering and validation, which API key variable a
//! provider needs, and the `config show` rendering. Must not own: reading API keys' values
//! (only whether one is set), building providers, logging, or anything a pod sends to a model
//! at request time — request-shaping settings reach the model only through the pod's log
//! (DESIGN §1), which the pod writes from what this crate resolves when it creates a segment.
//!
//! Start reading at `effective.rs`; `approvals.rs` holds what the model may call (its keys are
//! the declared tools' names, given by the caller), `agent.rs` the other settings that govern
//! the agent inside a pod (scope, shell limits, identity, input guard), `children.rs` how many
//! child pods it may start and how they reach it, and
//! `context.rs` how it keeps the model's context inside its window. `loosen.rs` decides which
//! keys of a project file need the person's trust and `trust.rs` keeps what they trusted.

pub mod agent;
pub mod agent_loop;
pub mod api;
pub mod approvals;
pub mod children;
pub mod context;
pub mod effective;
pub mod error;
pub mod expand;
pub mod file;
pub mod hooks;
pub mod loosen;
pub mod mcp;
pub mod mcp_edit;
pub mod mcp_serve;
pub mod notify;
pub mod remote;
pub mod responses;
pub mod show;
pub mod source;
pub mod storage;
pub mod tool_search;
pub mod trust;
pub mod tui;

pub use agent::{
    GuardMode, InputSettings, SandboxMode, ScopeSettings, ShellSettings, SystemPromptSettings,
};
pub use agent_loop::LoopSettings;
pub use approvals::{Approvals, Policy};
pub use children::ChildrenSettings;
pub use context::{ContextSettings, ContextSources};
pub use effective::{
    Effective, Inputs, KeyRequirement, Logging, Overrides, Recorded, Retry, Timeouts,
    default_model, process_env,
};
pub use error::ConfigError;
pub use file::{ConfigFile, LogLevel, ProviderChoice, Rotation};
pub use hooks::{Hook, HookEvent, HooksSettings};
pub use loosen::Ignored;
pub use mcp::{CrossAppAccess, McpGrant, McpOAuth, McpServer, McpSettings, McpTransport};
pub use notify::{NotifySettings, wrap_notification};
pub use remote::{RemoteHost, RemoteSettings};
pub use source::{Setting, Source};
pub use storage::StorageSettings;
pub use trust::{ProjectTrust, TrustStore};
pub use tui::{TuiNotify, TuiSettings};

#[cfg(test)]
mod tests;
