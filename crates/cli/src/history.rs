//! `seedpod history NAME --all`: every segment of a pod, oldest first, as its `pod.json` lists
//! them, each introduced by a line naming the segment and where it came from. Segment files are
//! only read (`read_segment_entries` never repairs a torn tail), so this works the same whether
//! the pod runs or not, and never disturbs a pod that is appending.

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::{
    Compaction, CompactionTrigger, Entry, EntryKind, Origin, PodName, SegmentId, thousands,
};
use seedpod_store::{PodMeta, read_segment_entries, segment_path};

use crate::{exit::Exit, format, settings};

pub fn all_segments(home: &Home, name: &PodName, json: bool) -> Result<()> {
    let Some(meta) = settings::existing_meta(home, name)? else {
        return Err(Exit::usage(format!("no pod named \"{name}\"")));
    };
    let dir = home.pod_dir(name);
    let mut unreadable = Vec::new();
    for id in segment_ids(&meta) {
        let path = segment_path(&dir, &id);
        match read_segment_entries(&path) {
            Ok(entries) => {
                if !json {
                    println!("{}", separator(&id, entries.first()));
                }
                for entry in &entries {
                    if json {
                        println!("{}", seedpod_protocol::encode(entry));
                    } else {
                        println!("{}", format::entry_line(entry));
                    }
                }
            }
            Err(err) => {
                if !json {
                    println!("— segment {id} (cannot be read) —");
                }
                unreadable.push(format!("{}: {err}", path.display()));
            }
        }
    }
    if unreadable.is_empty() {
        return Ok(());
    }
    Err(Exit::failure(format!(
        "{} segment(s) of pod \"{name}\" could not be read: {}",
        unreadable.len(),
        unreadable.join("; ")
    )))
}

/// The segments in order; the active one last even if an older `pod.json` does not list it.
pub(crate) fn segment_ids(meta: &PodMeta) -> Vec<SegmentId> {
    let mut ids = meta.segments.clone();
    if !ids.contains(&meta.active_segment) {
        ids.push(meta.active_segment.clone());
    }
    ids
}

/// `— segment S2 (compacted from S1: 143 messages → summary; 6 kept; 12,000 → 2,100 tokens) —`
fn separator(id: &SegmentId, first: Option<&Entry>) -> String {
    let origin = match first.map(|entry| &entry.kind) {
        Some(EntryKind::SegmentStart(start)) => match (&start.origin, &start.compaction) {
            (Origin::CompactedFrom { segment_id }, Some(compaction)) => {
                format!("compacted from {segment_id}{}", compacted(compaction))
            }
            (origin, _) => origin_words(origin),
        },
        Some(_) => "does not start with segment_start".to_string(),
        None => "empty".to_string(),
    };
    format!("— segment {id} ({origin}) —")
}

/// Where a segment came from, in words (`history --all`, `export`).
pub(crate) fn origin_words(origin: &Origin) -> String {
    match origin {
        Origin::New => "new".to_string(),
        Origin::CompactedFrom { segment_id } => format!("compacted from {segment_id}"),
        Origin::ClearedFrom { segment_id } => format!("cleared from {segment_id}"),
        Origin::RecomposedFrom { segment_id } => {
            format!("the compact prompt, continuing {segment_id}")
        }
        Origin::ForkedFrom {
            segment_id,
            pod: Some(pod),
            seq: Some(seq),
        } => format!("forked from pod {pod}, segment {segment_id} at seq {seq}"),
        Origin::ForkedFrom { segment_id, .. } => format!("forked from {segment_id}"),
        Origin::RewoundFrom { segment_id, seq } => {
            format!("rewound to {segment_id} at seq {seq}")
        }
        Origin::Unknown => "of an origin this seedpod does not know".to_string(),
    }
}

fn compacted(c: &Compaction) -> String {
    let by = match c.trigger {
        CompactionTrigger::Auto => "",
        CompactionTrigger::Command => " by /compact",
        CompactionTrigger::Overflow => " after a \"too long\" answer",
        CompactionTrigger::Unknown => "",
    };
    format!(
        "{by}: {} messages → summary; {} kept; {} → {} tokens",
        thousands(c.compacted_items),
        thousands(c.kept_items),
        thousands(c.tokens_before),
        thousands(c.tokens_after),
    )
}

#[cfg(test)]
mod tests {
    use seedpod_protocol::{ModelConfig, ProviderKind, SegmentStart};

    use super::*;
    use seedpod_protocol::{EntrySeq, SegmentId};

    fn start(origin: Origin, compaction: Option<Compaction>) -> Entry {
        Entry {
            v: 1,
            seq: EntrySeq::new(0),
            ts: 0,
            kind: EntryKind::SegmentStart(SegmentStart {
                date: None,
                segment_id: SegmentId::new("s2"),
                system_prompt: String::new(),
                model: ModelConfig::new(ProviderKind::Scripted, "m"),
                tools: Vec::new(),
                seed: Vec::new(),
                standing_approvals: Vec::new(),
                origin,
                context_window: None,
                compaction,
                tasks: Vec::new(),
                totals: None,
            }),
        }
    }

    #[test]
    fn separators_name_the_segment_and_its_origin() {
        let from = || SegmentId::new("s1");
        let compaction = Compaction {
            summary: "S".into(),
            compacted_items: 143,
            kept_items: 6,
            tokens_before: 12_000,
            tokens_after: 2_100,
            trigger: CompactionTrigger::Command,
            focus: None,
            memory_flush: Vec::new(),
        };
        let cases = [
            (start(Origin::New, None), "— segment s2 (new) —"),
            (
                start(
                    Origin::CompactedFrom { segment_id: from() },
                    Some(compaction.clone()),
                ),
                "— segment s2 (compacted from s1 by /compact: 143 messages → summary; 6 kept; 12,000 → 2,100 tokens) —",
            ),
            (
                start(
                    Origin::CompactedFrom { segment_id: from() },
                    Some(Compaction {
                        trigger: CompactionTrigger::Auto,
                        ..compaction
                    }),
                ),
                "— segment s2 (compacted from s1: 143 messages → summary; 6 kept; 12,000 → 2,100 tokens) —",
            ),
            (
                start(Origin::ClearedFrom { segment_id: from() }, None),
                "— segment s2 (cleared from s1) —",
            ),
            (
                start(
                    Origin::ForkedFrom {
                        segment_id: from(),
                        pod: None,
                        seq: None,
                    },
                    None,
                ),
                "— segment s2 (forked from s1) —",
            ),
        ];
        for (entry, line) in cases {
            assert_eq!(separator(&SegmentId::new("s2"), Some(&entry)), line);
        }
        assert_eq!(
            separator(&SegmentId::new("s9"), None),
            "— segment s9 (empty) —"
        );
    }

    #[test]
    fn the_active_segment_is_listed_even_when_pod_json_forgot_it() {
        let config = seedpod_store::PodConfig::new(ProviderKind::Scripted, "m");
        let mut meta = PodMeta::new(
            PodName::new("p").unwrap(),
            "/w".into(),
            SegmentId::new("s1"),
            config,
            0,
        );
        assert_eq!(segment_ids(&meta), [SegmentId::new("s1")]);
        meta.segments = vec![SegmentId::new("s0")];
        assert_eq!(
            segment_ids(&meta),
            [SegmentId::new("s0"), SegmentId::new("s1")]
        );
    }
}
