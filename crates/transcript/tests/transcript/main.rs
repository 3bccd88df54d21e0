//! The transcript's integration tests in one test binary (a binary per file linked the
//! dependencies once each), a module per concern; shared fixtures are in `support/`, insta's
//! snapshots in `snapshots/`.

mod support;

mod apply;
mod approvals;
mod context;
mod earlier;
mod remembered;
mod render_rules;
mod render_snapshots;
mod segments;
mod status_line;
mod view;
