//! A streamed SSE response as an `EventStream`: send lazily on the first poll, read with an idle
//! timeout, parse events, and let the provider's `Decoder` say what each one means.
//!
//! Completeness is decided here, once for both providers: a response is whole only when the
//! decoder has seen its terminator. A body that ends any other way is a cut stream, reported as
//! a transient error (whether a retry is safe is the retry policy's call, not ours) — unless the
//! body held no event at all but a JSON document: then the server answered with JSON where a
//! stream was asked for (an error object sent with status 200, by some llama.cpp builds and the
//! proxies in front of them), and that answer is reported as what it says, not as a cut to retry.

use std::collections::VecDeque;

use futures::StreamExt;

use super::{Endpoint, MAX_ERROR_BODY_BYTES, error_object, reported_error, truncate};
use crate::provider::{EventStream, ProviderError, ProviderEvent};
use crate::sse::{SseEnd, SseEvent, SseParser};

/// What one event meant for the response as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    More,
    /// The terminator: the response is complete and nothing after it is read.
    Complete,
}

/// A provider's reading of its own event stream.
pub(crate) trait Decoder: Send + 'static {
    /// The event that ends a complete response, named in the error when it never comes.
    const TERMINATOR: &'static str;

    /// Handle one event, queueing the provider events it stands for.
    fn decode(
        &mut self,
        event: SseEvent,
        out: &mut VecDeque<ProviderEvent>,
    ) -> Result<Decoded, ProviderError>;
}

/// The most characters of an event quoted in an error about it.
pub(crate) const MAX_QUOTED_EVENT_CHARS: usize = 200;

/// Parse one event's data as `T`, or say that `provider` sent a malformed `event`, quoting it.
pub(crate) fn parse_event<T: serde::de::DeserializeOwned>(
    provider: &str,
    event: &SseEvent,
) -> Result<T, ProviderError> {
    serde_json::from_str(&event.data).map_err(|err| {
        ProviderError::permanent(format!(
            "{provider}: malformed {} event ({err}): {}",
            event.event,
            truncate(&event.data, MAX_QUOTED_EVENT_CHARS)
        ))
    })
}

/// Send `body` to `endpoint` when first polled and decode the streamed answer.
pub(crate) fn stream_events<D: Decoder>(
    endpoint: Endpoint,
    body: String,
    decoder: D,
) -> EventStream {
    let reader = Reader {
        endpoint,
        state: State::Unsent(body),
        parser: SseParser::new(),
        parsed: Vec::new(),
        decoder,
        queue: VecDeque::new(),
        unframed: Some(Vec::new()),
        content_type: None,
    };
    futures::stream::unfold(reader, |mut reader| async move {
        let item = reader.next().await?;
        Some((item, reader))
    })
    .boxed()
}

enum State {
    Unsent(String),
    Reading(Box<reqwest::Response>),
    /// Reported after the events queued before it.
    Failed(ProviderError),
    Ended,
}

struct Reader<D> {
    endpoint: Endpoint,
    state: State,
    parser: SseParser,
    /// Events parsed from the last read, not yet decoded.
    parsed: Vec<SseEvent>,
    decoder: D,
    /// Decoded events not yet yielded.
    queue: VecDeque<ProviderEvent>,
    /// The body so far (up to `MAX_ERROR_BODY_BYTES`) while no event has been parsed from it: if
    /// it ends that way, it may be a JSON answer instead of a stream. `None` once an event came.
    unframed: Option<Vec<u8>>,
    /// The response's `content-type`, to say what a body that was no stream was instead.
    content_type: Option<String>,
}

impl<D: Decoder> Reader<D> {
    async fn next(&mut self) -> Option<Result<ProviderEvent, ProviderError>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(Ok(event));
            }
            self.state = match std::mem::replace(&mut self.state, State::Ended) {
                State::Unsent(body) => match self.endpoint.send(body).await {
                    Ok(response) => {
                        self.content_type = response
                            .headers()
                            .get(reqwest::header::CONTENT_TYPE)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        State::Reading(Box::new(response))
                    }
                    Err(err) => State::Failed(err),
                },
                State::Reading(mut response) => match self.read(&mut response).await {
                    Ok(Decoded::More) => State::Reading(response),
                    Ok(Decoded::Complete) => State::Ended,
                    Err(err) => State::Failed(err),
                },
                State::Failed(err) => return Some(Err(err)),
                State::Ended => return None,
            };
        }
    }

    /// Read and decode one piece of the body.
    async fn read(&mut self, response: &mut reqwest::Response) -> Result<Decoded, ProviderError> {
        let idle = self.endpoint.idle_read_timeout;
        let chunk = match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(chunk)) => chunk,
            Ok(Err(err)) => return Err(self.endpoint.transport_error(err)),
            Err(_) => return Err(self.endpoint.timeout(idle, "for more of the response")),
        };
        let Some(bytes) = chunk else {
            return self.end_of_body();
        };
        if let Err(err) = self.parser.feed(&bytes, &mut self.parsed) {
            return Err(ProviderError::permanent(format!(
                "{}: {err}",
                self.endpoint.provider
            )));
        }
        if !self.parsed.is_empty() {
            self.unframed = None;
        } else if let Some(unframed) = &mut self.unframed {
            let room = MAX_ERROR_BODY_BYTES.saturating_sub(unframed.len());
            unframed.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        self.decode_parsed()
    }

    fn decode_parsed(&mut self) -> Result<Decoded, ProviderError> {
        for event in self.parsed.drain(..) {
            if self.decoder.decode(event, &mut self.queue)? == Decoded::Complete {
                return Ok(Decoded::Complete);
            }
        }
        Ok(Decoded::More)
    }

    /// The server closed the body. Whole only if the terminator was in its last bytes.
    fn end_of_body(&mut self) -> Result<Decoded, ProviderError> {
        // An event whose lines all arrived but whose closing blank line did not is still whole;
        // some servers end the stream that way.
        if let SseEnd::MidEvent {
            unterminated: Some(event),
        } = self.parser.finish()
        {
            self.parsed.push(event);
        }
        if !self.parsed.is_empty() {
            self.unframed = None;
        }
        if self.decode_parsed()? == Decoded::Complete {
            return Ok(Decoded::Complete);
        }
        if let Some(body) = self
            .unframed
            .take()
            .filter(|b| !b.iter().all(u8::is_ascii_whitespace))
        {
            return Err(self
                .json_answer(&body)
                .unwrap_or_else(|| self.not_a_stream(&body)));
        }
        Err(ProviderError::transient(format!(
            "{}: the response stream ended before its end marker ({}){CUT_MARK}",
            self.endpoint.provider,
            D::TERMINATOR
        )))
    }

    /// The error for a body that held no event at all and was not JSON either: an HTML page
    /// from a proxy or a wrong base URL, answered with 200. Said as what it is — retrying the
    /// same URL will not turn it into a stream.
    fn not_a_stream(&self, body: &[u8]) -> ProviderError {
        let text = self.endpoint.scrub(&String::from_utf8_lossy(body));
        let kind = self.content_type.as_deref().unwrap_or("none given");
        ProviderError::permanent(format!(
            "{}: the server at {} answered 200 with content type {kind}, not an event stream \
             (check the base URL); it began: {:?}",
            self.endpoint.provider,
            self.endpoint.shown_url,
            truncate(text.trim(), MAX_QUOTED_JSON_CHARS)
        ))
    }

    /// The error for a body that was one JSON document rather than an event stream, if it was.
    fn json_answer(&self, body: &[u8]) -> Option<ProviderError> {
        let text = self.endpoint.scrub(&String::from_utf8_lossy(body));
        let value = serde_json::from_str::<serde_json::Value>(text.trim()).ok()?;
        let provider = self.endpoint.provider;
        if value.get("error").is_some() {
            return Some(reported_error(
                provider,
                "the server answered with an error instead of a stream",
                &error_object(text.trim()),
            ));
        }
        Some(ProviderError::permanent(format!(
            "{provider}: the server answered with JSON instead of an event stream: {}",
            truncate(text.trim(), MAX_QUOTED_JSON_CHARS)
        )))
    }
}

/// How the error of a stream that ended without its terminator ends (`is_cut`).
const CUT_MARK: &str = "; the connection was cut";

/// Whether `error` says a response stream ended before its end marker: the server (or the
/// network) cut it. Such an error carries no status and is transient.
pub(crate) fn is_cut(error: &ProviderError) -> bool {
    matches!(error, ProviderError::Transient { message, status: None, .. } if message.ends_with(CUT_MARK))
}

/// `is_cut` for a cut before anything of the answer arrived: nothing was shown, so the
/// request can be judged again (`retry.rs`). A note after the mark (the retries given up) is
/// allowed.
pub(crate) fn is_cut_at_start(error: &ProviderError, progress: &crate::response::Progress) -> bool {
    progress.first_event.is_none()
        && matches!(error, ProviderError::Transient { message, status: None, .. } if message.contains(CUT_MARK))
}

/// The most characters of an unexpected JSON answer quoted in the error.
const MAX_QUOTED_JSON_CHARS: usize = 200;
