//! `seedpod approvals NAME [--json] [--revoke N | --revoke-all]`: the standing approvals a pod
//! holds ("always" answers), and withdrawing them.
//!
//! Listing works on a stopped pod too (read from its log, like `history`). Revoking needs the
//! pod running: a revocation is an entry the pod commits through its one writer, durable before
//! it answers, and a stopped pod has no writer to take it.

use anyhow::Result;
use seedpod_client::{ClientError, Connection, Home};
use seedpod_protocol::{ClientMode, ErrorCode, Method, PodName, ServerMsg, StandingApproval};

use crate::exit::Exit;
use crate::pods::CLIENT_NAME;

/// What to do with the list.
pub enum Action {
    List,
    Revoke(usize),
    RevokeAll,
}

pub async fn approvals(home: &Home, name: &PodName, action: Action, json: bool) -> Result<()> {
    let mut conn = match Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await {
        Ok(conn) => conn,
        Err(ClientError::NotRunning { .. }) => return stopped(home, name, action, json),
        Err(err) => return Err(err.into()),
    };
    let standing = list(&mut conn).await?;
    match action {
        Action::List => print(name, &standing, json),
        Action::Revoke(number) => {
            let Some(rule) = number
                .checked_sub(1)
                .and_then(|index| standing.get(index))
                .cloned()
            else {
                return Err(Exit::usage(no_such_number(name, number, standing.len())));
            };
            revoke(&mut conn, name, Some(rule.clone())).await?;
            println!("{name}: revoked {}", rule.display());
            Ok(())
        }
        Action::RevokeAll => {
            if standing.is_empty() {
                println!("{name}: no standing approvals to revoke");
                return Ok(());
            }
            revoke(&mut conn, name, None).await?;
            for rule in &standing {
                println!("{name}: revoked {}", rule.display());
            }
            Ok(())
        }
    }
}

async fn list(conn: &mut Connection) -> Result<Vec<StandingApproval>> {
    match conn.call(Method::ListApprovals).await? {
        ServerMsg::Approvals { standing, .. } => Ok(standing),
        ServerMsg::Error { message, .. } => Err(Exit::failure(message)),
        _ => Err(Exit::failure(
            "the pod answered list_approvals with something else; is it an older seedpod? \
             (`seedpod restart NAME` runs this version)",
        )),
    }
}

async fn revoke(
    conn: &mut Connection,
    name: &PodName,
    standing: Option<StandingApproval>,
) -> Result<Vec<StandingApproval>> {
    match conn.call(Method::RevokeApproval { standing }).await? {
        ServerMsg::Approvals { standing, .. } => Ok(standing),
        ServerMsg::Error {
            code: ErrorCode::NothingPending,
            message,
            ..
        } => Err(Exit::failure(format!(
            "{name}: {message} (it may have been revoked from another terminal)"
        ))),
        ServerMsg::Error { message, .. } => Err(Exit::failure(format!("{name}: {message}"))),
        _ => Err(Exit::failure(
            "the pod answered revoke_approval with something else",
        )),
    }
}

fn stopped(home: &Home, name: &PodName, action: Action, json: bool) -> Result<()> {
    match action {
        Action::List => {
            let pod = seedpod_pod::open_offline(home, name)?;
            print(name, &pod.state.standing_approvals, json)
        }
        Action::Revoke(_) | Action::RevokeAll => Err(Exit::usage(format!(
            "pod \"{name}\" is stopped; start it (`seedpod start {name}`) to revoke: a \
             revocation is written to its log by the pod itself"
        ))),
    }
}

fn no_such_number(name: &PodName, number: usize, count: usize) -> String {
    match count {
        0 => format!("pod \"{name}\" has no standing approvals"),
        1 => format!("pod \"{name}\" has 1 standing approval; {number} is not its number (1)"),
        n => format!(
            "pod \"{name}\" has {n} standing approvals, numbered 1 to {n}; {number} is not one \
             (`seedpod approvals {name}` lists them)"
        ),
    }
}

fn print(name: &PodName, standing: &[StandingApproval], json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(standing)?);
        return Ok(());
    }
    if standing.is_empty() {
        println!(
            "{name}: no standing approvals (answering `a`, or `seedpod approve --always`, on an \
             approval makes one)"
        );
        return Ok(());
    }
    for (index, rule) in standing.iter().enumerate() {
        println!("{:>3}  {}", index + 1, clean(&rule.display()));
    }
    Ok(())
}

/// A rule's words came from the model: show control characters, never send them to the terminal.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '⏎' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_number_says_how_many_there_are() {
        assert_eq!(
            no_such_number(&PodName::new("p").unwrap(), 3, 0),
            "pod \"p\" has no standing approvals"
        );
        assert!(no_such_number(&PodName::new("p").unwrap(), 3, 2).contains("numbered 1 to 2"));
        assert!(no_such_number(&PodName::new("p").unwrap(), 0, 1).contains("(1)"));
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(clean("shell: a\u{1b}[2Jb\n"), "shell: a⏎[2Jb⏎");
    }
}
