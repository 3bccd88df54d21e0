//! `seedpod rewind NAME --to TURN`: take a pod back to the end of a turn (docs/storage.md §Fork
//! and rewind).
//!
//! First it shows exactly what will change — each file the file tools changed since (restored,
//! deleted, unchanged, or refused and why), the shell commands run since, whose effects it cannot
//! undo, and files changed since by something else (best effort, by modification time) — then
//! asks (`--yes` answers for scripts). A pod in the middle of a turn is refused: a turn changes
//! files and history while we would be restoring them. A running, idle pod is stopped, changed
//! on disk and started again; it restores exactly from its log.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use seedpod_client::{ClientError, Connection, Home};
use seedpod_protocol::{
    ClientMode, Entry, EntryKind, Method, ModelItem, Origin, PodName, PodState, ServerMsg,
};
use seedpod_store::branch::{self, BranchPoint, Carry, Part};
use seedpod_store::lineage;
use seedpod_store::{
    CHECKPOINTS_DIR, SegmentState, SegmentWriter, load_meta, new_segment_id, save_meta,
};
use seedpod_tools::CheckpointStore;
use seedpod_tools::restore::{self, Change, FileChange};

use crate::args::{PodConfigArgs, RewindArgs};
use crate::exit::Exit;
use crate::pods::CLIENT_NAME;
use crate::start;

/// What is rewound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Files,
    Conversation,
    Both,
}

impl Scope {
    fn files(self) -> bool {
        matches!(self, Scope::Files | Scope::Both)
    }

    fn conversation(self) -> bool {
        matches!(self, Scope::Conversation | Scope::Both)
    }
}

pub async fn rewind(home: &Home, name: &PodName, args: RewindArgs) -> Result<()> {
    let scope = match (args.files, args.conversation) {
        (true, _) => Scope::Files,
        (false, true) => Scope::Conversation,
        (false, false) => Scope::Both,
    };
    let running = refuse_mid_turn(home, name).await?;
    let pod_dir = home.pod_dir(name);
    let meta = load_meta(&pod_dir)?
        .ok_or_else(|| Exit::usage(format!("pod \"{name}\" has no pod.json")))?;
    // Turns are numbered from the start of the whole conversation, through the pods this one
    // was forked from (docs/storage.md §Fork and rewind).
    let conversation = lineage::conversation(&pod_dir, &meta)?;
    if let Some(gap) = &conversation.gap {
        eprintln!("note: {gap}");
    }
    let parts = conversation.parts;
    let point = branch::turn_point(&parts, args.to)
        .map_err(|e| Exit::usage(format!("cannot rewind {name}: {e}")))?;
    let point = own_point(&parts, point, name, args.to)?;
    let undone = branch::after(&parts, &point);
    let store = CheckpointStore::new(pod_dir.join(CHECKPOINTS_DIR), u64::MAX);
    let checkpoints = restore::first_per_path(undone.iter().flat_map(|(_, entries)| {
        entries.iter().flat_map(|e| match &e.kind {
            EntryKind::ToolResult { meta, .. } => meta.checkpoints.clone(),
            _ => Vec::new(),
        })
    }));
    let changes = if scope.files() {
        restore::plan(&meta.cwd, &store, &checkpoints)
    } else {
        Vec::new()
    };
    let commands = shell_commands(&undone);
    // A segment archived since: its checkpoints were pruned with it (docs/storage.md
    // §Checkpoints), which the plan says once rather than only file by file.
    let archived = scope.files()
        && undone.iter().any(|(segment, entries)| {
            entries.iter().any(|e| {
                matches!(&e.kind, EntryKind::ToolResult { meta, .. } if !meta.checkpoints.is_empty())
            }) && seedpod_store::checkpoint_refs::is_archived(&pod_dir, segment)
        });
    let known: Vec<PathBuf> = checkpoints.iter().map(|c| PathBuf::from(&c.path)).collect();
    let since = point_time(&parts, &point);
    let mut elsewhere = if scope.files() {
        restore::changed_since(&meta.cwd, since, &known)
    } else {
        Vec::new()
    };
    // seedpod's own files, when its home is inside the project, are not the project's.
    let own = [&home.config, &home.data, &home.state, &home.run];
    elsewhere.retain(|path| !own.iter().any(|dir| path.starts_with(dir)));
    let turns_after = branch::turns(&parts).len().saturating_sub(args.to);
    print!(
        "{}",
        describe(
            name,
            args.to,
            turns_after,
            scope,
            &changes,
            &commands,
            &elsewhere
        )
    );
    if archived {
        println!(
            "note: part of what is undone is in an archived segment; the file checkpoints of \
             archived segments are no longer kept, so the files changed there cannot be put back"
        );
    }
    if args.dry_run {
        return Ok(());
    }
    if !confirmed(args.yes)? {
        println!("nothing was changed");
        return Ok(());
    }
    if running && scope.conversation() {
        start::stop(home, name).await?;
    }
    let done = if scope.conversation() {
        rewind_conversation(&pod_dir, &parts, &point).await
    } else {
        Ok(())
    };
    let failed = match &done {
        Ok(()) => restore::apply(&meta.cwd, &changes),
        Err(_) => Vec::new(),
    };
    if running && scope.conversation() {
        let config = PodConfigArgs {
            cwd: Some(meta.cwd.clone()),
            ..PodConfigArgs::default()
        };
        start::start_named(home, name, &meta.cwd, &config).await?;
    }
    done?;
    for (path, reason) in &failed {
        eprintln!("not restored: {} — {reason}", path.display());
    }
    println!("rewound {name} to the end of turn {}", args.to);
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Exit::failure(format!(
            "{} file(s) could not be restored (listed above)",
            failed.len()
        )))
    }
}

/// `point` as a point in the pod's own segments. A rewind writes a segment of this pod, so it
/// cannot go back past where the pod was forked: the turn it was forked at is its own start,
/// and an earlier turn is refused with the fork that reaches it.
fn own_point(parts: &[Part], point: BranchPoint, name: &PodName, to: usize) -> Result<BranchPoint> {
    let foreign = parts
        .iter()
        .any(|p| p.segment == point.segment && p.pod.is_some());
    if !foreign {
        return Ok(point);
    }
    let last_foreign = parts.iter().rev().find(|p| p.pod.is_some());
    let at_fork = last_foreign.is_some_and(|p| {
        p.segment == point.segment && p.entries.last().map(|e| e.seq) == Some(point.seq)
    });
    if at_fork && let Some(start) = branch::own_start(parts) {
        return Ok(start);
    }
    let before: usize = branch::turns(parts)
        .iter()
        .filter(|t| {
            parts
                .iter()
                .any(|p| p.segment == t.segment && p.pod.is_some())
        })
        .count();
    let forked_from = last_foreign
        .and_then(|p| p.pod.as_ref())
        .map_or_else(|| "its source".to_owned(), |p| p.to_string());
    Err(Exit::usage(format!(
        "cannot rewind {name} to turn {to}: that is before {name} was forked from \
         {forked_from}, and {name}'s own turns start after turn {before}. To go back further, \
         fork instead: `seedpod fork {forked_from} NEW --at {to}`"
    )))
}

/// Refuse a pod in the middle of a turn; whether it runs at all.
async fn refuse_mid_turn(home: &Home, name: &PodName) -> Result<bool> {
    let mut conn = match Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await {
        Ok(conn) => conn,
        Err(ClientError::NotRunning { .. }) => return Ok(false),
        Err(err) => return Err(err.into()),
    };
    let ServerMsg::StatusReply { status, .. } = conn.call(Method::Status).await? else {
        return Err(Exit::failure(format!(
            "pod \"{name}\" did not say what it is doing"
        )));
    };
    match status.state {
        PodState::Idle => {}
        PodState::Running
        | PodState::Paused
        | PodState::WaitingForApproval
        | PodState::Compacting
        | PodState::Stopping
        | PodState::Unknown => {
            return Err(Exit::failure(format!(
                "pod \"{name}\" is in the middle of a turn; nothing was changed. Wait for it to \
                 end (or `seedpod cancel {name}`), then rewind"
            )));
        }
    }
    if !status.queue.is_empty() {
        return Err(Exit::failure(format!(
            "pod \"{name}\" has {} queued input(s) it has not taken yet; nothing was changed. \
             Let it take them, then rewind",
            status.queue.len()
        )));
    }
    Ok(true)
}

/// Write the new segment and point `pod.json` at it: the segment first, so a crash in
/// between leaves the pod on its old segment.
async fn rewind_conversation(
    pod_dir: &std::path::Path,
    parts: &[Part],
    point: &BranchPoint,
) -> Result<()> {
    let mut meta = load_meta(pod_dir)?
        .ok_or_else(|| Exit::failure("the pod's pod.json is gone".to_string()))?;
    // Re-read: the pod may have gone on between the plan and its stop.
    let parts_now = branch::conversation(pod_dir, &meta)?;
    let active = parts_now
        .last()
        .ok_or_else(|| Exit::failure("the pod's log is empty".to_string()))?;
    let planned = parts.last().map(|p| (&p.segment, p.entries.len()));
    if planned != Some((&active.segment, active.entries.len())) {
        return Err(Exit::failure(
            "the pod went on between the plan and its stop; nothing was changed. Rewind again \
             to see what would change now"
                .to_string(),
        ));
    }
    let state = SegmentState::replay(&active.entries).map_err(seedpod_store::StoreError::from)?;
    if !state.pending.is_empty() || !state.outbox.is_empty() {
        return Err(Exit::failure(
            "the pod holds queued input or undelivered reports for its parent; nothing was \
             changed. Start it, let it finish them, then rewind"
                .to_string(),
        ));
    }
    let segment_id = new_segment_id();
    let origin = Origin::RewoundFrom {
        segment_id: point.segment.clone(),
        seq: point.seq,
    };
    // The pod's standing approvals and its lifetime counters go on: a rewind takes back
    // history and files, not what a person granted or what was spent.
    let carry = Carry {
        standing_approvals: state.standing_approvals.clone(),
        totals: Some(state.totals),
    };
    let start = branch::branch_start(parts, point, segment_id.clone(), origin, carry)
        .map_err(|e| Exit::failure(e.to_string()))?;
    let path = seedpod_store::segment_path(pod_dir, &segment_id);
    let (writer, _) = SegmentWriter::create(path, start).await?;
    writer.close().await?;
    meta.segments.push(segment_id.clone());
    meta.active_segment = segment_id;
    save_meta(pod_dir, &meta)?;
    Ok(())
}

/// The `shell` commands the model ran after the point, as it wrote them.
fn shell_commands(undone: &[(&seedpod_protocol::SegmentId, &[Entry])]) -> Vec<String> {
    undone
        .iter()
        .flat_map(|(_, entries)| entries.iter())
        .filter_map(|e| match &e.kind {
            EntryKind::AssistantItem {
                item:
                    ModelItem::ToolCall {
                        name, arguments, ..
                    },
            } if name == "shell" => Some(
                serde_json::from_str::<serde_json::Value>(arguments)
                    .ok()
                    .and_then(|v| v.get("command").and_then(|c| c.as_str()).map(str::to_owned))
                    .unwrap_or_else(|| arguments.clone()),
            ),
            _ => None,
        })
        .collect()
}

/// When the point was written (its entry's timestamp).
fn point_time(parts: &[Part], point: &BranchPoint) -> SystemTime {
    let ms = parts
        .iter()
        .find(|p| p.segment == point.segment)
        .and_then(|p| p.entries.iter().find(|e| e.seq == point.seq))
        .map_or(0, |e| e.ts);
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

fn describe(
    name: &PodName,
    to: usize,
    turns_after: usize,
    scope: Scope,
    changes: &[FileChange],
    commands: &[String],
    elsewhere: &[PathBuf],
) -> String {
    /// Files changed by something else that are listed by name.
    const SHOWN: usize = 20;
    let mut out = String::new();
    if scope.conversation() {
        out.push_str(&format!(
            "conversation: {name} goes back to the end of turn {to}; the {turns_after} turn(s) \
             after it stay in the log (`seedpod history {name} --all`)\n"
        ));
    }
    if scope.files() {
        if changes.is_empty() {
            out.push_str("files: no file tool changed a file since then\n");
        } else {
            out.push_str("files:\n");
        }
        for change in changes {
            let line = match &change.change {
                Change::Restore(bytes) => format!(
                    "restore    {} ({} bytes)",
                    change.path.display(),
                    bytes.len()
                ),
                Change::Delete => format!(
                    "delete     {} (it did not exist then)",
                    change.path.display()
                ),
                Change::Unchanged => format!("unchanged  {}", change.path.display()),
                Change::Refused(reason) => {
                    format!("NOT RESTORED {} — {reason}", change.path.display())
                }
            };
            out.push_str(&format!("  {}\n", seedpod_protocol::printable_line(&line)));
        }
        if !commands.is_empty() {
            out.push_str("shell commands since then, whose changes are not restored:\n");
            for command in commands {
                out.push_str(&format!(
                    "  $ {}\n",
                    seedpod_protocol::printable_line(command)
                ));
            }
        }
        if !elsewhere.is_empty() {
            out.push_str(
                "changed since then, not by a file tool (best effort, by modification time), not restored:\n",
            );
            for path in elsewhere.iter().take(SHOWN) {
                out.push_str(&format!(
                    "  {}\n",
                    seedpod_protocol::printable_line(&path.display().to_string())
                ));
            }
            if elsewhere.len() > SHOWN {
                out.push_str(&format!("  … and {} more\n", elsewhere.len() - SHOWN));
            }
        }
    }
    out
}

/// `--yes`, or a person's "y" at a terminal. Without either nothing is done: a script must
/// say `--yes`.
fn confirmed(yes: bool) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Err(Exit::usage(
            "nothing was changed: rewind asks before it changes anything; add --yes to do it without asking",
        ));
    }
    print!("rewind? [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
