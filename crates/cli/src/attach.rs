//! `seedpod` and `seedpod attach [NAME]`: the full-screen TUI on a pod, started or restored
//! first when it is not running. Leaving the TUI never stops the pod.

use std::io::IsTerminal as _;
use std::sync::Arc;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::PodName;
use seedpod_tui::{Starter, TuiOptions};

use crate::args::PodConfigArgs;
use crate::exit::Exit;
use crate::pods::{self, canonical_cwd};
use crate::start;

/// Attach to `name`, or to this directory's pod (created when there is none yet).
pub async fn attach(home: &Home, name: Option<PodName>) -> Result<()> {
    require_terminal()?;
    let name = match name {
        Some(name) => pods::resolve_existing(home, Some(&name))?,
        None => {
            let cwd = canonical_cwd(None)?;
            let name = pods::name_for_start(home, None, &cwd)?;
            start::start_named(home, &name, &cwd, &PodConfigArgs::default()).await?;
            name
        }
    };
    start_existing(home, &name).await?;
    let outcome = seedpod_tui::run(TuiOptions {
        home: home.clone(),
        pod: name,
        banner: None,
        persist_history: true,
        starter: starter(home),
        notify: tui_notify(home),
        remote: None,
        hosts: crate::remote::picker_hosts(home),
        hosts_timeout: crate::remote::hosts_timeout(home),
        tools: seedpod_pod::catalogue::decl_for,
        paste: crate::attach::tui_paste(home),
    })
    .await?;
    println!("{}", outcome.message());
    Ok(())
}

/// `seedpod attach HOST:NAME`: the TUI on a pod on another machine, through `ssh HOST seedpod
/// bridge NAME --start` (restored there first when it is stopped). ssh may prompt (a
/// passphrase) before the TUI takes the terminal; when the link drops the TUI reconnects and
/// resumes where it was.
pub async fn attach_remote(home: &Home, pod: &pods::Pod) -> Result<()> {
    require_terminal()?;
    let pods::Pod::Remote { remote, name } = pod else {
        return Err(Exit::usage("attach_remote needs HOST:NAME"));
    };
    // Once, before the TUI owns the terminal: start it there if it is stopped, and let ssh
    // ask for what it needs while prompts can still be answered.
    drop(
        remote
            .connect(
                name,
                pods::CLIENT_NAME,
                seedpod_protocol::ClientMode::Control,
                true,
                false,
            )
            .await?,
    );
    let outcome = seedpod_tui::run(TuiOptions {
        home: home.clone(),
        pod: name.clone(),
        banner: Some(format!("{} on {}", name, remote.alias)),
        persist_history: false,
        starter: starter(home),
        notify: tui_notify(home),
        remote: Some(remote.clone()),
        hosts: crate::remote::picker_hosts(home),
        hosts_timeout: crate::remote::hosts_timeout(home),
        tools: seedpod_pod::catalogue::decl_for,
        paste: crate::attach::tui_paste(home),
    })
    .await?;
    println!("{}", outcome.message());
    Ok(())
}

/// `[tui] inline_paste_lines` and `inline_paste_chars` as the configuration here says; one
/// that does not resolve leaves the defaults.
pub fn tui_paste(home: &Home) -> seedpod_tui::composer::PasteLimits {
    let Ok(cwd) = canonical_cwd(None) else {
        return Default::default();
    };
    match crate::settings::resolve(home, &cwd, &PodConfigArgs::default(), None) {
        Ok(eff) => seedpod_tui::composer::PasteLimits {
            lines: eff.tui.inline_paste_lines.value,
            chars: eff.tui.inline_paste_chars.value,
        },
        Err(_) => Default::default(),
    }
}

/// `[tui] notify` as the configuration here says; a configuration that does not resolve (it
/// will say why where it matters, at `start`) leaves the default.
pub fn tui_notify(home: &Home) -> seedpod_tui::notify::NotifyMode {
    use seedpod_config::TuiNotify;
    use seedpod_tui::notify::NotifyMode;
    let Ok(cwd) = canonical_cwd(None) else {
        return NotifyMode::default();
    };
    match crate::settings::resolve(home, &cwd, &PodConfigArgs::default(), None) {
        Ok(eff) => match eff.tui.notify.value {
            TuiNotify::Auto => NotifyMode::Auto,
            TuiNotify::Bell => NotifyMode::Bell,
            TuiNotify::Off => NotifyMode::Off,
        },
        Err(_) => NotifyMode::default(),
    }
}

/// The TUI takes over the terminal; without one (a pipe, a script) say what to use instead.
pub fn require_terminal() -> Result<()> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(Exit::usage(
        "the TUI needs a terminal; from scripts use `seedpod send`, `seedpod notify` or `seedpod events`",
    ))
}

/// Start an existing pod in its own directory unless it already runs.
pub async fn start_existing(home: &Home, name: &PodName) -> Result<()> {
    let cwd = pods::known_pods(home)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, meta)| meta.cwd)
        .ok_or_else(|| Exit::usage(format!("no pod named \"{name}\"")))?;
    start::start_named(home, name, &cwd, &PodConfigArgs::default()).await
}

/// How the TUI's picker starts a stopped pod: the same detached spawn as `seedpod start`.
pub fn starter(home: &Home) -> Starter {
    let home = home.clone();
    Arc::new(move |name: PodName| {
        let home = home.clone();
        Box::pin(async move { start_existing(&home, &name).await })
    })
}
