//! The protocol's integration tests in one test binary (a binary per file linked the
//! dependencies once each): the documentation's examples against the wire, and the frame codec
//! under arbitrary bytes.

mod doc_examples;
mod fuzz_frames;
