//! `seedpod archive NAME [--older-than DAYS]`: compress a pod's earlier segments in place
//! (`seedpod_store::archive`), whether the pod runs or not, and say what was done.

use std::time::{Duration, SystemTime};

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::PodName;
use seedpod_store::{ArchiveReport, ArchiveRule, archive_segments};

use crate::{exit::Exit, settings};

const DAY: Duration = Duration::from_secs(86_400);

pub fn run(home: &Home, name: &PodName, older_than_days: Option<u64>) -> Result<()> {
    let Some(meta) = settings::existing_meta(home, name)? else {
        return Err(Exit::usage(format!("no pod named \"{name}\"")));
    };
    let rule = match older_than_days {
        Some(days) => ArchiveRule {
            older_than: Some(DAY.saturating_mul(u32::try_from(days).unwrap_or(u32::MAX))),
            plain_over_bytes: None,
        },
        None => ArchiveRule::all(),
    };
    let pod_dir = home.pod_dir(name);
    let report = archive_segments(&pod_dir, &meta, &rule, SystemTime::now())
        .map_err(|err| Exit::failure(format!("could not archive pod \"{name}\": {err}")))?;
    // The checkpoints only archived segments named go with them (docs/storage.md §Checkpoints).
    let pruned = seedpod_pod::archiver::prune_checkpoints(&pod_dir, SystemTime::now())
        .map_err(|err| Exit::failure(format!("archived, but {err}")))?;
    let mut said = summary(name, &report, older_than_days);
    if !pruned.is_empty() {
        said.push_str(&format!(
            "; {} file checkpoint{} of archived segments pruned (a rewind into them cannot \
             restore those files)",
            pruned.len(),
            if pruned.len() == 1 { "" } else { "s" }
        ));
    }
    println!("{said}");
    Ok(())
}

/// `archived 3 segments of pod "a" (12.4 MB → 1.1 MB); 1 archived before; 2 newer than 7 days
/// left as they are; the active segment is never archived`
fn summary(name: &PodName, report: &ArchiveReport, older_than_days: Option<u64>) -> String {
    let before: u64 = report.archived.iter().map(|a| a.1).sum();
    let after: u64 = report.archived.iter().map(|a| a.2).sum();
    let mut out = match report.archived.len() {
        0 => format!("nothing to archive in pod \"{name}\""),
        n => format!(
            "archived {n} segment{} of pod \"{name}\" ({} → {})",
            if n == 1 { "" } else { "s" },
            megabytes(before),
            megabytes(after)
        ),
    };
    if report.already > 0 {
        out.push_str(&format!("; {} archived before", report.already));
    }
    if let (Some(days), kept @ 1..) = (older_than_days, report.kept) {
        out.push_str(&format!(
            "; {kept} newer than {days} day{} left as they are",
            if days == 1 { "" } else { "s" }
        ));
    }
    out.push_str("; the active segment is never archived");
    out
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::SegmentId;

    #[test]
    fn the_summary_says_what_was_done_and_what_was_left() {
        let name = PodName::new("a").unwrap();
        let report = ArchiveReport {
            archived: vec![
                (SegmentId::new("s1"), 10_000_000, 1_000_000),
                (SegmentId::new("s2"), 2_400_000, 100_000),
            ],
            already: 1,
            kept: 2,
        };
        assert_eq!(
            summary(&name, &report, Some(7)),
            "archived 2 segments of pod \"a\" (12.4 MB → 1.1 MB); 1 archived before; 2 newer \
             than 7 days left as they are; the active segment is never archived"
        );
        assert_eq!(
            summary(&name, &ArchiveReport::default(), None),
            "nothing to archive in pod \"a\"; the active segment is never archived"
        );
    }
}
