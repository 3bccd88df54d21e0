//! Commands that change a pod: `notify`, `pause`, `resume`, `cancel`, `stop`, `restart`.

use anyhow::Result;
use seedpod_client::{ClientError, Connection, Home};
use seedpod_protocol::{AckOutcome, ClientMode, Method, PodName, PodState, ServerMsg};

use crate::args::PodConfigArgs;
use crate::exit::Exit;
use crate::pods::{self, CLIENT_NAME};
use crate::start;

pub async fn notify(home: &Home, pod: &pods::Pod, message: String, wake: bool) -> Result<()> {
    let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
    let reply = conn.call(Method::Notify { message, wake }).await?;
    notified(pod, reply)
}

/// `notify` for a pod on this machine, without an async runtime (`one_shot.rs`).
pub fn notify_here(home: &Home, name: &PodName, message: String, wake: bool) -> Result<()> {
    let method = Method::Notify { message, wake };
    let reply = seedpod_client::blocking::call_once(home, name, CLIENT_NAME, method)
        .map_err(pods::stopped)?;
    notified(&pods::Pod::Local(name.clone()), reply)
}

fn notified(pod: &pods::Pod, reply: ServerMsg) -> Result<()> {
    match reply {
        ServerMsg::Ack { outcome, .. } => {
            let what = match outcome {
                AckOutcome::Queued => {
                    "queued (durable); it reaches the model before the next request"
                }
                AckOutcome::Started | AckOutcome::Done | AckOutcome::Unknown => "delivered",
            };
            say(&format!("notified {pod}: {what}\n"));
            Ok(())
        }
        other => Err(Exit::failure(format!(
            "unexpected answer: {}",
            seedpod_protocol::encode(&other)
        ))),
    }
}

/// `pause`, `resume`, `cancel`.
pub async fn simple(home: &Home, pod: &pods::Pod, method: Method) -> Result<()> {
    let verb = method.name();
    let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
    simple_done(verb, conn.call(method).await)
}

/// `simple` for a pod on this machine, without an async runtime (`one_shot.rs`).
pub fn simple_here(home: &Home, name: &PodName, method: Method) -> Result<()> {
    let verb = method.name();
    match seedpod_client::blocking::call_once(home, name, CLIENT_NAME, method) {
        Err(err @ ClientError::NotRunning { .. }) => Err(pods::stopped(err)),
        result => simple_done(verb, result),
    }
}

fn simple_done(verb: &str, result: Result<ServerMsg, ClientError>) -> Result<()> {
    match result {
        Ok(_) => {
            say(&format!("{verb}: ok\n"));
            Ok(())
        }
        Err(ClientError::Refused { message, .. }) => {
            Err(Exit::failure(format!("{verb} refused: {message}")))
        }
        Err(err) => Err(err.into()),
    }
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

/// The confirmation line on stderr: one write, not one per formatted piece (stderr is
/// unbuffered), and a closed stderr is no reason to fail a request the pod has already done.
fn say(line: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}
