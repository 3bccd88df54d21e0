//! The store's integration tests, one module per concern, in one test binary: a binary per file
//! linked the dependencies once each, which cost more than running the tests. Shared fixtures
//! are in `support/`.

mod support;

mod archive;
mod corrupt;
mod fold_props;
mod fold_rules;
mod fuzz_log;
mod group_commit;
mod meta;
mod page;
mod roundtrip;
mod torn_tail;
mod write_failure;
