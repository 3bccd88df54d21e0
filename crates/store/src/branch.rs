//! Branch points in a pod's log, for `fork` and `rewind` (docs/storage.md §Fork and rewind).
//!
//! A pod's *conversation* is its active segment, preceded — when that segment was made by a
//! rewind — by the part of the earlier segment it went back to, and so on. Its *turns* are the
//! person's messages (`user_input`) in it, numbered from 1; turn N's branch point is the
//! `run_end` of the run that took message N, and turn 0's is the last entry before the first
//! run. A branch starts a new segment whose `segment_start` is the fold of the log up to the
//! branch point: same system prompt, date, model, tools (with those `tool_search` loaded),
//! context window, task list, and the history as the model saw it, as `seed`. Its next request
//! is therefore the request the pod would have sent at that point.

use std::path::Path;

use seedpod_protocol::{
    Entry, EntryKind, EntrySeq, Origin, PodName, PodTotals, SegmentId, SegmentStart,
};

use crate::error::StoreError;
use crate::fold::SegmentState;
use crate::meta::{PodMeta, segment_path};
use crate::read::read_segment_entries;

/// One segment of a conversation: its entries up to where the conversation leaves it.
#[derive(Debug, Clone)]
pub struct Part {
    pub segment: SegmentId,
    pub entries: Vec<Entry>,
    /// The pod whose directory holds the segment, when it is not the pod asked about: a part
    /// of the conversation before that pod was forked (`lineage::conversation`).
    pub pod: Option<PodName>,
}

/// A person's message and where its turn ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// 1-based, over the whole conversation.
    pub number: usize,
    pub segment: SegmentId,
    /// The `user_input` entry.
    pub input_seq: EntrySeq,
    /// The `run_end` of its run; `None` while the turn runs (or if it never ended).
    pub end_seq: Option<EntrySeq>,
    pub text: String,
}

/// Where a branch starts: segment `segment` up to and including entry `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchPoint {
    pub segment: SegmentId,
    pub seq: EntrySeq,
}

/// Why no branch can start where it was asked.
#[derive(Debug, thiserror::Error)]
pub enum BranchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("turn {asked} does not exist: {}", turns_known(*.known))]
    NoSuchTurn { asked: usize, known: usize },
    #[error("turn {0} has not finished; pick an earlier turn, or wait until it ends")]
    Unfinished(usize),
    #[error(
        "seq {seq} is not in segment {segment} (it has {len} entries; `seedpod history` shows them)"
    )]
    NoSuchSeq {
        segment: SegmentId,
        seq: EntrySeq,
        len: usize,
    },
    #[error(
        "entry {0} is in the middle of a run (a tool call or an approval may be open there); pick \
         the seq of a run_end, or use --at TURN"
    )]
    MidRun(EntrySeq),
}

fn turns_known(known: usize) -> String {
    match known {
        0 => "the conversation has no turns yet (only 0, the start, can be chosen)".into(),
        1 => "the conversation has 1 turn (choose 0 or 1)".into(),
        n => format!("the conversation has {n} turns (choose 0 to {n})"),
    }
}

/// The pod's own conversation, oldest part first: its active segment and the rewinds behind it,
/// within the pod's directory (`lineage::conversation` goes on into the pods it was forked from).
pub fn conversation(pod_dir: &Path, meta: &PodMeta) -> Result<Vec<Part>, StoreError> {
    chain(pod_dir, meta, meta.active_segment.clone(), None)
}

/// The parts that end at `segment` (up to `upto`, or whole), following rewinds back inside the
/// pod in `pod_dir`, oldest first.
pub(crate) fn chain(
    pod_dir: &Path,
    meta: &PodMeta,
    segment: SegmentId,
    upto: Option<EntrySeq>,
) -> Result<Vec<Part>, StoreError> {
    let mut parts = Vec::new();
    let mut next = Some((segment, upto));
    // Each step goes to a segment the pod lists; more steps than segments would be a loop
    // that an edited log made.
    while let Some((segment, upto)) = next.take() {
        if parts.len() > meta.segments.len() {
            break;
        }
        let mut entries = read_segment_entries(&segment_path(pod_dir, &segment))?;
        if let Some(upto) = upto {
            entries.retain(|e| e.seq <= upto);
        }
        if let Some(Entry {
            kind: EntryKind::SegmentStart(start),
            ..
        }) = entries.first()
            && let Origin::RewoundFrom { segment_id, seq } = &start.origin
            && meta.segments.contains(segment_id)
        {
            next = Some((segment_id.clone(), Some(*seq)));
        }
        parts.push(Part {
            segment,
            entries,
            pod: None,
        });
    }
    parts.reverse();
    Ok(parts)
}

/// The person's messages in `parts`, in order.
pub fn turns(parts: &[Part]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for part in parts {
        for entry in &part.entries {
            match &entry.kind {
                EntryKind::UserInput { text, .. } => turns.push(Turn {
                    number: turns.len() + 1,
                    segment: part.segment.clone(),
                    input_seq: entry.seq,
                    end_seq: None,
                    text: text.clone(),
                }),
                EntryKind::RunEnd { .. } => {
                    for turn in turns.iter_mut().rev() {
                        if turn.segment != part.segment || turn.end_seq.is_some() {
                            break;
                        }
                        turn.end_seq = Some(entry.seq);
                    }
                }
                _ => {}
            }
        }
    }
    turns
}

/// Where turn `number` ends (0: before the first run of the conversation).
pub fn turn_point(parts: &[Part], number: usize) -> Result<BranchPoint, BranchError> {
    let turns = turns(parts);
    if number == 0 {
        let first = parts
            .first()
            .ok_or(StoreError::Fold(crate::FoldError::Empty))?;
        let before_run = first
            .entries
            .iter()
            .take_while(|e| !matches!(e.kind, EntryKind::RunStart { .. }))
            .last()
            .map_or(EntrySeq::FIRST, |e| e.seq);
        return Ok(BranchPoint {
            segment: first.segment.clone(),
            seq: before_run,
        });
    }
    let turn = turns.get(number - 1).ok_or(BranchError::NoSuchTurn {
        asked: number,
        known: turns.len(),
    })?;
    let seq = turn.end_seq.ok_or(BranchError::Unfinished(number))?;
    Ok(BranchPoint {
        segment: turn.segment.clone(),
        seq,
    })
}

/// The last point at rest: the end of the conversation, or the last `run_end` before a run that
/// is still going (a fork of a pod mid-turn starts from its last finished turn).
pub fn last_rest_point(parts: &[Part]) -> Result<BranchPoint, BranchError> {
    let last = parts
        .last()
        .ok_or(StoreError::Fold(crate::FoldError::Empty))?;
    let seq = last.entries.last().map_or(EntrySeq::FIRST, |e| e.seq);
    match at_rest(last, seq) {
        Ok(()) => Ok(BranchPoint {
            segment: last.segment.clone(),
            seq,
        }),
        Err(_) => {
            let open = last
                .entries
                .iter()
                .rev()
                .find(|e| matches!(e.kind, EntryKind::RunStart { .. }))
                .map_or(EntrySeq::FIRST, |e| e.seq);
            let seq = EntrySeq::new(open.get().saturating_sub(1));
            at_rest(last, seq)?;
            Ok(BranchPoint {
                segment: last.segment.clone(),
                seq,
            })
        }
    }
}

/// `seq` of the last part (the active segment), if the pod is at rest there.
pub fn seq_point(parts: &[Part], seq: EntrySeq) -> Result<BranchPoint, BranchError> {
    let last = parts
        .last()
        .ok_or(StoreError::Fold(crate::FoldError::Empty))?;
    at_rest(last, seq)?;
    Ok(BranchPoint {
        segment: last.segment.clone(),
        seq,
    })
}

fn at_rest(part: &Part, seq: EntrySeq) -> Result<(), BranchError> {
    let state = fold_to(part, seq)?;
    if state.open_run.is_some() {
        return Err(BranchError::MidRun(seq));
    }
    Ok(())
}

fn fold_to(part: &Part, seq: EntrySeq) -> Result<SegmentState, BranchError> {
    let upto: Vec<Entry> = part
        .entries
        .iter()
        .take_while(|e| e.seq <= seq)
        .cloned()
        .collect();
    if upto.last().map(|e| e.seq) != Some(seq) {
        return Err(BranchError::NoSuchSeq {
            segment: part.segment.clone(),
            seq,
            len: part.entries.len(),
        });
    }
    SegmentState::replay(&upto).map_err(|e| BranchError::Store(StoreError::Fold(e)))
}

/// What a branch carries besides the history.
#[derive(Debug, Clone, Default)]
pub struct Carry {
    /// Standing approvals (a rewind keeps the pod's; a fork starts without).
    pub standing_approvals: Vec<seedpod_protocol::StandingApproval>,
    /// The pod's running totals (a rewind keeps counting; a fork starts at zero).
    pub totals: Option<PodTotals>,
}

/// The `segment_start` of a branch from `point`.
pub fn branch_start(
    parts: &[Part],
    point: &BranchPoint,
    segment_id: SegmentId,
    origin: Origin,
    carry: Carry,
) -> Result<SegmentStart, BranchError> {
    let part = parts
        .iter()
        .find(|p| p.segment == point.segment)
        .ok_or_else(|| BranchError::NoSuchSeq {
            segment: point.segment.clone(),
            seq: point.seq,
            len: 0,
        })?;
    let state = fold_to(part, point.seq)?;
    if state.open_run.is_some() {
        return Err(BranchError::MidRun(point.seq));
    }
    Ok(SegmentStart {
        segment_id,
        system_prompt: state.system_prompt,
        date: state.model_date,
        model: state.model,
        tools: state.tools,
        seed: state.history,
        standing_approvals: carry.standing_approvals,
        origin,
        context_window: state.window,
        compaction: None,
        tasks: state.tasks.tasks().to_vec(),
        totals: carry.totals.map(Box::new),
    })
}

/// The segments after `point` in the conversation, with the entries after it: what a rewind
/// to `point` undoes.
pub fn after<'a>(parts: &'a [Part], point: &BranchPoint) -> Vec<(&'a SegmentId, &'a [Entry])> {
    let Some(at) = parts.iter().position(|p| p.segment == point.segment) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate().skip(at) {
        let from = if i == at {
            part.entries
                .iter()
                .position(|e| e.seq > point.seq)
                .unwrap_or(part.entries.len())
        } else {
            1
        };
        out.push((&part.segment, part.entries.get(from..).unwrap_or(&[])));
    }
    out
}

/// Where the conversation's own part (the pod's first segment) starts at rest: the last
/// entry before its first run. A rewind to the turn a fork was made at goes here.
pub fn own_start(parts: &[Part]) -> Option<BranchPoint> {
    let own = parts.iter().find(|p| p.pod.is_none())?;
    let seq = own
        .entries
        .iter()
        .take_while(|e| !matches!(e.kind, EntryKind::RunStart { .. }))
        .last()
        .map_or(EntrySeq::FIRST, |e| e.seq);
    Some(BranchPoint {
        segment: own.segment.clone(),
        seq,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use seedpod_protocol::{
        ModelConfig, ModelItem, ProviderKind, RunEndReason, RunTrigger, Segment,
    };

    use super::*;

    fn entry(seq: u64, kind: EntryKind) -> Entry {
        Entry {
            v: 1,
            seq: EntrySeq::new(seq),
            ts: seq,
            kind,
        }
    }

    fn start(id: &str, origin: Origin) -> EntryKind {
        EntryKind::SegmentStart(SegmentStart {
            segment_id: SegmentId::new(id),
            system_prompt: "sys".into(),
            date: Some("2026-01-01".into()),
            model: ModelConfig::new(ProviderKind::Scripted, "m"),
            tools: Vec::new(),
            seed: Vec::new(),
            standing_approvals: Vec::new(),
            origin,
            context_window: None,
            compaction: None,
            tasks: Vec::new(),
            totals: None,
        })
    }

    /// A segment of finished turns saying `texts`, then an open run when `open`.
    pub(crate) fn segment(id: &str, origin: Origin, texts: &[&str], open: bool) -> Part {
        let mut kinds = vec![start(id, origin)];
        for text in texts {
            kinds.push(EntryKind::RunStart {
                trigger: RunTrigger::User,
            });
            kinds.push(EntryKind::UserInput {
                segments: vec![Segment::text(*text)],
                text: (*text).into(),
                queue_id: None,
            });
            kinds.push(EntryKind::AssistantItem {
                item: ModelItem::AssistantText {
                    text: format!("re {text}"),
                },
            });
            kinds.push(EntryKind::RunEnd {
                reason: RunEndReason::Completed,
                message: None,
            });
        }
        if open {
            kinds.push(EntryKind::RunStart {
                trigger: RunTrigger::User,
            });
            kinds.push(EntryKind::UserInput {
                segments: vec![Segment::text("running")],
                text: "running".into(),
                queue_id: None,
            });
        }
        Part {
            segment: SegmentId::new(id),
            pod: None,
            entries: kinds
                .into_iter()
                .enumerate()
                .map(|(i, k)| entry(i as u64, k))
                .collect(),
        }
    }

    #[test]
    fn turns_end_at_their_run_end_and_a_branch_seeds_the_history_there() {
        let parts = [segment("s1", Origin::New, &["one", "two"], true)];
        let turns = turns(&parts);
        let ends: Vec<Option<u64>> = turns.iter().map(|t| t.end_seq.map(EntrySeq::get)).collect();
        assert_eq!(ends, [Some(4), Some(8), None]);
        assert_eq!(turn_point(&parts, 0).unwrap().seq, EntrySeq::new(0));
        assert_eq!(turn_point(&parts, 2).unwrap().seq, EntrySeq::new(8));
        assert!(matches!(
            turn_point(&parts, 3),
            Err(BranchError::Unfinished(3))
        ));
        assert!(matches!(
            turn_point(&parts, 4),
            Err(BranchError::NoSuchTurn { asked: 4, known: 3 })
        ));
        assert_eq!(last_rest_point(&parts).unwrap().seq, EntrySeq::new(8));
        assert!(matches!(
            seq_point(&parts, EntrySeq::new(6)),
            Err(BranchError::MidRun(_))
        ));
        let point = turn_point(&parts, 1).unwrap();
        let origin = Origin::RewoundFrom {
            segment_id: point.segment.clone(),
            seq: point.seq,
        };
        let start = branch_start(
            &parts,
            &point,
            SegmentId::new("s2"),
            origin,
            Carry::default(),
        )
        .unwrap();
        assert_eq!(start.system_prompt, "sys");
        assert_eq!(start.date.as_deref(), Some("2026-01-01"));
        assert_eq!(
            start.seed,
            [
                ModelItem::UserMessage { text: "one".into() },
                ModelItem::AssistantText {
                    text: "re one".into()
                },
            ]
        );
    }

    #[test]
    fn a_rewound_segment_continues_the_turns_of_the_part_it_went_back_to() {
        let mut old = segment("s1", Origin::New, &["one", "two"], false);
        old.entries.retain(|e| e.seq.get() <= 4);
        let rewound = Origin::RewoundFrom {
            segment_id: SegmentId::new("s1"),
            seq: EntrySeq::new(4),
        };
        let parts = [old, segment("s2", rewound, &["again"], false)];
        let texts: Vec<String> = turns(&parts).into_iter().map(|t| t.text).collect();
        assert_eq!(texts, ["one", "again"]);
        let point = turn_point(&parts, 1).unwrap();
        assert_eq!(point.segment, SegmentId::new("s1"));
        let undone = after(&parts, &point);
        assert_eq!(undone.len(), 2);
        assert!(undone[0].1.is_empty(), "nothing of s1 after its point");
        assert_eq!(undone[1].1.len(), 4, "s2 after its segment_start");
    }
}
