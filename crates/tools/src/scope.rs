//! The filesystem scope: which paths the file tools may read and write.
//!
//! Every path a tool touches is resolved to its canonical form *before* it is checked, so a `..`
//! or a symlink can never lead outside: what is checked is where the kernel would actually go.
//! A path that does not exist yet (a new file) is resolved through its nearest existing ancestor,
//! and the not-yet-existing rest may not contain `..`, because nothing on disk says where that
//! would lead once created.
//!
//! A write the roots allow is then checked against the protected paths (`protected.rs`): files
//! that change policy or make the person's programs run commands are never written.
//!
//! Known limit: a symlink swapped in between the check and the I/O (a race with another process
//! inside the scope) is not defended against; the scope guards the model, not a hostile local user.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::lent::Lent;
use crate::protected::{Protected, ProtectedDirs};

/// Scope rules as configured. Relative paths are relative to the pod's working directory.
///
/// The rules are taken literally: an empty set reaches nothing. The usual default (write inside
/// the working directory) is [`Scope::for_cwd`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeRules {
    /// Roots that may be read.
    pub read: Vec<PathBuf>,
    /// Roots that may be written (and so read).
    pub write: Vec<PathBuf>,
    /// Roots that may be neither read nor written, whatever the other rules say.
    pub deny: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The resolved, canonical scope of one pod.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Canonical working directory; relative tool paths are resolved against it.
    cwd: PathBuf,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    deny: Vec<PathBuf>,
    /// Write roots lent to child pods: readable, not writable, while they are lent.
    lent: Lent,
    /// Paths never written whatever the roots say (`protected.rs`); the name rules always
    /// apply, the directories only once the pod gives them ([`Scope::with_protected`]).
    protected: Protected,
}

/// An access the scope refused; `reason` is addressed to the model and says what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The path as the tool call gave it.
    pub path: String,
    pub reason: String,
    pub kind: BlockedKind,
}

/// Why the roots refuse a resolved path; its text completes "\"PATH\" …" in a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    Denied,
    /// Lent to this child pod for writing.
    Lent(String),
    ReadOnly,
    Outside,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Denied => f.write_str("is denied by this pod's scope"),
            Refusal::Lent(child) => write!(
                f,
                "is lent to child pod {child} for writing until it stops (send_to_pod asks it \
                 to make the change; stop_pod takes the scope back)"
            ),
            Refusal::ReadOnly => f.write_str("is read-only in this pod's scope"),
            Refusal::Outside => f.write_str("is outside this pod's scope"),
        }
    }
}

/// Which rule refused an access, so the refusal can say what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockedKind {
    /// Outside the scope, denied, read-only, lent, or not resolvable: a path elsewhere may do.
    Scope,
    /// A protected path (`protected.rs`): only a person may change it.
    Protected,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "access blocked: {}", self.reason)
    }
}

impl std::error::Error for Blocked {}

#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    #[error("the working directory {} cannot be used: {cause}", path.display())]
    Cwd { path: PathBuf, cause: io::Error },
    #[error("the scope rule path {} cannot be resolved: {cause}", path.display())]
    Rule { path: PathBuf, cause: io::Error },
}

impl Scope {
    pub fn new(cwd: &Path, rules: &ScopeRules) -> Result<Scope, ScopeError> {
        let cwd = std::fs::canonicalize(cwd).map_err(|cause| ScopeError::Cwd {
            path: cwd.to_owned(),
            cause,
        })?;
        let roots = |paths: &[PathBuf]| -> Result<Vec<PathBuf>, ScopeError> {
            paths.iter().map(|p| resolve_root(&cwd, p)).collect()
        };
        Ok(Scope {
            read: roots(&rules.read)?,
            write: roots(&rules.write)?,
            deny: roots(&rules.deny)?,
            lent: Lent::default(),
            protected: Protected::default(),
            cwd,
        })
    }

    /// Also protect `dirs` (seedpod's own directories, the person's shell, git and ssh files)
    /// from writes, resolved like rule roots so they compare with canonical paths.
    pub fn with_protected(mut self, dirs: &ProtectedDirs) -> Scope {
        let cwd = self.cwd.clone();
        self.protected = Protected::new(dirs, |dir| {
            resolve_root(&cwd, dir).unwrap_or_else(|_| lexically_normal(&cwd.join(dir)))
        });
        self
    }

    pub fn for_cwd(cwd: &Path) -> Result<Scope, ScopeError> {
        let rules = ScopeRules {
            write: vec![PathBuf::from(".")],
            ..ScopeRules::default()
        };
        Scope::new(cwd, &rules)
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Canonical roots granting read (write roots also grant read; see `write_roots`).
    pub fn read_roots(&self) -> &[PathBuf] {
        &self.read
    }

    /// Canonical roots granting read and write.
    pub fn write_roots(&self) -> &[PathBuf] {
        &self.write
    }

    /// Canonical paths refused whatever the roots say.
    pub fn deny_roots(&self) -> &[PathBuf] {
        &self.deny
    }

    /// The roots this pod lent to its children; the pod's controller updates them.
    pub fn lent(&self) -> &Lent {
        &self.lent
    }

    /// Whether `path` may be handed to a child with `access`: this pod may access it itself
    /// and, for writing, no other child holds any part of it. Returns the canonical root.
    pub fn delegable(&self, path: &str, access: Access) -> Result<PathBuf, Blocked> {
        let resolved = self.check(path, access)?;
        if access == Access::Write
            && let Some(held) = self.lent.overlapping(&resolved)
        {
            return Err(Blocked {
                path: path.to_owned(),
                kind: BlockedKind::Scope,
                reason: format!(
                    "\"{path}\" overlaps {}, which child pod {} may write until it stops; \
                     give a path outside it, or stop that child first",
                    held.root.display(),
                    held.child
                ),
            });
        }
        Ok(resolved)
    }

    pub fn check(&self, path: &str, access: Access) -> Result<PathBuf, Blocked> {
        let blocked = |reason: String| Blocked {
            path: path.to_owned(),
            reason,
            kind: BlockedKind::Scope,
        };
        if path.is_empty() {
            return Err(blocked(
                "the path is empty; give a file or directory path".into(),
            ));
        }
        let joined = self.cwd.join(path);
        let resolved = match resolve(&joined) {
            Ok(resolved) => resolved,
            Err(Unresolvable::UpThroughMissing(missing)) => {
                return Err(blocked(format!(
                    "\"{path}\" goes up (\"..\") from \"{}\", which does not exist; \
                     give the path without \"..\"",
                    missing.display()
                )));
            }
            Err(Unresolvable::Io(at, err)) => {
                let is_link = std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_symlink());
                let why = if is_link && err.kind() == io::ErrorKind::NotFound {
                    format!(
                        "\"{}\" is a symbolic link to a missing target",
                        at.display()
                    )
                } else {
                    format!("{} at \"{}\"", describe_io(&err), at.display())
                };
                return Err(blocked(format!("\"{path}\" cannot be resolved: {why}")));
            }
        };
        let shown = || {
            if lexically_normal(&joined) == resolved {
                format!("\"{path}\"")
            } else {
                format!("\"{path}\" (which resolves to {})", resolved.display())
            }
        };
        if let Err(problem) = self.decide(&resolved, access) {
            return Err(blocked(format!(
                "{} {problem} ({})",
                shown(),
                self.allowed()
            )));
        }
        if access == Access::Write
            && let Some(rule) = self.protected.rule_for(&resolved)
        {
            return Err(Blocked {
                path: path.to_owned(),
                kind: BlockedKind::Protected,
                reason: format!(
                    "writes to {} are refused: {}. The file tools never write it, even inside \
                     the scope; reading it is allowed. Ask the person to make this change",
                    shown(),
                    rule.why()
                ),
            });
        }
        Ok(resolved)
    }

    /// Whether an already canonical path may be accessed. For walkers, whose entries are
    /// canonical because they start at a canonical root and never follow symlinks.
    pub fn allows(&self, canonical: &Path, access: Access) -> bool {
        self.decide(canonical, access).is_ok()
            && (access == Access::Read || self.protected.rule_for(canonical).is_none())
    }

    fn decide(&self, resolved: &Path, access: Access) -> Result<(), Refusal> {
        let inside = |roots: &[PathBuf]| roots.iter().any(|root| resolved.starts_with(root));
        if inside(&self.deny) {
            return Err(Refusal::Denied);
        }
        if inside(&self.write) {
            if access == Access::Write
                && let Some(child) = self.lent.holder(resolved)
            {
                return Err(Refusal::Lent(child));
            }
            return Ok(());
        }
        match access {
            Access::Read if inside(&self.read) => Ok(()),
            Access::Write if inside(&self.read) => Err(Refusal::ReadOnly),
            Access::Read | Access::Write => Err(Refusal::Outside),
        }
    }

    /// What the scope allows, for the end of a refusal: "read/write: /p; read-only: /d".
    fn allowed(&self) -> String {
        let mut parts = vec![format!("read/write: {}", list(&self.write))];
        if !self.read.is_empty() {
            parts.push(format!("read-only: {}", list(&self.read)));
        }
        if !self.deny.is_empty() {
            parts.push(format!("denied: {}", list(&self.deny)));
        }
        parts.join("; ")
    }

    pub fn describe(&self) -> String {
        let read = if self.read.is_empty() {
            "only what is writable".to_owned()
        } else {
            format!("{} and everything writable", list(&self.read))
        };
        format!(
            "read: {read}; write: {}; denied: {}. Any other path is refused by the file tools; \
             the shell tool is not confined by this scope (approvals govern it).",
            list(&self.write),
            list(&self.deny),
        )
    }
}

fn list(roots: &[PathBuf]) -> String {
    if roots.is_empty() {
        return "nothing".to_owned();
    }
    let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    shown.join(", ")
}

/// A rule root: lexically normalised against cwd, then resolved like a checked path so that a
/// root under a symlinked directory compares equal to the canonical paths it must contain. A
/// `..` left after a missing part was already removed by the lexical pass.
fn resolve_root(cwd: &Path, root: &Path) -> Result<PathBuf, ScopeError> {
    let normal = lexically_normal(&cwd.join(root));
    resolve(&normal).map_err(|err| ScopeError::Rule {
        path: root.to_owned(),
        cause: match err {
            Unresolvable::Io(_, source) => source,
            Unresolvable::UpThroughMissing(_) => io::Error::other("\"..\" after a missing part"),
        },
    })
}

enum Unresolvable {
    /// A `..` follows a component that does not exist; holds the missing path.
    UpThroughMissing(PathBuf),
    /// The nearest existing ancestor could not be canonicalized (a broken symlink, no permission).
    Io(PathBuf, io::Error),
}

/// Canonicalize `path` (absolute); for a path that does not exist, canonicalize its nearest
/// existing ancestor and append the rest, which may not contain `..`.
fn resolve(path: &Path) -> Result<PathBuf, Unresolvable> {
    match std::fs::canonicalize(path) {
        Ok(canonical) => return Ok(canonical),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(Unresolvable::Io(path.to_owned(), err)),
    }
    let components: Vec<Component<'_>> = path.components().collect();
    // `symlink_metadata`, not `exists`: a broken symlink exists, and must not be treated as a
    // missing name we may create (or pass through).
    let existing = (0..=components.len())
        .rev()
        .find(|&n| std::fs::symlink_metadata(join(&components[..n])).is_ok())
        .unwrap_or(0);
    let base = join(&components[..existing]);
    let mut resolved =
        std::fs::canonicalize(&base).map_err(|err| Unresolvable::Io(base.clone(), err))?;
    for (i, component) in components[existing..].iter().enumerate() {
        match component {
            Component::Normal(name) => resolved.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Unresolvable::UpThroughMissing(join(
                    &components[..existing + i],
                )));
            }
        }
    }
    Ok(resolved)
}

fn join(components: &[Component<'_>]) -> PathBuf {
    components.iter().collect()
}

/// `.` and `..` removed without touching the disk (so not symlink-aware: only for display and
/// for rule roots that may not exist).
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(_) | Component::RootDir | Component::Prefix(_) => out.push(component),
        }
    }
    out
}

pub(crate) fn describe_io(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "it does not exist".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Dirs {
        _tmp: tempfile::TempDir,
        /// The pod's working directory (canonical).
        cwd: PathBuf,
        /// A sibling directory outside the scope, holding `secret.txt`.
        outside: PathBuf,
    }

    fn dirs() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let cwd = root.join("proj");
        let outside = root.join("outside");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(cwd.join("src/a.rs"), "a").unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        Dirs {
            _tmp: tmp,
            cwd,
            outside,
        }
    }

    fn refused(scope: &Scope, path: &str, access: Access) -> String {
        match scope.check(path, access) {
            Ok(resolved) => panic!("{path} was allowed as {}", resolved.display()),
            Err(blocked) => {
                assert_eq!(blocked.path, path);
                blocked.reason
            }
        }
    }

    #[test]
    fn lent_roots_are_readable_not_writable_and_not_delegable_twice() {
        let d = dirs();
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        let lent = scope.delegable("src", Access::Write).unwrap();
        scope.lent().set(vec![crate::LentRoot {
            root: lent,
            child: "kid".into(),
        }]);
        assert!(scope.check("src/a.rs", Access::Read).is_ok());
        let reason = refused(&scope, "src/a.rs", Access::Write);
        assert!(reason.contains("lent to child pod kid"), "{reason}");
        assert!(
            scope.check("new.txt", Access::Write).is_ok(),
            "the rest stays writable"
        );
        let twice = scope.delegable(".", Access::Write).unwrap_err();
        assert!(twice.reason.contains("overlaps"), "{}", twice.reason);
        assert!(
            scope.delegable("src", Access::Read).is_ok(),
            "reading can be shared"
        );
        let outside = scope
            .delegable(d.outside.to_str().unwrap(), Access::Write)
            .unwrap_err();
        assert!(outside.reason.contains("outside"), "{}", outside.reason);
        scope.lent().set(Vec::new());
        assert!(scope.check("src/a.rs", Access::Write).is_ok(), "returned");
    }

    #[test]
    fn inside_paths_resolve_to_canonical_form() {
        let d = dirs();
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        assert_eq!(scope.cwd(), d.cwd);
        for access in [Access::Read, Access::Write] {
            assert_eq!(
                scope.check("src/a.rs", access).unwrap(),
                d.cwd.join("src/a.rs")
            );
            assert_eq!(
                scope.check("./src/../src/a.rs", access).unwrap(),
                d.cwd.join("src/a.rs")
            );
            assert_eq!(scope.check(".", access).unwrap(), d.cwd);
            let abs = d.cwd.join("src/a.rs");
            assert_eq!(scope.check(abs.to_str().unwrap(), access).unwrap(), abs);
        }
        // A new file in new directories: resolved through the nearest existing ancestor.
        assert_eq!(
            scope.check("new/deeper/file.txt", Access::Write).unwrap(),
            d.cwd.join("new/deeper/file.txt")
        );
    }

    #[test]
    fn dot_dot_and_absolute_escapes_are_refused() {
        let d = dirs();
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        for access in [Access::Read, Access::Write] {
            let reason = refused(&scope, "../outside/secret.txt", access);
            assert!(reason.contains("is outside this pod's scope"), "{reason}");
            assert!(
                reason.contains(&format!("read/write: {}", d.cwd.display())),
                "{reason}"
            );
            refused(&scope, "src/../../outside/secret.txt", access);
            refused(&scope, "..", access);
            refused(&scope, "/etc/passwd", access);
            refused(
                &scope,
                d.outside.join("secret.txt").to_str().unwrap(),
                access,
            );
            // `..` after a missing directory cannot be resolved on disk at all.
            let reason = refused(&scope, "missing/../../outside/new.txt", access);
            assert!(reason.contains("without \"..\""), "{reason}");
        }
        // `/a/bc` is not inside `/a/b`.
        let sibling = format!("{}-sibling/x", d.cwd.display());
        refused(&scope, &sibling, Access::Write);
    }

    #[test]
    fn symlinks_pointing_outside_are_refused() {
        let d = dirs();
        symlink(d.outside.join("secret.txt"), d.cwd.join("file-link")).unwrap();
        symlink(&d.outside, d.cwd.join("dir-link")).unwrap();
        symlink(d.outside.join("nothing-here"), d.cwd.join("broken-link")).unwrap();
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        for access in [Access::Read, Access::Write] {
            let reason = refused(&scope, "file-link", access);
            assert!(reason.contains("which resolves to"), "{reason}");
            refused(&scope, "dir-link/secret.txt", access);
            refused(&scope, "dir-link/new-file.txt", access);
            refused(&scope, "dir-link/new-dir/new-file.txt", access);
            let reason = refused(&scope, "broken-link", access);
            assert!(
                reason.ends_with("is a symbolic link to a missing target"),
                "{reason}"
            );
            refused(&scope, "broken-link/new.txt", access);
        }
    }

    #[test]
    fn a_symlink_inside_the_scope_resolves_to_its_target() {
        let d = dirs();
        symlink(d.cwd.join("src"), d.cwd.join("src-link")).unwrap();
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        assert_eq!(
            scope.check("src-link/a.rs", Access::Write).unwrap(),
            d.cwd.join("src/a.rs")
        );
    }

    #[test]
    fn deny_beats_write_and_read_only_refuses_write() {
        let d = dirs();
        std::fs::create_dir_all(d.cwd.join("secrets")).unwrap();
        let rules = ScopeRules {
            read: vec![d.outside.clone()],
            write: vec![PathBuf::from(".")],
            deny: vec![PathBuf::from("secrets"), PathBuf::from(".env")],
        };
        let scope = Scope::new(&d.cwd, &rules).unwrap();
        for access in [Access::Read, Access::Write] {
            let reason = refused(&scope, "secrets/key", access);
            assert!(reason.contains("denied"), "{reason}");
            // A denied root that does not exist yet still denies.
            refused(&scope, ".env", access);
        }
        let outside = d.outside.join("secret.txt");
        let outside = outside.to_str().unwrap();
        assert!(scope.check(outside, Access::Read).is_ok());
        let reason = refused(&scope, outside, Access::Write);
        assert!(reason.contains("is read-only"), "{reason}");
        assert!(reason.contains("read-only: "), "{reason}");
        assert!(scope.check("src/a.rs", Access::Write).is_ok());
    }

    #[test]
    fn protected_paths_are_readable_not_writable() {
        let d = dirs();
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        let config = d.cwd.join(".git/config");
        assert!(scope.allows(&config, Access::Read));
        assert!(!scope.allows(&config, Access::Write));
        assert!(scope.check(".git/config", Access::Read).is_ok());
        let blocked = scope.check(".git/config", Access::Write).unwrap_err();
        assert_eq!(blocked.kind, BlockedKind::Protected);
        // Outside the scope is reported as such, not as protected.
        let outside = d.outside.join(".git/config");
        let blocked = scope
            .check(outside.to_str().unwrap(), Access::Write)
            .unwrap_err();
        assert_eq!(blocked.kind, BlockedKind::Scope);
        // Delegating a protected directory for writing is refused as well.
        let lend = scope.delegable(".git", Access::Write).unwrap_err();
        assert_eq!(lend.kind, BlockedKind::Protected);
    }

    #[test]
    fn empty_rules_reach_nothing_and_describe_says_so() {
        let d = dirs();
        let scope = Scope::new(&d.cwd, &ScopeRules::default()).unwrap();
        refused(&scope, "src/a.rs", Access::Read);
        assert!(
            scope
                .describe()
                .starts_with("read: only what is writable; write: nothing;")
        );
        let scope = Scope::for_cwd(&d.cwd).unwrap();
        assert_eq!(
            scope.describe(),
            format!(
                "read: only what is writable; write: {}; denied: nothing. Any other path is \
                 refused by the file tools; the shell tool is not confined by this scope \
                 (approvals govern it).",
                d.cwd.display()
            )
        );
    }

    #[test]
    fn a_missing_cwd_is_an_error() {
        let d = dirs();
        let err = Scope::for_cwd(&d.cwd.join("nope")).unwrap_err();
        assert!(matches!(err, ScopeError::Cwd { .. }), "{err}");
    }

    #[test]
    fn blocked_displays_as_a_sentence() {
        let blocked = Blocked {
            kind: BlockedKind::Scope,
            path: "/etc".into(),
            reason: "\"/etc\" is outside this pod's scope (read/write: /p)".into(),
        };
        assert_eq!(
            blocked.to_string(),
            "access blocked: \"/etc\" is outside this pod's scope (read/write: /p)"
        );
    }
}
