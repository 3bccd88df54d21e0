//! Read-only commands: `ls`, `history`, `context`, `events`.

use anyhow::Result;
use seedpod_client::{ClientError, Connection, Home};
use seedpod_protocol::{ClientMode, Method, ServerMsg};

use crate::exit::Exit;
use crate::format;
use crate::pods::{self, CLIENT_NAME};
use crate::tally::RunTally;

pub async fn ls(home: &Home, json: bool) -> Result<()> {
    if !json {
        println!(
            "{:<20} {:<9} {:>8}  {:<24} {:>15}  CWD",
            "NAME", "STATE", "PID", "PROVIDER/MODEL", "TOKENS IN/OUT"
        );
    }
    for pod in seedpod_client::list_pods(home, CLIENT_NAME).await {
        let pid = pod.status().map(|s| s.pid);
        let usage = pod.usage();
        if json {
            let line = serde_json::json!({
                "name": pod.name,
                "parent": pod.meta.parent,
                "state": pod.state(),
                "pid": pid,
                "cwd": pod.cwd(),
                "provider": pod.provider(),
                "model": pod.model(),
                "queued": pod.status().map(|s| s.queue.len()).unwrap_or(0),
                "usage": usage,
                "last_activity_ms": pod.last_activity_ms,
            });
            println!("{line}");
        } else {
            let tokens = usage
                .map(|u| format!("{}/{}", u.input_tokens, u.output_tokens))
                .unwrap_or_else(|| "-".into());
            println!(
                "{:<20} {:<9} {:>8}  {:<24} {:>15}  {}",
                pod.name,
                pod.state(),
                pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                format!("{}/{}", pod.provider(), pod.model()),
                tokens,
                pod.cwd().display()
            );
        }
    }
    Ok(())
}

/// History of a running pod, or of a stopped one read straight from its log.
pub async fn history(home: &Home, name: &str, json: bool) -> Result<()> {
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
    for entry in &entries {
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
pub async fn context(home: &Home, name: &str) -> Result<()> {
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

pub async fn events(home: &Home, name: &str, json: bool, since: Option<u64>) -> Result<()> {
    let mut conn = match since {
        None => pods::connect(home, name, ClientMode::Attach).await?,
        Some(since) => {
            let mut conn = pods::connect(home, name, ClientMode::Control).await?;
            conn.send(Method::Subscribe {
                since_seq: Some(since),
            })
            .await?;
            conn
        }
    };
    let mut tally = RunTally::default();
    loop {
        let line = match conn.recv_line().await {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(()),
            Err(ClientError::Transport(_)) => return Ok(()),
            Err(err) => return Err(err.into()),
        };
        if json {
            println!("{line}");
            continue;
        }
        let Ok(msg) = serde_json::from_str::<ServerMsg>(&line) else {
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
