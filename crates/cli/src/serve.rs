//! `seedpod pod serve NAME`: run a pod in the foreground with its JSON-lines log.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::{Effective, Logging, Rotation};
use seedpod_engine::RetryPolicy;
use seedpod_pod::children::ChildStart;
use seedpod_pod::providers::{ApiKeyVar, ProviderSettings};
use seedpod_pod::{ServeOptions, serve};
use seedpod_protocol::PodName;
use seedpod_store::ScopeGrant;
use tracing_subscriber::EnvFilter;

use crate::args::{ChildArgs, ServeArgs};
use crate::exit::Exit;
use crate::logfile::{RotatingFile, RotationPolicy};
use crate::pods::canonical_cwd;
use crate::redact::RedactingWriter;
use crate::{session, settings};

const BYTES_PER_MB: u64 = 1024 * 1024;

/// HTTP client internals log every connection at debug; a pod log at `debug` is for seedpod's
/// own decisions, so they stay at `info` unless asked for by `trace`. rmcp logs every message
/// an MCP server sends at `info` (a chatty server wrote tens of megabytes): only its warnings
/// reach the log; the pod logs servers' notifications itself, within a budget (pod/src/mcp).
const QUIET_AT_DEBUG: &str =
    "hyper=info,hyper_util=info,reqwest=info,rustls=info,h2=info,rmcp=warn";

/// `[storage]` as the pod's archiver applies it; 0 turns a rule off.
fn archive_rule(storage: &seedpod_config::StorageSettings) -> seedpod_store::ArchiveRule {
    const DAY: std::time::Duration = std::time::Duration::from_secs(86_400);
    let days = storage.archive_after_days.value;
    let mb = storage.archive_over_mb.value;
    seedpod_store::ArchiveRule {
        older_than: (days > 0).then(|| DAY.saturating_mul(u32::try_from(days).unwrap_or(u32::MAX))),
        plain_over_bytes: (mb > 0).then(|| mb.saturating_mul(1_000_000)),
    }
}

/// The iteration cap and the loop brakes from `[loop]`; a `--max-iterations` flag wins.
fn run_limits(eff: &seedpod_config::Effective, flag: Option<u32>) -> seedpod_engine::RunLimits {
    use seedpod_config::LoopSettings;
    let settings = &eff.agent_loop;
    seedpod_engine::RunLimits {
        max_iterations: flag.unwrap_or(LoopSettings::count(&settings.max_iterations)),
        brakes: seedpod_engine::BrakeLimits {
            same_call_failures: LoopSettings::count(&settings.same_call_failures),
            failures_in_a_row: LoopSettings::count(&settings.failures_in_a_row),
            repeat_limit: LoopSettings::count(&settings.repeat_limit),
        },
        task_reminder_after: LoopSettings::count(&settings.remind_after),
    }
}

pub fn run(home: Home, args: ServeArgs) -> Result<()> {
    keep_memory_private();
    // First, before anything opens a descriptor that could be mistaken for it.
    let lease = args
        .exec_lease
        .map(crate::lease::adopt)
        .transpose()
        .map_err(|e| Exit::usage(e.to_string()))?;
    let child = child_start(&args.name, &args.child)?;
    let existing = settings::existing_meta(&home, &args.name)?;
    // An existing pod's project settings live in its own directory, wherever serve runs.
    let cwd = match &existing {
        Some(meta) => meta.cwd.clone(),
        None => canonical_cwd(args.config.cwd.as_deref())?,
    };
    // An existing pod's lineage and delegated scope are in its pod.json; the flags only
    // create a child.
    let (child, grant, mcp_only) = match &existing {
        Some(meta) => (None, meta.delegated.clone(), meta.mcp_servers.clone()),
        None => {
            let grant = child.as_ref().map(|c| c.grant.clone());
            let only = child.as_ref().and_then(|c| c.mcp_servers.clone());
            (child, grant, only)
        }
    };
    // Before logging exists, errors go to stderr, which `seedpod start` shows on failure.
    let eff = settings::resolve(&home, &cwd, &args.config, existing.as_ref())?;
    // A pod `seedpod start` launched has its stdout on the launcher's ready pipe, which closes
    // once it is ready: log lines there would break the handshake and then go nowhere.
    let to_stdout = eff.logging.stdout.value && !args.ready_line;
    let _guards = init_logging(&home, &args.name, &eff.logging, to_stdout)?;
    if let Some(warning) = eff.untrusted_warning() {
        let keys: Vec<&str> = eff.ignored.iter().map(|i| i.key.as_str()).collect();
        tracing::warn!(event = "untrusted_project_config", keys = ?keys, "{warning}");
    }
    let checkpoints = home
        .pod_dir(&args.name)
        .join(seedpod_store::CHECKPOINTS_DIR);
    let pod = session::build_child(
        &home,
        &cwd,
        &eff,
        grant.as_ref(),
        mcp_only,
        Some(checkpoints),
    )?;
    let instructions = session::instructions(args.config.instructions.as_deref())?;
    let opts = ServeOptions {
        name: args.name.clone(),
        home,
        cwd,
        config: settings::pod_config(&eff),
        tools: pod.tools,
        limits: run_limits(&eff, args.max_iterations),
        settings: provider_settings(&eff),
        session: pod.session,
        instructions,
        child,
        archive: archive_rule(&eff.storage),
    };
    let ready_line = args.ready_line;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let (orphan_tx, mut orphan_rx) = tokio::sync::oneshot::channel::<()>();
    let (name, keep) = (args.name.clone(), args.exec_keep);
    let own_home = opts.home.clone();
    let result = runtime.block_on(async {
        let watcher = lease.map(|fd| {
            let (home, name) = (opts.home.clone(), name.clone());
            tokio::spawn(async move {
                if crate::lease::watch(fd).await == crate::lease::Ended::Lost {
                    // The verdict first: the stop it asks for ends `serve` below.
                    let _ = orphan_tx.send(());
                    if ready_rx.await.is_ok() {
                        crate::lease::end_orphan(&home, &name, keep).await;
                    }
                }
            })
        });
        let served = serve(opts, |socket| {
            tracing::info!(event = "ready", socket = %socket.display());
            let _ = ready_tx.send(());
            if ready_line {
                let mut out = std::io::stdout();
                let _ = writeln!(out, "{}", seedpod_client::launch::READY_LINE);
                let _ = out.flush();
            }
        })
        .await;
        if let Some(watcher) = watcher {
            watcher.abort();
        }
        served
    });
    if let Err(err) = &result {
        tracing::error!(event = "server_failed", error = %err);
    }
    if orphan_rx.try_recv().is_ok() && !keep {
        // Nobody will ever remove a throwaway pod whose exec is gone: it removes itself, as
        // exec would have (docs/exec.md §When exec itself dies).
        if let Err(err) = crate::demo::delete(&own_home, &name) {
            tracing::error!(event = "exec_pod_not_removed", error = %format!("{err:#}"));
        }
    }
    result.map_err(|e| Exit::failure(e.to_string()))
}

/// Tell the process waiting on our ready pipe why we are not starting: the pipe works when
/// the disk holding the log and the stderr file is full. One line, whatever the message.
pub fn report_failure(err: &anyhow::Error) {
    let reason = format!("{err:#}").replace('\n', " ");
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}{reason}", seedpod_client::launch::FAILED_PREFIX);
    let _ = out.flush();
}

/// What `--parent`, `--task` and `--scope-*` ask for: `None` for a pod a person started.
/// The parent passes canonical absolute paths; anything else is refused rather than resolved
/// against a directory the parent did not mean.
fn child_start(name: &PodName, args: &ChildArgs) -> Result<Option<ChildStart>> {
    let (parent, task) = match (&args.parent, &args.task) {
        (Some(parent), Some(task)) => (parent, task),
        (None, None) if args.scope_read.is_empty() && args.scope_write.is_empty() => {
            return Ok(None);
        }
        (None, None) => {
            return Err(Exit::usage("--scope-read and --scope-write need --parent"));
        }
        (Some(_), None) => return Err(Exit::usage("--parent needs --task")),
        (None, Some(_)) => return Err(Exit::usage("--task needs --parent")),
    };
    if parent == name {
        return Err(Exit::usage(format!(
            "pod \"{name}\" cannot be its own parent"
        )));
    }
    let flagged = [
        ("--scope-read", &args.scope_read),
        ("--scope-write", &args.scope_write),
    ];
    for (flag, paths) in flagged {
        if let Some(path) = paths.iter().find(|p| !p.is_absolute()) {
            return Err(Exit::usage(format!(
                "{flag} {}: must be an absolute path",
                path.display()
            )));
        }
    }
    Ok(Some(ChildStart {
        parent: parent.clone(),
        task: task.clone(),
        grant: ScopeGrant {
            read: args.scope_read.clone(),
            write: args.scope_write.clone(),
        },
        mcp_servers: args.mcp_servers.as_deref().map(crate::args::name_list),
    }))
}

fn provider_settings(eff: &Effective) -> ProviderSettings {
    ProviderSettings {
        api_key: eff.key_requirement().map(|key| ApiKeyVar {
            var: key.var.value,
            required: key.required,
        }),
        connect_timeout: Duration::from_millis(eff.timeouts.connect_ms.value),
        idle_read_timeout: Duration::from_millis(eff.timeouts.idle_read_ms.value),
        retry: RetryPolicy {
            max_retries: eff.retry.max_retries.value,
            base_delay_ms: eff.retry.base_delay_ms.value,
            max_delay_ms: eff.retry.max_delay_ms.value,
            // Validated to error statuses when the configuration was read.
            retryable_statuses: seedpod_engine::RetryStatuses::new(
                &eff.retry.retryable_statuses.value,
            )
            .unwrap_or_default(),
        },
        // From `seedpod start` (which took them out of the URL), or from a base URL with
        // credentials in a config file, which the recorded URL no longer carries.
        base_url_credentials: std::env::var(seedpod_client::credentials::CREDENTIALS_ENV)
            .ok()
            .filter(|c| !c.is_empty())
            .or_else(|| {
                eff.base_url
                    .as_ref()
                    .and_then(|url| seedpod_client::credentials::split_userinfo(&url.value).1)
            }),
    }
}

/// The active log file: `[logging] file` (relative to the logs directory, `{name}` replaced
/// by the pod's name so pods sharing a config do not share a file) or `<name>.log`.
pub fn log_path(home: &Home, name: &PodName, logging: &Logging) -> PathBuf {
    match &logging.file {
        Some(file) => {
            let file = file
                .value
                .to_string_lossy()
                .replace("{name}", name.as_str());
            home.logs_dir().join(file)
        }
        None => home.log_path(name),
    }
}

/// JSON lines, redacted, rotated daily and by size, at the configured level; also on stdout
/// when `to_stdout`. Both writers are non-blocking and drop lines rather than stall the pod
/// when they cannot keep up (a stdout nobody reads). The guards flush them at exit.
fn init_logging(
    home: &Home,
    name: &PodName,
    logging: &Logging,
    to_stdout: bool,
) -> Result<Vec<tracing_appender::non_blocking::WorkerGuard>> {
    let path = log_path(home, name, logging);
    let policy = RotationPolicy {
        daily: logging.rotation.value == Rotation::Daily,
        max_bytes: logging.max_size_mb.value.saturating_mul(BYTES_PER_MB),
        keep_days: logging.keep_days.value,
    };
    let file = RotatingFile::open(&path, policy)
        .map_err(|e| Exit::failure(format!("cannot open the log {}: {e}", path.display())))?;
    let (writer, guard) = buffered(RedactingWriter::new(file));
    let mut guards = vec![guard];
    let level = logging.level.value.as_str();
    let filter = EnvFilter::try_new(format!("{level},{QUIET_AT_DEBUG}"))
        .unwrap_or_else(|_| EnvFilter::new(level));
    let subscriber = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_env_filter(filter);
    if to_stdout {
        use tracing_subscriber::fmt::writer::MakeWriterExt;
        let (stdout, guard) = buffered(RedactingWriter::new(std::io::stdout()));
        guards.push(guard);
        subscriber.with_writer(writer.and(stdout)).init();
    } else {
        subscriber.with_writer(writer).init();
    }
    Ok(guards)
}

/// Lines a log writer holds for its thread before it drops new ones: far more than a pod logs
/// in the moment it takes to write them. tracing-appender's default, 128,000, allocates and
/// fills a 4 MB queue when the pod starts — the largest single cost of a pod's start after
/// loading the binary, and 4 MB of its memory for good.
const LOG_LINES_BUFFERED: usize = 4_096;

/// A non-blocking writer over `writer` whose queue holds `LOG_LINES_BUFFERED` lines and drops
/// lines past that rather than stall the pod.
fn buffered<W: std::io::Write + Send + 'static>(
    writer: W,
) -> (
    tracing_appender::non_blocking::NonBlocking,
    tracing_appender::non_blocking::WorkerGuard,
) {
    tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_LINES_BUFFERED)
        .lossy(true)
        .finish(writer)
}

/// The pod holds the provider key in its environment and memory. Not dumpable, its
/// `/proc/PID/environ`, `mem` and `fd` belong to root: a command the person approved to run
/// outside the sandbox, running as the same user, cannot read them. (Sandboxed commands cannot
/// anyway: Landlock keeps them from tracing anything outside their domain.)
fn keep_memory_private() {
    // SAFETY: prctl with integer arguments; it changes only this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;
    use seedpod_config::effective as config;
    use seedpod_protocol::PodName;

    use super::child_start;
    use crate::args::{Cli, Command, PodCommand, ServeArgs};
    use crate::exit::code_of;

    fn serve_args(flags: &[&str]) -> Result<ServeArgs, clap::Error> {
        let argv = ["seedpod", "pod", "serve", "kid"].iter().chain(flags);
        match Cli::try_parse_from(argv)?.command {
            Some(Command::Pod {
                command: PodCommand::Serve(args),
            }) => Ok(args),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn a_pod_without_parent_flags_is_no_child() {
        let args = serve_args(&["--cwd", "/tmp"]).unwrap();
        assert_eq!(
            child_start(&PodName::new("kid").unwrap(), &args.child).unwrap(),
            None
        );
    }

    #[test]
    fn parent_task_and_scope_make_a_child_start() {
        let args = serve_args(&[
            "--parent",
            "boss",
            "--task",
            "count the files",
            "--scope-read",
            "/src/a",
            "--scope-read",
            "/src/b",
            "--scope-write",
            "/src/a/out",
        ])
        .unwrap();
        let start = child_start(&PodName::new("kid").unwrap(), &args.child)
            .unwrap()
            .unwrap();
        assert_eq!(start.parent, PodName::new("boss").unwrap());
        assert_eq!(start.task, "count the files");
        assert_eq!(
            start.grant.read,
            [PathBuf::from("/src/a"), PathBuf::from("/src/b")]
        );
        assert_eq!(start.grant.write, [PathBuf::from("/src/a/out")]);
    }

    #[test]
    fn parent_and_task_need_each_other_and_scope_needs_a_parent() {
        for flags in [
            &["--parent", "boss"][..],
            &["--task", "t"],
            &["--scope-read", "/x"],
            &["--scope-write", "/x"],
        ] {
            let err = serve_args(flags).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::MissingRequiredArgument,
                "{flags:?}: {err}"
            );
            assert_eq!(err.exit_code(), 2, "{flags:?}");
        }
    }

    #[test]
    fn bad_child_flags_are_usage_errors() {
        let cases: [(&[&str], &str); 2] = [
            (&["--parent", "kid", "--task", "t"], "its own parent"),
            (
                &[
                    "--parent",
                    "boss",
                    "--task",
                    "t",
                    "--scope-write",
                    "rel/dir",
                ],
                "--scope-write rel/dir: must be an absolute path",
            ),
        ];
        for (flags, expected) in cases {
            let args = serve_args(flags).unwrap();
            let err = child_start(&PodName::new("kid").unwrap(), &args.child).unwrap_err();
            assert_eq!(code_of(&err), 2, "{flags:?}");
            assert!(err.to_string().contains(expected), "{flags:?}: {err}");
        }
    }

    /// A parent name that could step outside the runtime directory is refused while parsing,
    /// before anything builds a path from it.
    #[test]
    fn a_parent_name_with_a_slash_is_refused_at_parse_time() {
        for bad in ["a/b", "../x", ""] {
            let err = serve_args(&["--parent", bad, "--task", "t"]).unwrap_err();
            assert!(err.to_string().contains("--parent"), "{bad:?}: {err}");
        }
    }

    /// `seedpod-config` states the defaults people see in `config show`; the engine has its own
    /// for callers without a configuration. They must say the same thing.
    #[test]
    fn configured_defaults_match_the_engine_defaults() {
        let retry = seedpod_engine::RetryPolicy::default();
        assert_eq!(config::DEFAULT_MAX_RETRIES, retry.max_retries);
        assert_eq!(config::DEFAULT_BASE_DELAY_MS, retry.base_delay_ms);
        assert_eq!(config::DEFAULT_MAX_DELAY_MS, retry.max_delay_ms);
        assert_eq!(
            config::DEFAULT_RETRYABLE_STATUSES.to_vec(),
            retry.retryable_statuses.codes()
        );
        assert_eq!(
            u128::from(config::DEFAULT_CONNECT_MS),
            seedpod_engine::DEFAULT_CONNECT_TIMEOUT.as_millis()
        );
        assert_eq!(
            u128::from(config::DEFAULT_IDLE_READ_MS),
            seedpod_engine::DEFAULT_IDLE_READ_TIMEOUT.as_millis()
        );
    }
}
