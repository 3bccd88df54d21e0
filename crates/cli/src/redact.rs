//! Secrets never reach a log: every line the pod's logger writes passes through `redact`, which
//! replaces API keys (`sk-…`, `sk-ant-…`), bearer tokens and `password=`/`token=`/`api_key=`
//! values with `[REDACTED]`. A backstop, not a licence: code should not log secrets at all.

use std::io::{self, Write};

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// Shortest run after `sk-` treated as a key (shorter runs are ordinary words like "sk-1").
const MIN_KEY_CHARS: usize = 8;

fn is_secret_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/' | '=')
}

/// Redact every secret in `text`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for marker in ["Bearer ", "bearer "] {
        out = redact_after(&out, marker, 1);
    }
    for marker in ["password=", "token=", "api_key=", "apikey=", "secret="] {
        out = redact_after(&out, marker, 1);
    }
    redact_after(&out, "sk-", MIN_KEY_CHARS)
}

/// Replace the run of secret characters after each `marker` (when at least `min` long).
/// For `sk-` the marker itself is part of the key and is replaced too.
fn redact_after(text: &str, marker: &str, min: usize) -> String {
    let keep_marker = marker != "sk-";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let after = &rest[at + marker.len()..];
        let len: usize = after
            .chars()
            .take_while(|c| is_secret_char(*c))
            .map(char::len_utf8)
            .sum();
        if len >= min {
            out.push_str(&rest[..at]);
            if keep_marker {
                out.push_str(marker);
            }
            out.push_str(REDACTED);
            rest = &after[len..];
        } else {
            out.push_str(&rest[..at + marker.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A writer that redacts each buffer before passing it on. `tracing-subscriber` writes one whole
/// event per `write` call, so a secret is never split across calls.
pub struct RedactingWriter<W> {
    inner: W,
}

impl<W: Write> RedactingWriter<W> {
    pub fn new(inner: W) -> Self {
        RedactingWriter { inner }
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.inner.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_tokens_are_redacted() {
        let line = r#"{"msg":"auth x-api-key sk-ant-api03-AbC_d-123 and Bearer abc.DEF-ghi"}"#;
        let out = redact(line);
        assert!(!out.contains("AbC_d"), "{out}");
        assert!(!out.contains("abc.DEF"), "{out}");
        assert!(out.contains("Bearer [REDACTED]"), "{out}");
        assert_eq!(
            redact("password=hunter2&token=t0k&x=1"),
            "password=[REDACTED]&token=[REDACTED]&x=1"
        );
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in [
            "task-1 done",
            "sk-1 is a ticket",
            "no secrets here",
            "日本語 sk- x",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn the_writer_redacts_what_passes_through() {
        let mut out = Vec::new();
        let mut writer = RedactingWriter::new(&mut out);
        writer.write_all(b"key=sk-proj-0123456789abcdef\n").unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "key=[REDACTED]\n");
    }
}
