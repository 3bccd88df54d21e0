//! Who is whose child: the family tree `ls --tree` draws and the descendants
//! `stop --with-children` stops, worked out from what every `pod.json` says. Pure functions over
//! names, so orphans, deep trees and damaged lineage (a cycle) are tested without any pod.
//!
//! A pod with a `pod.json` hangs under the parent its own `pod.json` names, if that parent is
//! known; otherwise it is a root. A name that only appears in some pod's `children` records (its
//! own `pod.json` is gone) hangs under the pod that started it: the one that recorded it
//! directly, else the `via` child it was delegated through, else whoever recorded it.

use std::collections::{BTreeMap, BTreeSet};

use seedpod_protocol::PodName;
use seedpod_store::PodMeta;

/// What one pod's `pod.json` says about its family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    pub name: String,
    pub parent: Option<String>,
    /// Its `children` records: descendants it started or learned of.
    pub recorded: Vec<Recorded>,
    /// The pod it was forked from (`seedpod fork`): drawn under it, but not its child — a
    /// source's `stop --with-children` leaves its forks alone.
    pub forked_from: Option<String>,
}

/// One `children` record: a descendant's name and, for a grandchild or deeper, the direct
/// child it was delegated through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub name: String,
    pub via: Option<String>,
}

impl Family {
    pub fn of(name: &PodName, meta: &PodMeta) -> Family {
        Family {
            name: name.to_string(),
            parent: meta.parent.as_ref().map(PodName::to_string),
            recorded: meta
                .children
                .iter()
                .map(|child| Recorded {
                    name: child.name.to_string(),
                    via: child.via.as_ref().map(PodName::to_string),
                })
                .collect(),
            forked_from: meta.forked_from.as_ref().map(|f| f.pod.to_string()),
        }
    }
}

/// One line of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// Box-drawing guides before the name: empty for a root, else e.g. `│  └─ `.
    pub guide: String,
    pub name: String,
    /// Known only from an ancestor's records: the pod has no `pod.json` of its own.
    pub gone: bool,
}

/// Every pod and recorded descendant, each with at most one parent.
#[derive(Debug, Default)]
pub struct Lineage {
    /// Every name, and whether it is gone (no `pod.json`).
    nodes: BTreeMap<String, bool>,
    parent_of: BTreeMap<String, String>,
    /// Sorted by name, so the tree reads the same every time.
    children_of: BTreeMap<String, Vec<String>>,
    /// A source's forks that have no parent of their own, by name: drawn after its children.
    forks_of: BTreeMap<String, Vec<String>>,
}

impl Lineage {
    pub fn new(pods: &[Family]) -> Lineage {
        let mut nodes: BTreeMap<String, bool> =
            pods.iter().map(|pod| (pod.name.clone(), false)).collect();
        for record in pods.iter().flat_map(|pod| &pod.recorded) {
            nodes.entry(record.name.clone()).or_insert(true);
        }
        let mut parent_of = BTreeMap::new();
        for pod in pods {
            if let Some(parent) = &pod.parent
                && parent != &pod.name
                && nodes.contains_key(parent)
            {
                parent_of.insert(pod.name.clone(), parent.clone());
            }
        }
        for (name, _) in nodes.iter().filter(|(_, gone)| **gone) {
            if let Some(parent) = recorded_parent(pods, name, &nodes) {
                parent_of.insert(name.clone(), parent);
            }
        }
        let mut children_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
        // `parent_of` iterates in name order, so each list comes out sorted.
        for (child, parent) in &parent_of {
            children_of
                .entry(parent.clone())
                .or_default()
                .push(child.clone());
        }
        let mut forks_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pod in pods {
            if let Some(source) = &pod.forked_from
                && source != &pod.name
                && !parent_of.contains_key(&pod.name)
                && nodes.contains_key(source)
            {
                forks_of
                    .entry(source.clone())
                    .or_default()
                    .push(pod.name.clone());
            }
        }
        for forks in forks_of.values_mut() {
            forks.sort();
        }
        Lineage {
            nodes,
            parent_of,
            children_of,
            forks_of,
        }
    }

    /// The whole forest, depth first: roots (pods whose parent is unknown) by name, each
    /// followed by its descendants. Pods caught in a parent cycle (damaged `pod.json` files)
    /// come last, the cycle cut where it was entered, so every pod is shown exactly once.
    pub fn tree(&self) -> Vec<TreeRow> {
        let mut rows = Vec::new();
        let mut seen = BTreeSet::new();
        let under_source: BTreeSet<&String> = self.forks_of.values().flatten().collect();
        let roots = self
            .nodes
            .keys()
            .filter(|name| !self.parent_of.contains_key(*name) && !under_source.contains(name));
        for root in roots {
            self.walk(root, &mut seen, &mut rows);
        }
        let in_cycles: Vec<&String> = self
            .nodes
            .keys()
            .filter(|name| !seen.contains(name.as_str()))
            .collect();
        for name in in_cycles {
            self.walk(name, &mut seen, &mut rows);
        }
        rows
    }

    /// Depth first from `root`, with an explicit stack (a deep tree cannot overflow ours).
    fn walk<'a>(&'a self, root: &'a str, seen: &mut BTreeSet<&'a str>, rows: &mut Vec<TreeRow>) {
        // (name, prefix for its children's guides, `Some(is_last)` below a parent).
        let mut stack: Vec<(&str, String, Option<bool>)> = vec![(root, String::new(), None)];
        while let Some((name, prefix, last)) = stack.pop() {
            if !seen.insert(name) {
                continue;
            }
            let (guide, below) = match last {
                None => (String::new(), String::new()),
                Some(true) => (format!("{prefix}└─ "), format!("{prefix}   ")),
                Some(false) => (format!("{prefix}├─ "), format!("{prefix}│  ")),
            };
            rows.push(TreeRow {
                guide,
                name: name.to_string(),
                gone: self.nodes.get(name).copied().unwrap_or(true),
            });
            let children: Vec<&String> = self
                .children(name)
                .iter()
                .chain(self.forks_of.get(name).into_iter().flatten())
                .filter(|child| !seen.contains(child.as_str()))
                .collect();
            let count = children.len();
            for (i, child) in children.into_iter().enumerate().rev() {
                stack.push((child, below.clone(), Some(i + 1 == count)));
            }
        }
    }

    fn children(&self, name: &str) -> &[String] {
        self.children_of.get(name).map_or(&[], Vec::as_slice)
    }

    /// Everything below `name`, deepest first (then by name), never `name` itself: the order
    /// in which to stop them, so no pod outlives its parent's stop by being stopped after it.
    pub fn descendants(&self, name: &str) -> Vec<String> {
        let mut found: Vec<(usize, String)> = Vec::new();
        let mut seen = BTreeSet::from([name.to_string()]);
        let mut level = vec![name.to_string()];
        let mut depth = 0;
        while !level.is_empty() {
            depth += 1;
            let mut next = Vec::new();
            for parent in &level {
                for child in self.children(parent) {
                    if seen.insert(child.clone()) {
                        found.push((depth, child.clone()));
                        next.push(child.clone());
                    }
                }
            }
            level = next;
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        found.into_iter().map(|(_, name)| name).collect()
    }
}

/// Where a gone descendant hangs: under the pod that recorded it directly, else under the
/// `via` child it went through, else under any pod that recorded it (first by name).
fn recorded_parent(pods: &[Family], name: &str, nodes: &BTreeMap<String, bool>) -> Option<String> {
    let mut recorders: Vec<(&str, Option<&str>)> = pods
        .iter()
        .flat_map(|pod| {
            pod.recorded
                .iter()
                .filter(|record| record.name == name && pod.name != name)
                .map(|record| (pod.name.as_str(), record.via.as_deref()))
        })
        .collect();
    recorders.sort();
    let direct = recorders.iter().find(|(_, via)| via.is_none());
    let through = recorders
        .iter()
        .filter_map(|(_, via)| *via)
        .find(|via| *via != name && nodes.contains_key(*via));
    direct
        .map(|(pod, _)| *pod)
        .or(through)
        .or(recorders.first().map(|(pod, _)| *pod))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, parent: Option<&str>) -> Family {
        Family {
            name: name.into(),
            parent: parent.map(Into::into),
            recorded: Vec::new(),
            forked_from: None,
        }
    }

    #[test]
    fn a_fork_is_drawn_under_its_source_but_is_not_its_child() {
        let fork = |name: &str, source: &str| Family {
            forked_from: Some(source.into()),
            ..pod(name, None)
        };
        let pods = [
            pod("src", None),
            pod("kid", Some("src")),
            fork("f", "src"),
            fork("lost", "gone-source"),
        ];
        assert_eq!(drawn(&pods), "lost\nsrc\n├─ kid\n└─ f\n");
        assert_eq!(Lineage::new(&pods).descendants("src"), ["kid"]);
    }

    fn records(mut family: Family, recorded: &[(&str, Option<&str>)]) -> Family {
        family.recorded = recorded
            .iter()
            .map(|(name, via)| Recorded {
                name: (*name).into(),
                via: via.map(Into::into),
            })
            .collect();
        family
    }

    /// The tree as text, `(gone)` marking pods without a pod.json.
    fn drawn(pods: &[Family]) -> String {
        Lineage::new(pods)
            .tree()
            .iter()
            .map(|row| {
                let gone = if row.gone { " (gone)" } else { "" };
                format!("{}{}{gone}\n", row.guide, row.name)
            })
            .collect()
    }

    #[test]
    fn children_hang_under_their_parents_with_guides() {
        let pods = [
            pod("boss", None),
            pod("a", Some("boss")),
            pod("a1", Some("a")),
            pod("a2", Some("a")),
            pod("b", Some("boss")),
            pod("b1", Some("b")),
            pod("solo", None),
        ];
        assert_eq!(
            drawn(&pods),
            "boss\n├─ a\n│  ├─ a1\n│  └─ a2\n└─ b\n   └─ b1\nsolo\n"
        );
    }

    #[test]
    fn a_pod_whose_parent_is_unknown_is_a_root() {
        let pods = [
            pod("orphan", Some("deleted")),
            pod("kid", Some("orphan")),
            pod("self", Some("self")),
        ];
        assert_eq!(drawn(&pods), "orphan\n└─ kid\nself\n");
    }

    #[test]
    fn recorded_descendants_without_a_pod_json_are_gone() {
        let pods = [
            records(
                pod("boss", None),
                &[("kid", None), ("lost", None), ("deep", Some("lost"))],
            ),
            records(pod("kid", Some("boss")), &[("grand", None)]),
        ];
        assert_eq!(
            drawn(&pods),
            "boss\n├─ kid\n│  └─ grand (gone)\n└─ lost (gone)\n   └─ deep (gone)\n"
        );
    }

    #[test]
    fn a_gone_grandchild_hangs_under_its_via_child() {
        let pods = [
            records(pod("boss", None), &[("kid", None), ("grand", Some("kid"))]),
            pod("kid", Some("boss")),
        ];
        assert_eq!(drawn(&pods), "boss\n└─ kid\n   └─ grand (gone)\n");
    }

    #[test]
    fn a_deep_tree_is_drawn_and_walked_without_recursion() {
        const DEPTH: usize = 2_000;
        let mut pods = vec![pod("p0", None)];
        for i in 1..DEPTH {
            pods.push(pod(&format!("p{i}"), Some(&format!("p{}", i - 1))));
        }
        let lineage = Lineage::new(&pods);
        let rows = lineage.tree();
        assert_eq!(rows.len(), DEPTH);
        assert_eq!(rows[1].guide, "└─ ");
        assert_eq!(rows[3].guide, "      └─ ");
        assert_eq!(rows[DEPTH - 1].name, format!("p{}", DEPTH - 1));
        let below = lineage.descendants("p0");
        assert_eq!(below.len(), DEPTH - 1);
        assert_eq!(below[0], format!("p{}", DEPTH - 1), "deepest first");
        assert_eq!(below[DEPTH - 2], "p1");
    }

    #[test]
    fn a_parent_cycle_shows_every_pod_once_and_ends() {
        let pods = [
            pod("a", Some("b")),
            pod("b", Some("a")),
            pod("c", Some("b")),
            pod("root", None),
        ];
        assert_eq!(drawn(&pods), "root\na\n└─ b\n   └─ c\n");
        let lineage = Lineage::new(&pods);
        assert_eq!(lineage.descendants("a"), ["c", "b"]);
        assert_eq!(lineage.descendants("b"), ["a", "c"]);
    }

    #[test]
    fn a_cycle_through_records_ends_too() {
        let pods = [records(
            pod("a", None),
            &[("x", Some("y")), ("y", Some("x"))],
        )];
        let rows = Lineage::new(&pods).tree();
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "x", "y"]);
    }

    #[test]
    fn descendants_come_deepest_first_and_exclude_other_families() {
        let pods = [
            records(
                pod("boss", None),
                &[
                    ("a", None),
                    ("b", None),
                    ("gone", Some("a")),
                    ("reused", None),
                ],
            ),
            pod("a", Some("boss")),
            pod("a1", Some("a")),
            pod("b", Some("boss")),
            pod("other", None),
            pod("other-kid", Some("other")),
            // Recorded by boss long ago, but its own pod.json says another pod owns it now.
            pod("reused", Some("other")),
        ];
        let lineage = Lineage::new(&pods);
        assert_eq!(lineage.descendants("boss"), ["a1", "gone", "a", "b"]);
        assert_eq!(lineage.descendants("a"), ["a1", "gone"]);
        assert!(lineage.descendants("a1").is_empty());
        assert!(lineage.descendants("nobody").is_empty());
    }
}
