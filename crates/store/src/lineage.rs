//! A conversation across forks (docs/storage.md §Fork and rewind).
//!
//! A fork's first segment records the pod, segment and entry it was forked from. Its turns are
//! numbered from the start of the whole conversation — what the person saw in the source pod —
//! so the conversation goes on back into the source's directory, up to the fork point, and from
//! there through the source's own rewinds and forks. Pods are siblings in one pods directory,
//! which is how a source is found by name.
//!
//! When a source cannot be followed (deleted, renamed, its name taken by an unrelated pod, its
//! log unreadable, or forks more than `MAX_FORK_DEPTH` deep), the conversation is the pod's
//! own, numbered from its own start, and `gap` says why: never a panic, never a silent mix.

use std::path::{Path, PathBuf};

use seedpod_protocol::{Entry, EntryKind, EntrySeq, Origin, PodName, SegmentId};

use crate::branch::{Part, chain};
use crate::error::StoreError;
use crate::meta::{PodMeta, load_meta};

/// How many forks back a conversation is followed: far beyond any a person makes, and a stop
/// for a loop that edited logs could make.
pub const MAX_FORK_DEPTH: usize = 64;

/// A pod's conversation from its very start, oldest part first.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub parts: Vec<Part>,
    /// Why the parts before the pod's own are missing, in a person's words.
    pub gap: Option<String>,
}

/// The conversation of the pod in `pod_dir`, through the pods it was forked from.
pub fn conversation(pod_dir: &Path, meta: &PodMeta) -> Result<Conversation, StoreError> {
    let own = crate::branch::conversation(pod_dir, meta)?;
    let mut parts = own.clone();
    let mut dir = pod_dir.to_path_buf();
    for _ in 0..MAX_FORK_DEPTH {
        let Some((source, segment, seq)) = parts.first().and_then(fork_origin) else {
            return Ok(Conversation { parts, gap: None });
        };
        let source_dir = sibling(&dir, &source);
        let gone = |why: &str| Conversation {
            parts: own.clone(),
            gap: Some(format!(
                "turns are numbered from {}'s own start: {source}, which it comes from, {why}",
                meta.name
            )),
        };
        let source_meta = match load_meta(&source_dir) {
            Ok(Some(found)) if found.segments.contains(&segment) => found,
            Ok(Some(_)) => return Ok(gone("is now another pod")),
            Ok(None) => return Ok(gone("is gone")),
            Err(_) => return Ok(gone("has a pod.json that cannot be read")),
        };
        let Ok(mut before) = chain(&source_dir, &source_meta, segment, Some(seq)) else {
            return Ok(gone("has a log that cannot be read"));
        };
        for part in &mut before {
            part.pod = Some(source.clone());
        }
        before.append(&mut parts);
        parts = before;
        dir = source_dir;
    }
    Ok(Conversation {
        parts: own,
        gap: Some(format!(
            "turns are numbered from {}'s own start: it comes from more than {MAX_FORK_DEPTH} \
             forks",
            meta.name
        )),
    })
}

/// Where the conversation's first part was forked from, when it says.
fn fork_origin(part: &Part) -> Option<(PodName, SegmentId, EntrySeq)> {
    let Some(Entry {
        kind: EntryKind::SegmentStart(start),
        ..
    }) = part.entries.first()
    else {
        return None;
    };
    // A fork written before forks recorded the pod and seq cannot be followed.
    let Origin::ForkedFrom {
        segment_id,
        pod: Some(pod),
        seq: Some(seq),
    } = &start.origin
    else {
        return None;
    };
    Some((pod.clone(), segment_id.clone(), *seq))
}

/// The directory of pod `name` beside the pod directory `dir`.
fn sibling(dir: &Path, name: &PodName) -> PathBuf {
    dir.parent().unwrap_or(dir).join(name.as_str())
}

#[cfg(test)]
mod tests {
    use seedpod_protocol::ProviderKind;

    use super::*;
    use crate::branch::tests::segment;
    use crate::meta::{PodConfig, save_meta, segment_path};

    /// Write `part` as pod `name`'s only segment, under `pods`.
    fn pod(pods: &Path, name: &str, part: &Part) -> (PathBuf, PodMeta) {
        let dir = pods.join(name);
        std::fs::create_dir_all(dir.join(crate::meta::SEGMENTS_DIR)).unwrap();
        let lines: String = part
            .entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap() + "\n")
            .collect();
        std::fs::write(segment_path(&dir, &part.segment), lines).unwrap();
        let meta = PodMeta::new(
            PodName::new(name).unwrap(),
            dir.clone(),
            part.segment.clone(),
            PodConfig::new(ProviderKind::Scripted, "m"),
            0,
        );
        save_meta(&dir, &meta).unwrap();
        (dir, meta)
    }

    fn forked(from: &str, segment: &str, seq: u64) -> Origin {
        Origin::ForkedFrom {
            segment_id: SegmentId::new(segment),
            pod: Some(PodName::new(from).unwrap()),
            seq: Some(EntrySeq::new(seq)),
        }
    }

    fn texts(conversation: &Conversation) -> Vec<(usize, String)> {
        crate::branch::turns(&conversation.parts)
            .into_iter()
            .map(|t| (t.number, t.text))
            .collect()
    }

    #[test]
    fn a_fork_of_a_fork_counts_turns_from_the_first_pod() {
        let pods = tempfile::tempdir().unwrap();
        pod(
            pods.path(),
            "a",
            &segment("a1", Origin::New, &["one", "two", "a only"], false),
        );
        // Turn 2 of `a` ends at seq 8.
        pod(
            pods.path(),
            "b",
            &segment("b1", forked("a", "a1", 8), &["b three"], false),
        );
        let (dir, meta) = pod(
            pods.path(),
            "c",
            &segment("c1", forked("b", "b1", 4), &["c four"], false),
        );
        let conversation = conversation(&dir, &meta).unwrap();
        assert_eq!(conversation.gap, None);
        assert_eq!(
            texts(&conversation),
            [
                (1, "one".to_string()),
                (2, "two".into()),
                (3, "b three".into()),
                (4, "c four".into())
            ]
        );
        let owners: Vec<Option<&str>> = conversation
            .parts
            .iter()
            .map(|p| p.pod.as_ref().map(PodName::as_str))
            .collect();
        assert_eq!(owners, [Some("a"), Some("b"), None]);
        // The source's part stops at the fork point: "a only" is not in the conversation.
        let point = crate::branch::turn_point(&conversation.parts, 2).unwrap();
        assert_eq!((point.segment.as_str(), point.seq.get()), ("a1", 8));
    }

    #[test]
    fn a_source_that_is_gone_or_another_pod_leaves_the_forks_own_turns_and_says_so() {
        let pods = tempfile::tempdir().unwrap();
        let (dir, meta) = pod(
            pods.path(),
            "b",
            &segment("b1", forked("a", "a1", 8), &["b three"], false),
        );
        let alone = conversation(&dir, &meta).unwrap();
        assert_eq!(texts(&alone), [(1, "b three".to_string())]);
        let gap = alone.gap.unwrap();
        assert!(
            gap.contains("b's own start") && gap.contains("a, which it comes from, is gone"),
            "{gap}"
        );

        // A new pod took the name: its segments are not the one b came from.
        pod(
            pods.path(),
            "a",
            &segment("x1", Origin::New, &["unrelated"], false),
        );
        let gap = conversation(&dir, &meta).unwrap().gap.unwrap();
        assert!(gap.contains("is now another pod"), "{gap}");

        // A source whose log does not read.
        std::fs::write(
            segment_path(&pods.path().join("a"), &SegmentId::new("x1")),
            "{oops\n{oops\n",
        )
        .unwrap();
        let mut meta_a = crate::meta::load_meta(&pods.path().join("a"))
            .unwrap()
            .unwrap();
        meta_a.segments = vec![SegmentId::new("x1"), SegmentId::new("a1")];
        save_meta(&pods.path().join("a"), &meta_a).unwrap();
        let gap = conversation(&dir, &meta).unwrap().gap.unwrap();
        assert!(gap.contains("cannot be read"), "{gap}");
    }

    #[test]
    fn forks_that_loop_stop_at_the_depth_limit() {
        let pods = tempfile::tempdir().unwrap();
        // Edited logs: a came from b and b from a.
        pod(
            pods.path(),
            "a",
            &segment("a1", forked("b", "b1", 4), &["in a"], false),
        );
        let (dir, meta) = pod(
            pods.path(),
            "b",
            &segment("b1", forked("a", "a1", 4), &["in b"], false),
        );
        let conversation = conversation(&dir, &meta).unwrap();
        assert_eq!(texts(&conversation), [(1, "in b".to_string())]);
        assert!(conversation.gap.unwrap().contains("more than 64 forks"));
    }
}
