//! Knowing the model's context window: from the configuration, else the model server itself
//! (when a base URL is configured: a local server's `-c`/`num_ctx` is usually far below what
//! the model family could hold), else the model-family table (the person's
//! `[context.windows]` first); a window learned
//! from a "too long" error (`controller/context.rs`) beats all of them while it is smaller.
//! Whatever is decided is recorded in the log (`segment_start.context_window`, then
//! `context_window` entries), so replay, later segments and restores never ask again.

use std::time::Duration;

use seedpod_protocol::{ContextWindow, ProviderKind, WindowSource};

use super::settings::ContextSettings;
use super::window_memo::{Recalled, WindowMemo, memo_key};

/// How long each probe of the model server may take: a pod's start waits for it.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(800);
/// Windows a server may claim (asked, or stated in an error): outside this range the claim is
/// a broken or hostile server's, and believing it would compact every turn away (too small) or
/// never prune (too large).
pub const BELIEVABLE: std::ops::RangeInclusive<u64> = 512..=10_000_000;

/// The most the family table is believed for a model on a local server that could not be
/// asked (docs/configuration.md §Context): such servers run with the window they were started
/// with — llama.cpp's and llama-cpp-python's `-c`, Ollama's `num_ctx` — usually far below what
/// the family could hold, and some cut a stream or drop context instead of saying "too long".
pub const LOCAL_TABLE_CAP: u64 = 8_192;

/// The smallest working window the pod shrinks itself to when a server refuses a request as
/// too long without saying how much it holds (`controller/window_learned.rs`): the compact
/// prompt and a short exchange fit in it, and the smallest windows local servers are commonly
/// started with (llama.cpp's and llama-cpp-python's old `-c` default) are this size.
pub const SHRINK_FLOOR: u64 = 2_048;

/// The window from the configuration or the family table, without asking anyone.
pub fn configured(settings: &ContextSettings, model: &str) -> Option<ContextWindow> {
    if let Some(tokens) = settings.window.filter(|t| *t > 0) {
        return Some(ContextWindow {
            tokens,
            source: WindowSource::Config,
        });
    }
    seedpod_engine::family_window(model, &settings.window_table).map(|tokens| ContextWindow {
        tokens,
        source: WindowSource::Table,
    })
}

/// The window as far as it can be known now: configured, else asked from the server at
/// `base_url` (only when one is configured — a hosted API's models are in the table), else
/// the family table.
/// What the server says is taken from `memo` when another pod asked it recently, and recorded
/// there when this one asks (`window_memo.rs`).
pub async fn resolve(
    settings: &ContextSettings,
    provider: ProviderKind,
    base_url: Option<&str>,
    model: &str,
    memo: Option<&WindowMemo>,
) -> Option<ContextWindow> {
    if let Some(tokens) = settings.window.filter(|t| *t > 0) {
        return Some(ContextWindow {
            tokens,
            source: WindowSource::Config,
        });
    }
    if let Some(base_url) = base_url.filter(|_| settings.probe)
        && let Some(tokens) = stated_window(provider, base_url, model, memo)
            .await
            .filter(|t| BELIEVABLE.contains(t))
    {
        return Some(ContextWindow {
            tokens,
            source: WindowSource::Server,
        });
    }
    let known = configured(settings, model);
    match (known, base_url) {
        (Some(table), Some(url))
            if table.source == WindowSource::Table
                && table.tokens > LOCAL_TABLE_CAP
                && seedpod_engine::is_local_server(url) =>
        {
            Some(ContextWindow {
                tokens: LOCAL_TABLE_CAP,
                source: WindowSource::Table,
            })
        }
        _ => known,
    }
}

/// What the server at `base_url` states, from the memo or by asking it.
async fn stated_window(
    provider: ProviderKind,
    base_url: &str,
    model: &str,
    memo: Option<&WindowMemo>,
) -> Option<u64> {
    let now = seedpod_store::unix_ms();
    let key = memo_key(provider, base_url, model);
    match memo.map(|memo| memo.recall(&key, now)) {
        Some(Recalled::Stated(tokens)) => return Some(tokens),
        Some(Recalled::Silent) => return None,
        Some(Recalled::Unknown) | None => {}
    }
    let stated = seedpod_engine::probe_window(provider, base_url, model, PROBE_TIMEOUT).await;
    if let Some(memo) = memo {
        memo.remember(&key, stated, now);
    }
    stated
}

/// The window as far as it can be known when a pod is restored with `recorded` in its log:
/// the configuration still wins, but a window the server stated or a refusal taught is not
/// asked again — the probe is a start's cost, paid once per model, and a server that later
/// serves a smaller window says so by refusing a request (`controller/context.rs`).
pub async fn on_restore(
    settings: &ContextSettings,
    recorded: Option<ContextWindow>,
    provider: ProviderKind,
    base_url: Option<&str>,
    model: &str,
    memo: Option<&WindowMemo>,
) -> Option<ContextWindow> {
    let configured_window = settings.window.filter(|t| *t > 0).is_some();
    match recorded {
        Some(known)
            if !configured_window
                && matches!(known.source, WindowSource::Server | WindowSource::Learned) =>
        {
            Some(known)
        }
        _ => resolve(settings, provider, base_url, model, memo).await,
    }
}

/// What to record, given what the log says and what is known now: `None` when the log is
/// right. A learned window stays until something smaller is known — the server said so, and a
/// configuration that claims more than the server accepts would fail every request.
pub fn update(
    recorded: Option<ContextWindow>,
    now: Option<ContextWindow>,
) -> Option<ContextWindow> {
    let now = now?;
    match recorded {
        Some(learned) if learned.source == WindowSource::Learned => {
            (now.tokens < learned.tokens).then_some(now)
        }
        Some(recorded) if recorded == now => None,
        Some(_) | None => Some(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(tokens: u64, source: WindowSource) -> Option<ContextWindow> {
        Some(ContextWindow { tokens, source })
    }

    #[test]
    fn configuration_beats_the_table() {
        let settings = ContextSettings {
            window: Some(12_000),
            ..ContextSettings::default()
        };
        assert_eq!(
            configured(&settings, "claude-sonnet-4-5"),
            w(12_000, WindowSource::Config)
        );
        let zero = ContextSettings {
            window: Some(0),
            window_table: vec![("my-model".into(), 9_000)],
            ..ContextSettings::default()
        };
        assert_eq!(
            configured(&zero, "my-model-7b"),
            w(9_000, WindowSource::Table)
        );
    }

    #[test]
    fn a_learned_window_stays_until_something_smaller_is_known() {
        let learned = w(16_000, WindowSource::Learned);
        assert_eq!(update(learned, w(200_000, WindowSource::Config)), None);
        assert_eq!(update(learned, None), None);
        assert_eq!(
            update(learned, w(8_000, WindowSource::Config)),
            w(8_000, WindowSource::Config)
        );
    }

    #[test]
    fn a_changed_configuration_is_recorded_and_an_unchanged_one_is_not() {
        let config = w(32_000, WindowSource::Config);
        assert_eq!(update(config, config), None);
        assert_eq!(
            update(config, w(64_000, WindowSource::Config)),
            w(64_000, WindowSource::Config)
        );
        assert_eq!(update(None, config), config);
        assert_eq!(
            update(config, None),
            None,
            "nothing known now: the log keeps its window"
        );
    }

    // A local server that cannot be asked gets the family table's window only up to
    // `LOCAL_TABLE_CAP`; a hosted one gets the table's; a model the table does not know stays
    // unknown, to be learned from the server's first "too long".
    #[tokio::test]
    async fn an_unasked_local_server_is_not_believed_to_hold_the_whole_family_window() {
        let settings = ContextSettings {
            probe: false,
            ..ContextSettings::default()
        };
        let window = |url: &'static str, model: &'static str| {
            resolve(&settings, ProviderKind::Openai, Some(url), model, None)
        };
        let table = configured(&settings, "gpt-4o").expect("the table knows gpt-4o");
        assert!(table.tokens > LOCAL_TABLE_CAP);
        assert_eq!(
            window("http://127.0.0.1:8080/v1", "gpt-4o").await,
            w(LOCAL_TABLE_CAP, WindowSource::Table)
        );
        assert_eq!(
            window("http://192.168.1.9:8080/v1", "gpt-4o").await,
            w(LOCAL_TABLE_CAP, WindowSource::Table)
        );
        assert_eq!(
            window("https://api.openai.com/v1", "gpt-4o").await,
            Some(table)
        );
        assert_eq!(window("http://127.0.0.1:8080/v1", "fake-gpt").await, None);
        let configured_window = ContextSettings {
            window: Some(32_000),
            ..settings.clone()
        };
        assert_eq!(
            resolve(
                &configured_window,
                ProviderKind::Openai,
                Some("http://127.0.0.1:8080/v1"),
                "gpt-4o",
                None,
            )
            .await,
            w(32_000, WindowSource::Config),
            "the person's word beats the caution"
        );
    }

    // A restore does not ask the server again what it already said (or what a refusal
    // taught); a window from the table or none at all is still worth asking about, and the
    // configuration wins over everything.
    #[tokio::test]
    async fn a_restore_asks_the_server_only_when_the_log_does_not_know() {
        use seedpod_engine::testing::{MockServer, Reply};
        let props = r#"{"default_generation_settings":{"n_ctx":4096}}"#;
        let server = MockServer::routes(vec![("GET", "/props", Reply::status(200, props))]).await;
        let base_url = format!("{}/v1", server.base_url());
        let settings = ContextSettings::default();
        let restore = |recorded| {
            on_restore(
                &settings,
                recorded,
                ProviderKind::Openai,
                Some(base_url.as_str()),
                "local-model",
                None,
            )
        };

        for known in [
            w(32_000, WindowSource::Server),
            w(3_000, WindowSource::Learned),
        ] {
            assert_eq!(restore(known).await, known);
        }
        assert!(server.requests().is_empty(), "nothing was asked");

        assert_eq!(
            restore(w(8_192, WindowSource::Table)).await,
            w(4_096, WindowSource::Server)
        );
        assert!(
            !server.requests().is_empty(),
            "the table's guess was checked"
        );

        let configured = ContextSettings {
            window: Some(10_000),
            ..ContextSettings::default()
        };
        let window = on_restore(
            &configured,
            w(32_000, WindowSource::Server),
            ProviderKind::Openai,
            Some(base_url.as_str()),
            "local-model",
            None,
        )
        .await;
        assert_eq!(window, w(10_000, WindowSource::Config));
    }
}
