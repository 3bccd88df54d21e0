//! `seedpod demo`: the TUI on a throwaway pod (`demo-<pid>`) driven by a built-in scripted
//! model, so a new user sees streaming markdown, thinking, a tool call, an approval request, a
//! notification and the keys without an API key. The tools are real: `list_dir` reads the
//! current directory and the approved `shell` call runs `echo`.
//!
//! The demo pod lives under the normal home (it is a real pod: real socket, real log) and is
//! stopped and deleted when the demo ends, so demos never pile up in `seedpod ls`. A driver task
//! plays the other side: it sends the opening prompt, and after the first answer sends a
//! `notify` exactly as a script would.

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

const BANNER: &str = "DEMO · a scripted model plays a fixed script (no API key; its tool calls are real: list_dir, and an echo you approve) · Ctrl-D ends the demo and deletes its pod";

pub async fn demo(home: &Home) -> Result<()> {
    require_terminal()?;
    let name = PodName::new(format!("demo-{}", std::process::id()))
        .map_err(|e| Exit::failure(format!("cannot name the demo pod: {e}")))?;
    let cwd = canonical_cwd(None)?;
    let pod_dir = home.pod_dir(&name);
    seedpod_client::private::create_dir_all(&pod_dir)
        .with_context(|| format!("cannot create {}", pod_dir.display()))?;
    let script = pod_dir.join("demo.script.jsonl");
    std::fs::write(&script, DEMO_SCRIPT)
        .with_context(|| format!("cannot write {}", script.display()))?;
    let config = PodConfigArgs {
        cwd: Some(cwd.clone()),
        provider: Some(ProviderArg::Scripted),
        model: Some("demo".into()),
        script: Some(script),
        ..PodConfigArgs::default()
    };
    if let Err(err) = start::start_named(home, &name, &cwd, &config).await {
        let _ = std::fs::remove_dir_all(&pod_dir);
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
    println!("demo over — pod {name} was stopped and deleted");
    Ok(())
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

async fn remove(home: &Home, name: &PodName) -> Result<()> {
    start::stop(home, name).await?;
    let pod_dir = home.pod_dir(name);
    std::fs::remove_dir_all(&pod_dir)
        .with_context(|| format!("cannot delete the demo pod {}", pod_dir.display()))?;
    for log in [
        home.log_path(name),
        home.logs_dir().join(format!("{name}.stderr")),
    ] {
        let _ = std::fs::remove_file(log);
    }
    Ok(())
}
