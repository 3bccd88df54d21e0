//! `seedpod pod serve NAME`: run a pod in the foreground with its JSON-lines log.

use std::io::Write;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_engine::ToolRegistry;
use seedpod_pod::{ServeOptions, serve};
use seedpod_store::PodConfig;
use tracing_subscriber::EnvFilter;

use crate::args::ServeArgs;
use crate::exit::Exit;
use crate::pods::canonical_cwd;
use crate::redact::RedactingWriter;
use crate::start::provider_kind;

/// Environment variable for the pod log's level filter (`info` by default).
pub const LOG_ENV: &str = "SEEDPOD_LOG";

pub fn run(home: Home, args: ServeArgs) -> Result<()> {
    seedpod_client::validate_name(&args.name).map_err(Exit::usage)?;
    let _guard = init_logging(&home, &args.name)?;
    let cwd = canonical_cwd(args.config.cwd.as_deref())?;
    let config = args.config.provider.map(|provider| PodConfig {
        provider: provider_kind(provider),
        model: args
            .config
            .model
            .clone()
            .unwrap_or_else(|| default_model(provider_kind(provider)).to_string()),
        script: args.config.script.clone(),
        base_url: args.config.base_url.clone(),
        temperature: args.config.temperature,
        max_tokens: args.config.max_tokens,
    });
    let opts = ServeOptions {
        name: args.name.clone(),
        home,
        cwd,
        config,
        tools: ToolRegistry::new(),
        max_iterations: args.max_iterations,
    };
    let ready_line = args.ready_line;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(serve(opts, |socket| {
        tracing::info!(event = "ready", socket = %socket.display());
        if ready_line {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "ready");
            let _ = out.flush();
        }
    }));
    if let Err(err) = &result {
        tracing::error!(event = "server_failed", error = %err);
    }
    result.map_err(|e| Exit::failure(e.to_string()))
}

fn default_model(provider: seedpod_protocol::ProviderKind) -> &'static str {
    match provider {
        seedpod_protocol::ProviderKind::Scripted => "script",
        seedpod_protocol::ProviderKind::Anthropic => "claude-sonnet-4-5",
        seedpod_protocol::ProviderKind::Openai => "gpt-4o",
        seedpod_protocol::ProviderKind::Unknown => "unknown",
    }
}

/// JSON lines to `state/logs/<name>.log`; level from `SEEDPOD_LOG` (default `info`).
fn init_logging(home: &Home, name: &str) -> Result<tracing_appender::non_blocking::WorkerGuard> {
    let dir = home.logs_dir();
    std::fs::create_dir_all(&dir)
        .map_err(|e| Exit::failure(format!("cannot create {}: {e}", dir.display())))?;
    let appender = tracing_appender::rolling::never(&dir, format!("{name}.log"));
    let (writer, guard) = tracing_appender::non_blocking(RedactingWriter::new(appender));
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_env_filter(filter)
        .with_writer(writer)
        .init();
    Ok(guard)
}
