//! `start`, `stop`, `restart`: spawning the detached pod process and waiting for it to be ready
//! (an event — its `ready` line — not a poll), and the graceful stop.

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context as _, Result};
use seedpod_client::launch::{self, Launch, LaunchError, READY_TIMEOUT, launch, log_tail};
use seedpod_client::{ClientError, Connection, Home};
use seedpod_config::{Source, process_env};
use seedpod_protocol::{ClientMode, Method, PodName};

use crate::args::{PodConfigArgs, ProviderArg, StartArgs};
use crate::detect;
use crate::exit::Exit;
use crate::pods::{self, CLIENT_NAME, canonical_cwd};
use crate::settings;

/// Log lines shown when a pod fails to start.
const LOG_TAIL_LINES: usize = 20;

pub async fn start(home: &Home, args: StartArgs) -> Result<()> {
    let cwd = canonical_cwd(args.config.cwd.as_deref())?;
    let name = pods::name_for_start(home, args.name.as_ref(), &cwd)?;
    start_named(home, &name, &cwd, &args.config).await?;
    crate::mcp_report::report_failed(home, &name).await;
    println!("{name}");
    Ok(())
}

/// Start `name` unless it already runs.
pub async fn start_named(
    home: &Home,
    name: &PodName,
    cwd: &Path,
    config: &PodConfigArgs,
) -> Result<()> {
    start_leased(home, name, cwd, config, None).await
}

/// The lease a pod started by `seedpod exec` holds (`lease.rs`).
#[derive(Debug, Clone, Copy)]
pub struct ExecLease {
    /// The pipe's read end, inherited by the pod.
    pub fd: std::os::fd::RawFd,
    /// `--keep`: when exec is gone, the pod only cancels its run.
    pub keep: bool,
}

/// `start_named`, for a pod that lives only as long as the `seedpod exec` holding `lease`.
pub async fn start_leased(
    home: &Home,
    name: &PodName,
    cwd: &Path,
    config: &PodConfigArgs,
    lease: Option<ExecLease>,
) -> Result<()> {
    if is_running(home, name).await {
        return Ok(());
    }
    let existing = settings::existing_meta(home, name)?;
    let mut config = config.clone();
    let mut eff = settings::resolve(home, cwd, &config, existing.as_ref())?;
    if let Some(warning) = eff.untrusted_warning() {
        // The person must learn that part of the project's settings did not apply, and how
        // to apply them if they wrote them.
        eprintln!("warning: {warning}");
    }
    if existing.is_some() {
        let ignored: Vec<&str> = [
            ("--provider", config.provider.is_some()),
            ("--model", config.model.is_some()),
            ("--temperature", config.temperature.is_some()),
            ("--max-tokens", config.max_tokens.is_some()),
            ("--instructions", config.instructions.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect();
        if !ignored.is_empty() {
            // Silently ignoring them would leave someone wondering why the model did not change.
            eprintln!(
                "note: pod \"{name}\" keeps the model settings it was created with (they are in its log); {} only apply to new pods — `seedpod config show {name}` shows what it uses",
                ignored.join(", ")
            );
        }
    }
    if eff.provider.is_none() && existing.is_none() {
        // Only a new pod looks for a local server: an existing one keeps the provider it was
        // created with (and one recorded by a newer seedpod fails in the pod, saying to upgrade).
        let Some(local) = detect::find_local_server(detect::LOCAL_SERVERS).await else {
            return Err(Exit::failure(detect::nothing_configured(
                name,
                detect::env_set,
            )));
        };
        let model = eff
            .model()
            .map(|m| m.value)
            .or_else(|| local.models.first().cloned())
            .ok_or_else(|| {
                Exit::failure(format!(
                    "{} at {} lists no models; pull one, or pass --model",
                    local.label, local.base_url
                ))
            })?;
        eprintln!(
            "no provider configured; using {} at {} with model {model}",
            local.label, local.base_url
        );
        eff.use_detected(&local.label, local.base_url.clone(), Some(model.clone()));
        // The pod resolves the same layers again; the detected server reaches it as flags.
        config.provider = Some(ProviderArg::Openai);
        config.base_url = Some(local.base_url);
        config.model = Some(model);
    }
    if let Some(key) = eff.key_requirement()
        && key.required
        && process_env(&key.var.value).is_none()
    {
        let provider = eff.provider.as_ref().map_or("the", |p| p.value.as_str());
        let named_by = match &key.var.source {
            Source::Default => String::new(),
            source => format!(" (api_key_env, from {source})"),
        };
        return Err(Exit::failure(format!(
            "the {provider} provider needs an API key: set {}{named_by}",
            key.var.value
        )));
    }
    let config = &config;
    let log_file = crate::serve::log_path(home, name, &eff.logging);
    let exe = std::env::current_exe().context("cannot find the seedpod binary to spawn")?;
    let mut args: Vec<OsString> = vec!["--cwd".into(), cwd.into()];
    if let Some(provider) = config.provider {
        args.push("--provider".into());
        args.push(settings::provider_choice(provider).as_str().into());
    }
    if let Some(model) = &config.model {
        args.extend(["--model".into(), model.into()]);
    }
    // Credentials in the URL go by environment, never argv (`ps` shows argv to everyone).
    let mut env = Vec::new();
    if let Some(base_url) = &config.base_url {
        let (url, credentials) = seedpod_client::credentials::split_userinfo(base_url);
        args.extend(["--base-url".into(), url.into()]);
        if let Some(credentials) = credentials {
            env.push((
                seedpod_client::credentials::CREDENTIALS_ENV.to_string(),
                credentials,
            ));
        }
    }
    if let Some(temperature) = config.temperature {
        args.extend(["--temperature".into(), temperature.to_string().into()]);
    }
    if let Some(max_tokens) = config.max_tokens {
        args.extend(["--max-tokens".into(), max_tokens.to_string().into()]);
    }
    if let Some(instructions) = &config.instructions {
        // The pod process reads `@FILE` itself; it runs elsewhere, so the path is made absolute.
        let arg = match instructions.strip_prefix('@') {
            Some(file) => {
                let path = Path::new(file).canonicalize().map_err(|e| {
                    Exit::usage(format!("--instructions @{file}: cannot read it: {e}"))
                })?;
                format!("@{}", path.display())
            }
            None => instructions.clone(),
        };
        args.extend(["--instructions".into(), arg.into()]);
    }
    if let Some(script) = &config.script {
        let script = script.canonicalize().map_err(|e| {
            Exit::failure(format!("script {} is not readable: {e}", script.display()))
        })?;
        args.extend(["--script".into(), script.into()]);
    }
    if let Some(lease) = lease {
        args.extend(["--exec-lease".into(), lease.fd.to_string().into()]);
        if lease.keep {
            args.push("--exec-keep".into());
        }
    }
    let spec = Launch {
        exe,
        name: name.clone(),
        args,
        cwd: cwd.to_path_buf(),
        env,
        inherit_fd: lease.map(|l| l.fd),
    };
    launch(home, &spec).await.map_err(|err| match err {
        LaunchError::Exited { .. } | LaunchError::NotReady { .. } => Exit::failure(format!(
            "{err}\n{}",
            log_tail(
                &[&log_file, &launch::stderr_path(home, name)],
                LOG_TAIL_LINES
            )
        )),
        LaunchError::Io { .. } | LaunchError::Spawn(_) | LaunchError::Failed { .. } => {
            Exit::failure(err.to_string())
        }
    })?;
    Ok(())
}

async fn is_running(home: &Home, name: &PodName) -> bool {
    Connection::connect(home, name, CLIENT_NAME, ClientMode::Control)
        .await
        .is_ok()
}

/// Ask the pod to shut down and wait until it closed the connection (log flushed).
pub async fn stop(home: &Home, name: &PodName) -> Result<bool> {
    let mut conn = match Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await {
        Ok(conn) => conn,
        Err(ClientError::NotRunning { .. }) => return Ok(false),
        Err(err) => return Err(err.into()),
    };
    conn.call(Method::Shutdown).await?;
    // The pod closes every connection only after its log is closed.
    while let Ok(Some(_)) = conn.recv().await {}
    // The lock is released when the process exits; wait for that so a following start works.
    wait_unlocked(home, name).await;
    Ok(true)
}

/// Wait until no process holds the pod's lock (the pod process has exited).
async fn wait_unlocked(home: &Home, name: &PodName) {
    let path = home.lock_path(name);
    let _ = tokio::time::timeout(READY_TIMEOUT, async {
        tokio::task::spawn_blocking(move || {
            if let Ok(file) = std::fs::File::open(&path) {
                // Blocks until the exiting pod's lock is released by the kernel.
                let _ = file.lock_shared();
            }
        })
        .await
    })
    .await;
}
