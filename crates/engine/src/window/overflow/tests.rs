//! Every "too long" wording we know, as the servers send it, through the real HTTP and SSE paths:
//! each must end the stream with a permanent error from which `overflow_of` reads the numbers.

use super::*;
use crate::anthropic::{AnthropicConfig, AnthropicProvider};
use crate::openai::{OpenAiConfig, OpenAiProvider};
use crate::provider::{Provider, ProviderEvent};
use crate::testing::{MockServer, Reply, drain};

fn openai(base_url: &str) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        base_url: base_url.to_owned(),
        ..OpenAiConfig::default()
    })
    .unwrap()
}

fn anthropic(base_url: &str) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        base_url: base_url.to_owned(),
        ..AnthropicConfig::default()
    })
    .unwrap()
}

fn overflow(limit: Option<u64>, requested: Option<u64>) -> Option<Overflow> {
    Some(Overflow { limit, requested })
}

/// The stream's last item, which must be an error.
async fn final_error(provider: &dyn Provider) -> ProviderError {
    let events = drain(provider.stream("{}".into())).await;
    match events.last() {
        Some(Err(err)) => err.clone(),
        other => panic!("expected an error, got {other:?} after {events:?}"),
    }
}

/// (who, HTTP status, error body, what `overflow_of` must read from it).
const STATUS_CASES: &[(&str, u16, &str, Option<Overflow>)] = &[
    (
        "OpenAI",
        400,
        r#"{"error":{"message":"This model's maximum context length is 16385 tokens. However, your messages resulted in 17000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        Some(Overflow {
            limit: Some(16_385),
            requested: Some(17_000),
        }),
    ),
    (
        "OpenAI, newer models",
        400,
        r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
        Some(Overflow {
            limit: None,
            requested: None,
        }),
    ),
    (
        "llama-cpp-python (default 2048 window)",
        400,
        r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 3600 tokens (3344 in the messages, 256 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        Some(Overflow {
            limit: Some(2_048),
            requested: Some(3_600),
        }),
    ),
    (
        "OpenRouter",
        400,
        r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140012 tokens (139000 of text input, 1012 in the output). Please reduce the length of either one.","code":400}}"#,
        Some(Overflow {
            limit: Some(131_072),
            requested: Some(140_012),
        }),
    ),
    (
        "vLLM",
        400,
        r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(5_000),
        }),
    ),
    (
        "vLLM, newer",
        400,
        r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(5_000),
        }),
    ),
    (
        "vLLM, max_model_len",
        400,
        r#"{"object":"error","message":"The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens.","type":"BadRequestError","param":null,"code":400}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(5_000),
        }),
    ),
    (
        "Anthropic",
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        Some(Overflow {
            limit: Some(200_000),
            requested: Some(210_000),
        }),
    ),
    (
        "Anthropic, with max_tokens",
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#,
        Some(Overflow {
            limit: Some(200_000),
            requested: Some(198_000),
        }),
    ),
    (
        "llama.cpp server, current",
        400,
        r#"{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(4_476),
        }),
    ),
    (
        "llama.cpp server, September 2025 (status 500, counts only in fields)",
        500,
        r#"{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}"#,
        Some(Overflow {
            limit: Some(256),
            requested: Some(1_407),
        }),
    ),
    (
        "llama.cpp server, model that cannot split its batch",
        400,
        r#"{"error":{"code":400,"message":"input (5000 tokens) is larger than the max context size (4096 tokens). skipping","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(5_000),
        }),
    ),
    (
        "Ollama passing on its runner's error",
        400,
        r#"{"error":"{\"code\":400,\"message\":\"the request exceeds the available context size\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":5354,\"n_ctx\":4096}"}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(5_354),
        }),
    ),
    (
        "Ollama",
        400,
        r#"{"error":"the input length exceeds the context length"}"#,
        Some(Overflow {
            limit: None,
            requested: None,
        }),
    ),
    (
        "LM Studio",
        400,
        r#"{"error":"Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: Some(5_000),
        }),
    ),
    (
        "LM Studio, a prompt whose kept start outgrows the window",
        400,
        r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}"#,
        Some(Overflow {
            limit: Some(4_096),
            requested: None,
        }),
    ),
    (
        "LM Studio, MLX engine",
        400,
        r#"{"error":"Context size has been exceeded."}"#,
        Some(Overflow {
            limit: None,
            requested: None,
        }),
    ),
    (
        "Mistral",
        400,
        r#"{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}"#,
        Some(Overflow {
            limit: Some(32_768),
            requested: Some(40_000),
        }),
    ),
    (
        "Gemini, OpenAI-compatible",
        400,
        r#"[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
        Some(Overflow {
            limit: Some(1_048_576),
            requested: Some(1_200_000),
        }),
    ),
    (
        "OpenAI rate limit that counts tokens",
        429,
        r#"{"error":{"message":"Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        None,
    ),
    (
        "an unknown model",
        404,
        r#"{"error":{"message":"The model `gpt-nope` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
        None,
    ),
];

#[tokio::test]
async fn every_known_http_overflow_is_permanent_and_states_its_numbers() {
    let replies = STATUS_CASES
        .iter()
        .map(|(_, status, body, _)| Reply::status(*status, *body))
        .collect();
    let server = MockServer::start(replies).await;
    let provider = openai(&server.base_url());
    for (who, status, _, expected) in STATUS_CASES {
        let err = final_error(&provider).await;
        assert_eq!(overflow_of(&err), *expected, "{who}: {err}");
        assert_eq!(err.status(), Some(*status), "{who}");
        if expected.is_some() {
            assert!(
                !err.is_transient(),
                "{who}: an overflow is never retried: {err}"
            );
        }
    }
}

#[tokio::test]
async fn llama_cpp_overflows_in_every_builds_stream_shape_are_permanent() {
    // Before September 2025: an `error:` line (ignored by the SSE rules), then `[DONE]`.
    let error_line = "error: {\"code\":400,\"message\":\"the request exceeds the available context size. try increasing the context size or enable context shift\",\"type\":\"invalid_request_error\"}\n\ndata: [DONE]\n\n";
    // September 2025: the same line with the new type, status 500 and the counts.
    let error_line_counts = "error: {\"code\":500,\"message\":\"the request exceeds the available context size. try increasing the context size or enable context shift\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":3612,\"n_ctx\":2048}\n\ndata: [DONE]\n\n";
    // September to October 2025: a standard `data:` chunk holding the error, then `[DONE]`.
    let data_error = "data: {\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size. try increasing the context size or enable context shift\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":3612,\"n_ctx\":2048}}\n\ndata: [DONE]\n\n";
    // A proxy (or a build) that answers 200 with the JSON error and no event framing.
    let unframed = "{\"error\":{\"code\":400,\"message\":\"request (3612 tokens) exceeds the available context size (2048 tokens), try increasing it\",\"type\":\"exceed_context_size_error\"}}";
    let server = MockServer::start(vec![
        Reply::sse(error_line),
        Reply::sse(error_line_counts),
        Reply::sse(data_error),
        Reply::sse(unframed),
        Reply::status(200, unframed),
    ])
    .await;
    let provider = openai(&server.base_url());
    let expected = [
        overflow(None, None),
        overflow(Some(2_048), Some(3_612)),
        overflow(Some(2_048), Some(3_612)),
        overflow(Some(2_048), Some(3_612)),
        overflow(Some(2_048), Some(3_612)),
    ];
    for (shape, expected) in expected.iter().enumerate() {
        let events = drain(provider.stream("{}".into())).await;
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Ok(ProviderEvent::Finish(_)))),
            "shape {shape}: an error is not an empty answer: {events:?}"
        );
        let Some(Err(err)) = events.last() else {
            panic!("shape {shape}: expected an error, got {events:?}");
        };
        assert!(!err.is_transient(), "shape {shape}: {err:?}");
        assert!(
            err.message().contains("context size"),
            "shape {shape}: {err}"
        );
        assert_eq!(overflow_of(err), *expected, "shape {shape}: {err}");
    }
}

#[tokio::test]
async fn an_overflow_after_some_output_still_ends_the_stream_with_its_message() {
    let stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n\
        data: {\"error\":{\"code\":400,\"message\":\"request (2100 tokens) exceeds the available context size (2048 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":2100,\"n_ctx\":2048}}\n\n";
    let server = MockServer::start(vec![Reply::sse(stream)]).await;
    let events = drain(openai(&server.base_url()).stream("{}".into())).await;
    assert_eq!(events[0], Ok(ProviderEvent::TextDelta("Hel".into())));
    let Some(Err(err)) = events.last() else {
        panic!("expected an error, got {events:?}");
    };
    assert!(!err.is_transient());
    assert_eq!(err.status(), Some(400));
    assert_eq!(overflow_of(err), overflow(Some(2_048), Some(2_100)));
}

#[tokio::test]
async fn a_compatible_servers_own_error_event_ends_an_anthropic_stream() {
    // llama.cpp's `/v1/messages` sends its error object as the data of an `error` event.
    let stream = "event: error\ndata: {\"code\":400,\"message\":\"request (2100 tokens) exceeds the available context size (2048 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":2100,\"n_ctx\":2048}\n\n";
    let anthropic_own = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}\n\n";
    let server = MockServer::start(vec![Reply::sse(stream), Reply::sse(anthropic_own)]).await;
    let provider = anthropic(&server.base_url());
    let err = final_error(&provider).await;
    assert!(!err.is_transient(), "{err:?}");
    assert_eq!(overflow_of(&err), overflow(Some(2_048), Some(2_100)));
    let err = final_error(&provider).await;
    assert_eq!(
        err,
        ProviderError::Permanent {
            message: "anthropic: the stream reported invalid_request_error: prompt is too long: \
                      210000 tokens > 200000 maximum"
                .into(),
            status: Some(400),
        }
    );
    assert_eq!(overflow_of(&err), overflow(Some(200_000), Some(210_000)));
}

#[test]
fn other_errors_are_not_overflows() {
    let cases = [
        ProviderError::permanent("openai: HTTP 401 Unauthorized: Incorrect API key provided"),
        ProviderError::transient("openai: cannot connect to http://127.0.0.1:1/: refused"),
        ProviderError::transient(
            "openai: the response stream ended before its end marker (data: [DONE]); the \
             connection was cut",
        ),
        ProviderError::Transient {
            message: "anthropic: HTTP 429 Too Many Requests: prompt is too long for your rate \
                      limit"
                .into(),
            status: Some(429),
            retry_after: None,
        },
    ];
    for err in cases {
        assert_eq!(overflow_of(&err), None, "{err}");
    }
}

#[test]
fn numbers_are_read_with_separators_and_never_overflow() {
    assert_eq!(
        overflow_in("maximum context length is 131,072 tokens. However, you requested 140_000"),
        overflow(Some(131_072), Some(140_000))
    );
    assert_eq!(
        overflow_in("maximum context length is 99999999999999999999999 tokens"),
        overflow(None, None)
    );
    assert_eq!(
        overflow_in("Maximum Context Length Is tokens"),
        overflow(None, None)
    );
}
