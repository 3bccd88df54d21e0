//! Property-test support: a provider's stream decoding run over bytes cut into arbitrary
//! pieces, exactly as `stream.rs` drives it (parser, then decoder, then the end of the body),
//! without a socket, so thousands of cases run in a second. Used by the fuzz properties of
//! both providers (`openai/tests.rs`, `anthropic/tests.rs`); `docs/testing.md` says how to run
//! them for hours.

use std::collections::VecDeque;

use super::stream::{Decoded, Decoder};
use crate::provider::{ProviderError, ProviderEvent};
use crate::sse::{SseEnd, SseParser};

/// What decoding `bytes`, fed in pieces of the `cuts` sizes (cycled), produced: every provider
/// event, then `Ok(true)` if the terminator came, or the first error.
pub(crate) fn decode_in_pieces<D: Decoder>(
    mut decoder: D,
    bytes: &[u8],
    cuts: &[usize],
) -> (Vec<ProviderEvent>, Result<bool, ProviderError>) {
    let mut parser = SseParser::new();
    let mut parsed = Vec::new();
    let mut queue = VecDeque::new();
    let mut rest = bytes;
    let mut sizes = cuts.iter().copied().cycle();
    let mut decode = |parsed: &mut Vec<_>, queue: &mut VecDeque<_>| {
        for event in parsed.drain(..) {
            if decoder.decode(event, queue)? == Decoded::Complete {
                return Ok(true);
            }
        }
        Ok(false)
    };
    while !rest.is_empty() {
        let size = sizes.next().unwrap_or(usize::MAX).clamp(1, rest.len());
        let (piece, tail) = rest.split_at(size);
        rest = tail;
        if parser.feed(piece, &mut parsed).is_err() {
            return (
                queue.into(),
                Err(ProviderError::permanent("an event over the size limit")),
            );
        }
        match decode(&mut parsed, &mut queue) {
            Ok(true) => return (queue.into(), Ok(true)),
            Ok(false) => {}
            Err(err) => return (queue.into(), Err(err)),
        }
    }
    if let SseEnd::MidEvent {
        unterminated: Some(event),
    } = parser.finish()
    {
        parsed.push(event);
    }
    let end = decode(&mut parsed, &mut queue);
    (queue.into(), end)
}

/// The properties every provider's decoding must have, checked by `proptest!` blocks in each
/// provider's tests: no input panics, memory stays bounded (the parser refuses an endless
/// event), and a real stream decodes the same however the network cuts it.
pub(crate) mod props {
    use proptest::prelude::*;

    use super::decode_in_pieces;
    use crate::http::stream::Decoder;

    /// Arbitrary bytes, sometimes shaped like SSE, cut at arbitrary places.
    pub(crate) fn noisy_stream() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..64),
            "(event|data|id|retry|: ?)[:]?[ -~]{0,40}\n".prop_map(String::into_bytes),
            Just(b"data: [DONE]\n\n".to_vec()),
            Just(b"\n".to_vec()),
            "data: \\{\"[a-z_]{1,12}\":[ -~]{0,30}\\}\n\n".prop_map(String::into_bytes),
        ];
        proptest::collection::vec(line, 0..24).prop_map(|parts| parts.concat())
    }

    pub(crate) fn cuts() -> impl Strategy<Value = Vec<usize>> {
        proptest::collection::vec(1usize..48, 1..6)
    }

    /// Decoding noise never panics and never yields more events than bytes.
    pub(crate) fn never_panics<D: Decoder + Default>(bytes: &[u8], cuts: &[usize]) {
        let (events, _) = decode_in_pieces(D::default(), bytes, cuts);
        assert!(events.len() <= bytes.len() + 1, "{} events", events.len());
    }

    /// A recorded stream gives the same events and ending in any pieces as in one.
    pub(crate) fn cut_anywhere_same_result<D: Decoder + Default>(stream: &[u8], cuts: &[usize]) {
        let whole = decode_in_pieces(D::default(), stream, &[usize::MAX]);
        assert!(matches!(whole.1, Ok(true)), "the fixture is complete");
        assert_eq!(decode_in_pieces(D::default(), stream, cuts), whole);
    }
}
