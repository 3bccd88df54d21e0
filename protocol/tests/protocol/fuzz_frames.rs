//! Fuzzing the frame codec and request decoding with arbitrary bytes. Whatever arrives, in
//! whatever pieces: no panic, no message joined past the reader's limit, and every message a
//! writer sends comes back whole and unchanged. `PROPTEST_CASES` raises the number of cases
//! (docs/testing.md §Running them for hours).

// Test code: a failed unwrap is how it reports a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use seedpod_protocol::frames::{FrameCodec, PART_PREFIX};
use seedpod_protocol::{MAX_FRAME_BYTES, decode_request};
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder};

/// Bytes that are sometimes lines, sometimes part frames (well formed or not), sometimes junk.
fn wire_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        "[ -~]{0,30}\n".prop_map(String::into_bytes),
        (any::<bool>(), "[ -~]{0,30}").prop_map(|(more, data)| {
            format!("{PART_PREFIX},\"more\":{more},\"data\":{data:?}}}\n").into_bytes()
        }),
        Just(format!("{PART_PREFIX},\"more\":tru\n").into_bytes()),
    ];
    proptest::collection::vec(piece, 0..20).prop_map(|pieces| pieces.concat())
}

/// Feed `bytes` in pieces of the `cuts` sizes; every message or error, then the end.
fn read(codec: &mut FrameCodec, bytes: &[u8], cuts: &[usize]) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    let mut buf = BytesMut::new();
    let mut rest = bytes;
    let mut sizes = cuts.iter().copied().cycle();
    while !rest.is_empty() {
        let size = sizes.next().unwrap().clamp(1, rest.len());
        buf.extend_from_slice(&rest[..size]);
        rest = &rest[size..];
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(message)) => out.push(Ok(message)),
                Ok(None) => break,
                Err(err) => {
                    out.push(Err(err.to_string()));
                    break;
                }
            }
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(message)) => out.push(Ok(message)),
            Ok(None) => break,
            Err(err) => {
                out.push(Err(err.to_string()));
                break;
            }
        }
    }
    out
}

proptest! {
    #[test]
    fn fuzz_any_bytes_in_any_pieces_never_panic_nor_join_past_the_limit(
        bytes in wire_bytes(),
        cuts in proptest::collection::vec(1usize..32, 1..6),
        limit in 1usize..200,
    ) {
        let mut codec = FrameCodec::new(limit);
        // A joined message is within the limit; a plain line may be any length up to the
        // frame limit.
        for message in read(&mut codec, &bytes, &cuts).into_iter().flatten() {
            prop_assert!(message.len() <= MAX_FRAME_BYTES);
        }
    }

    #[test]
    fn fuzz_whatever_is_written_is_read_back_whole(
        messages in proptest::collection::vec("[^\n\r]{0,60}", 0..8),
        cuts in proptest::collection::vec(1usize..64, 1..6),
    ) {
        let mut wire = BytesMut::new();
        let mut writer = FrameCodec::for_client();
        for message in &messages {
            writer.encode(message.as_str(), &mut wire).unwrap();
        }
        let got = read(&mut FrameCodec::for_client(), &wire, &cuts);
        let want: Vec<Result<String, String>> = messages.iter().cloned().map(Ok).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn fuzz_any_request_text_decodes_or_says_why(text in "\\PC{0,80}|\\{\"id\":[0-9]{1,3},\"method\":\"[a-z_]{1,12}\"[ -~]{0,40}\\}") {
        let _ = decode_request(&text);
    }
}

/// A message longer than a frame, with every kind of character that grows when escaped,
/// comes back whole from a reader that is handed it one byte-range at a time.
#[test]
fn a_long_message_round_trips_in_pieces() {
    let unit = "q\"\\\u{1}é😀\t";
    let message: String = unit.repeat(MAX_FRAME_BYTES / unit.len() + 3);
    let mut wire = BytesMut::new();
    FrameCodec::for_client()
        .encode(message.as_str(), &mut wire)
        .unwrap();
    let got = read(
        &mut FrameCodec::for_client(),
        &wire,
        &[65_536, 7, 1_000_003],
    );
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].as_ref().unwrap(), &message);
    let err = read(&mut FrameCodec::for_pod(), &wire, &[1 << 20]);
    assert!(
        matches!(err.last(), Some(Err(e)) if e.contains("longer than")),
        "{err:?}"
    );
}
