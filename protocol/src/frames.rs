//! The framing every seedpod connection uses: one JSON object per line, no line longer than
//! `MAX_FRAME_BYTES`, and messages longer than that sent as a run of `part` frames.
//!
//! A session can hold entries, histories and provider request bodies of any size (one turn of
//! 40 big file reads is megabytes), but a reader must be able to refuse an endless line. So the
//! limit is on *frames*, not on messages: a writer splits a longer message's JSON text into
//! consecutive `{"type":"part","more":true,"data":"…"}` frames, the last with `"more":false`,
//! and the reader joins the `data` strings back into the original text before anyone parses it.
//! Doing it here, below every message type, means no reply, snapshot batch or replayed event can
//! ever exceed the limit, including ones added later. `docs/protocol.md` documents the format.

use std::io;

use tokio_util::bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder, LinesCodec, LinesCodecError};

/// Longest frame, excluding the newline. A reader refuses anything longer, so a hostile peer
/// cannot make it buffer unbounded input.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// Longest escaped `data` a part frame carries: a quarter of the frame limit, leaving room for
/// the envelope with a wide margin.
pub const PART_DATA_BYTES: usize = MAX_FRAME_BYTES / 4;

/// Longest message a client joins from parts. Bounded so a broken or hostile pod cannot make a
/// client grow without limit; far above any session a model's context can describe.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024 * 1024;

/// Every part frame starts with exactly these bytes; readers rely on it to tell parts from
/// messages without parsing every line twice.
pub const PART_PREFIX: &str = "{\"type\":\"part\"";

#[derive(Debug, thiserror::Error)]
pub enum FramesError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("a frame is longer than {MAX_FRAME_BYTES} bytes")]
    FrameTooLarge,
    #[error("a message sent in parts is longer than {limit} bytes")]
    MessageTooLarge { limit: usize },
    #[error("a message sent in parts is malformed: {0}")]
    BadPart(String),
}

impl From<LinesCodecError> for FramesError {
    fn from(err: LinesCodecError) -> Self {
        match err {
            LinesCodecError::MaxLineLengthExceeded => FramesError::FrameTooLarge,
            LinesCodecError::Io(io) => FramesError::Io(io),
        }
    }
}

/// Lines in, whole messages out; whole messages in, lines of at most `MAX_FRAME_BYTES` out.
#[derive(Debug)]
pub struct FrameCodec {
    lines: LinesCodec,
    max_message: usize,
    partial: Option<String>,
}

impl FrameCodec {
    /// A codec whose reader joins parts into messages of at most `max_message` bytes.
    pub fn new(max_message: usize) -> FrameCodec {
        FrameCodec {
            lines: LinesCodec::new_with_max_length(MAX_FRAME_BYTES),
            max_message,
            partial: None,
        }
    }

    /// What clients use: they accept messages up to `MAX_MESSAGE_BYTES`.
    pub fn for_client() -> FrameCodec {
        FrameCodec::new(MAX_MESSAGE_BYTES)
    }

    /// What the pod uses: a request is never longer than one frame's worth, whether it came in
    /// one line or in parts, so a client cannot make the pod buffer more than that.
    pub fn for_pod() -> FrameCodec {
        FrameCodec::new(MAX_FRAME_BYTES)
    }

    /// Feed one line; a whole message when it completes one.
    fn absorb(&mut self, line: String) -> Result<Option<String>, FramesError> {
        if !line.starts_with(PART_PREFIX) {
            if self.partial.is_some() {
                return Err(FramesError::BadPart(
                    "a frame arrived in the middle of a message sent in parts".into(),
                ));
            }
            return Ok(Some(line));
        }
        let part: Part = serde_json::from_str(&line)
            .map_err(|err| FramesError::BadPart(format!("unreadable part frame: {err}")))?;
        let joined = self.partial.get_or_insert_with(String::new);
        if joined.len() + part.data.len() > self.max_message {
            self.partial = None;
            return Err(FramesError::MessageTooLarge {
                limit: self.max_message,
            });
        }
        joined.push_str(&part.data);
        if part.more {
            return Ok(None);
        }
        Ok(self.partial.take())
    }
}

#[derive(serde::Deserialize)]
struct Part {
    more: bool,
    data: String,
}

impl Decoder for FrameCodec {
    type Item = String;
    type Error = FramesError;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<String>, FramesError> {
        while let Some(line) = self.lines.decode(buf)? {
            if let Some(message) = self.absorb(line)? {
                return Ok(Some(message));
            }
        }
        Ok(None)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<String>, FramesError> {
        while let Some(line) = self.lines.decode_eof(buf)? {
            if let Some(message) = self.absorb(line)? {
                return Ok(Some(message));
            }
        }
        if self.partial.take().is_some() {
            return Err(FramesError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the connection closed in the middle of a message sent in parts",
            )));
        }
        Ok(None)
    }
}

impl<T: AsRef<str>> Encoder<T> for FrameCodec {
    type Error = FramesError;

    fn encode(&mut self, message: T, buf: &mut BytesMut) -> Result<(), FramesError> {
        let message = message.as_ref();
        if message.len() <= MAX_FRAME_BYTES {
            return Ok(self.lines.encode(message, buf)?);
        }
        for (chunk, more) in split_for_parts(message) {
            self.lines.encode(part_frame(chunk, more), buf)?;
        }
        Ok(())
    }
}

/// The part frames for one message, as (text, more) pairs. Chunks end on character boundaries
/// and each escapes to at most `PART_DATA_BYTES`.
pub fn split_for_parts(message: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut rest = message;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut escaped = 0;
        let mut end = rest.len();
        for (at, ch) in rest.char_indices() {
            let width = escaped_len(ch);
            if escaped + width > PART_DATA_BYTES {
                end = at;
                break;
            }
            escaped += width;
        }
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        Some((chunk, !rest.is_empty()))
    })
}

/// How many bytes `ch` takes inside a JSON string as serde_json writes it.
fn escaped_len(ch: char) -> usize {
    match ch {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

fn part_frame(chunk: &str, more: bool) -> String {
    let data = serde_json::Value::String(chunk.to_string());
    format!("{PART_PREFIX},\"more\":{more},\"data\":{data}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(message: &str) -> BytesMut {
        let mut buf = BytesMut::new();
        FrameCodec::for_client().encode(message, &mut buf).unwrap();
        buf
    }

    fn read_all(codec: &mut FrameCodec, mut buf: BytesMut) -> Result<Vec<String>, FramesError> {
        let mut out = Vec::new();
        while let Some(message) = codec.decode_eof(&mut buf)? {
            out.push(message);
        }
        Ok(out)
    }

    fn big_json(bytes: usize) -> String {
        // Quotes, backslashes and control escapes: the characters that grow when escaped.
        let unit = "{\"k\":\"a\\\"b\\\\c\\u0001é😀\"},";
        let mut text = String::from("[");
        while text.len() < bytes {
            text.push_str(unit);
        }
        text.push_str("0]");
        text
    }

    #[test]
    fn short_messages_are_one_line_unchanged() {
        let buf = wire("{\"type\":\"state\"}");
        assert_eq!(&buf[..], b"{\"type\":\"state\"}\n");
    }

    #[test]
    fn long_messages_go_in_parts_no_frame_over_the_limit_and_come_back_whole() {
        let message = big_json(3 * MAX_FRAME_BYTES);
        let buf = wire(&message);
        let lines: Vec<&[u8]> = buf[..]
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert!(lines.len() > 3, "{} frames", lines.len());
        for line in &lines {
            assert!(
                line.len() <= MAX_FRAME_BYTES,
                "frame of {} bytes",
                line.len()
            );
            assert!(line.starts_with(PART_PREFIX.as_bytes()));
        }
        let out = read_all(&mut FrameCodec::for_client(), buf).unwrap();
        assert_eq!(out, vec![message]);
    }

    #[test]
    fn a_message_of_control_characters_still_fits_each_frame() {
        let message = "\u{1}".repeat(MAX_FRAME_BYTES + 10);
        let buf = wire(&message);
        for line in buf[..].split(|b| *b == b'\n') {
            assert!(line.len() <= MAX_FRAME_BYTES);
        }
        assert_eq!(
            read_all(&mut FrameCodec::for_client(), buf).unwrap(),
            vec![message]
        );
    }

    #[test]
    fn messages_around_parts_stay_in_order() {
        let mut buf = wire("{\"a\":1}");
        let big = big_json(MAX_FRAME_BYTES + 1);
        buf.extend_from_slice(&wire(&big));
        buf.extend_from_slice(&wire("{\"b\":2}"));
        let out = read_all(&mut FrameCodec::for_client(), buf).unwrap();
        assert_eq!(out, vec!["{\"a\":1}".to_string(), big, "{\"b\":2}".into()]);
    }

    #[test]
    fn the_pod_refuses_a_request_joined_past_one_frame() {
        let buf = wire(&big_json(MAX_FRAME_BYTES + 1));
        let err = read_all(&mut FrameCodec::for_pod(), buf).unwrap_err();
        assert!(matches!(err, FramesError::MessageTooLarge { .. }), "{err}");
    }

    #[test]
    fn a_message_interrupted_by_another_frame_is_an_error() {
        let mut buf = BytesMut::new();
        buf.extend_from_slice(part_frame("[1,", true).as_bytes());
        buf.extend_from_slice(b"\n{\"type\":\"state\"}\n");
        let err = read_all(&mut FrameCodec::for_client(), buf).unwrap_err();
        assert!(matches!(err, FramesError::BadPart(_)), "{err}");
    }

    #[test]
    fn a_connection_closed_mid_message_is_an_error_not_a_message() {
        let mut buf = BytesMut::new();
        buf.extend_from_slice(part_frame("[1,", true).as_bytes());
        buf.extend_from_slice(b"\n");
        let err = read_all(&mut FrameCodec::for_client(), buf).unwrap_err();
        assert!(matches!(err, FramesError::Io(_)), "{err}");
    }

    #[test]
    fn a_malformed_part_is_an_error() {
        let buf = BytesMut::from(&b"{\"type\":\"part\",\"more\":\"yes\"}\n"[..]);
        let err = read_all(&mut FrameCodec::for_client(), buf).unwrap_err();
        assert!(matches!(err, FramesError::BadPart(_)), "{err}");
    }

    #[test]
    fn oversized_lines_are_refused() {
        let mut buf = BytesMut::from(vec![b'x'; MAX_FRAME_BYTES + 2].as_slice());
        buf.extend_from_slice(b"\n");
        let err = FrameCodec::for_client().decode(&mut buf).unwrap_err();
        assert!(matches!(err, FramesError::FrameTooLarge), "{err}");
    }
}
