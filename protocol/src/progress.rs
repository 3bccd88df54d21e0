//! `ToolProgress`: how far a running tool call is, as the tool last said (an MCP server's
//! `notifications/progress`). Display state for the call's cell only: the model never reads it,
//! it is never logged, and a client that attaches mid-call sees the next report, not the
//! earlier ones (docs/protocol.md §Tool progress).
//!
//! A server decides what it sends, so what reaches a client is made safe here, once: the
//! message is cut to `MAX_PROGRESS_MESSAGE_CHARS` and holds no control characters (an escape
//! sequence is dropped whole), and the numbers are finite and not negative.

use serde::{Deserialize, Serialize};

use crate::printable::is_control;

/// Most characters of a progress message a client receives: a cell shows one line of it.
pub const MAX_PROGRESS_MESSAGE_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    /// How far the call is: rises with each report; a count of steps or a share of `total`.
    pub progress: f64,
    /// What `progress` counts up to, when the tool knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What the tool is doing now, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ToolProgress {
    /// A report as a tool sent it, made safe to show; `None` when its numbers are not numbers
    /// a person could read (not finite, negative).
    pub fn from_report(
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Option<ToolProgress> {
        let readable = |n: f64| n.is_finite() && n >= 0.0;
        if !readable(progress) {
            return None;
        }
        let message = message.map(clean_message).filter(|m| !m.trim().is_empty());
        Some(ToolProgress {
            progress,
            total: total.filter(|t| readable(*t) && *t > 0.0),
            message,
        })
    }

    /// `3/10 · indexing files`, `3 · indexing files`, or `40%` for shares of 1; what a line
    /// of text (a cell, a CLI line) says of it.
    pub fn label(&self) -> String {
        let count = match self.total {
            // A total of 1 is a fraction, as many servers report it.
            Some(total) if total == 1.0 && self.progress <= 1.0 => {
                format!("{:.0}%", self.progress * 100.0)
            }
            Some(total) => format!("{}/{}", number(self.progress), number(total)),
            None => number(self.progress),
        };
        match &self.message {
            Some(message) => format!("{count} · {message}"),
            None => count,
        }
    }

    /// How much of the call is done, 0 to 1, when the tool said a total.
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .map(|total| (self.progress / total).clamp(0.0, 1.0))
    }
}

/// Whole numbers without a fraction; others to one decimal.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n < 1e15 {
        format!("{n:.0}")
    } else {
        format!("{n:.1}")
    }
}

/// The message cut to `MAX_PROGRESS_MESSAGE_CHARS` with every control character gone: an
/// escape sequence (`ESC [ … final`, `ESC ] … BEL`) is dropped whole, line breaks become
/// spaces, anything else that would steer a terminal is dropped.
fn clean_message(raw: &str) -> String {
    let mut out = String::new();
    let mut kept = 0;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if kept >= MAX_PROGRESS_MESSAGE_CHARS {
            break;
        }
        match c {
            '\u{1b}' | '\u{9b}' | '\u{9d}' => skip_sequence(c, &mut chars),
            '\n' | '\r' | '\t' => {
                out.push(' ');
                kept += 1;
            }
            c if is_control(c) => {}
            c => {
                out.push(c);
                kept += 1;
            }
        }
    }
    out
}

/// Consume the rest of an escape sequence that began with `start`: a CSI runs to its final
/// byte, an OSC to its BEL or string terminator; any other escape takes one more character.
fn skip_sequence(start: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    let kind = match start {
        '\u{1b}' => match chars.next() {
            Some('[') => '[',
            Some(']' | 'P' | '_' | '^') => ']',
            _ => return,
        },
        '\u{9b}' => '[',
        _ => ']',
    };
    if kind == '[' {
        // Parameters and intermediates, then one final byte in `@`..=`~`.
        for c in chars.by_ref() {
            if ('@'..='~').contains(&c) {
                return;
            }
            if !(' '..='?').contains(&c) {
                return;
            }
        }
        return;
    }
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(message: &str) -> String {
        ToolProgress::from_report(1.0, None, Some(message))
            .and_then(|p| p.message)
            .unwrap_or_default()
    }

    /// What a hostile server may put in a message, and what a client receives of it.
    #[test]
    fn a_message_reaches_clients_without_anything_a_terminal_acts_on() {
        let cases = [
            ("\u{1b}[31mred\u{1b}[0m text", "red text"),
            ("\u{1b}]0;pwned\u{7}title", "title"),
            (
                "\u{1b}]8;;http://evil\u{1b}\\link\u{1b}]8;;\u{1b}\\",
                "link",
            ),
            ("\u{9b}2Jclear", "clear"),
            ("a\nb\rc\td", "a b c d"),
            ("nul\u{0}bell\u{7}del\u{7f}", "nulbelldel"),
            ("rtl\u{202e}olleh", "rtlolleh"),
            ("\u{1b}Mreverse index", "reverse index"),
            ("cut \u{1b}[", "cut "),
            ("plain 日本語 👍", "plain 日本語 👍"),
        ];
        for (raw, want) in cases {
            let got = shown(raw);
            assert_eq!(got, want, "{raw:?}");
            assert!(!got.chars().any(is_control), "{got:?}");
        }
    }

    #[test]
    fn a_long_message_is_cut_and_an_empty_one_is_none() {
        let long = format!("\u{1b}[1m{}", "é".repeat(100_000));
        assert_eq!(shown(&long).chars().count(), MAX_PROGRESS_MESSAGE_CHARS);
        let blank = ToolProgress::from_report(1.0, None, Some("\u{1b}[0m \n"));
        assert_eq!(blank.and_then(|p| p.message), None);
    }

    #[test]
    fn numbers_a_person_cannot_read_are_refused_or_left_out() {
        assert_eq!(ToolProgress::from_report(f64::NAN, None, None), None);
        assert_eq!(ToolProgress::from_report(-1.0, Some(3.0), None), None);
        assert_eq!(ToolProgress::from_report(f64::INFINITY, None, None), None);
        let no_total = ToolProgress::from_report(2.0, Some(f64::NAN), None).unwrap();
        assert_eq!(no_total.total, None);
        let zero_total = ToolProgress::from_report(2.0, Some(0.0), None).unwrap();
        assert_eq!(zero_total.fraction(), None);
    }

    #[test]
    fn the_label_says_the_count_the_total_and_the_message() {
        let report = |p, t, m| ToolProgress::from_report(p, t, m).unwrap().label();
        assert_eq!(
            report(3.0, Some(10.0), Some("indexing files")),
            "3/10 · indexing files"
        );
        assert_eq!(report(3.0, None, Some("indexing")), "3 · indexing");
        assert_eq!(report(0.4, Some(1.0), None), "40%");
        assert_eq!(report(2.5, Some(10.0), None), "2.5/10");
        let over = ToolProgress::from_report(12.0, Some(10.0), None).unwrap();
        assert_eq!(over.fraction(), Some(1.0));
    }

    #[test]
    fn it_round_trips_and_leaves_out_what_is_absent() {
        let report = ToolProgress::from_report(3.0, Some(10.0), Some("step")).unwrap();
        let json = serde_json::to_string(&report).unwrap();
        assert_eq!(json, r#"{"progress":3.0,"total":10.0,"message":"step"}"#);
        let back: ToolProgress = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report);
        let bare: ToolProgress = serde_json::from_str(r#"{"progress":1}"#).unwrap();
        assert_eq!(bare.label(), "1");
    }
}
