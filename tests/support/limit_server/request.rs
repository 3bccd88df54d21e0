//! What a model request asks for, read from either wire format into one neutral shape, and the
//! answer the fake gives it.

use serde_json::Value;

/// Which API a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `POST …/chat/completions`.
    OpenAi,
    /// `POST …/messages`.
    Anthropic,
}

impl Wire {
    /// The wire a request to `path` speaks, if it is a model request at all (a window probe,
    /// `GET /v1/models` and the like, is not).
    pub(super) fn of_path(method: &str, path: &str) -> Option<Wire> {
        let path = path.split('?').next().unwrap_or_default();
        match (method, path) {
            ("POST", p) if p.ends_with("/chat/completions") => Some(Wire::OpenAi),
            ("POST", p) if p.ends_with("/messages") => Some(Wire::Anthropic),
            _ => None,
        }
    }
}

/// How the fake answered a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Over the limit: HTTP 400 with the provider's "too long" error.
    Refused,
    /// A request the fake could not read (not JSON, no messages): HTTP 400 saying so.
    Malformed(String),
    /// A summary that repeats these `FACT:` lines.
    Summary { facts: Vec<String> },
    /// A `read_file` call for this path.
    ReadFile { path: String },
    /// A call the person's message scripted (`call NAME {ARGUMENTS}` lines; one per request,
    /// in order, each after the result of the one before).
    Call { name: String, arguments: String },
    /// A `shell` call for this command.
    Shell { command: String },
    /// The short text that follows a tool result.
    AfterTool,
    /// A plain text of `reply_chars` characters.
    Text,
}

/// The parts of a request that decide the answer.
#[derive(Debug, Default)]
pub(super) struct Asked {
    pub model: String,
    /// The system prompt (OpenAI: the first message when it is a system message).
    pub system: String,
    pub tools_offered: bool,
    /// OpenAI `stream_options.include_usage`: whether to send the usage chunk.
    pub include_usage: bool,
    /// The conversation in order, one part per text or tool result.
    pub parts: Vec<Part>,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// Text on the user side (Anthropic also sends system items this way).
    User(String),
    /// A system message after the system prompt (OpenAI's system items).
    Note(String),
    ToolResult(String),
    /// Anything the assistant said.
    Assistant(String),
}

/// Prefix of a user message asking for a file, as the tests type it: `read FILE`.
const READ_COMMAND: &str = "read ";
/// Prefix of each line of a user message scripting a tool call: `call NAME {ARGUMENTS}`.
const CALL_COMMAND: &str = "call ";
/// Prefix of a user message asking for a command, as the tests type it: `run COMMAND`.
const RUN_COMMAND: &str = "run ";
/// Marks a line a summary must keep; the fake repeats every one it is shown.
const FACT_MARK: &str = "FACT: ";

impl Asked {
    pub fn answer(&self) -> Answer {
        if self.is_summary_request() {
            return Answer::Summary {
                facts: self.facts(),
            };
        }
        if let Some(call) = self.scripted_call() {
            return call;
        }
        let last = self
            .parts
            .iter()
            .rev()
            .find(|part| !matches!(part, Part::Note(_)));
        match last {
            Some(Part::User(text)) => {
                if let Some(command) = text.trim().strip_prefix(RUN_COMMAND)
                    && !command.trim().is_empty()
                {
                    return Answer::Shell {
                        command: command.trim().to_owned(),
                    };
                }
                match text.trim().strip_prefix(READ_COMMAND) {
                    Some(path) if !path.trim().is_empty() && !path.contains('\n') => {
                        Answer::ReadFile {
                            path: path.trim().to_owned(),
                        }
                    }
                    Some(_) | None => Answer::Text,
                }
            }
            Some(Part::ToolResult(_)) => Answer::AfterTool,
            Some(Part::Assistant(_) | Part::Note(_)) | None => Answer::Text,
        }
    }

    /// The next call the last user message scripts, if it scripts one not yet answered.
    fn scripted_call(&self) -> Option<Answer> {
        let at = self
            .parts
            .iter()
            .rposition(|p| matches!(p, Part::User(_)))?;
        let Part::User(text) = &self.parts[at] else {
            return None;
        };
        let calls: Vec<(&str, &str)> = text
            .lines()
            .filter_map(|line| line.trim().strip_prefix(CALL_COMMAND))
            .filter_map(|rest| rest.split_once(' '))
            .collect();
        let answered = self.parts[at..]
            .iter()
            .filter(|p| matches!(p, Part::ToolResult(_)))
            .count();
        calls.get(answered).map(|(name, arguments)| Answer::Call {
            name: (*name).to_owned(),
            arguments: arguments.trim().to_owned(),
        })
    }

    /// A compaction's summary request: nothing to call, and instructions about a summary. (A
    /// normal request offers tools, even after a compaction put a summary in its history.)
    fn is_summary_request(&self) -> bool {
        !self.tools_offered && self.system.to_lowercase().contains("summar")
    }

    /// Every distinct `FACT: …` line in the conversation (not in the system prompt, whose
    /// instructions may mention the mark), from the mark to the end of its line.
    fn facts(&self) -> Vec<String> {
        let mut facts: Vec<String> = Vec::new();
        for part in &self.parts {
            let (Part::User(text)
            | Part::Note(text)
            | Part::ToolResult(text)
            | Part::Assistant(text)) = part;
            for line in text.lines() {
                if let Some(at) = line.find(FACT_MARK) {
                    let fact = line[at..].trim_end().to_owned();
                    if !facts.contains(&fact) {
                        facts.push(fact);
                    }
                }
            }
        }
        facts
    }
}

/// Read a request body of `wire` into what decides the answer.
pub(super) fn read(wire: Wire, body: &str) -> Result<Asked, String> {
    let request: Value =
        serde_json::from_str(body).map_err(|e| format!("the request body is not JSON: {e}"))?;
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("the request has no messages array")?;
    let mut asked = Asked {
        model: request
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("fake")
            .to_owned(),
        tools_offered: request
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|tools| !tools.is_empty()),
        include_usage: request
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Asked::default()
    };
    match wire {
        Wire::OpenAi => read_openai(messages, &mut asked),
        Wire::Anthropic => {
            asked.system = request.get("system").map(text_of).unwrap_or_default();
            read_anthropic(messages, &mut asked);
        }
    }
    Ok(asked)
}

fn read_openai(messages: &[Value], asked: &mut Asked) {
    for (i, message) in messages.iter().enumerate() {
        let content = message.get("content").map(text_of).unwrap_or_default();
        match message.get("role").and_then(Value::as_str) {
            Some("system") if i == 0 => asked.system = content,
            Some("system" | "developer") => asked.parts.push(Part::Note(content)),
            Some("user") => asked.parts.push(Part::User(content)),
            Some("tool") => asked.parts.push(Part::ToolResult(content)),
            _ => asked.parts.push(Part::Assistant(content)),
        }
    }
}

fn read_anthropic(messages: &[Value], asked: &mut Asked) {
    for message in messages {
        let user = message.get("role").and_then(Value::as_str) == Some("user");
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(text @ Value::String(_)) => {
                vec![serde_json::json!({"type": "text", "text": text})]
            }
            _ => Vec::new(),
        };
        for block in &blocks {
            let kind = block.get("type").and_then(Value::as_str);
            let part = match (user, kind) {
                (true, Some("tool_result")) => {
                    Part::ToolResult(block.get("content").map(text_of).unwrap_or_default())
                }
                (true, _) => Part::User(text_of(block)),
                (false, _) => Part::Assistant(text_of(block)),
            };
            asked.parts.push(part);
        }
    }
}

/// The text of a content value: a string, a block with `text`, or an array of such blocks
/// (joined by newlines).
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(text_of)
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(block) => block.get("text").map(text_of).unwrap_or_default(),
        _ => String::new(),
    }
}
