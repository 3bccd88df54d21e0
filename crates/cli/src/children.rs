//! The commands about child pods (DESIGN §7): `spawn` (ask a pod to start a child),
//! `ls --tree` (the family tree) and `stop [--with-children]`. Who is whose child is worked
//! out in `lineage.rs`; this file talks to pods and prints.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Result;
use seedpod_client::pods::ago;
use seedpod_client::{ClientError, Home, Liveness, PodListing};
use seedpod_protocol::{ClientMode, Method, PodName, ServerMsg, SpawnRequest};

use crate::exit::Exit;
use crate::lineage::{Family, Lineage, TreeRow};
use crate::pods::{self, CLIENT_NAME};
use crate::{args::SpawnArgs, control, session, start};

/// `seedpod spawn PARENT CHILD TASK`: the parent starts the child (its own process, which can
/// take up to the launch timeout), so the reply is awaited without a deadline of our own.
pub async fn spawn(home: &Home, args: SpawnArgs) -> Result<()> {
    let parent = pods::resolve_existing(home, Some(&args.parent))?;
    if args.child == parent {
        return Err(Exit::usage(format!(
            "a pod cannot spawn itself: name the child something other than \"{parent}\""
        )));
    }
    let task = pods::text_or_stdin(Some(args.task))?;
    if task.trim().is_empty() {
        return Err(Exit::usage(
            "the task is empty; say what the child should do",
        ));
    }
    let request = SpawnRequest {
        name: args.child.clone(),
        task,
        read: absolute_all("--read", &args.read)?,
        write: absolute_all("--write", &args.write)?,
        model: args.model,
        instructions: session::instructions(args.instructions.as_deref())?,
        mcp_servers: args.mcp_servers.as_deref().map(crate::args::name_list),
    };
    let mut conn = pods::connect(home, &parent, ClientMode::Control).await?;
    match conn.call(Method::Spawn(request)).await {
        Ok(ServerMsg::Spawned { name, .. }) => {
            println!("{name}");
            Ok(())
        }
        Ok(other) => Err(Exit::failure(format!(
            "unexpected answer: {}",
            seedpod_protocol::encode(&other)
        ))),
        Err(ClientError::Refused { message, .. }) => Err(Exit::failure(format!(
            "{parent} did not spawn \"{}\": {message}",
            args.child
        ))),
        Err(err) => Err(err.into()),
    }
}

/// Paths as the person meant them: relative to where they typed the command, not to the
/// parent's working directory. Not canonicalised here: the parent checks each against its own
/// scope, resolving links where it can see them.
fn absolute_all(flag: &str, paths: &[PathBuf]) -> Result<Vec<String>> {
    paths.iter().map(|path| absolute(flag, path)).collect()
}

fn absolute(flag: &str, path: &Path) -> Result<String> {
    let absolute = std::path::absolute(path)
        .map_err(|e| Exit::usage(format!("{flag} {}: {e}", path.display())))?;
    absolute.into_os_string().into_string().map_err(|_| {
        Exit::usage(format!(
            "{flag} {}: only UTF-8 paths can be delegated",
            path.display()
        ))
    })
}

/// `seedpod ls --tree`.
pub async fn tree(home: &Home) -> Result<()> {
    let listing = seedpod_client::list_pods(home, CLIENT_NAME).await;
    let families: Vec<Family> = listing
        .iter()
        .map(|pod| Family::of(&pod.name, &pod.meta))
        .collect();
    let rows = Lineage::new(&families).tree();
    print!("{}", render_tree(&rows, &listing, SystemTime::now()));
    Ok(())
}

/// The tree as a table: name (with guides), state, provider/model, last activity.
fn render_tree(rows: &[TreeRow], listing: &[PodListing], now: SystemTime) -> String {
    let width = rows
        .iter()
        .map(|row| row.guide.chars().count() + row.name.chars().count())
        .max()
        .unwrap_or(0)
        .max("NAME".len());
    let mut out = format!(
        "{:<width$}  {:<20}  {:<24}  LAST ACTIVITY\n",
        "NAME", "STATE", "PROVIDER/MODEL"
    );
    for row in rows {
        let pod = listing.iter().find(|pod| pod.name.as_str() == row.name);
        let (state, model, activity) = match pod {
            // The model is whatever name the pod (or a model that spawned it) chose: shown,
            // never obeyed by the terminal.
            Some(pod) if !row.gone => (
                tree_state(pod),
                crate::terminal::cell(&format!("{}/{}", pod.provider(), pod.model())).into_owned(),
                pod.last_activity_ms
                    .map(|ms| ago(ms, now))
                    .unwrap_or_else(|| "-".into()),
            ),
            _ => ("gone".to_string(), "-".to_string(), "-".to_string()),
        };
        let name = format!("{}{}", row.guide, row.name);
        out.push_str(&format!(
            "{name:<width$}  {state:<20}  {model:<24}  {activity}\n"
        ));
    }
    out
}

/// Liveness is tri-state (DESIGN §7): a stopped pod is not gone, it restores from its log.
fn tree_state(pod: &PodListing) -> String {
    match &pod.liveness {
        Liveness::Stopped => "stopped (restorable)".into(),
        Liveness::Running(_) | Liveness::Unresponsive(_) => pod.state().into(),
    }
}

/// `seedpod stop NAME [--with-children]`.
pub async fn stop(home: &Home, name: &PodName, with_children: bool) -> Result<()> {
    // Every name in the lineage came from a `pod.json`, where names are checked.
    let descendants: Vec<PodName> = lineage(home)
        .descendants(name.as_str())
        .into_iter()
        .filter_map(|child| PodName::new(child).ok())
        .collect();
    if !with_children {
        control::stop(home, name).await?;
        let mut running = Vec::new();
        for child in &descendants {
            if is_running(home, child).await {
                running.push(child.as_str());
            }
        }
        if !running.is_empty() {
            eprintln!(
                "note: child pods of {name} keep running: {}; `seedpod stop {name} --with-children` stops them too",
                running.join(", ")
            );
        }
        return Ok(());
    }
    // Best effort: one child that cannot be stopped does not keep the others running.
    let mut failed = Vec::new();
    for child in &descendants {
        match start::stop(home, child).await {
            Ok(true) => println!("stopped {child}"),
            Ok(false) => {}
            Err(err) => failed.push(format!("{child}: {err:#}")),
        }
    }
    control::stop(home, name).await?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Exit::failure(format!(
            "some child pods could not be stopped: {}",
            failed.join("; ")
        )))
    }
}

fn lineage(home: &Home) -> Lineage {
    let families: Vec<Family> = pods::known_pods(home)
        .iter()
        .map(|(name, meta)| Family::of(name, meta))
        .collect();
    Lineage::new(&families)
}

/// Whether `name` is running: a pod that does not answer in time counts as running (it has
/// not gone away).
async fn is_running(home: &Home, name: &PodName) -> bool {
    seedpod_client::pods::probe(home, name, CLIENT_NAME).await != Liveness::Stopped
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::test_support::meta;

    fn listing(name: &str, parent: Option<&str>, liveness: Liveness) -> PodListing {
        PodListing {
            name: name.parse().unwrap(),
            meta: meta(name, parent),
            liveness,
            last_activity_ms: Some(1_000_000 * 1000 - 90_000),
        }
    }

    #[test]
    fn the_tree_table_shows_restorable_and_gone_pods() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let pods = [
            listing("boss", None, Liveness::Stopped),
            listing("kid", Some("boss"), Liveness::Unresponsive("slow".into())),
        ];
        let rows = [
            TreeRow {
                guide: String::new(),
                name: "boss".into(),
                gone: false,
            },
            TreeRow {
                guide: "├─ ".into(),
                name: "kid".into(),
                gone: false,
            },
            TreeRow {
                guide: "└─ ".into(),
                name: "lost".into(),
                gone: true,
            },
        ];
        let text = render_tree(&rows, &pods, now);
        let lines: Vec<&str> = text.lines().collect();
        let columns = |line: &str| -> Vec<String> {
            line.split("  ")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            columns(lines[0]),
            ["NAME", "STATE", "PROVIDER/MODEL", "LAST ACTIVITY"]
        );
        assert_eq!(
            columns(lines[1]),
            ["boss", "stopped (restorable)", "scripted/script", "1m ago"]
        );
        assert_eq!(
            columns(lines[2]),
            ["├─ kid", "unresponsive", "scripted/script", "1m ago"]
        );
        assert_eq!(columns(lines[3]), ["└─ lost", "gone", "-", "-"]);
        // The state column lines up whatever the guides' width.
        let state_at = |line: &str, state: &str| {
            let byte = line.find(state).unwrap();
            line[..byte].chars().count()
        };
        assert_eq!(state_at(lines[0], "STATE"), "└─ lost".chars().count() + 2);
        assert_eq!(state_at(lines[1], "stopped"), state_at(lines[0], "STATE"));
        assert_eq!(state_at(lines[2], "unresp"), state_at(lines[0], "STATE"));
        assert_eq!(state_at(lines[3], "gone"), state_at(lines[0], "STATE"));
    }

    #[test]
    fn a_model_name_with_escapes_is_shown_not_obeyed() {
        let mut pod = listing("kid", None, Liveness::Stopped);
        // OSC 52 would write the person's clipboard.
        pod.meta.config.model = "m\u{1b}]52;c;ZXZpbA==\u{7}".into();
        let rows = [TreeRow {
            guide: String::new(),
            name: "kid".into(),
            gone: false,
        }];
        let text = render_tree(&rows, &[pod], UNIX_EPOCH + Duration::from_secs(1_000_000));
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("\\u{1b}]52"), "{text}");
    }

    #[test]
    fn relative_paths_are_made_absolute_against_this_directory() {
        let here = std::env::current_dir().unwrap();
        let paths = [PathBuf::from("src"), PathBuf::from("/etc/hosts")];
        let absolute = absolute_all("--read", &paths).unwrap();
        assert_eq!(absolute[0], here.join("src").display().to_string());
        assert_eq!(absolute[1], "/etc/hosts");
    }
}
