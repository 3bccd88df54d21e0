//! What a hook said, read from how it ended: the exit-code and stdout conventions of
//! docs/hooks.md ("What a hook answers").
//!
//! - exit 0, nothing on stdout: no opinion;
//! - exit 0, a JSON object on stdout: `decision` (`allow`, `deny`, `ask`, `block`), `reason`,
//!   `context`;
//! - exit 2: deny (`pre_tool`) or block (`user_prompt`), with stderr as the reason;
//! - anything else (another status, a signal, stdout that is not a JSON object, more output
//!   than the cap, a timeout): the hook failed, and the event's failure rule applies.

use seedpod_config::HookEvent;
use serde::Deserialize;

use super::run::{MAX_HOOK_OUTPUT_BYTES, Ran};

/// The exit status that means "no" without JSON (the convention other agent tools use too).
pub const EXIT_REFUSE: i32 = 2;

/// The most characters of a reason or a context a hook's answer carries to the model or the
/// person; the rest is cut with a note.
pub const MAX_ANSWER_CHARS: usize = 8 * 1024;

/// A hook's decision about a tool call or an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
    Ask,
    Block,
}

impl Decision {
    fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
            Decision::Block => "block",
        }
    }

    /// Whether `event` gives this decision a meaning.
    fn fits(self, event: HookEvent) -> bool {
        match (event, self) {
            (HookEvent::PreTool, Decision::Allow | Decision::Deny | Decision::Ask) => true,
            (HookEvent::UserPrompt, Decision::Block) => true,
            (
                HookEvent::PreTool
                | HookEvent::PostTool
                | HookEvent::UserPrompt
                | HookEvent::TurnEnd
                | HookEvent::Notification
                | HookEvent::PreCompact
                | HookEvent::SessionStart,
                _,
            ) => false,
        }
    }
}

/// The JSON a hook may print.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Printed {
    decision: Option<Decision>,
    reason: Option<String>,
    context: Option<String>,
}

/// What one hook run amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It said something (or nothing: all fields empty).
    Said {
        decision: Option<Decision>,
        reason: Option<String>,
        context: Option<String>,
    },
    /// It failed; `why` says how, in words for the person.
    Failed { why: String },
}

impl Answer {
    fn nothing() -> Answer {
        Answer::Said {
            decision: None,
            reason: None,
            context: None,
        }
    }
}

/// Read `ran` as `event`'s hook whose time limit was `timeout_secs`.
pub fn read(event: HookEvent, ran: Ran, timeout_secs: u64) -> Answer {
    let failed = |why: String| Answer::Failed { why };
    let (status, stdout, stderr, stdout_cut) = match ran {
        Ran::NotStarted(why) => return failed(why),
        Ran::TimedOut => {
            return failed(format!(
                "did not finish within {timeout_secs} s and was killed"
            ));
        }
        Ran::Exited {
            status,
            stdout,
            stderr,
            stdout_cut,
        } => (status, stdout, stderr, stdout_cut),
    };
    if stdout_cut {
        return failed(format!(
            "printed more than {MAX_HOOK_OUTPUT_BYTES} bytes, the most a hook's answer may be"
        ));
    }
    match status.code() {
        Some(0) => {}
        Some(EXIT_REFUSE) => {
            let refusal = match event {
                HookEvent::PreTool => Decision::Deny,
                HookEvent::UserPrompt => Decision::Block,
                HookEvent::PostTool
                | HookEvent::TurnEnd
                | HookEvent::Notification
                | HookEvent::PreCompact
                | HookEvent::SessionStart => {
                    return failed(format!(
                        "exited with status 2, which means nothing for a {} hook{}",
                        event.as_str(),
                        stderr_note(&stderr)
                    ));
                }
            };
            let reason = stderr.trim();
            return Answer::Said {
                decision: Some(refusal),
                reason: (!reason.is_empty()).then(|| cut(reason)),
                context: None,
            };
        }
        Some(code) => {
            return failed(format!("exited with status {code}{}", stderr_note(&stderr)));
        }
        None => return failed("was ended by a signal".into()),
    }
    if stdout.trim().is_empty() {
        return Answer::nothing();
    }
    let printed: Printed = match serde_json::from_str(stdout.trim()) {
        Ok(printed) => printed,
        Err(err) => {
            return failed(format!(
                "printed something that is not the JSON object a hook answers with ({err})"
            ));
        }
    };
    if let Some(decision) = printed.decision
        && !decision.fits(event)
    {
        return failed(format!(
            "answered \"{}\", which a {} hook cannot decide",
            decision.as_str(),
            event.as_str()
        ));
    }
    Answer::Said {
        decision: printed.decision,
        reason: printed.reason.as_deref().map(str::trim).map(cut),
        context: printed
            .context
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(cut),
    }
}

/// `text`, at most `MAX_ANSWER_CHARS` characters.
fn cut(text: &str) -> String {
    match seedpod_protocol::char_prefix(text, MAX_ANSWER_CHARS) {
        Some(prefix) => format!("{prefix} [cut at {MAX_ANSWER_CHARS} characters]"),
        None => text.to_owned(),
    }
}

/// The first line of stderr, for a failure's words.
fn stderr_note(stderr: &str) -> String {
    match stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(line) => format!(": {}", cut_short(line)),
        None => String::new(),
    }
}

fn cut_short(line: &str) -> String {
    const SHORT: usize = 200;
    match seedpod_protocol::char_prefix(line, SHORT) {
        Some(prefix) => format!("{prefix}…"),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::ExitStatus;

    use super::*;

    fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran::Exited {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.into(),
            stderr: stderr.into(),
            stdout_cut: false,
        }
    }

    fn said(decision: Option<Decision>, reason: Option<&str>, context: Option<&str>) -> Answer {
        Answer::Said {
            decision,
            reason: reason.map(str::to_owned),
            context: context.map(str::to_owned),
        }
    }

    #[test]
    fn answers_read_by_the_documented_conventions() {
        use HookEvent::{PostTool, PreTool, TurnEnd, UserPrompt};
        let cases: Vec<(HookEvent, Ran, Answer)> = vec![
            (PreTool, exited(0, "", ""), said(None, None, None)),
            (PreTool, exited(0, "  \n", ""), said(None, None, None)),
            (
                PreTool,
                exited(0, r#"{"decision":"deny","reason":"no rm"}"#, ""),
                said(Some(Decision::Deny), Some("no rm"), None),
            ),
            (
                PreTool,
                exited(2, "ignored", "rm is not allowed here\n"),
                said(Some(Decision::Deny), Some("rm is not allowed here"), None),
            ),
            (
                UserPrompt,
                exited(2, "", "not today"),
                said(Some(Decision::Block), Some("not today"), None),
            ),
            (
                PostTool,
                exited(0, r#"{"context":"lint: 2 warnings"}"#, ""),
                said(None, None, Some("lint: 2 warnings")),
            ),
            (
                PostTool,
                exited(0, r#"{"context":"   "}"#, ""),
                said(None, None, None),
            ),
        ];
        for (event, ran, expected) in cases {
            assert_eq!(read(event, ran, 10), expected);
        }
        let failures: Vec<(HookEvent, Ran, &str)> = vec![
            (PreTool, exited(1, "", "boom\nmore"), "status 1: boom"),
            (PreTool, exited(0, "not json {", ""), "not the JSON object"),
            (PreTool, exited(0, "[1,2]", ""), "not the JSON object"),
            (
                PreTool,
                exited(0, r#"{"decision":"maybe"}"#, ""),
                "not the JSON",
            ),
            (
                PreTool,
                exited(0, r#"{"decison":"deny"}"#, ""),
                "not the JSON",
            ),
            (
                PreTool,
                exited(0, r#"{"decision":"block"}"#, ""),
                "cannot decide",
            ),
            (
                PostTool,
                exited(0, r#"{"decision":"deny"}"#, ""),
                "cannot decide",
            ),
            (TurnEnd, exited(2, "", ""), "means nothing"),
            (PreTool, Ran::TimedOut, "within 10 s"),
            (
                PreTool,
                Ran::Exited {
                    status: ExitStatus::from_raw(0),
                    stdout: "x".into(),
                    stderr: String::new(),
                    stdout_cut: true,
                },
                "more than",
            ),
            (
                PreTool,
                Ran::Exited {
                    status: ExitStatus::from_raw(libc::SIGKILL),
                    stdout: String::new(),
                    stderr: String::new(),
                    stdout_cut: false,
                },
                "signal",
            ),
        ];
        for (event, ran, words) in failures {
            match read(event, ran, 10) {
                Answer::Failed { why } => assert!(why.contains(words), "{why} lacks {words}"),
                other => panic!("expected a failure with {words}, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_long_reason_is_cut() {
        let long = "x".repeat(MAX_ANSWER_CHARS * 3);
        let Answer::Said {
            reason: Some(reason),
            ..
        } = read(HookEvent::PreTool, exited(2, "", &long), 10)
        else {
            panic!("a deny");
        };
        assert!(reason.len() < MAX_ANSWER_CHARS + 50);
        assert!(reason.ends_with("characters]"));
    }
}
