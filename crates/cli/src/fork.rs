//! `seedpod fork NAME NEW`: a new pod whose history is NAME's up to a turn (docs/storage.md
//! §Fork and rewind).
//!
//! NAME's log is only read — it may be running, even mid-turn (the fork then starts from its
//! last finished turn). NEW gets a directory of its own, a first segment whose `segment_start`
//! is NAME's log folded to that point (`seedpod_store::branch`), and a `pod.json` saying where
//! it came from; then it is started like any stopped pod, restoring from that log.

use std::os::unix::fs::DirBuilderExt;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::{EntrySeq, Origin, PodName};
use seedpod_store::branch::{self, BranchPoint, Carry};
use seedpod_store::lineage;
use seedpod_store::{ForkRecord, PodMeta, SegmentWriter, load_meta, new_segment_id, save_meta};

use crate::args::{ForkArgs, PodConfigArgs};
use crate::exit::Exit;
use crate::pods::{self, canonical_cwd};
use crate::start;

pub async fn fork(home: &Home, args: ForkArgs) -> Result<()> {
    let ForkArgs {
        name,
        new,
        at,
        seq,
        cwd,
    } = args;
    let source_dir = home.pod_dir(&name);
    let source = load_meta(&source_dir)?.ok_or_else(|| {
        // `resolve_existing` words it with the list of pods.
        pods::resolve_existing(home, Some(&name))
            .err()
            .unwrap_or_else(|| Exit::usage(format!("no pod named \"{name}\"")))
    })?;
    if name == new {
        return Err(Exit::usage(format!(
            "a fork needs a new name; \"{new}\" is the pod being forked"
        )));
    }
    let cwd = match cwd {
        Some(dir) => canonical_cwd(Some(&dir))?,
        None => source.cwd.clone(),
    };
    // Turns are numbered from the start of the whole conversation, through the pods NAME was
    // forked from (docs/storage.md §Fork and rewind).
    let conversation = lineage::conversation(&source_dir, &source)?;
    if let Some(gap) = &conversation.gap {
        eprintln!("note: {gap}");
    }
    let parts = conversation.parts;
    let point = match (at, seq) {
        (Some(turn), _) => branch::turn_point(&parts, turn),
        (None, Some(seq)) => branch::seq_point(&parts, EntrySeq::new(seq)),
        (None, None) => branch::last_rest_point(&parts),
    }
    .map_err(|e| Exit::usage(format!("cannot fork {name}: {e}")))?;
    let segment_id = new_segment_id();
    // The point may lie before NAME was itself forked: the fork then comes from the pod whose
    // directory holds that segment, which is where its conversation will be followed.
    let owner = parts
        .iter()
        .find(|p| p.segment == point.segment)
        .and_then(|p| p.pod.clone())
        .unwrap_or_else(|| name.clone());
    let origin = Origin::ForkedFrom {
        segment_id: point.segment.clone(),
        pod: Some(owner.clone()),
        seq: Some(point.seq),
    };
    // A fork is a new pod: no standing approvals (what a person approved for NAME, maybe in
    // another directory, is not approved here) and totals from zero.
    let start = branch::branch_start(&parts, &point, segment_id.clone(), origin, Carry::default())
        .map_err(|e| Exit::usage(format!("cannot fork {name}: {e}")))?;
    let pod_dir = claim_pod_dir(home, &new)?;
    let made = async {
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(pod_dir.join(seedpod_store::SEGMENTS_DIR))?;
        let path = seedpod_store::segment_path(&pod_dir, &segment_id);
        let (writer, first) = SegmentWriter::create(path, start).await?;
        writer.close().await?;
        let meta = PodMeta {
            instructions: source.instructions.clone(),
            mcp_servers: source.mcp_servers.clone(),
            forked_from: Some(ForkRecord {
                pod: owner.clone(),
                segment: point.segment.clone(),
                seq: point.seq,
            }),
            ..PodMeta::new(
                new.clone(),
                cwd.clone(),
                segment_id,
                source.config.clone(),
                first.ts,
            )
        };
        save_meta(&pod_dir, &meta)?;
        anyhow::Ok(())
    }
    .await;
    if let Err(err) = made {
        // Half a pod would block the name; nothing in it is anyone's yet.
        let _ = std::fs::remove_dir_all(&pod_dir);
        return Err(err);
    }
    let config = PodConfigArgs {
        cwd: Some(cwd.clone()),
        ..PodConfigArgs::default()
    };
    start::start_named(home, &new, &cwd, &config).await?;
    eprintln!("forked {name} {} into {new}", describe(&parts, &point));
    println!("{new}");
    Ok(())
}

/// "after turn 2 (segment …, seq 14)".
fn describe(parts: &[branch::Part], point: &BranchPoint) -> String {
    let turns = branch::turns(parts);
    let done = turns
        .iter()
        .filter(|t| {
            t.end_seq
                .is_some_and(|end| t.segment == point.segment && end <= point.seq)
                || parts
                    .iter()
                    .position(|p| p.segment == t.segment)
                    .zip(parts.iter().position(|p| p.segment == point.segment))
                    .is_some_and(|(of_turn, of_point)| of_turn < of_point)
        })
        .count();
    format!(
        "after turn {done} (segment {}, seq {})",
        point.segment, point.seq
    )
}

/// Make NEW's directory, failing if any pod (or anything else) has that name: creating it is
/// the claim, so two forks to one name cannot both succeed.
fn claim_pod_dir(home: &Home, new: &PodName) -> Result<std::path::PathBuf> {
    let pods_dir = home.pods_dir();
    seedpod_client::private::create_dir_all(&pods_dir)
        .map_err(|e| Exit::failure(format!("cannot create {}: {e}", pods_dir.display())))?;
    let dir = home.pod_dir(new);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(dir),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Err(Exit::usage(format!(
            "a pod named \"{new}\" already exists; choose another name"
        ))),
        Err(err) => Err(Exit::failure(format!(
            "cannot create {}: {err}",
            dir.display()
        ))),
    }
}
