//! `seedpod demo`: the TUI on a throwaway pod (`demo-<pid>`) driven by a built-in scripted
//! model, so a new user sees streaming markdown, thinking, a tool call, an approval request, a
//! notification and the keys without an API key. The tools are real: `list_dir` reads the
//! current directory and the approved `shell` call runs `echo`.
//!
//! The demo pod lives under the normal home (it is a real pod: real socket, real log) and is
//! stopped and deleted when the demo ends — Ctrl-D, a closed terminal (SIGHUP) or SIGTERM —
//! so demos never pile up in `seedpod ls`. A demo that could not clean up (killed with
//! SIGKILL, a crash) leaves a pod whose demo process is gone: `seedpod ls` reaps those
//! (`reap_stale`). A driver task plays the other side: it sends the opening prompt, and after
//! the first answer sends a `notify` exactly as a script would.

use std::io::Write as _;

use anyhow::{Context as _, Result};
use seedpod_client::{Connection, Home};
use seedpod_protocol::{ClientMode, EntryKind, Method, PodName, Segment, ServerMsg};
use seedpod_tui::TuiOptions;

use crate::args::{PodConfigArgs, ProviderArg};
use crate::attach::{require_terminal, starter};
use crate::exit::Exit;
use crate::pods::canonical_cwd;
use crate::start;

/// The scripted model's answers, one JSON response per line (the scripted provider's format).
const DEMO_SCRIPT: &str = include_str!("demo.script.jsonl");

const OPENING_PROMPT: &str = "Show me what you can do.";

const NOTIFICATION: &str =
    "Hello from outside the TUI: this came in like `seedpod notify` from a script.";

/// Written into a demo pod's directory: the pod is a demo's, to delete when it is over.
const SCRIPT_FILE: &str = "demo.script.jsonl";

/// Attempts at deleting a demo pod's directory while its last files land.
const REMOVE_TRIES: u32 = 5;

/// Demo pods are named `demo-<pid>` after the demo process that owns them.
const NAME_PREFIX: &str = "demo-";

/// Wrapped to the terminal's width (a few rows at most), so keep it short.
const BANNER: &str = "DEMO · a scripted model, no API key · its tool calls are real (list_dir, an echo you approve) · Ctrl-D ends the demo and deletes its pod";

pub async fn demo(home: &Home) -> Result<()> {
    require_terminal()?;
    // A closed terminal or `kill` while the pod starts must still end in its removal: from
    // here on SIGHUP and SIGTERM are ours (the TUI watches them too, and leaves cleanly).
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .context("cannot watch SIGHUP")?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot watch SIGTERM")?;
    let name = PodName::new(format!("{NAME_PREFIX}{}", std::process::id()))
        .map_err(|e| Exit::failure(format!("cannot name the demo pod: {e}")))?;
    let cwd = canonical_cwd(None)?;
    let pod_dir = home.pod_dir(&name);
    seedpod_client::private::create_dir_all(&pod_dir)
        .with_context(|| format!("cannot create {}", pod_dir.display()))?;
    let script = pod_dir.join(SCRIPT_FILE);
    std::fs::write(&script, DEMO_SCRIPT)
        .with_context(|| format!("cannot write {}", script.display()))?;
    let config = PodConfigArgs {
        cwd: Some(cwd.clone()),
        provider: Some(ProviderArg::Scripted),
        model: Some("demo".into()),
        script: Some(script),
        ..PodConfigArgs::default()
    };
    let started = tokio::select! {
        started = start::start_named(home, &name, &cwd, &config) => started,
        _ = hangup.recv() => Err(Exit::failure("the terminal closed")),
        _ = terminate.recv() => Err(Exit::failure("terminated")),
    };
    if let Err(err) = started {
        let _ = remove(home, &name).await;
        return Err(err);
    }
    let driver = tokio::spawn(drive(home.clone(), name.clone()));
    let outcome = seedpod_tui::run(TuiOptions {
        home: home.clone(),
        pod: name.clone(),
        banner: Some(BANNER.into()),
        persist_history: false,
        starter: starter(home),
        notify: crate::attach::tui_notify(home),
        remote: None,
        hosts: Vec::new(),
        hosts_timeout: std::time::Duration::from_secs(1),
        tools: seedpod_pod::catalogue::decl_for,
        paste: crate::attach::tui_paste(home),
    })
    .await;
    driver.abort();
    let removed = remove(home, &name).await;
    let outcome = outcome?;
    if outcome.pod != name {
        // The picker moved to a real pod; that one keeps running.
        println!("{}", outcome.message());
    }
    removed?;
    // The terminal may be gone (closed window): saying so is best effort.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "demo over — pod {name} was stopped and deleted");
    Ok(())
}

/// Stop and delete the demo pods whose demo process is gone (killed before it could clean
/// up); returns their names. A pod is a demo's when it is named `demo-<pid>` and its
/// directory holds the demo script; one whose process lives is left alone.
pub async fn reap_stale(home: &Home) -> Vec<PodName> {
    let Ok(dirs) = std::fs::read_dir(home.pods_dir()) else {
        return Vec::new();
    };
    let mut reaped = Vec::new();
    for dir in dirs.filter_map(|d| d.ok()) {
        let file_name = dir.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(NAME_PREFIX))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !dir.path().join(SCRIPT_FILE).is_file() || demo_process_alive(pid) {
            continue;
        }
        let Ok(name) = PodName::new(format!("{NAME_PREFIX}{pid}")) else {
            continue;
        };
        match remove(home, &name).await {
            Ok(()) => reaped.push(name),
            Err(err) => eprintln!("{err:#}"),
        }
    }
    reaped
}

/// Whether process `pid` is a running `seedpod demo` (a reused pid running something else is
/// not).
fn demo_process_alive(pid: u32) -> bool {
    let proc_dir = std::path::Path::new("/proc").join(pid.to_string());
    if std::path::Path::new("/proc/self").exists() {
        return std::fs::read(proc_dir.join("cmdline"))
            .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|arg| arg == b"demo"));
    }
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Play the world around the pod: the opening prompt, then a notification after the answer.
async fn drive(home: Home, name: PodName) -> Result<()> {
    let mut conn = Connection::connect(&home, &name, "seedpod-demo", ClientMode::Attach).await?;
    conn.send(Method::Run {
        segments: vec![Segment::text(OPENING_PROMPT)],
    })
    .await?;
    while let Some(msg) = conn.recv().await? {
        if let ServerMsg::Committed { entry, .. } = &msg
            && matches!(entry.kind, EntryKind::RunEnd { .. })
        {
            conn.send(Method::Notify {
                message: NOTIFICATION.into(),
                wake: true,
            })
            .await?;
            return Ok(());
        }
    }
    Ok(())
}

/// Stop pod `name` and delete its directory and log files (also what ends an `exec` pod).
pub(crate) async fn remove(home: &Home, name: &PodName) -> Result<()> {
    start::stop(home, name).await?;
    let mut tries = 0;
    // The pod's last files (its socket, a log flush) can land while the directory is being
    // removed: a removal that finds the directory not empty is tried again, a few times.
    loop {
        tries += 1;
        match delete(home, name) {
            Ok(()) => return Ok(()),
            Err(_) if tries < REMOVE_TRIES => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(err) => return Err(err),
        }
    }
}

/// Delete a stopped pod's directory and log files (an exec pod whose exec is gone does it
/// itself, once it has stopped).
pub(crate) fn delete(home: &Home, name: &PodName) -> Result<()> {
    let pod_dir = home.pod_dir(name);
    if pod_dir.exists() {
        std::fs::remove_dir_all(&pod_dir)
            .with_context(|| format!("cannot delete the pod {}", pod_dir.display()))?;
    }
    for log in [
        home.log_path(name),
        home.logs_dir().join(format!("{name}.stderr")),
    ] {
        let _ = std::fs::remove_file(log);
    }
    Ok(())
}
