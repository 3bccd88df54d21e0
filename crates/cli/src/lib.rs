//! What the two executables of the `seedpod` package share.
//!
//! `seedpod` (`src/bin/seedpod.rs`) is the command people type: a small program that runs the
//! one-shot commands for a pod on this machine itself (`quick`) and hands every other command
//! line, unchanged, to `seedpod-core` beside it (`src/main.rs`), which parses flags and wires the
//! crates. Why two: docs/decisions.md, "A small front binary for one-shot commands".
//!
//! This library owns what both must say alike: which local pod a command means (`local`), the
//! one-shot requests and their answers (`quick`), and exit codes (`exit`). It must not grow
//! anything else: whatever the front binary calls is loaded on every `seedpod notify`.

pub mod exit;
pub mod local;
pub mod quick;
