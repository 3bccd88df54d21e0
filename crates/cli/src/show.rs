//! Read-only commands: `history`, `context`, `events` (`ls` has its own file).

use anyhow::Result;
use seedpod_client::{ClientError, Connection, Home};
use seedpod_protocol::{ClientMode, EventSeq, Method, ServerMsg};

use crate::exit::Exit;
use crate::format;
use crate::pods::{self, CLIENT_NAME};
use crate::tally::RunTally;

/// History of a running pod, or of a stopped one read straight from its log.
pub async fn history(home: &Home, pod: &pods::Pod, json: bool) -> Result<()> {
    let name = match pod {
        pods::Pod::Local(name) => name,
        pods::Pod::Remote { .. } => {
            let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
            let ServerMsg::History { entries, .. } = conn.call(Method::GetHistory).await? else {
                return Err(Exit::failure(
                    "the pod answered get_history with something else",
                ));
            };
            return print_entries(&entries, json);
        }
    };
    let entries = match Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await {
        Ok(mut conn) => {
            let ServerMsg::History { entries, .. } = conn.call(Method::GetHistory).await? else {
                return Err(Exit::failure(
                    "the pod answered get_history with something else",
                ));
            };
            entries
        }
        Err(ClientError::NotRunning { .. }) => seedpod_pod::open_offline(home, name)?.entries,
        Err(err) => return Err(err.into()),
    };
    print_entries(&entries, json)
}

fn print_entries(entries: &[seedpod_protocol::Entry], json: bool) -> Result<()> {
    for entry in entries {
        if json {
            println!("{}", seedpod_protocol::encode(entry));
        } else {
            println!("{}", format::entry_line(entry));
        }
    }
    Ok(())
}

/// The next request body of a running pod, or of a stopped one computed from its log by the
/// same restore path.
pub async fn context(home: &Home, pod: &pods::Pod) -> Result<()> {
    let name = match pod {
        pods::Pod::Local(name) => name,
        pods::Pod::Remote { .. } => {
            let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
            let ServerMsg::Context { body, .. } = conn.call(Method::GetContext).await? else {
                return Err(Exit::failure(
                    "the pod answered get_context with something else",
                ));
            };
            println!("{body}");
            return Ok(());
        }
    };
    let body = match Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await {
        Ok(mut conn) => {
            let ServerMsg::Context { body, .. } = conn.call(Method::GetContext).await? else {
                return Err(Exit::failure(
                    "the pod answered get_context with something else",
                ));
            };
            body
        }
        Err(ClientError::NotRunning { .. }) => seedpod_pod::offline_context(home, name)?,
        Err(err) => return Err(err.into()),
    };
    println!("{body}");
    Ok(())
}

pub async fn events(
    home: &Home,
    pod: &pods::Pod,
    json: bool,
    since: Option<EventSeq>,
) -> Result<()> {
    let mut conn = match since {
        None => pods::connect_pod(home, pod, ClientMode::Attach).await?,
        Some(since) => {
            let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
            conn.send(Method::Subscribe {
                since_seq: Some(since),
            })
            .await?;
            conn
        }
    };
    let mut tally = RunTally::default();
    // For a pod on another machine: where to pick up if the link drops without a goodbye.
    let mut last_seq = conn.welcome.seq;
    let mut said_goodbye = false;
    loop {
        let line = match conn.recv_line().await {
            Ok(Some(line)) => line,
            Ok(None) | Err(ClientError::Transport(_)) => {
                return match pod {
                    pods::Pod::Remote { .. } if !said_goodbye => Err(Exit::failure(format!(
                        "the link to {pod} was lost; `seedpod events {pod} --since {}` goes on \
                         from the last event shown",
                        last_seq
                    ))),
                    _ => Ok(()),
                };
            }
            Err(err) => return Err(err.into()),
        };
        let parsed = serde_json::from_str::<ServerMsg>(&line);
        if let Ok(msg) = &parsed {
            match msg {
                ServerMsg::Goodbye { .. } => said_goodbye = true,
                ServerMsg::SnapshotBegin { seq, .. } | ServerMsg::SnapshotEnd { seq } => {
                    last_seq = *seq;
                }
                other => last_seq = other.seq().map_or(last_seq, |seq| last_seq.max(seq)),
            }
        }
        if json {
            println!("{line}");
            continue;
        }
        let Ok(msg) = parsed else {
            println!("?? {line}");
            continue;
        };
        // Committed entries go through the tally so `run_end` lines carry the run's tokens.
        if let ServerMsg::Committed { entry, .. } = &msg {
            println!("{}", tally.line(entry));
        } else if let ServerMsg::SnapshotEntries { entries } = &msg {
            for entry in entries {
                println!("{}", tally.line(entry));
            }
        } else if let Some(text) = format::event_line(&msg) {
            println!("{text}");
        }
    }
}
