//! How many children a pod may run at once and how deep a tree of pods may grow (`[children]
//! max_children` and `max_depth`, docs/configuration.md). One model answer can carry any number
//! of `spawn_pod` calls, run concurrently, and every child is a process with its own memory:
//! these limits bound what one answer can start.
//!
//! The controller is the one owner of the count. It checks a request and records the child in
//! the same step of handling it (`controller/children.rs`), so calls that arrive together are
//! counted one after another and never all pass a check made before any was recorded. A child
//! counts from the moment it is recorded (still starting) until it is believed stopped.
//!
//! Depth is a fact of the pod's lineage: its `pod.json` names its parent, whose `pod.json` names
//! its own, up to a root pod (depth 0; its children are at depth 1). The pod being asked to
//! spawn walks that chain itself, so a child cannot claim to be shallower than it is.

use std::fmt;

use seedpod_client::Home;
use seedpod_config::ChildrenSettings;
use seedpod_protocol::PodName;

/// `[children] max_children` and `max_depth`, as the pod counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildLimits {
    /// Children believed live (or starting) at once.
    pub max_children: usize,
    /// The deepest a pod may be; one at this depth starts no children.
    pub max_depth: usize,
}

impl Default for ChildLimits {
    fn default() -> Self {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        ChildLimits {
            max_children: count(seedpod_config::children::DEFAULT_MAX_CHILDREN),
            max_depth: count(seedpod_config::children::DEFAULT_MAX_DEPTH),
        }
    }
}

impl ChildLimits {
    pub fn from_settings(settings: &ChildrenSettings) -> ChildLimits {
        ChildLimits {
            max_children: ChildrenSettings::count(&settings.max_children),
            max_depth: ChildrenSettings::count(&settings.max_depth),
        }
    }

    /// Whether a pod at `depth` with `live` children may start one more.
    pub fn check(&self, depth: usize, live: usize) -> Result<(), Refusal> {
        if depth >= self.max_depth {
            return Err(Refusal::TooDeep {
                depth,
                max: self.max_depth,
            });
        }
        self.room_for_one_more(live)
    }

    /// Whether a pod with `live` children may have one more live (started or restored).
    pub fn room_for_one_more(&self, live: usize) -> Result<(), Refusal> {
        if live >= self.max_children {
            return Err(Refusal::TooMany {
                live,
                max: self.max_children,
            });
        }
        Ok(())
    }
}

/// Why a child was not started, worded for the model (a `spawn_pod` error result) or a person;
/// the caller says what was not done.
#[derive(Debug, Clone)]
pub enum Refusal {
    /// The pod has as many live children as `max_children` allows.
    TooMany { live: usize, max: usize },
    /// The pod is as deep as `max_depth` allows.
    TooDeep { depth: usize, max: usize },
    /// An ancestor's `pod.json` could not be read, so the depth is unknown: refused rather
    /// than guessed shallow.
    LineageUnknown { ancestor: PodName, gap: LineageGap },
}

/// Why an ancestor's parent is not known; completes "ancestor pod NAME's pod.json …".
#[derive(Debug, Clone)]
pub enum LineageGap {
    /// Its pod directory is gone.
    Missing,
    /// Its `pod.json` is there but could not be read. Shared: a refusal is cloned.
    Unreadable {
        cause: std::sync::Arc<seedpod_store::StoreError>,
    },
}

impl fmt::Display for LineageGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineageGap::Missing => f.write_str("is missing (the pod was removed)"),
            LineageGap::Unreadable { cause } => write!(f, "cannot be read ({cause})"),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::TooMany { live, max } => write!(
                f,
                "this pod has {live} live children and [children] \
                 max_children = {max} allows no more. Wait for a child to finish its task \
                 and stop it with stop_pod (list_pods shows which are still running), or give \
                 an existing child the work with send_to_pod."
            ),
            Refusal::TooDeep { depth, max } => write!(
                f,
                "this pod is at depth {depth} of its tree of pods and \
                 [children] max_depth = {max} allows no deeper pods. Do this work yourself, \
                 or end your turn saying what is left so the pod that started you can hand \
                 it on."
            ),
            Refusal::LineageUnknown { ancestor, gap } => write!(
                f,
                "how deep this pod is cannot be checked against \
                 [children] max_depth, because its ancestor pod {ancestor}'s pod.json \
                 {gap}. Do this work yourself."
            ),
        }
    }
}

/// This pod's depth, walked once from its lineage and then kept: a pod's parent never changes.
#[derive(Debug, Default)]
pub struct Depth(Option<usize>);

impl Depth {
    /// The depth of a pod whose parent is `parent`, reading ancestors' `pod.json` under `home`
    /// only until it is known to exceed `enough` (past that, how much deeper is moot).
    pub fn get(
        &mut self,
        home: &Home,
        parent: Option<&PodName>,
        enough: usize,
    ) -> Result<usize, Refusal> {
        if let Some(depth) = self.0 {
            return Ok(depth);
        }
        let depth = walk(parent, enough, |ancestor| {
            match seedpod_store::load_meta(&home.pod_dir(ancestor)) {
                Ok(Some(meta)) => Ok(meta.parent),
                Ok(None) => Err(LineageGap::Missing),
                Err(cause) => Err(LineageGap::Unreadable {
                    cause: std::sync::Arc::new(cause),
                }),
            }
        })?;
        self.0 = Some(depth);
        Ok(depth)
    }
}

/// Count the ancestors above a pod whose parent is `parent`; `parent_of` reads one ancestor's
/// parent. Stops once the count passes `enough`, so a cycle in damaged lineage ends too.
fn walk(
    parent: Option<&PodName>,
    enough: usize,
    mut parent_of: impl FnMut(&PodName) -> Result<Option<PodName>, LineageGap>,
) -> Result<usize, Refusal> {
    let mut depth = 0;
    let mut next = parent.cloned();
    while let Some(ancestor) = next {
        depth += 1;
        if depth > enough {
            break;
        }
        next = parent_of(&ancestor).map_err(|gap| Refusal::LineageUnknown {
            ancestor: ancestor.clone(),
            gap,
        })?;
    }
    Ok(depth)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn name(text: &str) -> PodName {
        PodName::new(text.to_owned()).unwrap()
    }

    /// Depth as walked over a table of `pod -> its parent` (absent: no pod.json).
    fn depth_in(table: &[(&str, Option<&str>)], parent: Option<&str>, enough: usize) -> String {
        let table: BTreeMap<&str, Option<&str>> = table.iter().copied().collect();
        let mut reads = 0;
        let result = walk(parent.map(name).as_ref(), enough, |pod| {
            reads += 1;
            assert!(reads <= enough + 1, "read past what the limit needs");
            match table.get(pod.as_str()) {
                Some(parent) => Ok(parent.map(name)),
                None => Err(LineageGap::Missing),
            }
        });
        match result {
            Ok(depth) => depth.to_string(),
            Err(refusal) => refusal.to_string(),
        }
    }

    #[test]
    fn depth_is_the_number_of_ancestors_up_to_a_root() {
        let chain = [
            ("root", None),
            ("a", Some("root")),
            ("b", Some("a")),
            ("c", Some("b")),
        ];
        assert_eq!(depth_in(&chain, None, 3), "0");
        assert_eq!(depth_in(&chain, Some("root"), 3), "1");
        assert_eq!(depth_in(&chain, Some("b"), 3), "3");
        // Deeper than the limit: reading stops just past it.
        assert_eq!(depth_in(&chain, Some("c"), 1), "2");
    }

    #[test]
    fn damaged_lineage_never_makes_a_pod_shallower_than_it_is() {
        // A cycle ends (past the limit, so refused) instead of looping.
        let cycle = [("a", Some("b")), ("b", Some("a"))];
        assert_eq!(depth_in(&cycle, Some("a"), 3), "4");
        // A removed ancestor: the depth is unknown, so the spawn is refused and says why.
        let gap = [("a", Some("gone"))];
        let text = depth_in(&gap, Some("a"), 3);
        assert!(
            text.contains("ancestor pod gone's pod.json is missing"),
            "{text}"
        );
        assert!(text.contains("max_depth"), "{text}");
    }

    #[test]
    fn over_either_limit_the_refusal_names_it_its_value_and_what_to_do() {
        let limits = ChildLimits {
            max_children: 2,
            max_depth: 3,
        };
        assert!(matches!(limits.check(0, 0), Ok(())));
        assert!(matches!(limits.check(2, 1), Ok(())));
        let many = limits.check(1, 2).unwrap_err().to_string();
        assert!(many.contains("max_children = 2"), "{many}");
        assert!(
            many.contains("stop_pod") && many.contains("send_to_pod"),
            "{many}"
        );
        let deep = limits.check(3, 0).unwrap_err().to_string();
        assert!(
            deep.contains("depth 3") && deep.contains("max_depth = 3"),
            "{deep}"
        );
        assert!(deep.contains("Do this work yourself"), "{deep}");
        // No children at all.
        let none = ChildLimits {
            max_children: 0,
            max_depth: 3,
        };
        assert!(none.check(0, 0).is_err());
        let flat = ChildLimits {
            max_children: 8,
            max_depth: 0,
        };
        assert!(flat.check(0, 0).is_err());
    }
}
