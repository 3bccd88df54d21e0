//! A loopback OpenAI Chat Completions endpoint that checks the tools' schemas the way OpenAI
//! does before it answers, and refuses the whole request with OpenAI's 400 when one is wrong —
//! what a pod meets when an MCP server ships a schema OpenAI will not take.
//!
//! The checks (`schema_problem`) are the ones OpenAI's API applies to `tools[].function.
//! parameters` in non-strict mode, as its errors describe them: the root must be `type:
//! object` and have none of `anyOf`, `oneOf`, `allOf`, `enum`, `not`; every `array` needs
//! `items`; `properties` is an object of schemas, `required` a list of names, and `type` a
//! JSON Schema type. A request that passes gets a recorded text answer.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the fake answers an accepted request with: one assistant message, streamed.
const ANSWER: &str = concat!(
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",",
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Schemas accepted.\"},",
    "\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",",
    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: [DONE]\n\n",
);

/// One request the fake saw, and whether it accepted it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub body: String,
    /// OpenAI's error message, when it refused.
    pub refused: Option<String>,
}

pub struct OpenAiFake {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl OpenAiFake {
    pub async fn start() -> OpenAiFake {
        OpenAiFake::answering(None).await
    }

    /// A fake whose server is down: every request gets HTTP `status` and OpenAI's error body
    /// (what a pod meets when the provider fails for good).
    pub async fn failing(status: u16) -> OpenAiFake {
        OpenAiFake::answering(Some(status)).await
    }

    async fn answering(failure: Option<u16>) -> OpenAiFake {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}/v1", listener.local_addr().expect("address"));
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, log.clone(), failure));
            }
        });
        OpenAiFake { base, seen }
    }

    /// The `--base-url` to give a pod.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

async fn serve(
    mut stream: tokio::net::TcpStream,
    seen: Arc<Mutex<Vec<Seen>>>,
    failure: Option<u16>,
) {
    // One request per connection: read the head, then Content-Length bytes of body.
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let (head_end, length) = loop {
        let Ok(n) = stream.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..at]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (at + 4, length);
        }
    };
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buffer[head_end..head_end + length]).into_owned();
    if let Some(status) = failure {
        let message = format!("The server had an error while processing your request ({status}).");
        let error = serde_json::json!({"error": {
            "message": message, "type": "server_error", "param": null, "code": null
        }})
        .to_string();
        let response = format!(
            "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: \
             {}\r\nconnection: close\r\n\r\n{error}",
            error.len()
        );
        if let Ok(mut log) = seen.lock() {
            log.push(Seen {
                body,
                refused: Some(message),
            });
        }
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
        return;
    }
    let refused = match serde_json::from_str::<Value>(&body) {
        Ok(request) => tools_problem(&request),
        Err(err) => Some(format!(
            "We could not parse the JSON body of your request: {err}"
        )),
    };
    let response = match &refused {
        Some(message) => {
            let error = serde_json::json!({"error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "tools",
                "code": "invalid_function_parameters"
            }})
            .to_string();
            format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: \
                 {}\r\nconnection: close\r\n\r\n{error}",
                error.len()
            )
        }
        None => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{ANSWER}",
            ANSWER.len()
        ),
    };
    if let Ok(mut log) = seen.lock() {
        log.push(Seen { body, refused });
    }
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// OpenAI's complaint about the request's tools, if it would have one.
pub fn tools_problem(request: &Value) -> Option<String> {
    for tool in request["tools"].as_array().into_iter().flatten() {
        let name = tool["function"]["name"].as_str().unwrap_or("?");
        let parameters = &tool["function"]["parameters"];
        if let Some(problem) = schema_problem(parameters) {
            return Some(format!("Invalid schema for function '{name}': {problem}"));
        }
    }
    None
}

/// What OpenAI says of a function's `parameters`, if it refuses them.
pub fn schema_problem(parameters: &Value) -> Option<String> {
    let Some(root) = parameters.as_object() else {
        return Some(format!(
            "schema must be a JSON Schema of 'type: \"object\"', got {parameters}."
        ));
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Some(format!(
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{}\"'.",
            root.get("type")
                .map(Value::to_string)
                .unwrap_or_else(|| "None".into())
        ));
    }
    for keyword in ["anyOf", "oneOf", "allOf", "enum", "not"] {
        if root.contains_key(keyword) {
            return Some(format!(
                "schema must have type 'object' and not have '{keyword}' at the top level."
            ));
        }
    }
    subschema_problem(parameters, "")
}

fn subschema_problem(node: &Value, path: &str) -> Option<String> {
    let map = match node {
        Value::Bool(_) => return None,
        Value::Object(map) => map,
        other => {
            return Some(format!(
                "In context=({path}), {other} is not of type 'object', 'boolean'."
            ));
        }
    };
    const TYPES: [&str; 7] = [
        "string", "number", "integer", "boolean", "object", "array", "null",
    ];
    let types: Vec<&Value> = match map.get("type") {
        None => Vec::new(),
        Some(Value::Array(list)) => list.iter().collect(),
        Some(one) => vec![one],
    };
    for kind in &types {
        if !kind.as_str().is_some_and(|k| TYPES.contains(&k)) {
            return Some(format!(
                "In context=({path}), {kind} is not valid under any of the given schemas."
            ));
        }
    }
    if types.iter().any(|k| k.as_str() == Some("array")) && !map.contains_key("items") {
        return Some(format!("In context=({path}), array schema missing items."));
    }
    if let Some(required) = map.get("required")
        && !required
            .as_array()
            .is_some_and(|r| r.iter().all(Value::is_string))
    {
        return Some(format!(
            "In context=({path}), {required} is not of type 'array'."
        ));
    }
    for keyword in ["properties", "$defs", "definitions", "patternProperties"] {
        match map.get(keyword) {
            None => {}
            Some(Value::Object(subs)) => {
                for (name, sub) in subs {
                    if let Some(problem) =
                        subschema_problem(sub, &format!("{path}, '{keyword}', '{name}'"))
                    {
                        return Some(problem);
                    }
                }
            }
            Some(other) => {
                return Some(format!(
                    "In context=({path}), {other} is not of type 'object'."
                ));
            }
        }
    }
    for keyword in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        match map.get(keyword) {
            Some(Value::Array(list)) if keyword == "items" => {
                for (i, sub) in list.iter().enumerate() {
                    if let Some(problem) = subschema_problem(sub, &format!("{path}, 'items', {i}"))
                    {
                        return Some(problem);
                    }
                }
            }
            Some(sub) => {
                if let Some(problem) = subschema_problem(sub, &format!("{path}, '{keyword}'")) {
                    return Some(problem);
                }
            }
            None => {}
        }
    }
    for keyword in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        match map.get(keyword) {
            None => {}
            Some(Value::Array(list)) => {
                for (i, sub) in list.iter().enumerate() {
                    if let Some(problem) =
                        subschema_problem(sub, &format!("{path}, '{keyword}', {i}"))
                    {
                        return Some(problem);
                    }
                }
            }
            Some(other) => {
                return Some(format!(
                    "In context=({path}), {other} is not of type 'array'."
                ));
            }
        }
    }
    None
}
