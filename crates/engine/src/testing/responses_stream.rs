//! Responses API event streams for fakes: each builder call appends the events a real server
//! sends for one output item, in its order and shapes (`response.output_item.added`, the item's
//! deltas, its `….done` events, `response.output_item.done`), and a terminal call ends the
//! stream with `response.completed`, `response.incomplete` or `response.failed`. The text is
//! what goes over the wire: `event: TYPE` and `data: JSON` lines, a blank line after each.

use serde_json::{Value, json};

/// A stream being scripted; `completed` (or another ending) turns it into SSE text.
#[derive(Debug, Clone)]
pub struct ResponsesStream {
    events: Vec<Value>,
    /// The next item's `output_index`.
    next_index: u32,
    /// Every item so far, as `response.output_item.done` gave it (the final `output`).
    output: Vec<Value>,
}

impl Default for ResponsesStream {
    fn default() -> Self {
        ResponsesStream::new()
    }
}

impl ResponsesStream {
    /// A stream that has announced its response (`response.created`, `response.in_progress`).
    pub fn new() -> ResponsesStream {
        let response =
            json!({"id": "resp_fake", "object": "response", "status": "in_progress", "output": []});
        ResponsesStream {
            events: vec![
                json!({"type": "response.created", "response": response}),
                json!({"type": "response.in_progress", "response": response}),
            ],
            next_index: 0,
            output: Vec::new(),
        }
    }

    /// A reasoning item: its summary parts streamed in two pieces each, then the whole item
    /// with `encrypted_content` when given.
    pub fn reasoning(mut self, id: &str, summary: &[&str], encrypted: Option<&str>) -> Self {
        let index = self.take_index();
        self.events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "reasoning", "id": id, "summary": []}}),
        );
        for (part, text) in summary.iter().enumerate() {
            let base = json!({"item_id": id, "output_index": index, "summary_index": part});
            self.events.push(with(
                &base,
                json!({"type": "response.reasoning_summary_part.added",
                "part": {"type": "summary_text", "text": ""}}),
            ));
            for piece in halves(text) {
                self.events.push(with(
                    &base,
                    json!({"type": "response.reasoning_summary_text.delta", "delta": piece}),
                ));
            }
            self.events.push(with(
                &base,
                json!({"type": "response.reasoning_summary_text.done", "text": text}),
            ));
            self.events.push(with(
                &base,
                json!({"type": "response.reasoning_summary_part.done",
                "part": {"type": "summary_text", "text": text}}),
            ));
        }
        let mut item = json!({"type": "reasoning", "id": id,
            "summary": summary.iter().map(|t| json!({"type": "summary_text", "text": t})).collect::<Vec<_>>()});
        if let Some(encrypted) = encrypted {
            item["encrypted_content"] = json!(encrypted);
        }
        self.done(index, item)
    }

    /// An assistant message of one `output_text` part, streamed in two pieces.
    pub fn text(mut self, text: &str) -> Self {
        let index = self.take_index();
        let id = format!("msg_{index}");
        self.events.push(json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []}}));
        let base = json!({"item_id": id, "output_index": index, "content_index": 0});
        self.events.push(with(
            &base,
            json!({"type": "response.content_part.added",
            "part": {"type": "output_text", "text": "", "annotations": []}}),
        ));
        for piece in halves(text) {
            self.events.push(with(
                &base,
                json!({"type": "response.output_text.delta", "delta": piece}),
            ));
        }
        self.events.push(with(
            &base,
            json!({"type": "response.output_text.done", "text": text}),
        ));
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        self.events.push(with(
            &base,
            json!({"type": "response.content_part.done", "part": part}),
        ));
        self.done(
            index,
            json!({"type": "message", "id": id, "role": "assistant",
            "status": "completed", "content": [part]}),
        )
    }

    /// A function call whose arguments stream in two pieces.
    pub fn function_call(mut self, call_id: &str, name: &str, arguments: &str) -> Self {
        let index = self.take_index();
        let id = format!("fc_{index}");
        self.events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "function_call", "id": id, "call_id": call_id, "name": name,
                "arguments": "", "status": "in_progress"}}),
        );
        let base = json!({"item_id": id, "output_index": index});
        for piece in halves(arguments) {
            self.events.push(with(
                &base,
                json!({"type": "response.function_call_arguments.delta", "delta": piece}),
            ));
        }
        self.events.push(with(
            &base,
            json!({"type": "response.function_call_arguments.done", "arguments": arguments}),
        ));
        self.done(
            index,
            json!({"type": "function_call", "id": id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": "completed"}),
        )
    }

    /// Any event, as given (unknown types, malformed shapes).
    pub fn event(mut self, event: Value) -> Self {
        self.events.push(event);
        self
    }

    /// End with `response.completed` and this usage: `input` tokens of which `cached` came
    /// from the cache, `output` of which `reasoning` were reasoning.
    pub fn completed(self, input: u64, cached: u64, output: u64, reasoning: u64) -> String {
        let usage = json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": input + output});
        self.end(
            "response.completed",
            json!({"status": "completed", "usage": usage}),
        )
    }

    /// End with `response.incomplete` for `reason` (`max_output_tokens`, `content_filter`).
    pub fn incomplete(self, reason: &str) -> String {
        self.end(
            "response.incomplete",
            json!({"status": "incomplete",
            "incomplete_details": {"reason": reason},
            "usage": {"input_tokens": 10, "output_tokens": 5}}),
        )
    }

    /// End with `response.failed` carrying the error `code` and `message`.
    pub fn failed(self, code: &str, message: &str) -> String {
        self.end(
            "response.failed",
            json!({"status": "failed",
            "error": {"code": code, "message": message}}),
        )
    }

    /// The events so far, with no ending (a cut stream).
    pub fn unfinished(self) -> String {
        self.events.iter().map(frame).collect()
    }

    fn end(mut self, kind: &str, fields: Value) -> String {
        let mut response = json!({"id": "resp_fake", "object": "response", "output": self.output});
        if let (Some(response), Some(fields)) = (response.as_object_mut(), fields.as_object()) {
            response.extend(fields.clone());
        }
        self.events
            .push(json!({"type": kind, "response": response}));
        self.unfinished()
    }

    fn done(mut self, index: u32, item: Value) -> Self {
        self.events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
        self.output.push(item);
        self
    }

    fn take_index(&mut self) -> u32 {
        self.next_index += 1;
        self.next_index - 1
    }
}

/// One event on the wire. Sequence numbers are left out: nothing reads them.
fn frame(event: &Value) -> String {
    let kind = event["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {event}\n\n")
}

/// `base`'s fields with `extra`'s added.
fn with(base: &Value, extra: Value) -> Value {
    let mut merged = extra;
    if let (Some(merged), Some(base)) = (merged.as_object_mut(), base.as_object()) {
        for (key, value) in base {
            merged.insert(key.clone(), value.clone());
        }
    }
    merged
}

/// `text` in two pieces (on a character boundary), as a server streams it.
fn halves(text: &str) -> Vec<&str> {
    let mid = text
        .char_indices()
        .map(|(i, _)| i)
        .nth(text.chars().count() / 2)
        .unwrap_or(text.len());
    [&text[..mid], &text[mid..]]
        .into_iter()
        .filter(|piece| !piece.is_empty())
        .collect()
}
