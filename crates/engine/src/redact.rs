//! Secrets never leave in text: `redact` replaces API keys (`sk-…`, `sk-ant-…`), bearer
//! tokens, `x-api-key` headers and `password=`/`token=`/`api_key=` values with `[REDACTED]`, and
//! `redact_values` the exact values a provider was configured with (a key that looks like
//! nothing in particular). Provider errors pass through both before they become messages that
//! reach the log, history and terminals; the CLI's logger passes every line through `redact`.

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
    for marker in [
        "password=",
        "token=",
        "api_key=",
        "apikey=",
        "secret=",
        "x-api-key: ",
        "X-Api-Key: ",
        "x-api-key=",
        "\"x-api-key\":\"",
    ] {
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

/// Replace every occurrence of each of `values` (the configured key, say) with `[REDACTED]`.
/// Values shorter than 8 characters are left alone: they would redact ordinary words.
pub fn redact_values(text: &str, values: &[String]) -> String {
    let mut out = text.to_string();
    for value in values.iter().filter(|v| v.chars().count() >= MIN_KEY_CHARS) {
        out = out.replace(value.as_str(), REDACTED);
    }
    out
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
        assert_eq!(redact("x-api-key: plainkey42"), "x-api-key: [REDACTED]");
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
    fn configured_values_are_redacted_wherever_they_appear() {
        let values = vec!["plain-looking-key-777".to_string(), "short".to_string()];
        assert_eq!(
            redact_values(
                "got plain-looking-key-777 twice: plain-looking-key-777; short",
                &values
            ),
            "got [REDACTED] twice: [REDACTED]; short"
        );
    }
}
