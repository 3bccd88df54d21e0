//! The end-to-end suite: the real `seedpod` binary over real sockets, in a pseudo-terminal and
//! against loopback model servers (see `docs/testing.md`).
//!
//! One test binary with a module per scenario, rather than a binary per file: each binary links
//! the whole dependency tree again, and forty of them took longer to link than the tests take to
//! run. Tests share this process, so none may change process-wide state (environment, current
//! directory, umask, signal dispositions, resource limits): what a child process needs is set on
//! its `Command`. Helpers shared by several modules live in `tests/support/`.

mod approval_modal;
mod approval_typeahead;
mod approvals;
mod archive;
mod attach;
mod bad_input;
mod big_session;
mod calendar;
mod checkpoint_prune;
mod child_limits;
mod children;
mod cli;
mod commit;
mod compaction;
mod config;
mod context;
mod context_cli;
mod crash;
mod docs;
mod exec;
mod exhaustion;
mod export;
mod fork_lineage;
mod fork_rewind;
mod front;
mod guard;
mod hooks;
mod hooks_compact;
mod lifecycle;
mod local_servers;
mod loop_brakes;
mod mcp;
mod mcp_content;
mod mcp_control;
mod mcp_cross_app;
mod mcp_hostile;
mod mcp_http;
mod mcp_manage;
mod mcp_oauth;
mod mcp_paging;
mod mcp_progress;
mod mcp_prompts_resources;
mod mcp_schema;
mod mcp_serve;
mod no_reply;
mod notify;
mod private;
mod project_data;
mod prompt;
mod property;
mod protected;
mod providers;
mod remote;
mod responses_api;
mod sandbox;
mod sanitize;
mod secrets;
mod self_approval;
mod small_window;
mod soak;
mod standing_rules;
mod storage_full;
mod tasks;
mod terminal_safe;
mod tool_search_small;
mod totals;
mod trust;
mod tui;
mod tui_compaction;
mod tui_compaction_count;
mod tui_composer;
mod tui_demo;
mod tui_find;
mod tui_folds;
mod tui_fork;
mod tui_restart;
mod tui_server_errors;
mod tui_stopped;
mod unresponsive;
mod window_memo;
