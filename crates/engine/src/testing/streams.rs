//! Helpers for provider tests: the ugly variants real servers make of a clean recorded stream,
//! and draining a provider's stream.

use futures::StreamExt;
use seedpod_protocol::{ModelConfig, ProviderKind};

use crate::provider::{EventStream, ProviderError, ProviderEvent};

/// A model configuration naming `provider`.
pub fn model_config(provider: ProviderKind, model: &str) -> ModelConfig {
    ModelConfig::new(provider, model)
}

/// Every event of `stream`, up to and including its first error.
pub async fn drain(stream: EventStream) -> Vec<Result<ProviderEvent, ProviderError>> {
    stream.collect().await
}

/// `stream` with every LF line ending written as CRLF.
pub fn with_crlf(stream: &[u8]) -> Vec<u8> {
    replace_newlines(stream, b"\r\n")
}

/// `stream` with every LF line ending written as a lone CR.
pub fn with_cr(stream: &[u8]) -> Vec<u8> {
    replace_newlines(stream, b"\r")
}

fn replace_newlines(stream: &[u8], ending: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(stream.len() * 2);
    for byte in stream {
        match byte {
            b'\n' => out.extend_from_slice(ending),
            other => out.push(*other),
        }
    }
    out
}

/// `stream` with a comment line opening every event and a keep-alive event after each, as
/// proxies and servers send to keep idle connections open.
pub fn with_keep_alives(stream: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stream);
    let mut out = String::from(": connected\n\n");
    for event in text.split_inclusive("\n\n") {
        out.push_str(": comment before the fields\n");
        out.push_str(event);
        out.push_str(": keep-alive\n\n");
    }
    out.into_bytes()
}

/// The first `len` bytes of `stream`: a connection cut at that point.
pub fn cut(stream: &[u8], len: usize) -> Vec<u8> {
    stream[..len.min(stream.len())].to_vec()
}

/// The bytes of `stream` up to and including the event containing `marker`: a connection cut
/// right after that event.
pub fn cut_after(stream: &[u8], marker: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(stream);
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("the stream has no {marker:?}"));
    let end = text[at..]
        .find("\n\n")
        .map_or(text.len(), |offset| at + offset + 2);
    text.as_bytes()[..end].to_vec()
}
