//! The pod picker (`/pods`, Ctrl-P): every known pod with its state, directory and last
//! activity, as a tree of parents and children (`tree.rs`), to attach to another without
//! leaving the TUI. The listing itself is `seedpod_client::list_pods`, the same one
//! `seedpod ls` prints.

mod tree;

use std::time::SystemTime;

use seedpod_client::PodListing;
use seedpod_protocol::PodName;

pub use self::tree::{TreeRow, tree_order};

/// One line of the picker: a pod and the branch guide drawn before its name.
#[derive(Debug, Clone, PartialEq)]
pub struct PickerRow {
    pub guide: String,
    pub pod: PodListing,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// In tree order; `None` while the listing is being gathered.
    pub rows: Option<Vec<PickerRow>>,
    pub selected: usize,
    /// The pod attached now, preselected and marked.
    pub current: PodName,
    /// When the listing was taken: "last activity 5m ago" is relative to it.
    pub listed_at: SystemTime,
}

impl Picker {
    pub fn new(current: &PodName) -> Picker {
        Picker {
            rows: None,
            selected: 0,
            current: current.clone(),
            listed_at: SystemTime::UNIX_EPOCH,
        }
    }

    /// A (fresh) listing: shown as a tree, keeping the selection on the same pod, else on the
    /// current one.
    pub fn set_pods(&mut self, pods: Vec<PodListing>, now: SystemTime) {
        self.listed_at = now;
        let keep = self.chosen().map(|p| p.name.clone());
        let want = keep.unwrap_or_else(|| self.current.clone());
        let links: Vec<(&str, Option<&str>)> = pods
            .iter()
            .map(|p| (p.name.as_str(), p.meta.parent.as_deref()))
            .collect();
        let order = tree_order(&links);
        let mut pods: Vec<Option<PodListing>> = pods.into_iter().map(Some).collect();
        let rows: Vec<PickerRow> = order
            .into_iter()
            .filter_map(|TreeRow { index, guide }| {
                pods[index].take().map(|pod| PickerRow { guide, pod })
            })
            .collect();
        self.selected = rows.iter().position(|r| r.pod.name == want).unwrap_or(0);
        self.rows = Some(rows);
    }

    fn len(&self) -> usize {
        self.rows.as_ref().map_or(0, Vec::len)
    }

    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    pub fn down(&mut self) {
        if self.selected + 1 < self.len() {
            self.selected += 1;
        }
    }

    pub fn chosen(&self) -> Option<&PodListing> {
        self.rows.as_ref()?.get(self.selected).map(|r| &r.pod)
    }
}
