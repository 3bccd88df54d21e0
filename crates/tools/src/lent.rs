//! Write roots a pod has lent to its child pods (DESIGN §7): while a child lives, what it may
//! write is withheld from its parent, so the two never write the same files.
//!
//! One writer: the parent pod's controller replaces the whole set whenever a child starts or
//! stops. Readers are the parent's file tools, through [`Scope`](crate::Scope) checks, which
//! take a short read lock and never hold it across I/O.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

/// A canonical write root and the child pod it is lent to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LentRoot {
    pub root: PathBuf,
    pub child: String,
}

/// The shared set of lent roots. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Lent(Arc<RwLock<Vec<LentRoot>>>);

impl Lent {
    /// Replace the set (the controller's view of its live children).
    pub fn set(&self, roots: Vec<LentRoot>) {
        // A poisoned lock only means another thread panicked mid-replace of a plain Vec;
        // the value is still a valid set, so keep using it.
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = roots;
    }

    pub fn roots(&self) -> Vec<LentRoot> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The child `path` (canonical) is lent to, if any.
    pub fn holder(&self, path: &Path) -> Option<String> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|lent| path.starts_with(&lent.root))
            .map(|lent| lent.child.clone())
    }

    /// The child holding a root that overlaps `root` (inside it, or containing it), if any:
    /// a root lent twice would let two children write the same files.
    pub fn overlapping(&self, root: &Path) -> Option<LentRoot> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|lent| root.starts_with(&lent.root) || lent.root.starts_with(root))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_and_overlap_follow_path_components() {
        let lent = Lent::default();
        lent.set(vec![LentRoot {
            root: PathBuf::from("/p/out"),
            child: "kid".into(),
        }]);
        assert_eq!(
            lent.holder(Path::new("/p/out/a.txt")).as_deref(),
            Some("kid")
        );
        assert_eq!(
            lent.holder(Path::new("/p/output/a.txt")),
            None,
            "not a prefix match"
        );
        assert!(
            lent.overlapping(Path::new("/p")).is_some(),
            "contains the lent root"
        );
        assert!(
            lent.overlapping(Path::new("/p/out/x")).is_some(),
            "inside it"
        );
        assert!(lent.overlapping(Path::new("/p/src")).is_none());
        let shared = lent.clone();
        lent.set(Vec::new());
        assert_eq!(
            shared.holder(Path::new("/p/out/a.txt")),
            None,
            "clones share the set"
        );
    }
}
