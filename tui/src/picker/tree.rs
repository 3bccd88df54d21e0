//! The pods as a tree: each pod's children right after it, with the guides that draw the
//! branches. Pure, over names only, so every shape (deep, orphaned, cyclic) is easy to test.
//!
//! The tree comes from each pod's recorded parent (`pod.json`'s `parent`). A pod whose parent is
//! not listed (deleted, or in another `SEEDPOD_HOME`) is a root. A cycle can only come from
//! hand-edited metadata, but it must not hang the picker or hide a pod: a pod left out once
//! every root is walked starts a tree of its own.

use std::collections::HashMap;

/// Drawn before a child that has siblings after it, and before the last child.
const BRANCH: &str = "├─ ";
const LAST: &str = "└─ ";
/// Drawn under a child, before its own children: a line if siblings follow, else blank.
const THROUGH: &str = "│  ";
const BLANK: &str = "   ";

/// One pod in tree order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    /// Where the pod is in the input.
    pub index: usize,
    /// What to draw before its name: empty for a root.
    pub guide: String,
}

/// Order `pods` (name, parent) so each pod's children follow it, in input order among
/// siblings. Every pod appears exactly once.
pub fn tree_order(pods: &[(&str, Option<&str>)]) -> Vec<TreeRow> {
    let mut by_name = HashMap::new();
    for (index, (name, _)) in pods.iter().enumerate() {
        by_name.entry(*name).or_insert(index);
    }
    let parent_of = |index: usize| {
        let parent = pods[index].1.and_then(|p| by_name.get(p).copied());
        parent.filter(|p| *p != index)
    };
    let mut children = vec![Vec::new(); pods.len()];
    let mut roots = Vec::new();
    for index in 0..pods.len() {
        match parent_of(index) {
            Some(parent) => children[parent].push(index),
            None => roots.push(index),
        }
    }
    let mut walk = Walk {
        children,
        placed: vec![false; pods.len()],
        rows: Vec::with_capacity(pods.len()),
    };
    for root in roots {
        walk.tree(root);
    }
    // Only pods on a cycle are left: start at the first of them.
    for index in 0..pods.len() {
        walk.tree(index);
    }
    walk.rows
}

struct Walk {
    children: Vec<Vec<usize>>,
    /// A pod is placed once; this is what stops a cycle.
    placed: Vec<bool>,
    rows: Vec<TreeRow>,
}

impl Walk {
    /// Place `root` and everything under it, depth first. A stack rather than recursion, so a
    /// very deep tree cannot overflow.
    fn tree(&mut self, root: usize) {
        if self.placed[root] {
            return;
        }
        self.placed[root] = true;
        // (pod, its guide, what its children's guides start with)
        let mut stack = vec![(root, String::new(), String::new())];
        while let Some((index, guide, under)) = stack.pop() {
            self.rows.push(TreeRow { index, guide });
            let kids: Vec<usize> = self.children[index]
                .iter()
                .copied()
                .filter(|kid| !self.placed[*kid])
                .collect();
            for (n, kid) in kids.iter().enumerate().rev() {
                self.placed[*kid] = true;
                let last = n + 1 == kids.len();
                let (branch, through) = if last {
                    (LAST, BLANK)
                } else {
                    (BRANCH, THROUGH)
                };
                stack.push((
                    *kid,
                    format!("{under}{branch}"),
                    format!("{under}{through}"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree as lines of guide + name, to compare with a drawing.
    fn drawn(pods: &[(&str, Option<&str>)]) -> Vec<String> {
        tree_order(pods)
            .into_iter()
            .map(|row| format!("{}{}", row.guide, pods[row.index].0))
            .collect()
    }

    #[test]
    fn pods_without_parents_keep_their_order() {
        assert_eq!(drawn(&[("b", None), ("a", None)]), ["b", "a"]);
        assert!(tree_order(&[]).is_empty());
    }

    #[test]
    fn children_follow_their_parent_with_guides() {
        let pods = [
            ("api", None),
            ("main", None),
            ("main-docs", Some("main")),
            ("main-tests", Some("main")),
            ("unit", Some("main-tests")),
            ("lint", Some("main-docs")),
            ("zeta", None),
        ];
        assert_eq!(
            drawn(&pods),
            [
                "api",
                "main",
                "├─ main-docs",
                "│  └─ lint",
                "└─ main-tests",
                "   └─ unit",
                "zeta",
            ]
        );
    }

    #[test]
    fn a_pod_whose_parent_is_not_listed_is_a_root() {
        let pods = [("orphan", Some("gone")), ("kid", Some("orphan"))];
        assert_eq!(drawn(&pods), ["orphan", "└─ kid"]);
    }

    #[test]
    fn a_deep_chain_is_walked_to_the_bottom() {
        let names: Vec<String> = (0..2000).map(|i| format!("p{i}")).collect();
        let pods: Vec<(&str, Option<&str>)> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i.checked_sub(1).map(|p| names[p].as_str())))
            .collect();
        let rows = tree_order(&pods);
        assert_eq!(rows.len(), 2000);
        assert!(rows.iter().enumerate().all(|(i, row)| row.index == i));
        assert_eq!(rows[2].guide, "   └─ ");
        assert_eq!(rows[1999].guide.chars().count(), 3 * 1999);
    }

    #[test]
    fn cycles_end_and_lose_no_pod() {
        // a ↔ b, c is its own parent, d hangs off the cycle.
        let pods = [
            ("a", Some("b")),
            ("b", Some("a")),
            ("c", Some("c")),
            ("d", Some("b")),
        ];
        assert_eq!(drawn(&pods), ["c", "a", "└─ b", "   └─ d"]);
    }

    #[test]
    fn a_repeated_name_appears_once_per_listing_row() {
        let pods = [("a", None), ("a", None), ("k", Some("a"))];
        let mut indexes: Vec<usize> = tree_order(&pods).iter().map(|r| r.index).collect();
        indexes.sort();
        assert_eq!(indexes, [0, 1, 2]);
    }
}
