//! Every JSON example in docs/protocol.md decodes as the message it claims to be and encodes
//! back to the same JSON value, so the documentation cannot drift from the wire.

use seedpod_protocol::{Request, ServerMsg, decode_request};

fn blocks(tag: &str) -> Vec<String> {
    let doc = include_str!("../../../docs/protocol.md");
    let fence = format!("```json {tag}\n");
    doc.split(&fence)
        .skip(1)
        .map(|rest| {
            rest.split("```")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn client_examples_are_valid_requests() {
    let examples = blocks("client");
    assert!(examples.len() >= 6, "found {}", examples.len());
    for example in examples {
        let request: Request =
            decode_request(&example).unwrap_or_else(|e| panic!("{example}: {e}"));
        let again: serde_json::Value = serde_json::to_value(&request).unwrap();
        let original: serde_json::Value = serde_json::from_str(&example).unwrap();
        assert_eq!(again, original, "{example}");
    }
}

#[test]
fn server_examples_are_valid_frames() {
    let examples = blocks("server");
    assert!(examples.len() >= 12, "found {}", examples.len());
    for example in examples {
        let msg: ServerMsg =
            serde_json::from_str(&example).unwrap_or_else(|e| panic!("{example}: {e}"));
        assert_ne!(msg, ServerMsg::Unknown, "{example}");
        let again: serde_json::Value = serde_json::to_value(&msg).unwrap();
        let original: serde_json::Value = serde_json::from_str(&example).unwrap();
        assert_eq!(again, original, "{example}");
    }
}
