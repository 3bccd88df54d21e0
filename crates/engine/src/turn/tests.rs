//! The turn loop against the scripted provider and the in-memory host.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use seedpod_protocol::{CallId, ModelItem, RunTrigger, Usage};
use tokio::sync::Notify;

use super::*;
use crate::provider::ProviderEvent;
use crate::scripted::{
    ScriptStep, ScriptToolCall, ScriptedErrorKind, ScriptedFailure, ScriptedProvider,
};
use crate::testing::{CompletionLog, EchoTool, MemoryHost, ReleaseTool, WaitTool};

const USAGE: Usage = Usage {
    input_tokens: 10,
    output_tokens: 5,
    cache_read_tokens: 0,
    cache_creation_tokens: 0,
};

fn answer_step(text: &str) -> ScriptStep {
    ScriptStep {
        usage: Some(USAGE),
        ..ScriptStep::text(text)
    }
}

fn calls_step(calls: &[(&str, &str)]) -> ScriptStep {
    ScriptStep {
        usage: Some(USAGE),
        tool_calls: calls
            .iter()
            .map(|(name, arguments)| ScriptToolCall {
                id: None,
                name: (*name).into(),
                arguments: (*arguments).into(),
            })
            .collect(),
        ..ScriptStep::default()
    }
}

fn echo_tools() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(EchoTool::named("echo")));
    tools
}

/// A host whose run has started with "hi", answering from `steps`.
fn host(steps: Vec<ScriptStep>, tools: &ToolRegistry) -> MemoryHost {
    let provider = ScriptedProvider::from_steps(steps, None).unwrap();
    let mut host = MemoryHost::new(Arc::new(provider), tools);
    host.start_run("hi");
    host
}

async fn run(
    host: &mut MemoryHost,
    tools: &ToolRegistry,
    max_iterations: u32,
) -> Result<RunOutcome, HostError> {
    let provider = host.provider.clone();
    drive_run(
        host,
        provider.as_ref(),
        tools,
        &RunLimits {
            max_iterations,
            ..RunLimits::default()
        },
    )
    .await
}

fn run_start() -> [EntryKind; 2] {
    [
        EntryKind::RunStart {
            trigger: RunTrigger::User,
        },
        EntryKind::UserInput {
            segments: vec![seedpod_protocol::Segment::text("hi")],
            text: "hi".into(),
            queue_id: None,
        },
    ]
}

fn assistant(item: ModelItem) -> EntryKind {
    EntryKind::AssistantItem { item }
}

fn call(call_id: &str, name: &str, arguments: &str) -> EntryKind {
    assistant(ModelItem::ToolCall {
        call_id: CallId::new(call_id),
        name: name.into(),
        arguments: arguments.into(),
    })
}

fn result(call_id: &str, name: &str, content: &str, is_error: bool) -> EntryKind {
    EntryKind::ToolResult {
        call_id: CallId::new(call_id),
        name: name.into(),
        content: content.into(),
        is_error,
        meta: Default::default(),
    }
}

/// The log with each result's measured duration checked and taken out, so it can be compared
/// with what a test expects.
fn timeless(log: &[EntryKind]) -> Vec<EntryKind> {
    log.iter()
        .cloned()
        .map(|mut kind| {
            if let EntryKind::ToolResult { meta, .. } = &mut kind {
                assert!(
                    meta.duration_ms.is_some(),
                    "every result says how long it took"
                );
                meta.duration_ms = None;
            }
            kind
        })
        .collect()
}

fn turn_end(iteration: u32, finish: FinishReason) -> EntryKind {
    EntryKind::TurnEnd { iteration, finish }
}

fn completed() -> EntryKind {
    EntryKind::RunEnd {
        reason: RunEndReason::Completed,
        message: None,
    }
}

/// The tool result entries of `log`, as (name, content, is_error).
fn results(log: &[EntryKind]) -> Vec<(String, String, bool)> {
    log.iter()
        .filter_map(|e| match e {
            EntryKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } => Some((name.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn plain_answer_commits_text_then_ends_the_run() {
    let tools = ToolRegistry::new();
    let mut host = host(vec![answer_step("hello there")], &tools);
    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );

    let mut expected = run_start().to_vec();
    expected.extend([
        EntryKind::Usage(USAGE),
        assistant(ModelItem::AssistantText {
            text: "hello there".into(),
        }),
        turn_end(0, FinishReason::Stop),
        completed(),
    ]);
    assert_eq!(timeless(&host.log), expected);
    assert_eq!(host.bodies.len(), 1);
    assert!(
        host.provisional
            .contains(&ProviderEvent::TextDelta("hello there".into()))
    );
}

#[tokio::test]
async fn tool_call_round_trip_sends_the_result_in_the_next_request() {
    let tools = echo_tools();
    let raw = r#"{ "say": "hi" }"#;
    let mut host = host(
        vec![calls_step(&[("echo", raw)]), answer_step("done")],
        &tools,
    );
    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );

    let mut expected = run_start().to_vec();
    expected.extend([
        EntryKind::Usage(USAGE),
        call("call_1_0", "echo", raw),
        result("call_1_0", "echo", raw, false),
        turn_end(0, FinishReason::ToolUse),
        EntryKind::Usage(USAGE),
        assistant(ModelItem::AssistantText {
            text: "done".into(),
        }),
        turn_end(1, FinishReason::Stop),
        completed(),
    ]);
    assert_eq!(timeless(&host.log), expected);
    assert_eq!(host.bodies.len(), 2);
    assert!(host.bodies[1].contains(r#""type":"tool_result","call_id":"call_1_0""#));
}

#[tokio::test]
async fn results_are_committed_in_call_order_not_finish_order() {
    let release = Arc::new(Notify::new());
    let finished: CompletionLog = Arc::new(Mutex::new(Vec::new()));
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(WaitTool {
        name: "wait".into(),
        release: release.clone(),
        finished: finished.clone(),
    }));
    tools.register(Arc::new(ReleaseTool {
        name: "release".into(),
        release,
        finished: finished.clone(),
    }));
    let steps = vec![
        calls_step(&[("wait", "{}"), ("release", "{}")]),
        answer_step("ok"),
    ];
    let mut host = host(steps, &tools);
    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );

    assert_eq!(*finished.lock().unwrap(), ["release", "wait"]);
    let committed: Vec<String> = results(&host.log).into_iter().map(|r| r.0).collect();
    assert_eq!(committed, ["wait", "release"]);
}

#[tokio::test]
async fn a_denied_call_is_not_run_and_its_reason_is_the_error_result() {
    let finished: CompletionLog = Arc::new(Mutex::new(Vec::new()));
    let mut tools = echo_tools();
    tools.register(Arc::new(ReleaseTool {
        name: "release".into(),
        release: Arc::new(Notify::new()),
        finished: finished.clone(),
    }));
    let steps = vec![
        calls_step(&[("release", "{}"), ("echo", "{}")]),
        answer_step("ok"),
    ];
    let mut host = host(steps, &tools);
    host.deny_tools = vec!["release".into()];
    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );

    assert!(finished.lock().unwrap().is_empty(), "a denied tool ran");
    assert_eq!(
        host.authorized,
        [CallId::new("call_1_0"), CallId::new("call_1_1")]
    );
    assert_eq!(
        results(&host.log),
        [
            ("release".to_string(), "denied: release".to_string(), true),
            ("echo".to_string(), "{}".to_string(), false),
        ]
    );
}

#[tokio::test]
async fn unknown_tool_and_invalid_arguments_become_error_results() {
    let tools = echo_tools();
    let steps = vec![
        calls_step(&[("teleport", "{}"), ("echo", "{\"say\":")]),
        answer_step("sorry"),
    ];
    let mut host = host(steps, &tools);
    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );

    let results = results(&host.log);
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0],
        (
            "teleport".into(),
            "unknown tool \"teleport\"; available: echo".into(),
            true
        )
    );
    assert!(results[1].2, "{results:?}");
    assert!(results[1].1.contains("not valid JSON"), "{results:?}");
    assert_eq!(
        host.authorized,
        [CallId::new("call_1_1")],
        "no policy is asked about a tool that is not there"
    );
}

#[tokio::test]
async fn iteration_limit_stops_after_exactly_that_many_requests() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("requests.jsonl");
    let steps = vec![calls_step(&[("echo", "{}")]); 5];
    let provider = ScriptedProvider::from_steps(steps, Some(record.clone())).unwrap();
    let tools = echo_tools();
    let mut host = MemoryHost::new(Arc::new(provider), &tools);
    host.start_run("hi");

    assert_eq!(
        run(&mut host, &tools, 3)
            .await
            .expect("the host never fails"),
        RunOutcome::LimitReached
    );
    let requests = std::fs::read_to_string(&record).unwrap().lines().count();
    assert_eq!(requests, 3);
    assert_eq!(
        host.log.last(),
        Some(&EntryKind::RunEnd {
            reason: RunEndReason::LimitReached,
            message: Some("stopped after 3 model requests (limit)".into()),
        })
    );
    let turn_ends = host
        .log
        .iter()
        .filter(|e| matches!(e, EntryKind::TurnEnd { .. }))
        .count();
    assert_eq!(turn_ends, 3);
}

#[tokio::test]
async fn provider_error_commits_nothing_partial_and_ends_the_run() {
    let tools = ToolRegistry::new();
    let step = ScriptStep {
        text: Some("half an answer".into()),
        error: Some(ScriptedFailure {
            kind: ScriptedErrorKind::Permanent,
            message: "invalid API key".into(),
        }),
        error_after_chars: Some(4),
        ..ScriptStep::default()
    };
    let mut host = host(vec![step], &tools);
    let outcome = run(&mut host, &tools, 20).await;
    assert_eq!(
        outcome.expect("the host never fails"),
        RunOutcome::Failed {
            message: "invalid API key".into()
        }
    );

    let mut expected = run_start().to_vec();
    expected.push(EntryKind::RunEnd {
        reason: RunEndReason::Error,
        message: Some("invalid API key".into()),
    });
    assert_eq!(timeless(&host.log), expected);
    assert!(
        host.provisional
            .contains(&ProviderEvent::TextDelta("half".into())),
        "the partial text was still broadcast"
    );
}

#[tokio::test]
async fn unanswered_calls_in_history_run_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("requests.jsonl");
    let provider =
        ScriptedProvider::from_steps(vec![answer_step("resumed")], Some(record.clone())).unwrap();
    let tools = echo_tools();
    let mut host = MemoryHost::new(Arc::new(provider), &tools);
    host.start_run("hi");
    host.record(EntryKind::Usage(USAGE));
    host.record(call("c1", "echo", "{\"n\":1}"));

    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );
    assert_eq!(
        timeless(&host.log[4..]),
        [
            result("c1", "echo", "{\"n\":1}", false),
            turn_end(0, FinishReason::ToolUse),
            EntryKind::Usage(USAGE),
            assistant(ModelItem::AssistantText {
                text: "resumed".into()
            }),
            turn_end(1, FinishReason::Stop),
            completed(),
        ]
    );
    let sent = std::fs::read_to_string(&record).unwrap();
    assert_eq!(sent.lines().collect::<Vec<_>>(), [host.bodies[1].as_str()]);
    assert!(sent.contains(r#""type":"tool_result","call_id":"c1""#));
}

#[tokio::test]
async fn host_commit_failure_stops_the_loop_without_further_commits() {
    let tools = echo_tools();
    let steps = vec![calls_step(&[("echo", "{}")]), answer_step("never")];
    let mut host = host(steps, &tools);
    // Attempts: 0 usage, 1 tool call, 2 tool result (fails).
    host.fail_commit = Some(2);
    let outcome = run(&mut host, &tools, 20).await;

    let Err(err) = outcome else {
        panic!("a failed commit must fail the run: {outcome:?}");
    };
    assert!(
        matches!(&err, HostError::Log(cause) if cause.to_string().contains("disk full")),
        "{err:?}"
    );
    assert!(
        matches!(&err, HostError::Log(cause) if cause.is::<crate::testing::InjectedLogFailure>()),
        "the host's own error is kept whole: {err:?}"
    );
    assert_eq!(host.commit_attempts, 3);
    assert_eq!(host.log.last(), Some(&call("call_1_0", "echo", "{}")));
    assert!(
        !host.log.iter().any(|k| matches!(
            k,
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { .. }
            }
        )),
        "the model was not asked again"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_run_mid_tool_loses_nothing_and_a_new_run_resumes() {
    let release = Arc::new(Notify::new());
    let finished: CompletionLog = Arc::new(Mutex::new(Vec::new()));
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(WaitTool {
        name: "wait".into(),
        release: release.clone(),
        finished,
    }));
    let steps = vec![calls_step(&[("wait", "{}")]), answer_step("after")];
    let mut host = host(steps, &tools);

    let stalled = tokio::time::timeout(Duration::from_secs(5), run(&mut host, &tools, 20)).await;
    assert!(stalled.is_err(), "the tool should still be waiting");
    assert_eq!(host.log.last(), Some(&call("call_1_0", "wait", "{}")));

    release.notify_one();
    assert_eq!(
        run(&mut host, &tools, 20)
            .await
            .expect("the host never fails"),
        RunOutcome::Completed
    );
    assert_eq!(
        timeless(&host.log[4..]),
        [
            result("call_1_0", "wait", "wait was released", false),
            turn_end(0, FinishReason::ToolUse),
            EntryKind::Usage(USAGE),
            assistant(ModelItem::AssistantText {
                text: "after".into()
            }),
            turn_end(1, FinishReason::Stop),
            completed(),
        ]
    );
}

#[test]
fn drive_run_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let tools = ToolRegistry::new();
    let mut host = host(Vec::new(), &tools);
    let provider = host.provider.clone();
    let limits = RunLimits::default();
    assert_eq!(limits.max_iterations, DEFAULT_MAX_ITERATIONS);
    let future = drive_run(&mut host, provider.as_ref(), &tools, &limits);
    assert_send(&future);
}

#[tokio::test]
async fn a_repeated_failing_call_is_told_to_change_and_five_failures_stop_the_run() {
    let tools = echo_tools();
    // The model keeps calling a tool that does not exist, each time with other arguments
    // except the second, which repeats the first.
    let steps = vec![
        calls_step(&[("missing", r#"{"n":1}"#)]),
        calls_step(&[("missing", r#"{"n":1}"#)]),
        calls_step(&[("missing", r#"{"n":3}"#)]),
        calls_step(&[("missing", r#"{"n":4}"#)]),
        calls_step(&[("missing", r#"{"n":5}"#)]),
        answer_step("never asked"),
    ];
    let mut host = host(steps, &tools);
    let outcome = run(&mut host, &tools, 20).await.unwrap();
    let RunOutcome::NoProgress { message } = outcome else {
        panic!("the fifth failure in a row stops the run: {outcome:?}");
    };
    assert!(
        message.contains("5 tool calls failed in a row"),
        "{message}"
    );
    let answered = |log: &[EntryKind]| {
        log.iter().any(|k| {
            matches!(
                k,
                EntryKind::AssistantItem {
                    item: ModelItem::AssistantText { .. }
                }
            )
        })
    };
    assert!(!answered(&host.log), "no request after the brake");
    let results: Vec<&str> = host
        .log
        .iter()
        .filter_map(|k| match k {
            EntryKind::ToolResult { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 5);
    assert!(!results[0].contains("failed 2 times"), "{}", results[0]);
    assert!(
        results[1].contains("failed 2 times in this run"),
        "{}",
        results[1]
    );
    assert!(results[2..].iter().all(|r| !r.contains("failed 2 times")));
    assert_eq!(
        host.log.last(),
        Some(&EntryKind::RunEnd {
            reason: RunEndReason::NoProgress,
            message: Some(message),
        })
    );
}

#[tokio::test]
async fn a_resumed_run_brakes_as_the_uninterrupted_one_would() {
    let tools = echo_tools();
    // Four failures are already in history when the run resumes; one more stops it.
    let steps = vec![calls_step(&[("missing", r#"{"n":5}"#)]), answer_step("no")];
    let mut host = host(steps, &tools);
    for n in 1..=4 {
        let id = format!("old{n}");
        host.record(call(&id, "missing", &format!("{{\"n\":{n}}}")));
        host.record(result(&id, "missing", "unknown tool", true));
        host.record(turn_end(n - 1, FinishReason::ToolUse));
    }
    let outcome = run(&mut host, &tools, 20).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::NoProgress { .. }),
        "{outcome:?}"
    );
    assert!(
        !host.log.iter().any(|k| matches!(
            k,
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { .. }
            }
        )),
        "the model was not asked again"
    );
}

/// A run that fails for length says what the pod tried and which setting decides; any other
/// failure is the server's message alone.
#[test]
fn a_run_failed_for_length_says_what_was_tried_and_what_to_set() {
    let too_long = ProviderError::permanent(
        "openai: HTTP 400: This model's maximum context length is 2048 tokens. However, your \
         messages resulted in 2600 tokens.",
    );
    let message = failure_message(&too_long, MAX_REFUSAL_RECOVERIES);
    assert!(message.starts_with(&too_long.to_string()), "{message}");
    assert!(message.contains("3 times"), "{message}");
    assert!(
        message.contains("set context_window in the pod's config"),
        "{message}"
    );
    assert!(
        !message.contains("shorten"),
        "never blames the message: {message}"
    );
    assert!(failure_message(&too_long, 1).contains("once"));

    let other = ProviderError::permanent("openai: HTTP 401: bad key");
    assert_eq!(failure_message(&other, 2), other.to_string());
}
