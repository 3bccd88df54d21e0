//! The layered system prompt is rendered once per segment and replayed as
//! stored (editing AGENTS.md changes the next segment, never the current one), and `@path`
//! references reach the model as file attachments, or as placeholders with an alert.

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::{ClientMode, EntryKind, Method, Segment, ServerMsg, SystemItem};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stored_prompt_replays_after_agents_md_changes_until_clear() {
    let sb = TestHome::new();
    std::fs::write(sb.path().join("AGENTS.md"), "Rule: indent with tabs.\n").unwrap();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"}), json!({"text": "ok"})]);
    sb.ok(&[
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
        "--instructions",
        "You review Rust code.",
    ]);
    let context = sb.context("p").await;
    for expected in [
        "indent with tabs",
        "You review Rust code.",
        "read_file",
        "shell",
    ] {
        assert!(context.contains(expected), "missing {expected}: {context}");
    }

    std::fs::write(sb.path().join("AGENTS.md"), "Rule: indent with spaces.\n").unwrap();
    sb.ok(&["restart", "p"]);
    assert_eq!(
        sb.context("p").await,
        context,
        "a restart replays the stored prompt byte for byte"
    );
    let shown = sb.ok(&["prompt", "show", "p"]);
    assert!(shown.contains("indent with spaces"), "{shown}");
    assert!(shown.contains("AGENTS.md"), "sources are named: {shown}");
    assert!(shown.contains("differs"), "{shown}");

    let out = sb.ok(&["send", "p", "/clear"]);
    assert!(out.contains("new segment"), "{out}");
    let cleared = sb.context("p").await;
    assert!(cleared.contains("indent with spaces"), "{cleared}");
    assert!(
        cleared.contains("You review Rust code."),
        "kept across /clear"
    );
    assert!(
        sb.ok(&["prompt", "show", "p"])
            .contains("uses exactly this prompt")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_references_attach_text_and_listings_and_flag_what_they_cannot() {
    let sb = TestHome::new();
    std::fs::write(sb.path().join("notes.txt"), "the launch code is 4711\n").unwrap();
    std::fs::create_dir(sb.path().join("src")).unwrap();
    std::fs::write(sb.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let script = sb.script("s.jsonl", &[json!({"text": "read them"})]);
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let mut control = sb.connect("p", ClientMode::Control).await;
    let segments = vec![
        Segment::text("look at "),
        Segment::FileRef {
            path: "notes.txt".into(),
        },
        Segment::FileRef { path: "src".into() },
        Segment::FileRef {
            path: "missing.txt".into(),
        },
        Segment::FileRef {
            path: "/etc/hostname".into(),
        },
    ];
    control
        .call(Method::Run { segments })
        .await
        .expect("run accepted");
    wait_for(&mut events, &mut seen, is_run_end).await;

    let attachments: Vec<(String, String)> = sb
        .history("p")
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EntryKind::SystemItem {
                item: SystemItem::FileAttachment { path, body },
                ..
            } => Some((path, body)),
            _ => None,
        })
        .collect();
    assert_eq!(attachments.len(), 4, "{attachments:?}");
    assert!(attachments[0].1.starts_with("[File: notes.txt]"));
    assert!(attachments[0].1.contains("4711"));
    assert!(attachments[1].1.starts_with("[Dir: src]"));
    assert!(attachments[1].1.contains("main.rs"));
    assert!(
        attachments[2].1.contains("not attached"),
        "{:?}",
        attachments[2]
    );
    assert!(
        attachments[3].1.contains("not attached"),
        "{:?}",
        attachments[3]
    );
    assert!(attachments[3].1.contains("outside"), "{:?}", attachments[3]);

    let alerts: Vec<&str> = seen
        .iter()
        .filter_map(|m| match m {
            ServerMsg::Alert { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        alerts.iter().any(|a| a.contains("missing.txt")),
        "{alerts:?}"
    );
    assert!(
        alerts.iter().any(|a| a.contains("/etc/hostname")),
        "{alerts:?}"
    );
    // Committed before the request: the model saw the file's content.
    let request = sb.requests("p").pop().expect("one request");
    assert!(request.contains("4711"), "{request}");
}

/// The most a fresh pod's first request may take with the built-in tools (docs/agent-loop.md
/// §A lean request).
const LEAN_REQUEST_BYTES: usize = 16 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_pods_first_request_is_lean_and_says_each_thing_once() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "hello"]);
    let first = sb.requests("p").into_iter().next().expect("one request");
    assert!(
        first.len() <= LEAN_REQUEST_BYTES,
        "the first request is {} bytes",
        first.len()
    );
    let body: serde_json::Value = serde_json::from_str(&first).unwrap();
    let system = body["system"].as_str().expect("a system prompt");
    let tools = body["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 15, "every built-in tool is offered");
    // The essentials: the working rules, the runtime's markers, each file tool's protocol.
    for essential in [
        "Look before you act",
        "Ask before anything destructive",
        "`[notification]`",
        "NO_REPLY",
        "## edit_file\nBEFORE:",
        "## shell\nBEFORE:",
    ] {
        assert!(system.contains(essential), "missing {essential:?}");
    }
    // Each tool is described once, in its schema, and not again in the prompt.
    for tool in tools {
        // As the body spells it: JSON-escaped, without the quotes.
        let escaped = tool["description"].to_string();
        let description = &escaped[1..escaped.len() - 1];
        assert_eq!(first.matches(description).count(), 1, "{description}");
    }
}
