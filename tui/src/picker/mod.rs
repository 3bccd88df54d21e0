//! The pod picker (`/pods`, Ctrl-P): every known pod with its state, directory and last
//! activity, as a tree of parents and children (`tree.rs`), to attach to another without
//! leaving the TUI. The listing itself is `seedpod_client::list_pods`, the same one
//! `seedpod ls` prints. Below this machine's pods, each `[remote.hosts]` machine's, grouped
//! under its name as that machine's `seedpod ls --json` lists them (or why it could not).

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

/// A pod on another machine, as its `ls --json` line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePod {
    pub name: PodName,
    pub state: String,
    pub cwd: String,
}

/// One other machine in the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostGroup {
    pub host: String,
    /// `None` while it is being asked; `Err` says why it could not be.
    pub pods: Option<Result<Vec<RemotePod>, String>>,
}

/// What Enter attaches to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Local(PodName),
    Remote { host: String, name: PodName },
}

/// `ls --json` lines as the picker shows them; lines it cannot read are left out.
pub fn remote_pods(json_lines: &str) -> Vec<RemotePod> {
    json_lines
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|pod| {
            let text = |key: &str| {
                pod.get(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or("-")
                    .to_owned()
            };
            Some(RemotePod {
                name: text("name").parse().ok()?,
                state: text("state"),
                cwd: text("cwd"),
            })
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// In tree order; `None` while the listing is being gathered.
    pub rows: Option<Vec<PickerRow>>,
    /// The other machines, in configuration order, after this one's pods.
    pub hosts: Vec<HostGroup>,
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
            hosts: Vec::new(),
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
            // A fork is drawn under its source, as a child under its parent.
            .map(|p| {
                let above = p
                    .meta
                    .parent
                    .as_ref()
                    .or(p.meta.forked_from.as_ref().map(|f| &f.pod));
                (p.name.as_str(), above.map(PodName::as_str))
            })
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

    /// The machines about to be asked (shown as "listing…").
    pub fn set_hosts(&mut self, hosts: &[String]) {
        self.hosts = hosts
            .iter()
            .map(|host| HostGroup {
                host: host.clone(),
                pods: None,
            })
            .collect();
    }

    /// What `host` answered.
    pub fn set_host_pods(&mut self, host: &str, pods: Result<Vec<RemotePod>, String>) {
        if let Some(group) = self.hosts.iter_mut().find(|g| g.host == host) {
            group.pods = Some(pods);
        }
    }

    fn local_len(&self) -> usize {
        self.rows.as_ref().map_or(0, Vec::len)
    }

    /// Every remote pod in display order, with its host.
    pub fn remote_rows(&self) -> impl Iterator<Item = (&str, &RemotePod)> {
        self.hosts.iter().flat_map(|group| {
            let pods: &[RemotePod] = match &group.pods {
                Some(Ok(pods)) => pods,
                _ => &[],
            };
            pods.iter().map(move |pod| (group.host.as_str(), pod))
        })
    }

    fn len(&self) -> usize {
        self.local_len() + self.remote_rows().count()
    }

    /// The pod Enter would attach to.
    pub fn choice(&self) -> Option<Choice> {
        if self.selected < self.local_len() {
            return self.chosen().map(|p| Choice::Local(p.name.clone()));
        }
        let (host, pod) = self.remote_rows().nth(self.selected - self.local_len())?;
        Some(Choice::Remote {
            host: host.to_owned(),
            name: pod.name.clone(),
        })
    }

    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    pub fn down(&mut self) {
        if self.selected + 1 < self.len() {
            self.selected += 1;
        }
    }

    /// The local pod selected, if a local one is.
    pub fn chosen(&self) -> Option<&PodListing> {
        self.rows.as_ref()?.get(self.selected).map(|r| &r.pod)
    }
}
