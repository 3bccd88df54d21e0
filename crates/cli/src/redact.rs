//! The pod's logger writes through `RedactingWriter`, so no line of a log carries a secret
//! (`seedpod_engine::redact` decides what one looks like). A backstop, not a licence: code
//! should not log secrets at all.

use std::io::{self, Write};

pub use seedpod_engine::redact::redact;

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
    fn the_writer_redacts_what_passes_through() {
        let mut out = Vec::new();
        let mut writer = RedactingWriter::new(&mut out);
        writer.write_all(b"key=sk-proj-0123456789abcdef\n").unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "key=[REDACTED]\n");
    }
}
