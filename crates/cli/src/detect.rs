//! Finding a local OpenAI-compatible server when nothing is configured, so `seedpod start` in a
//! fresh shell works with Ollama, llama.cpp or LM Studio running and no key set.

use std::time::Duration;

use seedpod_protocol::PodName;

/// The usual addresses of local OpenAI-compatible servers, in the order they are tried.
pub const LOCAL_SERVERS: &[(&str, &str)] = &[
    ("Ollama", "127.0.0.1:11434"),
    ("llama.cpp server", "127.0.0.1:8080"),
    ("LM Studio", "127.0.0.1:1234"),
];

/// How long one probe may take: a local server answers `/v1/models` in milliseconds, and a
/// closed port refuses at once; this only bounds a port held by something that never answers.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// A local server that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalServer {
    pub label: String,
    /// `http://ADDR/v1`, ready for `--base-url`.
    pub base_url: String,
    /// The models it lists, in its order.
    pub models: Vec<String>,
}

/// The first of `candidates` whose `GET /v1/models` answers 200 with a model list.
pub async fn find_local_server(candidates: &[(&str, &str)]) -> Option<LocalServer> {
    // Every candidate is plain HTTP on this machine: no trust roots to load
    // (`without_trust_roots`; a redirect to https fails, and is no local server anyway).
    let client = seedpod_engine::without_trust_roots(seedpod_engine::http_client_builder())
        .timeout(PROBE_TIMEOUT)
        .no_proxy()
        .build()
        .ok()?;
    for (label, addr) in candidates {
        let base_url = format!("http://{addr}/v1");
        let Ok(response) = client.get(format!("{base_url}/models")).send().await else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        let Ok(body) = response.text().await else {
            continue;
        };
        let Some(models) = model_ids(&body) else {
            continue;
        };
        return Some(LocalServer {
            label: (*label).to_string(),
            base_url,
            models,
        });
    }
    None
}

/// Model ids from an OpenAI-style `{"data": [{"id": ...}]}` list; `None` if it is not one.
fn model_ids(body: &str) -> Option<Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let data = value.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
            .map(str::to_string)
            .collect(),
    )
}

/// What to tell someone who has configured nothing and runs no local server: first what works
/// with nothing at all (`seedpod demo`, built in, no files needed), then the two ways to point
/// at a real model, an API key or a local server. `key_set` says whether a provider's key
/// variable is set: a key already there is not asked for again, only the flag that uses it.
pub fn nothing_configured(name: &PodName, key_set: impl Fn(&str) -> bool) -> String {
    let locals: Vec<String> = LOCAL_SERVERS
        .iter()
        .map(|(label, addr)| format!("{label} on {addr}"))
        .collect();
    let way = |var: &str, provider: &str| {
        if key_set(var) {
            format!("{var} is set: run `seedpod start {name} --provider {provider}`")
        } else {
            format!("set {var} and run `seedpod start {name} --provider {provider}`")
        }
    };
    format!(
        "pod \"{name}\" needs a model, and none is configured.\n  \
         - to see seedpod work right now, with a built-in scripted model: `seedpod demo`\n  \
         - with an API key: {}, or {} (OPENAI_BASE_URL for other endpoints)\n  \
         - with a local model: run an OpenAI-compatible server ({}) and `seedpod start {name}` finds it by itself",
        way("ANTHROPIC_API_KEY", "anthropic"),
        way("OPENAI_API_KEY", "openai"),
        locals.join(", ")
    )
}

/// Whether environment variable `var` holds something (an empty one is as good as unset).
pub fn env_set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_engine::testing::{MockServer, Reply};

    #[tokio::test]
    async fn finds_the_first_server_that_lists_models() {
        let not_openai = MockServer::start(vec![Reply::status(404, "not found")]).await;
        let ollama = MockServer::start(vec![Reply::status(
            200,
            r#"{"object":"list","data":[{"id":"llama3.2","object":"model"},{"id":"qwen3"}]}"#,
        )])
        .await;
        let a = not_openai.base_url().replace("http://", "");
        let b = ollama.base_url().replace("http://", "");
        let found = find_local_server(&[("first", &a), ("second", &b)]).await;
        assert_eq!(
            found,
            Some(LocalServer {
                label: "second".into(),
                base_url: format!("{}/v1", ollama.base_url()),
                models: vec!["llama3.2".into(), "qwen3".into()],
            })
        );
        assert_eq!(ollama.requests()[0].path, "/v1/models");
    }

    #[tokio::test]
    async fn closed_ports_and_non_json_answers_find_nothing() {
        let html = MockServer::start(vec![Reply::status(200, "<html>hi</html>")]).await;
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().to_string()
        };
        let h = html.base_url().replace("http://", "");
        assert_eq!(
            find_local_server(&[("closed", &closed), ("html", &h)]).await,
            None
        );
    }

    #[test]
    fn the_nothing_configured_message_names_every_way_out() {
        let text = nothing_configured(&PodName::new("p").unwrap(), |_| false);
        for needle in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "127.0.0.1:11434",
            "seedpod demo",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        // The demo comes first, and nothing points at a file only the source tree has.
        let demo = text.find("seedpod demo").unwrap_or(usize::MAX);
        let key = text.find("ANTHROPIC_API_KEY").unwrap_or(0);
        let local = text.find("11434").unwrap_or(0);
        assert!(demo < key && key < local, "{text}");
        assert!(!text.contains("examples/"), "{text}");
    }

    #[test]
    fn a_key_already_set_is_not_asked_for() {
        let name = PodName::new("p").unwrap();
        let text = nothing_configured(&name, |var| var == "OPENAI_API_KEY");
        assert!(!text.contains("set OPENAI_API_KEY"), "{text}");
        assert!(
            text.contains("OPENAI_API_KEY is set: run `seedpod start p --provider openai`"),
            "{text}"
        );
        assert!(text.contains("set ANTHROPIC_API_KEY and run"), "{text}");
    }
}
