//! Retries end to end: both real providers against the loopback server, driven by the turn loop
//! with paused time, so every wait is exact and instant.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use seedpod_protocol::{EntryKind, ModelConfig, ModelItem, ProviderKind};
use tokio::time::Instant;
use tracing_subscriber::fmt::MakeWriter;

use super::*;
use crate::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::openai::{OpenAiConfig, OpenAiProvider};
use crate::testing::{MemoryHost, MockServer, Reply, cut_after, model_config};
use crate::tool::ToolRegistry;
use crate::turn::{RunLimits, RunOutcome, drive_run_with_retry};

const ANTHROPIC_TEXT: &[u8] = include_bytes!("../../tests/fixtures/anthropic_text.sse");
const OPENAI_TEXT: &[u8] = include_bytes!("../../tests/fixtures/openai_text.sse");

/// The idle-read timeout the providers get here.
const IDLE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy)]
enum Kind {
    Anthropic,
    OpenAi,
}

const KINDS: [Kind; 2] = [Kind::Anthropic, Kind::OpenAi];

impl Kind {
    /// A recorded plain answer ("Hello, żółć 🎉 world.").
    fn answer(self) -> &'static [u8] {
        match self {
            Kind::Anthropic => ANTHROPIC_TEXT,
            Kind::OpenAi => OPENAI_TEXT,
        }
    }

    /// The answer cut right after its first piece of text.
    fn cut_mid_answer(self) -> Vec<u8> {
        cut_after(self.answer(), "\"Hello\"")
    }

    /// The answer cut after its opening events, before any text.
    fn cut_before_output(self) -> Vec<u8> {
        match self {
            Kind::Anthropic => cut_after(ANTHROPIC_TEXT, "content_block_start"),
            Kind::OpenAi => cut_after(OPENAI_TEXT, "\"role\":\"assistant\""),
        }
    }

    /// An error body in this provider's shape.
    fn error_body(self, message: &str) -> String {
        match self {
            Kind::Anthropic => format!(
                r#"{{"type":"error","error":{{"type":"api_error","message":"{message}"}}}}"#
            ),
            Kind::OpenAi => format!(r#"{{"error":{{"message":"{message}","type":"error"}}}}"#),
        }
    }

    fn model(self) -> ModelConfig {
        match self {
            Kind::Anthropic => model_config(ProviderKind::Anthropic, "claude-test"),
            Kind::OpenAi => model_config(ProviderKind::Openai, "gpt-test"),
        }
    }

    fn provider(self, base_url: &str) -> Arc<dyn Provider> {
        match self {
            Kind::Anthropic => Arc::new(
                AnthropicProvider::new(AnthropicConfig {
                    base_url: base_url.to_owned(),
                    api_key: Some("sk-ant-test".into()),
                    idle_read_timeout: IDLE,
                    ..AnthropicConfig::default()
                })
                .unwrap(),
            ),
            Kind::OpenAi => Arc::new(
                OpenAiProvider::new(OpenAiConfig {
                    base_url: format!("{base_url}/v1"),
                    idle_read_timeout: IDLE,
                    ..OpenAiConfig::default()
                })
                .unwrap(),
            ),
        }
    }
}

/// A host whose run has started with "hi", talking to `base_url`.
fn host(kind: Kind, base_url: &str) -> MemoryHost {
    let mut host = MemoryHost::new(kind.provider(base_url), &ToolRegistry::new());
    host.model = kind.model();
    host.start_run("hi");
    host
}

async fn run(host: &mut MemoryHost, policy: &RetryPolicy) -> RunOutcome {
    let provider = host.provider.clone();
    let tools = ToolRegistry::new();
    drive_run_with_retry(
        host,
        provider.as_ref(),
        &tools,
        &RunLimits::default(),
        policy,
    )
    .await
    .unwrap()
}

fn statuses(host: &MemoryHost) -> Vec<String> {
    host.provisional
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Status(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// The answers committed to the log.
fn answers(host: &MemoryHost) -> Vec<String> {
    host.log
        .iter()
        .filter_map(|e| match e {
            EntryKind::AssistantItem {
                item: ModelItem::AssistantText { text },
            } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn failure(outcome: RunOutcome) -> String {
    match outcome {
        RunOutcome::Failed { message } => message,
        other => panic!("expected a failed run, got {other:?}"),
    }
}

/// Log output captured as JSON lines while the returned guard lives.
#[derive(Clone, Default)]
struct CapturedLog(Arc<Mutex<Vec<u8>>>);

impl CapturedLog {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_writer(self.clone())
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Write for CapturedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for CapturedLog {
    type Writer = CapturedLog;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_waits_exactly_as_long_as_retry_after_says() {
    for kind in KINDS {
        let log = CapturedLog::default();
        let _guard = log.install();
        let limited =
            Reply::status(429, kind.error_body("slow down")).with_header("retry-after", "3");
        let server = MockServer::start(vec![limited, Reply::sse(kind.answer())]).await;
        let mut host = host(kind, &server.base_url());
        let started = Instant::now();
        assert_eq!(
            run(&mut host, &RetryPolicy::default()).await,
            RunOutcome::Completed,
            "{kind:?}"
        );

        assert_eq!(started.elapsed(), Duration::from_secs(3), "{kind:?}");
        assert_eq!(
            statuses(&host),
            ["Rate limited. Retrying in 3s (attempt 1/3)"]
        );
        assert_eq!(answers(&host), ["Hello, żółć 🎉 world."]);
        let log = log.text();
        assert!(log.contains(r#""event":"provider_rate_limit""#), "{log}");
        assert!(log.contains(r#""retry_after_ms":3000"#), "{log}");
    }
}

#[tokio::test(start_paused = true)]
async fn server_errors_are_retried_with_backoff_until_the_answer_comes() {
    for kind in KINDS {
        let log = CapturedLog::default();
        let _guard = log.install();
        let unavailable = || Reply::status(503, kind.error_body("busy"));
        let server = MockServer::start(vec![
            unavailable(),
            unavailable(),
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        let started = Instant::now();
        assert_eq!(
            run(&mut host, &RetryPolicy::default()).await,
            RunOutcome::Completed
        );

        // 1s and 2s of backoff, each jittered into [0.5, 1.0] of itself.
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(1500) && waited <= Duration::from_secs(3),
            "{kind:?} waited {waited:?}"
        );
        let statuses = statuses(&host);
        assert_eq!(statuses.len(), 2, "{statuses:?}");
        for (status, attempt) in statuses.iter().zip(["(attempt 1/3)", "(attempt 2/3)"]) {
            assert!(
                status.starts_with("Provider error (503). Retrying in ")
                    && status.ends_with(attempt),
                "{status}"
            );
        }
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert!(requests.iter().all(|r| r.body == host.bodies[0]));
        assert_eq!(answers(&host), ["Hello, żółć 🎉 world."], "answered once");
        let log = log.text();
        assert!(log.contains(r#""event":"provider_error""#), "{log}");
        assert!(log.contains(r#""status":503"#), "{log}");
        assert!(log.contains(r#""event":"llm_request_end""#), "{log}");
    }
}

#[tokio::test(start_paused = true)]
async fn bad_credentials_are_not_retried() {
    for kind in KINDS {
        let server = MockServer::start(vec![
            Reply::status(401, kind.error_body("invalid key")),
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        let message = failure(run(&mut host, &RetryPolicy::default()).await);

        assert!(
            message.contains("401 Unauthorized: invalid key"),
            "{message}"
        );
        assert!(message.contains("check the API key"), "{message}");
        assert_eq!(server.requests().len(), 1);
        assert!(statuses(&host).is_empty());
        assert_eq!(
            host.log.last(),
            Some(&EntryKind::RunEnd {
                reason: seedpod_protocol::RunEndReason::Error,
                message: Some(message),
            })
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_hung_stream_times_out_and_is_retried() {
    for kind in KINDS {
        let server = MockServer::start(vec![
            Reply::Hang { prefix: Vec::new() },
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        let started = Instant::now();
        assert_eq!(
            run(&mut host, &RetryPolicy::default()).await,
            RunOutcome::Completed
        );

        let waited = started.elapsed();
        assert!(
            waited >= IDLE && waited <= IDLE + Duration::from_secs(1),
            "{kind:?} waited {waited:?}"
        );
        let statuses = statuses(&host);
        assert_eq!(statuses.len(), 1, "{statuses:?}");
        assert!(statuses[0].contains("timed out after 30s"), "{statuses:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_hangs_after_text_began_fails_without_a_retry() {
    for kind in KINDS {
        let server = MockServer::start(vec![
            Reply::Hang {
                prefix: kind.cut_mid_answer(),
            },
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        let message = failure(run(&mut host, &RetryPolicy::default()).await);

        assert!(message.contains("timed out after 30s"), "{message}");
        assert!(message.contains("not shown twice"), "{message}");
        assert_eq!(server.requests().len(), 1);
        assert!(
            answers(&host).is_empty(),
            "nothing of the attempt is committed"
        );
        assert!(
            host.provisional
                .contains(&ProviderEvent::TextDelta("Hello".into()))
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_stream_cut_mid_answer_fails_without_a_retry() {
    for kind in KINDS {
        let server = MockServer::start(vec![
            Reply::sse(kind.cut_mid_answer()),
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        let message = failure(run(&mut host, &RetryPolicy::default()).await);

        assert!(message.contains("ended before its end marker"), "{message}");
        assert!(message.contains("not retried"), "{message}");
        assert_eq!(server.requests().len(), 1);
        assert!(answers(&host).is_empty());
        assert!(statuses(&host).is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn a_stream_cut_before_any_output_is_retried() {
    for kind in KINDS {
        let mut replies = vec![Reply::sse(kind.cut_before_output())];
        // OpenAI-compatible servers are asked once, unstreamed, whether the cut meant "too
        // long" (`overflow_behind_cut`); this one accepts the request, so it was the network.
        if let Kind::OpenAi = kind {
            replies.push(Reply::status(200, UNSTREAMED_ANSWER));
        }
        let probes = replies.len() - 1;
        replies.push(Reply::sse(kind.answer()));
        let server = MockServer::start(replies).await;
        let mut host = host(kind, &server.base_url());
        assert_eq!(
            run(&mut host, &RetryPolicy::default()).await,
            RunOutcome::Completed
        );
        assert_eq!(server.requests().len(), 2 + probes);
        assert_eq!(answers(&host), ["Hello, żółć 🎉 world."]);
    }
}

#[tokio::test(start_paused = true)]
async fn a_connection_cut_inside_a_chunked_body_is_retried() {
    let cut = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
        transfer-encoding: chunked\r\n\r\n40\r\ndata: {\"choi"
        .to_vec();
    let server = MockServer::start(vec![Reply::Raw(cut), Reply::sse(OPENAI_TEXT)]).await;
    let mut host = host(Kind::OpenAi, &server.base_url());
    assert_eq!(
        run(&mut host, &RetryPolicy::default()).await,
        RunOutcome::Completed
    );
    let statuses = statuses(&host);
    assert!(
        statuses[0].starts_with("Provider error: openai: the connection failed"),
        "{statuses:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_run_out_and_the_next_run_still_works() {
    let busy = || Reply::status(529, Kind::Anthropic.error_body("Overloaded"));
    let server = MockServer::start(vec![
        busy(),
        busy(),
        busy(),
        busy(),
        Reply::sse(ANTHROPIC_TEXT),
    ])
    .await;
    let mut host = host(Kind::Anthropic, &server.base_url());
    let log = CapturedLog::default();
    let guard = log.install();
    let message = failure(run(&mut host, &RetryPolicy::default()).await);
    drop(guard);
    assert!(message.contains("529"), "{message}");
    assert!(message.ends_with("(gave up after 3 retries)"), "{message}");
    assert_eq!(server.requests().len(), 4);
    assert_eq!(statuses(&host).len(), 3);
    // The waits are warnings; giving up is the one error line, with the attempt it ended on.
    let log = log.text();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""level":"ERROR""#))
        .collect();
    assert_eq!(errors.len(), 1, "{log}");
    assert!(
        errors[0].contains(r#""event":"provider_error""#) && errors[0].contains(r#""attempt":4"#),
        "{}",
        errors[0]
    );

    host.start_run("again");
    assert_eq!(
        run(&mut host, &RetryPolicy::default()).await,
        RunOutcome::Completed
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_connection_is_transient() {
    // Bound but not listening: connections are refused, and the port stays ours, so no other
    // test's server can take it over meanwhile.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let base_url = format!("http://{}", socket.local_addr().unwrap());
    let mut host = host(Kind::OpenAi, &base_url);
    let policy = RetryPolicy {
        max_retries: 1,
        ..RetryPolicy::default()
    };
    let message = failure(run(&mut host, &policy).await);
    assert!(message.contains("cannot connect to"), "{message}");
    assert!(message.ends_with("(gave up after 1 retry)"), "{message}");
    assert_eq!(statuses(&host).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_beyond_the_honoured_limit_fails_at_once() {
    let limited =
        Reply::status(429, Kind::OpenAi.error_body("quota")).with_header("retry-after", "3600");
    let server = MockServer::start(vec![limited]).await;
    let mut host = host(Kind::OpenAi, &server.base_url());
    let started = Instant::now();
    let message = failure(run(&mut host, &RetryPolicy::default()).await);
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert!(message.contains("asks to wait 3600s"), "{message}");
    assert!(statuses(&host).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_configured_policy_is_used() {
    let server = MockServer::start(vec![Reply::status(500, "{}"), Reply::status(500, "{}")]).await;
    let mut host = host(Kind::OpenAi, &server.base_url());
    let policy = RetryPolicy {
        max_retries: 1,
        base_delay_ms: 100,
        max_delay_ms: 100,
        ..RetryPolicy::default()
    };
    let started = Instant::now();
    let message = failure(run(&mut host, &policy).await);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(50) && waited <= Duration::from_millis(100),
        "{waited:?}"
    );
    assert!(message.ends_with("(gave up after 1 retry)"), "{message}");
    assert_eq!(
        statuses(&host),
        ["Provider error (500). Retrying in 1s (attempt 1/1)"]
    );
}

#[test]
fn backoff_doubles_from_the_base_up_to_the_cap() {
    let policy = RetryPolicy::default();
    let waits: Vec<u64> = (0..7)
        .map(|retry| policy.backoff(retry).as_millis() as u64)
        .collect();
    assert_eq!(waits, [1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    assert_eq!(policy.backoff(200), Duration::from_millis(30000));
}

#[test]
fn jitter_stays_in_range_and_is_reproducible_from_a_seed() {
    let mut jitter = Jitter::seeded(7);
    let factors: Vec<f64> = (0..10_000).map(|_| jitter.factor()).collect();
    assert!(factors.iter().all(|f| (0.5..1.0).contains(f)));
    let low = factors.iter().filter(|f| **f < 0.75).count();
    assert!((4_000..6_000).contains(&low), "roughly uniform: {low}");
    let mut again = Jitter::seeded(7);
    assert_eq!(again.factor(), factors[0]);
    let policy = RetryPolicy::default();
    let delay = policy.delay(1, &mut Jitter::seeded(7));
    assert_eq!(delay, Duration::from_millis(2000).mul_f64(factors[0]));
}

#[test]
fn waits_read_in_whole_seconds_rounded_up() {
    assert_eq!(whole_seconds(Duration::from_millis(1)), "1s");
    assert_eq!(whole_seconds(Duration::from_millis(730)), "1s");
    assert_eq!(whole_seconds(Duration::from_secs(3)), "3s");
    assert_eq!(whole_seconds(Duration::from_millis(3001)), "4s");
}

#[tokio::test(start_paused = true)]
async fn any_provider_is_retried_the_same_way() {
    use crate::scripted::{ScriptStep, ScriptedErrorKind, ScriptedFailure, ScriptedProvider};

    let overloaded = ScriptStep {
        error: Some(ScriptedFailure {
            kind: ScriptedErrorKind::Transient,
            message: "scripted overload".into(),
        }),
        ..ScriptStep::default()
    };
    let steps = vec![overloaded, ScriptStep::text("recovered")];
    let provider = ScriptedProvider::from_steps(steps, None).unwrap();
    let mut host = MemoryHost::new(Arc::new(provider), &ToolRegistry::new());
    host.start_run("hi");
    assert_eq!(
        run(&mut host, &RetryPolicy::default()).await,
        RunOutcome::Completed
    );
    let statuses = statuses(&host);
    assert_eq!(statuses.len(), 1);
    assert!(
        statuses[0].starts_with("Provider error: scripted overload. Retrying in 1s"),
        "{statuses:?}"
    );
    assert_eq!(answers(&host), ["recovered"]);
}

fn only(codes: &[u16]) -> RetryPolicy {
    RetryPolicy {
        retryable_statuses: RetryStatuses::new(codes).unwrap(),
        ..RetryPolicy::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_status_left_out_of_retryable_statuses_fails_at_once_and_says_why() {
    for kind in KINDS {
        let server = MockServer::start(vec![
            Reply::status(503, kind.error_body("busy")),
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        let message = failure(run(&mut host, &only(&[429])).await);
        assert!(
            message.contains("not retried: 503 is not in [retry] retryable_statuses"),
            "{kind:?}: {message}"
        );
        assert!(
            statuses(&host).is_empty(),
            "{kind:?}: no wait was announced"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_listed_status_is_retried_even_one_the_provider_calls_permanent() {
    for kind in KINDS {
        let server = MockServer::start(vec![
            Reply::status(409, kind.error_body("try again")),
            Reply::sse(kind.answer()),
        ])
        .await;
        let mut host = host(kind, &server.base_url());
        assert_eq!(
            run(&mut host, &only(&[409])).await,
            RunOutcome::Completed,
            "{kind:?}"
        );
        assert_eq!(statuses(&host).len(), 1, "{kind:?}");
        assert_eq!(answers(&host).len(), 1, "{kind:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_context_overflow_is_never_retried_even_with_its_status_listed() {
    let body = Kind::OpenAi.error_body(
        "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.",
    );
    let server = MockServer::start(vec![
        Reply::status(400, body.clone()),
        Reply::status(400, body.clone()),
        Reply::status(400, body),
    ])
    .await;
    let mut host = host(Kind::OpenAi, &server.base_url());
    let provider = host.provider.clone();
    let outcome = drive_run_with_retry(
        &mut host,
        provider.as_ref(),
        &ToolRegistry::new(),
        &RunLimits::default(),
        &only(&[400]),
    )
    .await;
    assert!(
        statuses(&host).is_empty(),
        "an overflow is answered by fitting the context, not by waiting: {outcome:?}"
    );
}

/// A one-token unstreamed answer: the server takes the request.
const UNSTREAMED_ANSWER: &str = r#"{"choices":[{"message":{"role":"assistant","content":"H"}}]}"#;

/// llama-cpp-python's refusal of a prompt over its 2,048-token window, as it answers an
/// unstreamed request (streamed, it answers 200 and cuts the stream instead).
const LLAMA_CPP_PYTHON_OVERFLOW: &str = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 3040 tokens (3040 in the messages, None in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

#[tokio::test(start_paused = true)]
async fn a_stream_cut_before_anything_is_asked_again_unstreamed_and_the_refusal_ends_it() {
    let server = MockServer::start(vec![
        Reply::sse(Vec::new()),
        Reply::status(400, LLAMA_CPP_PYTHON_OVERFLOW),
        Reply::sse(Kind::OpenAi.answer()),
    ])
    .await;
    let mut host = host(Kind::OpenAi, &server.base_url());
    let message = failure(run(&mut host, &RetryPolicy::default()).await);

    assert!(
        message.contains("maximum context length is 2048"),
        "{message}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no blind retry after the refusal");
    let probe: serde_json::Value = serde_json::from_str(&requests[1].body).unwrap();
    let first: serde_json::Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(probe["stream"], false);
    assert_eq!(probe["max_tokens"], 1);
    assert!(probe.get("stream_options").is_none());
    assert_eq!(probe["messages"], first["messages"], "the same prompt");
    assert!(statuses(&host).is_empty(), "no retry was announced");
}

#[tokio::test(start_paused = true)]
async fn a_cut_stream_the_server_accepts_unstreamed_is_retried_as_before() {
    let server = MockServer::start(vec![
        Reply::sse(Vec::new()),
        Reply::status(200, UNSTREAMED_ANSWER),
        Reply::sse(Kind::OpenAi.answer()),
    ])
    .await;
    let mut host = host(Kind::OpenAi, &server.base_url());
    let outcome = run(&mut host, &RetryPolicy::default()).await;

    assert!(matches!(outcome, RunOutcome::Completed), "{outcome:?}");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(answers(&host).len(), 1);
    assert_eq!(statuses(&host).len(), 1, "the retry was announced");
}

/// A server that cuts the stream and fails the same request unstreamed without a reason: the
/// cut is retried as usual, and when every retry is cut too the request ends as a "too long"
/// refusal stating no window, permanent, so the host can shrink its window instead of failing
/// the same way every turn. A network cut that the retries get past is unaffected.
#[tokio::test(start_paused = true)]
async fn a_stream_cut_and_failed_unstreamed_too_ends_as_an_unstated_overflow() {
    let policy = RetryPolicy {
        max_retries: 1,
        ..RetryPolicy::default()
    };
    let server = MockServer::start(vec![
        Reply::sse(Vec::new()),
        Reply::status(503, r#"{"error":{"message":"upstream died"}}"#),
        Reply::sse(Vec::new()),
    ])
    .await;
    let mut first = host(Kind::OpenAi, &server.base_url());
    let message = failure(run(&mut first, &policy).await);
    assert_eq!(server.requests().len(), 3, "asked once, retried once");
    assert!(message.contains("upstream died"), "{message}");
    let error = ProviderError::permanent(message.clone());
    let overflow = crate::window::overflow_of(&error).expect("read as too long");
    assert_eq!(overflow.limit, None, "{message}");

    let server = MockServer::start(vec![
        Reply::sse(Vec::new()),
        Reply::status(503, r#"{"error":{"message":"upstream died"}}"#),
        Reply::sse(Kind::OpenAi.answer()),
    ])
    .await;
    let mut second = host(Kind::OpenAi, &server.base_url());
    let outcome = run(&mut second, &policy).await;
    assert!(matches!(outcome, RunOutcome::Completed), "{outcome:?}");
}
