//! `start`, `stop`, `restart`: spawning the detached pod process and waiting for it to be ready
//! (an event — its `ready` line — not a poll), and the graceful stop.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result};
use seedpod_client::{ClientError, Connection, Home};
use seedpod_config::{Source, process_env};
use seedpod_protocol::{ClientMode, Method};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::args::{PodConfigArgs, ProviderArg, StartArgs};
use crate::detect;
use crate::exit::Exit;
use crate::pods::{self, CLIENT_NAME, canonical_cwd};
use crate::settings;

/// How long `start` waits for a new pod to accept connections.
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Log lines shown when a pod fails to start.
const LOG_TAIL_LINES: usize = 20;

pub async fn start(home: &Home, args: StartArgs) -> Result<()> {
    let cwd = canonical_cwd(args.config.cwd.as_deref())?;
    let name = pods::name_for_start(home, args.name.as_deref(), &cwd)?;
    start_named(home, &name, &cwd, &args.config).await?;
    println!("{name}");
    Ok(())
}

/// Start `name` unless it already runs.
pub async fn start_named(
    home: &Home,
    name: &str,
    cwd: &Path,
    config: &PodConfigArgs,
) -> Result<()> {
    if is_running(home, name).await {
        return Ok(());
    }
    let existing = settings::existing_meta(home, name)?;
    let mut config = config.clone();
    let mut eff = settings::resolve(home, cwd, &config, existing.as_ref())?;
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
            return Err(Exit::failure(detect::nothing_configured(name)));
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
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("pod").arg("serve").arg(name).arg("--ready-line");
    cmd.arg("--cwd").arg(cwd);
    if let Some(provider) = config.provider {
        cmd.arg("--provider")
            .arg(settings::provider_choice(provider).as_str());
    }
    if let Some(model) = &config.model {
        cmd.arg("--model").arg(model);
    }
    if let Some(base_url) = &config.base_url {
        cmd.arg("--base-url").arg(base_url);
    }
    if let Some(temperature) = config.temperature {
        cmd.arg("--temperature").arg(temperature.to_string());
    }
    if let Some(max_tokens) = config.max_tokens {
        cmd.arg("--max-tokens").arg(max_tokens.to_string());
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
        cmd.arg("--instructions").arg(arg);
    }
    if let Some(script) = &config.script {
        let script = script.canonicalize().map_err(|e| {
            Exit::failure(format!("script {} is not readable: {e}", script.display()))
        })?;
        cmd.arg("--script").arg(script);
    }
    std::fs::create_dir_all(home.logs_dir())
        .with_context(|| format!("cannot create {}", home.logs_dir().display()))?;
    let stderr_path = home.logs_dir().join(format!("{name}.stderr"));
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&stderr_path)
        .with_context(|| format!("cannot open {}", stderr_path.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .current_dir(cwd);
    detach(&mut cmd);
    let mut child = cmd.spawn().context("cannot spawn the pod process")?;
    let Some(stdout) = child.stdout.take() else {
        return Err(Exit::failure("the pod process has no output pipe"));
    };
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(READY_TIMEOUT, lines.next_line()).await;
    match ready {
        Ok(Ok(Some(line))) if line.trim() == "ready" => Ok(()),
        Ok(_) => {
            let status = child.wait().await.ok();
            Err(Exit::failure(format!(
                "pod \"{name}\" exited before it was ready{}\n{}",
                status.map(|s| format!(" ({s})")).unwrap_or_default(),
                log_tail(home, name, &log_file)
            )))
        }
        Err(_) => Err(Exit::failure(format!(
            "pod \"{name}\" did not become ready within {}s\n{}",
            READY_TIMEOUT.as_secs(),
            log_tail(home, name, &log_file)
        ))),
    }
}

/// Put the pod in its own session so closing the terminal (SIGHUP to the session) or Ctrl-C in
/// the shell that started it never reaches it.
fn detach(cmd: &mut tokio::process::Command) {
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent; it runs in the
    // forked child before exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

async fn is_running(home: &Home, name: &str) -> bool {
    Connection::connect(home, name, CLIENT_NAME, ClientMode::Control)
        .await
        .is_ok()
}

fn log_tail(home: &Home, name: &str, log_file: &Path) -> String {
    let mut out = String::new();
    for path in [
        log_file.to_path_buf(),
        home.logs_dir().join(format!("{name}.stderr")),
    ] {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.is_empty() {
            continue;
        }
        out.push_str(&format!("--- last lines of {} ---\n", path.display()));
        for line in &lines[lines.len().saturating_sub(LOG_TAIL_LINES)..] {
            out.push_str(line);
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push_str("(the pod wrote no log)");
    }
    out
}

/// Ask the pod to shut down and wait until it closed the connection (log flushed).
pub async fn stop(home: &Home, name: &str) -> Result<bool> {
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
async fn wait_unlocked(home: &Home, name: &str) {
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
