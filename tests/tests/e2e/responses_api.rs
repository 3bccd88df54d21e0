//! The OpenAI Responses API end to end: `seedpod start --provider openai-responses` against a
//! loopback fake that speaks the real event stream (`support/responses_fake.rs`). A reasoning
//! model thinks, calls a tool, thinks again and answers; its encrypted reasoning goes back on the
//! next request unchanged, is kept in the log, and after `kill -9` and `seedpod restart` the
//! pod's next request is byte for byte what the live pod would have sent.

use seedpod_e2e::TestHome;
use seedpod_e2e::responses_fake::{ResponsesFake, ResponsesStream};
use seedpod_protocol::{Entry, EntryKind, ModelItem, ResponsesReasoning, Usage};
use serde_json::Value;

/// Opaque reasoning as OpenAI hands it out (base64 with `+`, `/` and padding).
const ENCRYPTED_A: &str = "gAAAAABpQ1x0+reasoning/about/the/notes==";
const ENCRYPTED_B: &str = "gAAAAABpQ1x1+and/the/answer+chain/v2=";

fn start(sb: &TestHome, name: &str, base_url: &str) {
    // The fake answers every request with its next stream, so a pod asking it for its window
    // would take a reply meant for the model.
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).expect("project config dir");
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n")
        .expect("project config");
    let out = sb
        .cmd()
        .args([
            "start",
            name,
            "--provider",
            "openai-responses",
            "--base-url",
        ])
        .args([base_url, "--model", "gpt-test"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run seedpod start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn input_of(body: &str) -> Vec<Value> {
    let value: Value = serde_json::from_str(body).expect("a JSON request body");
    value["input"].as_array().expect("an input list").clone()
}

fn reasoning_items(input: &[Value]) -> Vec<&Value> {
    input.iter().filter(|i| i["type"] == "reasoning").collect()
}

/// `body` with one more user message at the end of its input: the request a pod sends when
/// `text` is sent to it.
fn with_user_message(body: &str, text: &str) -> String {
    let end = body
        .find(r#"],"tools":"#)
        .expect("the input list ends before the tools");
    let text = serde_json::to_string(text).expect("a string serialises");
    let message = format!(r#"{{"type":"message","role":"user","content":{text}}}"#);
    format!("{},{message}{}", &body[..end], &body[end..])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_goes_back_unchanged_and_a_restarted_pod_sends_the_same_bytes() {
    let sb = TestHome::new();
    std::fs::write(sb.path().join("notes.txt"), "the plan: ship it on Friday\n").unwrap();
    // Usage as a real server counts this pod's prompt (its tools alone are thousands of
    // tokens): a server that reports reading less than it was sent looks like one that
    // silently cut the prompt, and the pod would shrink its window.
    let fake = ResponsesFake::start(vec![
        ResponsesStream::new()
            .reasoning("rs_A", &["Read the notes first."], Some(ENCRYPTED_A))
            .function_call("call_A", "read_file", r#"{"path": "notes.txt"}"#)
            .completed(9_000, 0, 120, 96),
        ResponsesStream::new()
            .reasoning(
                "rs_B",
                &["The notes say Friday.", "Answer briefly."],
                Some(ENCRYPTED_B),
            )
            .text("The plan is to ship it on Friday.")
            .completed(9_400, 8_192, 40, 16),
        ResponsesStream::new()
            .text("Still Friday.")
            .completed(9_800, 9_216, 5, 0),
    ])
    .await;
    sb.user_config("[responses]\nreasoning_effort = \"high\"\nreasoning_summary = \"auto\"\n");
    start(&sb, "p", &fake.base_url());

    let reply = sb.ok(&["send", "p", "what is the plan?"]);
    assert!(reply.contains("ship it on Friday"), "{reply}");

    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "a tool call, then the answer");
    assert_eq!(requests[0].path, "/v1/responses");
    assert!(requests[0].header("authorization").is_none(), "no key set");
    let first: Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(first["store"], false);
    assert_eq!(first["stream"], true);
    assert_eq!(
        first["include"],
        serde_json::json!(["reasoning.encrypted_content"])
    );
    assert!(
        first["instructions"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let read_file = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .expect("the read_file tool is offered");
    assert_eq!(read_file["type"], "function");
    assert_eq!(read_file["parameters"]["type"], "object");

    // The second request carries the reasoning item exactly as it was handed out, before the
    // call it led to and the call's result.
    let second = input_of(&requests[1].body);
    let kinds: Vec<&str> = second.iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    let sent = reasoning_items(&second);
    assert_eq!(sent[0]["id"], "rs_A");
    assert_eq!(sent[0]["encrypted_content"], ENCRYPTED_A);
    assert_eq!(sent[0]["summary"][0]["text"], "Read the notes first.");
    assert!(
        requests[1]
            .body
            .contains(&format!(r#""encrypted_content":"{ENCRYPTED_A}""#)),
        "the encrypted text is sent byte for byte"
    );
    assert_eq!(second[2]["arguments"], r#"{"path": "notes.txt"}"#);
    assert!(
        second[3]["output"]
            .as_str()
            .is_some_and(|o| o.contains("ship it on Friday")),
        "{}",
        second[3]
    );

    // Kept in the log: both reasoning items, whole; the summary is what people see.
    let logged: Vec<ResponsesReasoning> = sb
        .history("p")
        .await
        .into_iter()
        .filter_map(|entry| match entry.kind {
            EntryKind::AssistantItem {
                item:
                    ModelItem::Reasoning {
                        responses: Some(item),
                        ..
                    },
            } => Some(item),
            _ => None,
        })
        .collect();
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert_eq!(logged[1].encrypted_content.as_deref(), Some(ENCRYPTED_B));
    assert_eq!(
        logged[1].summary,
        ["The notes say Friday.", "Answer briefly."]
    );
    let history = sb.ok(&["history", "p"]);
    assert!(history.contains("Read the notes first."), "{history}");
    // Cached tokens are reported apart, as for the other providers, in the log's usage entries.
    let usages: Vec<Usage> = sb
        .segment_files("p")
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            text.lines()
                .map(|line| serde_json::from_str::<Entry>(line).unwrap())
                .collect::<Vec<_>>()
        })
        .filter_map(|entry| match entry.kind {
            EntryKind::Usage(usage) => Some(usage),
            _ => None,
        })
        .collect();
    assert!(
        usages
            .iter()
            .any(|u| u.cache_read_tokens == 8_192 && u.input_tokens == 1_208),
        "{usages:?}"
    );

    let before = sb.context("p").await;
    assert!(before.contains(ENCRYPTED_A) && before.contains(ENCRYPTED_B));
    // A later edit of the config file changes new pods, not this one: its options are recorded.
    sb.user_config("[responses]\nreasoning_effort = \"low\"\nstore = true\n");
    sb.kill9("p").await;
    sb.ok(&["restart", "p"]);
    assert_eq!(
        sb.context("p").await,
        before,
        "byte-identical after kill -9"
    );

    let reply = sb.ok(&["send", "p", "and now?"]);
    assert!(reply.contains("Still Friday."), "{reply}");
    let bodies = fake.bodies();
    assert_eq!(bodies.len(), 3);
    assert_eq!(
        bodies[2],
        with_user_message(&before, "and now?"),
        "the restarted pod's request is the live pod's, plus the new message"
    );
}

#[test]
fn a_provider_name_that_does_not_exist_is_refused_with_the_ones_that_do() {
    let sb = TestHome::new();
    let out = sb
        .cmd()
        .args(["start", "p", "--provider", "openai-respones"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("openai-responses"), "{err}");
}

#[test]
fn openai_itself_without_a_key_names_the_variable_to_set() {
    let sb = TestHome::new();
    let out = sb
        .cmd()
        .args(["start", "p", "--provider", "openai-responses"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
}
