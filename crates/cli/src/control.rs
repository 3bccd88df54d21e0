//! Commands that change a pod: `notify`, `pause`, `resume`, `cancel`, `stop`, `restart`.

use anyhow::Result;
use seedpod_cli::quick::{self, say};
use seedpod_client::{Connection, Home};
use seedpod_protocol::{ClientMode, Method, PodName, PodState};

use crate::args::PodConfigArgs;
use crate::exit::Exit;
use crate::pods::{self, CLIENT_NAME};
use crate::start;

pub async fn notify(home: &Home, pod: &pods::Pod, message: String, wake: bool) -> Result<()> {
    let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
    let reply = conn.call(Method::Notify { message, wake }).await?;
    quick::notified(pod, reply)
}

/// `pause`, `resume`, `cancel`.
pub async fn simple(home: &Home, pod: &pods::Pod, method: Method) -> Result<()> {
    let verb = method.name();
    let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
    quick::simple_done(verb, conn.call(method).await)
}

pub async fn stop(home: &Home, name: &PodName) -> Result<()> {
    if start::stop(home, name).await? {
        println!("stopped {name}; `seedpod start {name}` restores it");
    } else {
        println!("{name} was not running");
    }
    Ok(())
}

pub async fn restart(home: &Home, name: &PodName) -> Result<()> {
    let before = pod_state(home, name).await;
    start::stop(home, name).await?;
    let meta = seedpod_store::load_meta(&home.pod_dir(name))?
        .ok_or_else(|| Exit::usage(format!("pod \"{name}\" has no pod.json")))?;
    let config = PodConfigArgs {
        cwd: Some(meta.cwd.clone()),
        provider: None,
        model: None,
        base_url: None,
        temperature: None,
        max_tokens: None,
        script: None,
        instructions: None,
    };
    start::start_named(home, name, &meta.cwd, &config).await?;
    println!("{name}");
    if let Some(before) = before
        && let Some(note) = interrupted(name, before, pod_state(home, name).await)
    {
        say(&format!("{note}\n"));
    }
    Ok(())
}

/// The state a running pod reports, or `None` when none answers.
async fn pod_state(home: &Home, name: &PodName) -> Option<PodState> {
    let conn = Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await;
    conn.ok().map(|conn| conn.welcome.state)
}

/// What a restart did to work under way, in the words of what the restored pod now does
/// (`pod/src/restore.rs`: an open run comes back paused, a call waiting for approval still
/// waits); `None` when nothing was under way.
fn interrupted(name: &PodName, before: PodState, after: Option<PodState>) -> Option<String> {
    match before {
        PodState::Running => Some(match after {
            Some(PodState::Paused) => format!(
                "{name}: the restart interrupted a running turn; what had streamed is kept and the \
                 turn is paused — `seedpod resume {name}` continues it, new input abandons it"
            ),
            _ => format!("{name}: the restart interrupted a running turn"),
        }),
        PodState::WaitingForApproval => Some(format!(
            "{name}: the restart came while a tool call waited for approval; it still waits — \
             `seedpod approve {name}` answers it, new input abandons the turn"
        )),
        PodState::Compacting => Some(format!(
            "{name}: the restart interrupted a compaction; nothing was changed, and the pod \
             compacts again when the context calls for it"
        )),
        PodState::Idle | PodState::Paused | PodState::Stopping | PodState::Unknown => None,
    }
}
