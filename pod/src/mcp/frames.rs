//! A stdio server's answers too large to read whole, cut instead of dropped
//! (docs/configuration.md §MCP servers, "Results").
//!
//! rmcp drops a line over 16 MiB from a server's stdout, and the call it answered waits for its
//! whole tool timeout. The pod reads the server's stdout through `cut_oversized`, which passes
//! every line under `MAX_LINE_BYTES` through as it is, and replaces a longer one that answers a
//! request with a small answer to the same request: a result holding the start of what the
//! server sent (`KEPT_BYTES`) and a note saying the rest was cut. The call ends as soon as the
//! line does. An oversized line that answers nothing (a notification) is dropped, with a warning
//! in the log. Memory stays bounded: a line is held only up to the limit.

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Longest line passed through: under rmcp's own 16 MiB limit, so rmcp never drops one.
pub const MAX_LINE_BYTES: usize = 15 * 1024 * 1024;
/// What of an oversized answer is kept (the model reads at most `max_output` of it).
pub const KEPT_BYTES: usize = 1024 * 1024;
/// Bytes between the copying task and rmcp.
const PIPE_BYTES: usize = 64 * 1024;

/// The server's stdout as rmcp should read it.
pub fn cut_oversized<R>(server: String, stdout: R) -> DuplexStream
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (reader, writer) = tokio::io::duplex(PIPE_BYTES);
    tokio::spawn(copy(server, stdout, writer));
    reader
}

async fn copy<R: AsyncRead + Unpin>(server: String, mut stdout: R, mut out: DuplexStream) {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut cutter = Cutter::default();
    loop {
        let n = match stdout.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for piece in cutter.feed(&chunk[..n]) {
            if let Piece::Dropped(bytes) = piece {
                tracing::warn!(event = "mcp_line_dropped", server = %server, bytes, "an oversized message that answers no request");
                continue;
            }
            if out.write_all(piece.bytes()).await.is_err() {
                return;
            }
        }
    }
    let _ = out.write_all(&cutter.line).await;
    let _ = out.shutdown().await;
}

/// What the cutter gives to pass on.
#[derive(Debug, PartialEq)]
enum Piece {
    /// A whole line, newline included, as the server wrote it.
    Line(Vec<u8>),
    /// The answer that stands in for an oversized one, newline included.
    Cut(Vec<u8>),
    /// An oversized line with no request to answer, this many bytes.
    Dropped(u64),
}

impl Piece {
    fn bytes(&self) -> &[u8] {
        match self {
            Piece::Line(bytes) | Piece::Cut(bytes) => bytes,
            Piece::Dropped(_) => &[],
        }
    }
}

/// Splits the stream into lines, holding at most `MAX_LINE_BYTES` of one.
#[derive(Default)]
struct Cutter {
    /// The current line so far (while under the limit).
    line: Vec<u8>,
    /// The kept start of the current line, once it is over the limit.
    over: Option<Vec<u8>>,
    /// Bytes of the current oversized line not kept.
    dropped: u64,
}

impl Cutter {
    fn feed(&mut self, mut bytes: &[u8]) -> Vec<Piece> {
        let mut pieces = Vec::new();
        while !bytes.is_empty() {
            let end = bytes.iter().position(|b| *b == b'\n');
            let (part, rest) = match end {
                Some(at) => (&bytes[..=at], &bytes[at + 1..]),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            match &mut self.over {
                Some(_) => self.dropped += part.len() as u64,
                None => {
                    self.line.extend_from_slice(part);
                    if self.line.len() > MAX_LINE_BYTES {
                        let kept = self.line[..KEPT_BYTES].to_vec();
                        self.dropped = (self.line.len() - KEPT_BYTES) as u64;
                        self.line = Vec::new();
                        self.over = Some(kept);
                    }
                }
            }
            if end.is_some() {
                pieces.push(match self.over.take() {
                    Some(kept) => {
                        let total = kept.len() as u64 + self.dropped;
                        self.dropped = 0;
                        match stand_in(&kept, total) {
                            Some(line) => Piece::Cut(line),
                            None => Piece::Dropped(total),
                        }
                    }
                    None => Piece::Line(std::mem::take(&mut self.line)),
                });
            }
        }
        pieces
    }
}

/// The answer standing in for an oversized one whose first bytes are `kept`: the same id, a
/// result with the start of the text and a note. `None` when `kept` names no id.
fn stand_in(kept: &[u8], total: u64) -> Option<Vec<u8>> {
    // An answer has a `result` (or `error`); a request or notification of the server's has a
    // `method` first, and is not ours to answer.
    let at = |key: &[u8]| kept.windows(key.len()).position(|w| w == key);
    let answer_at = at(b"\"result\":").or_else(|| at(b"\"error\":"))?;
    if at(b"\"method\":").is_some_and(|method| method < answer_at) {
        return None;
    }
    let id = value_after(kept, b"\"id\":")?;
    if !(id.is_number() || id.is_string()) {
        return None;
    }
    let text = text_start(kept).unwrap_or_else(|| String::from_utf8_lossy(kept).into_owned());
    let note = format!(
        "\n[… the server's answer was {} bytes, over the {} MiB a message may be; only its start \
         is shown]",
        seedpod_protocol::thousands(total),
        MAX_LINE_BYTES / (1024 * 1024)
    );
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text + &note}]}
    });
    let mut line = serde_json::to_vec(&answer).ok()?;
    line.push(b'\n');
    Some(line)
}

/// The JSON value right after the first `key` in `bytes` (JSON-RPC servers write `id` before
/// `result`).
fn value_after(bytes: &[u8], key: &[u8]) -> Option<Value> {
    let at = bytes.windows(key.len()).position(|w| w == key)? + key.len();
    let mut values = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<Value>();
    values.next()?.ok()
}

/// The start of the first `"text":"…"` string in `bytes`, unescaped as far as it goes.
fn text_start(bytes: &[u8]) -> Option<String> {
    let key = b"\"text\":\"";
    let at = bytes.windows(key.len()).position(|w| w == key)? + key.len();
    let raw = String::from_utf8_lossy(&bytes[at..]);
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        out.push(c);
                    }
                }
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: u64, text: &str) -> Vec<u8> {
        let mut line = serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {"content": [{"type": "text", "text": text}]}
        }))
        .unwrap();
        line.push(b'\n');
        line
    }

    #[test]
    fn lines_under_the_limit_pass_through_whole_across_reads() {
        let mut cutter = Cutter::default();
        let first = answer(1, "small");
        let second = answer(2, "also small");
        let stream: Vec<u8> = [first.clone(), second.clone()].concat();
        let mut pieces = Vec::new();
        for chunk in stream.chunks(7) {
            pieces.extend(cutter.feed(chunk));
        }
        assert_eq!(pieces, [Piece::Line(first), Piece::Line(second)]);
    }

    #[test]
    fn an_oversized_answer_is_cut_to_its_start_for_the_same_request() {
        let mut cutter = Cutter::default();
        let big = answer(7, &format!("line one\n{}", "x".repeat(MAX_LINE_BYTES + 10)));
        let after = answer(8, "next");
        let stream = [big.clone(), after.clone()].concat();
        let mut pieces = Vec::new();
        for chunk in stream.chunks(1024 * 1024) {
            pieces.extend(cutter.feed(chunk));
        }
        assert_eq!(pieces.len(), 2, "{:?}", pieces.len());
        let Piece::Cut(line) = &pieces[0] else {
            panic!("not cut");
        };
        assert!(line.len() < KEPT_BYTES + 1024);
        let cut: Value = serde_json::from_slice(line).unwrap();
        assert_eq!(cut["id"], 7);
        let text = cut["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("line one\nxxx"), "{}", &text[..20]);
        assert!(
            text.ends_with(&format!(
                "the server's answer was {} bytes, over the 15 MiB a message may be; only its \
                 start is shown]",
                seedpod_protocol::thousands(big.len() as u64)
            )),
            "{}",
            &text[text.len() - 200..]
        );
        // The stream goes on as before.
        assert_eq!(pieces[1], Piece::Line(after));
        assert!(cutter.line.is_empty() && cutter.over.is_none());
    }

    #[test]
    fn an_oversized_message_that_answers_nothing_is_dropped() {
        let mut cutter = Cutter::default();
        let mut note = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{}"}}}}"#,
            "y".repeat(MAX_LINE_BYTES)
        )
        .into_bytes();
        note.push(b'\n');
        let pieces = cutter.feed(&note);
        assert_eq!(pieces, [Piece::Dropped(note.len() as u64)]);
    }
}
