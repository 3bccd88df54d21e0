//! Paging back through the pod's log (`earlier`): cells for entries older than the snapshot,
//! inserted above everything else without touching live state.
//!
//! A snapshot holds the active segment only, so after a compaction or `/clear` the conversation
//! before it is in earlier segments. The snapshot's first entry tells whether the log goes
//! further back (its seq is above 0, or it starts a segment made from another one); if so, a
//! head cell at the top says so and the app asks for pages (`Method::Earlier`) when the person
//! scrolls up to it. A page is folded by a scratch `Transcript` — the same per-kind code live
//! entries take — so nothing in it reaches the running turn, the approvals, the queue, the
//! token counts or the model; its cells are then inserted under the head. Pairs that a page
//! boundary splits (a tool call and its result, an approval request and its answer) are joined
//! across pages.

use std::collections::{HashMap, HashSet};

use seedpod_protocol::{
    ApprovalDecision, CallId, Entry, EntryKind, EntrySeq, ModelItem, Origin, SegmentId,
};

use super::cells::{Cell, CellKind, LogHead};
use super::transcript::Transcript;

/// Earlier entries one transcript holds at most (about a month of a busy pod's turns). Past
/// it the head says that `seedpod history NAME --all` has the rest; the cells stay bounded
/// however long the pod has lived.
pub const EARLIER_ENTRIES_CAP: usize = 20_000;

/// What paging back knows; reset with the transcript by every snapshot.
#[derive(Debug, Clone, Default)]
pub(super) struct Earlier {
    /// The oldest entry this transcript holds; `None` until a snapshot brought one.
    pub(super) oldest: Option<Oldest>,
    /// Whether cell 0 is the [`LogHead`] cell (only when the log goes further back).
    head: bool,
    /// Entries held from earlier pages, against [`EARLIER_ENTRIES_CAP`].
    held: usize,
    /// Cells inserted above existing ones since the last reset: the view moves its anchor down
    /// by as many, so what the person was reading stays where it was.
    prepended: u64,
    /// Results in the loaded pages whose calls are in an older page: call id → the result's
    /// cell id, to join with the call when its page arrives.
    orphan_results: HashMap<CallId, u64>,
    /// Approval answers in the loaded pages whose requests are in an older page.
    orphan_answers: HashMap<CallId, ApprovalDecision>,
}

#[derive(Debug, Clone)]
pub(super) struct Oldest {
    segment_id: SegmentId,
    seq: EntrySeq,
    /// Whether the log holds anything before it.
    more: bool,
}

impl Transcript {
    /// What to ask the pod for next (`Method::Earlier { segment_id, before_seq }`): `None` when
    /// the log goes no further back, a page is on its way, or the cap is reached.
    pub fn earlier_request(&self) -> Option<(SegmentId, EntrySeq)> {
        let oldest = self.earlier.oldest.as_ref().filter(|o| o.more)?;
        matches!(self.head(), Some(LogHead::More)).then(|| (oldest.segment_id.clone(), oldest.seq))
    }

    /// A page was asked for: the head says it is loading.
    pub fn earlier_loading(&mut self) -> bool {
        self.set_head(LogHead::More, LogHead::Loading)
    }

    /// The page will not come (an error, the link dropped): the head goes back to inviting a
    /// scroll, which asks again.
    pub fn earlier_failed(&mut self) -> bool {
        self.set_head(LogHead::Loading, LogHead::More)
    }

    /// Cells inserted above existing ones since the last reset (see `Earlier::prepended`).
    pub fn prepended(&self) -> u64 {
        self.earlier.prepended
    }

    /// Earlier entries held, for diagnostics and tests.
    pub fn earlier_held(&self) -> usize {
        self.earlier.held
    }

    /// The answer to `earlier`: `entries` of `segment_id`, oldest first, and whether the log
    /// holds more before them. Their cells go under the head; returns how many were inserted.
    pub fn prepend_earlier(
        &mut self,
        segment_id: &SegmentId,
        entries: &[Entry],
        more: bool,
    ) -> usize {
        if !self.earlier.head {
            return 0;
        }
        let Some(first) = entries.first() else {
            self.replace_head(if more {
                LogHead::More
            } else {
                LogHead::Beginning
            });
            return 0;
        };
        if self
            .earlier
            .oldest
            .as_ref()
            .is_some_and(|o| o.segment_id != *segment_id)
        {
            // Calls and answers never cross a segment's start.
            self.earlier.orphan_results.clear();
            self.earlier.orphan_answers.clear();
        }
        let (cells, starts) = self.fold_page(entries);
        let inserted = cells.len();
        self.insert_below_head(cells, starts);
        self.earlier.held += entries.len();
        self.earlier.oldest = Some(Oldest {
            segment_id: segment_id.clone(),
            seq: first.seq,
            more,
        });
        let head = if !more {
            LogHead::Beginning
        } else if self.earlier.held >= EARLIER_ENTRIES_CAP {
            LogHead::Capped {
                pod: self.view.name.clone(),
            }
        } else {
            LogHead::More
        };
        self.replace_head(head);
        inserted
    }

    /// The snapshot's first entry: remember it as the oldest, and put the head above it when
    /// the log goes further back.
    pub(super) fn note_oldest(&mut self, entry: &Entry) {
        let (segment_id, more) = match &entry.kind {
            EntryKind::SegmentStart(start) => (
                start.segment_id.clone(),
                entry.seq > EntrySeq::FIRST || !matches!(start.origin, Origin::New),
            ),
            _ => (self.view.segment_id.clone(), entry.seq > EntrySeq::FIRST),
        };
        self.earlier.oldest = Some(Oldest {
            segment_id,
            seq: entry.seq,
            more,
        });
        if more {
            self.earlier.head = true;
            let kind = CellKind::LogHead {
                head: LogHead::More,
            };
            self.push_committed(kind, None);
        }
    }

    /// Fold a page on a scratch transcript and join what it splits with the pages already
    /// loaded. Returns its cells (with ids of this transcript) and where its turns start.
    fn fold_page(&mut self, entries: &[Entry]) -> (Vec<Cell>, Vec<usize>) {
        let orphans = Orphans::of(entries);
        let mut side = Transcript::new();
        // What a person expanded in these entries before opens again.
        side.remembered = self.remembered.clone();
        for entry in entries {
            side.apply_entry(entry);
        }
        side.clear_live();
        for (call_id, decision) in &self.earlier.orphan_answers {
            side.approval_answer(call_id, decision);
        }
        // What is still waiting in an old page was settled long ago, one way or another.
        side.close_approvals();
        // Calls whose results are in a page already loaded: the result's cell gets the call's
        // arguments and stands for both.
        let mut joined = HashSet::new();
        for (call_id, call) in &side.open_calls {
            let Some(result_id) = self.earlier.orphan_results.remove(call_id) else {
                continue;
            };
            let arguments = match &side.cells[call.index].kind {
                CellKind::ToolCall { arguments, .. } => arguments.clone(),
                _ => continue,
            };
            if let Some(cell) = self.cells.iter_mut().find(|c| c.id == result_id)
                && let CellKind::ToolCall { arguments: a, .. } = &mut cell.kind
            {
                *a = arguments;
                cell.touch();
                joined.insert(call.index);
            }
        }
        self.earlier
            .orphan_answers
            .retain(|call_id, _| !orphans.requests.contains(call_id));
        self.earlier.orphan_answers.extend(orphans.answers);
        let mut cells = Vec::new();
        let mut new_index = Vec::with_capacity(side.committed);
        for (index, mut cell) in side.cells.into_iter().take(side.committed).enumerate() {
            new_index.push(cells.len());
            if joined.contains(&index) {
                continue;
            }
            cell.id = self.fresh_id();
            if let CellKind::ToolCall { call_id, .. } = &cell.kind
                && orphans.results.contains(call_id)
            {
                self.earlier.orphan_results.insert(call_id.clone(), cell.id);
            }
            cells.push(cell);
        }
        let mut starts: Vec<usize> = side
            .turn_starts
            .iter()
            .filter_map(|s| new_index.get(*s).copied())
            .filter(|s| *s < cells.len())
            .collect();
        starts.dedup();
        (cells, starts)
    }

    /// Insert a page's cells right under the head (cell 0), moving every index kept above.
    fn insert_below_head(&mut self, cells: Vec<Cell>, starts: Vec<usize>) {
        const AT: usize = 1;
        let n = cells.len();
        self.cells.splice(AT..AT, cells);
        self.committed += n;
        for call in self.open_calls.values_mut() {
            call.index += n;
        }
        for pending in &mut self.pending_approvals {
            pending.index += n;
        }
        let later = std::mem::take(&mut self.turn_starts);
        self.turn_starts = starts.into_iter().map(|s| s + AT).collect();
        self.turn_starts.extend(later.into_iter().map(|s| s + n));
        self.earlier.prepended += n as u64;
    }

    fn head(&self) -> Option<&LogHead> {
        if !self.earlier.head {
            return None;
        }
        match &self.cells.first()?.kind {
            CellKind::LogHead { head } => Some(head),
            _ => None,
        }
    }

    /// Change the head from `from` to `to`; false if it was not `from`.
    fn set_head(&mut self, from: LogHead, to: LogHead) -> bool {
        if self.head() != Some(&from) {
            return false;
        }
        self.replace_head(to);
        true
    }

    fn replace_head(&mut self, to: LogHead) {
        if !self.earlier.head {
            return;
        }
        if let Some(cell) = self.cells.first_mut()
            && let CellKind::LogHead { head } = &mut cell.kind
            && *head != to
        {
            *head = to;
            cell.touch();
        }
    }
}

/// What one page holds half of: results and answers whose call or request is older than the
/// page, and the requests it holds (answers to them in newer pages are joined).
struct Orphans {
    results: HashSet<CallId>,
    answers: HashMap<CallId, ApprovalDecision>,
    requests: HashSet<CallId>,
}

impl Orphans {
    fn of(entries: &[Entry]) -> Orphans {
        let mut calls = HashSet::new();
        let mut requests = HashSet::new();
        let mut results = HashSet::new();
        let mut answers = HashMap::new();
        for entry in entries {
            if let EntryKind::AssistantItem {
                item: ModelItem::ToolCall { call_id, .. },
            } = &entry.kind
            {
                calls.insert(call_id.clone());
            }
            if let EntryKind::ToolResult { call_id, .. } = &entry.kind
                && !calls.contains(call_id)
            {
                results.insert(call_id.clone());
            }
            if let EntryKind::ApprovalRequest(request) = &entry.kind {
                requests.insert(request.call_id.clone());
            }
            if let EntryKind::ApprovalAnswer { call_id, decision } = &entry.kind
                && !requests.contains(call_id)
            {
                answers.insert(call_id.clone(), decision.clone());
            }
        }
        Orphans {
            results,
            answers,
            requests,
        }
    }
}
