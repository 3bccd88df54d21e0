//! The scripted provider end to end: script files on disk, streams played on a runtime.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use seedpod_protocol::{CallId, FinishReason, ModelItem, Usage};
use tempfile::TempDir;

use super::*;
use crate::testing::{scripted_model, tool_spec};

/// A temp dir holding `script.jsonl` with `lines`.
fn script(lines: &[&str]) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    (dir, path)
}

async fn play(
    provider: &ScriptedProvider,
    body: &str,
) -> Vec<Result<ProviderEvent, ProviderError>> {
    provider.stream(body.to_owned()).collect().await
}

fn texts(events: &[Result<ProviderEvent, ProviderError>]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(ProviderEvent::TextDelta(t)) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streams_text_in_chunks_then_usage_and_finish() {
    let (_dir, path) = script(&[r#"{"text":"hello world","chunk_chars":4}"#]);
    let provider = ScriptedProvider::from_file(&path, None).unwrap();
    assert_eq!(provider.kind(), ProviderKind::Scripted);
    let events = play(&provider, "0123456789abcdef").await;
    assert_eq!(texts(&events), ["hell", "o wo", "rld"]);
    assert_eq!(
        events[3..],
        [
            Ok(ProviderEvent::Usage(Usage {
                input_tokens: 4,
                output_tokens: 2,
                ..Usage::default()
            })),
            Ok(ProviderEvent::Finish(FinishReason::Stop)),
        ]
    );
}

#[tokio::test]
async fn multibyte_text_is_chunked_on_character_boundaries() {
    let text = "żółć 🎉 naïve — ok";
    let line = serde_json::json!({"text": text, "chunk_chars": 3, "usage": {"input_tokens": 1, "output_tokens": 1}});
    let (_dir, path) = script(&[&line.to_string()]);
    let provider = ScriptedProvider::from_file(&path, None).unwrap();
    let chunks = texts(&play(&provider, "{}").await);
    assert!(chunks.iter().all(|c| c.chars().count() <= 3), "{chunks:?}");
    assert_eq!(chunks.len(), text.chars().count().div_ceil(3));
    assert_eq!(chunks.concat(), text);
}

#[tokio::test]
async fn tool_calls_stream_raw_arguments_with_generated_ids() {
    let (_dir, path) = script(&[
        "{}",
        r#"{"thinking":"plan","signature":"s1","tool_calls":[{"name":"read","arguments":"{ \"path\":\"a\" }"},{"id":"mine","name":"echo"}],"chunk_chars":5}"#,
    ]);
    let provider = ScriptedProvider::from_file(&path, None).unwrap();
    play(&provider, "{}").await;
    let events: Vec<ProviderEvent> = play(&provider, "{}")
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    let arguments: String = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ToolCallDelta {
                index: 0,
                arguments,
            } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(arguments, "{ \"path\":\"a\" }");
    assert_eq!(events[0], ProviderEvent::ThinkingDelta("plan".into()));
    assert_eq!(events[1], ProviderEvent::ThinkingSignature("s1".into()));
    assert_eq!(
        events[2],
        ProviderEvent::ToolCallStart {
            index: 0,
            call_id: CallId::new("call_2_0"),
            name: "read".into(),
        }
    );
    assert!(events.contains(&ProviderEvent::ToolCallStart {
        index: 1,
        call_id: CallId::new("mine"),
        name: "echo".into(),
    }));
    assert_eq!(
        events.last(),
        Some(&ProviderEvent::Finish(FinishReason::ToolUse))
    );
}

#[tokio::test]
async fn record_file_persists_the_cursor_across_instances() {
    let (dir, path) = script(&[
        "// two answers",
        r#"{"text":"first"}"#,
        r#"{"text":"second"}"#,
    ]);
    let record = dir.path().join("requests.jsonl");
    let one = ScriptedProvider::from_file(&path, Some(record.clone())).unwrap();
    assert_eq!(texts(&play(&one, r#"{"n":1}"#).await), ["first"]);
    drop(one);

    let two = ScriptedProvider::from_file(&path, Some(record.clone())).unwrap();
    assert_eq!(texts(&play(&two, r#"{"n":2}"#).await), ["second"]);
    assert_eq!(
        std::fs::read_to_string(&record).unwrap(),
        "{\"n\":1}\n{\"n\":2}\n"
    );
}

#[tokio::test]
async fn dropping_an_unpolled_stream_consumes_nothing() {
    let (dir, path) = script(&[r#"{"text":"only"}"#]);
    let record = dir.path().join("requests.jsonl");
    let provider = ScriptedProvider::from_file(&path, Some(record.clone())).unwrap();
    drop(provider.stream("{\"dropped\":true}".into()));
    assert_eq!(texts(&play(&provider, "{}").await), ["only"]);
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "{}\n");
}

#[tokio::test]
async fn exhausted_script_is_a_permanent_error_naming_the_file() {
    let (_dir, path) = script(&[r#"{"text":"only"}"#]);
    let provider = ScriptedProvider::from_file(&path, None).unwrap();
    play(&provider, "{}").await;
    let events = play(&provider, "{}").await;
    let expected = format!(
        "scripted provider: script exhausted after 1 responses (add lines to {})",
        path.display()
    );
    assert_eq!(events, [Err(ProviderError::permanent(expected))]);
}

#[tokio::test]
async fn scripted_errors_end_the_stream() {
    let (_dir, path) = script(&[
        r#"{"error":{"kind":"transient","message":"overloaded"}}"#,
        r#"{"text":"abcdef","chunk_chars":2,"error_after_chars":3,"error":{"kind":"permanent","message":"cut"}}"#,
    ]);
    let provider = ScriptedProvider::from_file(&path, None).unwrap();
    assert_eq!(
        play(&provider, "{}").await,
        [Err(ProviderError::transient("overloaded"))]
    );
    assert_eq!(
        play(&provider, "{}").await,
        [
            Ok(ProviderEvent::TextDelta("ab".into())),
            Ok(ProviderEvent::TextDelta("c".into())),
            Err(ProviderError::permanent("cut")),
        ]
    );
}

#[test]
fn unknown_field_is_rejected_with_its_line_number() {
    let (_dir, path) = script(&["{\"text\":\"fine\"}", "", "// note", "{\"txet\":\"oops\"}"]);
    let Err(err) = ScriptedProvider::from_file(&path, None) else {
        panic!("a misspelt field must be rejected");
    };
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{}:4: unknown field `txet`", path.display())),
        "{message}"
    );
}

#[test]
fn missing_script_says_which_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.jsonl");
    let Err(err) = ScriptedProvider::from_file(&path, None) else {
        panic!("a missing script must be an error");
    };
    assert!(err.to_string().contains("absent.jsonl"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn gate_holds_the_response_until_the_file_exists() {
    let (dir, path) = script(&[r#"{"text":"abcdef","chunk_chars":2,"gate":"open.flag"}"#]);
    let provider = ScriptedProvider::from_file(&path, None).unwrap();
    let mut stream = provider.stream("{}".into());
    assert_eq!(
        stream.next().await,
        Some(Ok(ProviderEvent::TextDelta("ab".into())))
    );
    let held = tokio::time::timeout(Duration::from_secs(60), stream.next()).await;
    assert!(held.is_err(), "the gate must hold the stream: {held:?}");

    std::fs::write(dir.path().join("open.flag"), "").unwrap();
    assert_eq!(
        stream.next().await,
        Some(Ok(ProviderEvent::TextDelta("cd".into())))
    );
    let rest: Vec<_> = stream.collect().await;
    assert_eq!(rest.len(), 3, "{rest:?}");
}

#[tokio::test(start_paused = true)]
async fn delays_use_tokio_time() {
    let provider = ScriptedProvider::from_steps(
        vec![ScriptStep {
            text: Some("abcd".into()),
            chunk_chars: Some(1),
            delay_ms: 1_000,
            chunk_delay_ms: 100,
            ..ScriptStep::default()
        }],
        None,
    )
    .unwrap();
    let start = tokio::time::Instant::now();
    let events = play(&provider, "{}").await;
    assert_eq!(texts(&events), ["a", "b", "c", "d"]);
    assert_eq!(start.elapsed(), Duration::from_millis(1_300));
}

#[test]
fn request_body_is_canonical_and_deterministic() {
    let provider = ScriptedProvider::from_steps(Vec::new(), None).unwrap();
    let model = scripted_model();
    let tools = vec![tool_spec("echo")];
    let items = vec![
        ModelItem::UserMessage { text: "hi".into() },
        ModelItem::ToolCall {
            call_id: CallId::new("c1"),
            name: "echo".into(),
            arguments: "{ \"b\":1, \"a\":2 }".into(),
        },
    ];
    let ctx = Context {
        model: &model,
        system_prompt: "be brief",
        tools: &tools,
        items: &items,
    };
    let body = provider.request_body(&ctx);
    assert_eq!(
        body,
        concat!(
            r#"{"model":"script","system":"be brief","#,
            r#""tools":[{"name":"echo","description":"test tool echo","parameters":{"type":"object"}}],"#,
            r#""items":[{"type":"user_message","text":"hi"},"#,
            r#"{"type":"tool_call","call_id":"c1","name":"echo","arguments":"{ \"b\":1, \"a\":2 }"}]}"#
        )
    );

    let (model2, tools2, items2) = (model.clone(), tools.clone(), items.clone());
    let equal = Context {
        model: &model2,
        system_prompt: "be brief",
        tools: &tools2,
        items: &items2,
    };
    let other = ScriptedProvider::from_steps(vec![ScriptStep::text("x")], None).unwrap();
    assert_eq!(other.request_body(&equal), body);
    assert_eq!(provider.request_body(&ctx), body);
}

#[test]
fn a_shared_script_gives_each_pod_its_own_steps() {
    let step = |text: &str, pod: Option<&str>| ScriptStep {
        pod: pod.map(str::to_owned),
        ..ScriptStep::text(text)
    };
    let steps = vec![
        step("root 1", None),
        step("kid 1", Some("kid")),
        step("root 2", None),
        step("kid 2", Some("kid")),
    ];
    let texts = |pod| -> Vec<String> {
        super::steps_for(steps.clone(), pod)
            .into_iter()
            .filter_map(|s| s.text)
            .collect()
    };
    assert_eq!(texts(Some("kid")), ["kid 1", "kid 2"]);
    assert_eq!(
        texts(Some("root")),
        ["root 1", "root 2"],
        "untagged: pods not named"
    );
    assert_eq!(texts(None), ["root 1", "root 2"]);
}
