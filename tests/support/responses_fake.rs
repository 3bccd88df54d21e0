//! A loopback OpenAI Responses API endpoint that plays a script of event streams, one per
//! request, and records every request it receives (path, headers, the exact body).
//!
//! The streams are built with `ResponsesStream` (shared with the engine's own provider tests),
//! which writes the real events — `response.output_item.added`, the text, argument and
//! reasoning-summary deltas, `response.output_item.done`, `response.completed` — in the order
//! and shapes OpenAI's server sends them. Requests beyond the script get a `500`.

use seedpod_engine::testing::{MockServer, RecordedRequest, Reply};

pub use seedpod_engine::testing::ResponsesStream;

pub struct ResponsesFake {
    server: MockServer,
}

impl ResponsesFake {
    /// Answer the n-th request with the n-th stream (`ResponsesStream::completed` and friends),
    /// each delivered in a few uneven pieces as a network would.
    pub async fn start(streams: Vec<String>) -> ResponsesFake {
        let replies = streams
            .into_iter()
            .map(|stream| Reply::sse_in_pieces(stream.into_bytes(), &[13, 101, 7]))
            .collect();
        ResponsesFake {
            server: MockServer::start(replies).await,
        }
    }

    /// The `--base-url` to give a pod (requests go to `{base_url}/responses`).
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.base_url())
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// The exact bodies of every request so far, in order.
    pub fn bodies(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.body).collect()
    }
}
