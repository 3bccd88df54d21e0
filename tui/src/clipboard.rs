//! `/copy`: put text on the clipboard with OSC 52, the escape sequence terminals (and tmux with
//! `set-clipboard on`) understand, so copying works over ssh without a clipboard library.

/// Terminals cap OSC 52 payloads (xterm's default is about 100 kB of base64); a longer answer
/// is refused with a message instead of being silently cut.
pub const MAX_OSC52_BYTES: usize = 100_000;

/// What `/copy` says inside tmux, which passes OSC 52 on to the terminal only when allowed.
pub const TMUX_NOTE: &str = "sent to tmux for the clipboard — it reaches the terminal's only with `set -g set-clipboard on` in tmux.conf";

/// The escape sequence that copies `text`, or `None` when it is too long to send.
pub fn osc52(text: &str) -> Option<String> {
    let encoded = base64(text.as_bytes());
    (encoded.len() <= MAX_OSC52_BYTES).then(|| format!("\x1b]52;c;{encoded}\x07"))
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 0x3f) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected, "{input}");
        }
    }

    #[test]
    fn osc52_wraps_and_refuses_huge_text() {
        assert_eq!(osc52("hi").as_deref(), Some("\x1b]52;c;aGk=\x07"));
        assert!(osc52(&"x".repeat(MAX_OSC52_BYTES)).is_none());
    }
}
