//! The transcript container and the queries the app asks of it.

use std::collections::HashMap;

use seedpod_protocol::{ApprovalRequest, CallId, EventSeq, RunTrigger, Task, TaskTracker, Usage};

use super::cells::{Cell, CellKind};
use super::earlier::Earlier;
use super::live::LiveRole;
use super::remembered::{CellKey, Remembered};
use super::status::PodView;

/// Everything the transcript shows, folded from pod frames by [`Transcript::apply`].
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Committed cells in log order, then the provisional (in-flight) cells.
    pub(super) cells: Vec<Cell>,
    /// `cells[..committed]` came from committed entries; their indices never change.
    pub(super) committed: usize,
    /// What each provisional cell stands for, parallel to `cells[committed..]`.
    pub(super) live: Vec<LiveRole>,
    pub(super) view: PodView,
    pub(super) next_id: u64,
    /// The last broadcast seq applied; live events at or below it are duplicates.
    pub(super) last_seq: Option<EventSeq>,
    /// Between `snapshot_begin` and `snapshot_end` frames carry the snapshot's own seq.
    pub(super) in_snapshot: bool,
    /// Bumped on every reset (a snapshot), so views can tell the cells were replaced.
    pub(super) generation: u64,
    /// Tool calls waiting for their result: call id → the call's cell and commit time.
    pub(super) open_calls: HashMap<CallId, OpenCall>,
    /// Approval requests nobody has answered yet, oldest first: the request and its cell.
    pub(super) pending_approvals: Vec<PendingApproval>,
    /// The run in progress, for the `run_end` separator's duration and tokens.
    pub(super) run: Option<OpenRun>,
    pub(super) turn_starts: Vec<usize>,
    /// A run started; the next committed cell begins a turn.
    pub(super) turn_pending: bool,
    /// Paging back through the log: the oldest entry held and the pages loaded above it.
    pub(super) earlier: Earlier,
    /// The model's task list as the segment's entries say (the pinned list above the composer).
    pub(super) tasks: TaskTracker,
    /// The entry being folded into cells (`apply_entry`): what its cells are keyed by.
    pub(super) entry_key: Option<CellKey>,
    /// The cells a person expanded, opened again whenever they are made; survives a reset.
    pub(super) remembered: Remembered,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct OpenCall {
    pub(super) index: usize,
    pub(super) ts: u64,
}

#[derive(Debug, Clone)]
pub(super) struct PendingApproval {
    pub(super) request: ApprovalRequest,
    pub(super) index: usize,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct OpenRun {
    pub(super) start_ts: u64,
    pub(super) usage: Usage,
    /// What started the run: a notification's or a child's report may end it silently.
    pub(super) trigger: RunTrigger,
    /// A person's input was committed in this run: it must be answered.
    pub(super) person_spoke: bool,
}

impl Transcript {
    pub fn new() -> Self {
        Transcript::default()
    }

    /// Committed cells in order, then the in-flight cells while something streams.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// The model's current task list (empty when it keeps none).
    pub fn tasks(&self) -> &[Task] {
        self.tasks.tasks()
    }

    /// The pod as the status line shows it.
    pub fn status(&self) -> &PodView {
        &self.view
    }

    /// How many leading cells are committed; the rest are provisional.
    pub fn committed_len(&self) -> usize {
        self.committed
    }

    /// Changes whenever the transcript was reset by a snapshot.
    /// Between `snapshot_begin` and `snapshot_end`: the cells are being replaced.
    pub fn in_snapshot(&self) -> bool {
        self.in_snapshot
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Expand or collapse the cell at `index`; false if it has nothing to expand. The cells of
    /// the same entry made again (a reattach, a page loaded again) open the same way.
    pub fn toggle(&mut self, index: usize) -> bool {
        match self.cells.get_mut(index) {
            Some(cell) if cell.is_toggleable() => {
                cell.expanded = !cell.expanded;
                cell.touch();
                if let Some(key) = cell.key {
                    if cell.expanded {
                        self.remembered.expanded.insert(key);
                    } else {
                        self.remembered.expanded.remove(&key);
                    }
                }
                true
            }
            Some(_) | None => false,
        }
    }

    /// Open the cells of these entries whenever they are made (what a person expanded before,
    /// kept by the app between attaches); also the ones already here.
    pub fn remember_expanded(&mut self, keys: impl IntoIterator<Item = CellKey>) {
        self.remembered.expanded = keys.into_iter().collect();
        for cell in &mut self.cells {
            let open = cell.is_toggleable() && self.remembered.is_expanded(cell.key);
            if open && !cell.expanded {
                cell.expanded = true;
                cell.touch();
            }
        }
    }

    pub fn is_toggleable(&self, index: usize) -> bool {
        self.cells.get(index).is_some_and(Cell::is_toggleable)
    }

    /// Cell indices where turns start (the first cell of each run), for `[` / `]`.
    pub fn turn_starts(&self) -> Vec<usize> {
        self.turn_starts.clone()
    }

    /// The text of the last committed assistant answer, for `/copy`.
    pub fn last_answer(&self) -> Option<String> {
        self.cells[..self.committed].iter().rev().find_map(|cell| {
            if let CellKind::AssistantText { text, .. } = &cell.kind {
                Some(text.clone())
            } else {
                None
            }
        })
    }

    /// Forget the status-line notice (the app calls this once the person has seen it).
    pub fn clear_notice(&mut self) -> bool {
        self.view.notice.take().is_some()
    }

    pub(super) fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Append a committed cell (before the in-flight block), reusing the id of the provisional
    /// cell it replaces so the view keeps its place. Returns its index.
    pub(super) fn push_committed(&mut self, kind: CellKind, replaces: Option<Cell>) -> usize {
        let cell = match replaces {
            Some(mut old) => {
                old.kind = kind;
                old.touch();
                old
            }
            None => Cell::new(self.fresh_id(), kind),
        };
        let mut cell = cell;
        cell.key = self.entry_key;
        if self.remembered.is_expanded(cell.key) && cell.is_toggleable() {
            cell.expanded = true;
        }
        let index = self.committed;
        self.cells.insert(index, cell);
        self.committed += 1;
        if self.turn_pending {
            self.turn_pending = false;
            self.turn_starts.push(index);
        }
        index
    }

    /// Forget everything the pod told us; a snapshot follows.
    pub(super) fn reset(&mut self) {
        let next_id = self.next_id;
        let generation = self.generation + 1;
        let view = std::mem::take(&mut self.view);
        let remembered = std::mem::take(&mut self.remembered);
        *self = Transcript::default();
        self.remembered = remembered;
        self.next_id = next_id;
        self.generation = generation;
        // Who the pod is survives a resync; what it has done is rebuilt from the snapshot.
        self.view.name = view.name;
        self.view.instance = view.instance;
        self.view.server_version = view.server_version;
        self.view.notice = view.notice;
    }
}
