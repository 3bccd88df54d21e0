//! The pod picker (`/pods`, Ctrl-P): every known pod with its state, directory and last
//! activity, to attach to another without leaving the TUI. The listing itself is
//! `seedpod_client::list_pods`, the same one `seedpod ls` prints.

use std::time::SystemTime;

use seedpod_client::PodListing;

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// `None` while the listing is being gathered.
    pub pods: Option<Vec<PodListing>>,
    pub selected: usize,
    /// The pod attached now, preselected and marked.
    pub current: String,
    /// When the listing was taken: "last activity 5m ago" is relative to it.
    pub listed_at: SystemTime,
}

impl Picker {
    pub fn new(current: &str) -> Picker {
        Picker {
            pods: None,
            selected: 0,
            current: current.to_string(),
            listed_at: SystemTime::UNIX_EPOCH,
        }
    }

    pub fn set_pods(&mut self, pods: Vec<PodListing>, now: SystemTime) {
        self.listed_at = now;
        let keep = self.chosen().map(|p| p.name.clone());
        let want = keep.unwrap_or_else(|| self.current.clone());
        self.selected = pods.iter().position(|p| p.name == want).unwrap_or(0);
        self.pods = Some(pods);
    }

    fn len(&self) -> usize {
        self.pods.as_ref().map_or(0, Vec::len)
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
        self.pods.as_ref()?.get(self.selected)
    }
}
