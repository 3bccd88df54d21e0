//! Opening the project's own files — `AGENTS.md`, `.seedpod/knowledge/*`,
//! `.seedpod/workflows/*` — as data (DESIGN invariant 6): a project file may be a symbolic link,
//! but only to somewhere beneath the directory it belongs to, or into what the pod's scope lets
//! the model read. A link that leads anywhere else, or into a path the scope denies, is refused
//! with a reason and never followed: a cloned repository whose `AGENTS.md` links to
//! `~/.ssh/id_rsa` gets a note in the prompt, not the key.
//!
//! A check cannot be raced: the path is resolved to its canonical form, that form is checked,
//! and exactly it is opened with no symbolic link followed anywhere in it
//! (`seedpod_tools::open_checked`, the file tools' own open). A link swapped in after the check
//! makes the open fail instead of leading elsewhere. A file with more than one name is refused
//! the same way (another of its names may be anywhere).
//!
//! Owns: where a project file may lead, and the words for a refusal. The readers (`agents.rs`,
//! `references.rs`, `prompt/layers.rs`, `completions.rs`) decide what to do with one.

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::path::{Path, PathBuf};

use seedpod_tools::{Access, Scope};

/// Why a project file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Nothing at all is there, not even a link.
    #[error("{shown}: no such file or directory")]
    Missing { shown: String },
    /// It resolves outside the project and outside the pod's scope.
    #[error(
        "{shown} leads to {}, outside the project; a project's links are not followed out of it",
        target.display()
    )]
    Outside { shown: String, target: PathBuf },
    /// It resolves into a path the pod's scope denies.
    #[error("{shown} leads to {}, which this pod's scope denies", target.display())]
    Denied { shown: String, target: PathBuf },
    #[error("{shown} is not a regular file")]
    NotAFile { shown: String },
    /// Changed while it was opened, hard-linked, or unreadable; the text names it.
    #[error("{0}")]
    Unopenable(String),
    #[error("{shown}: {reason}")]
    Io { shown: String, reason: String },
}

impl Refused {
    /// Whether the file is simply not there (a reader then behaves as if it never was).
    pub fn is_missing(&self) -> bool {
        matches!(self, Refused::Missing { .. })
    }

    /// The short reason the model sees in place of the content: it names no target, because
    /// where the link points is itself something the project should not learn.
    pub fn for_model(&self) -> String {
        match self {
            Refused::Outside { shown, .. } => format!(
                "{shown} is a link to a file outside the project, which seedpod does not read"
            ),
            Refused::Denied { shown, .. } => {
                format!("{shown} is a link to a path this pod's scope denies")
            }
            Refused::NotAFile { shown } => format!("{shown} is not a regular file"),
            Refused::Missing { .. } | Refused::Unopenable(_) | Refused::Io { .. } => {
                self.to_string()
            }
        }
    }
}

/// An opened project file and its size.
pub struct Opened {
    pub file: File,
    pub len: u64,
}

impl Opened {
    /// At most `max` bytes from its start.
    pub fn head(self, max: usize) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.file.take(max as u64).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// Open `base/rel` for reading, where `base` is the directory the file belongs to (the pod's
/// working directory, or the directory an `AGENTS.md` was found in). `shown` names the file in
/// a refusal.
pub fn open(
    base: &Path,
    rel: &Path,
    shown: &str,
    scope: Option<&Scope>,
) -> Result<Opened, Refused> {
    let target = resolve(base, rel, shown, scope)?;
    let file = seedpod_tools::open_checked(&target, shown)
        .map_err(|unopenable| Refused::Unopenable(unopenable.to_string()))?;
    let meta = file.metadata().map_err(|e| io_refusal(shown, &e))?;
    if !meta.is_file() {
        return Err(Refused::NotAFile {
            shown: shown.to_owned(),
        });
    }
    Ok(Opened {
        file,
        len: meta.len(),
    })
}

/// The canonical path `base/rel` leads to, when a project file may lead there. For a directory
/// that is only listed (names, never content); files are opened with `open`.
pub fn resolve(
    base: &Path,
    rel: &Path,
    shown: &str,
    scope: Option<&Scope>,
) -> Result<PathBuf, Refused> {
    let path = base.join(rel);
    if let Err(err) = std::fs::symlink_metadata(&path) {
        return Err(match err.kind() {
            ErrorKind::NotFound => Refused::Missing {
                shown: shown.to_owned(),
            },
            _ => io_refusal(shown, &err),
        });
    }
    let base = base.canonicalize().map_err(|e| io_refusal(shown, &e))?;
    let target = path.canonicalize().map_err(|err| match err.kind() {
        ErrorKind::NotFound => Refused::Io {
            shown: shown.to_owned(),
            reason: "it is a symbolic link to a missing target".into(),
        },
        _ => io_refusal(shown, &err),
    })?;
    allowed(&target, &base, scope).map_err(|why| why.refusal(shown, target.clone()))?;
    Ok(target)
}

enum Why {
    Outside,
    Denied,
}

impl Why {
    fn refusal(self, shown: &str, target: PathBuf) -> Refused {
        let shown = shown.to_owned();
        match self {
            Why::Outside => Refused::Outside { shown, target },
            Why::Denied => Refused::Denied { shown, target },
        }
    }
}

/// Beneath `base` or readable in the scope, and never denied by it.
fn allowed(target: &Path, base: &Path, scope: Option<&Scope>) -> Result<(), Why> {
    if let Some(scope) = scope {
        if scope
            .deny_roots()
            .iter()
            .any(|root| target.starts_with(root))
        {
            return Err(Why::Denied);
        }
        if scope.allows(target, Access::Read) {
            return Ok(());
        }
    }
    if target.starts_with(base) {
        Ok(())
    } else {
        Err(Why::Outside)
    }
}

fn io_refusal(shown: &str, err: &io::Error) -> Refused {
    let reason = match err.kind() {
        ErrorKind::NotFound => "no such file or directory".to_string(),
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => err.to_string(),
    };
    Refused::Io {
        shown: shown.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use seedpod_tools::ScopeRules;

    use super::*;

    struct Layout {
        _dir: tempfile::TempDir,
        project: PathBuf,
        outside: PathBuf,
    }

    /// `project/` with `notes/inside.md`, and `outside/secret` beside it.
    fn layout() -> Layout {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let outside = root.join("outside");
        std::fs::create_dir_all(project.join("notes")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("notes/inside.md"), "inside").unwrap();
        std::fs::write(outside.join("secret"), "SECRET").unwrap();
        Layout {
            _dir: dir,
            project,
            outside,
        }
    }

    fn read(base: &Path, rel: &str, scope: Option<&Scope>) -> Result<String, Refused> {
        let opened = open(base, Path::new(rel), rel, scope)?;
        Ok(String::from_utf8(opened.head(1024).unwrap()).unwrap())
    }

    /// The ways a project's file could lead out of it, and the links that stay inside.
    #[test]
    fn a_link_may_stay_inside_the_project_and_never_leads_out() {
        let l = layout();
        let p = &l.project;
        symlink(p.join("notes/inside.md"), p.join("abs-inside")).unwrap();
        symlink("notes/inside.md", p.join("rel-inside")).unwrap();
        symlink(l.outside.join("secret"), p.join("abs-out")).unwrap();
        symlink("../outside/secret", p.join("rel-out")).unwrap();
        symlink(&l.outside, p.join("dir-out")).unwrap();
        symlink("abs-out", p.join("chain-out")).unwrap();
        symlink(p.join("gone"), p.join("dangling")).unwrap();
        std::fs::hard_link(l.outside.join("secret"), p.join("hard")).unwrap();
        for rel in ["abs-inside", "rel-inside", "notes/inside.md"] {
            assert_eq!(read(p, rel, None).unwrap(), "inside", "{rel}");
        }
        for rel in ["abs-out", "rel-out", "dir-out/secret", "chain-out"] {
            let err = read(p, rel, None).unwrap_err();
            assert!(matches!(err, Refused::Outside { .. }), "{rel}: {err}");
            assert!(err.to_string().contains("outside the project"), "{err}");
            let outside = l.outside.display().to_string();
            assert!(!err.for_model().contains(&outside), "{}", err.for_model());
            assert!(
                err.to_string().contains(&outside),
                "the person is told: {err}"
            );
        }
        let hard = read(p, "hard", None).unwrap_err();
        assert!(hard.to_string().contains("hard links"), "{hard}");
        let dangling = read(p, "dangling", None).unwrap_err();
        assert!(
            dangling.to_string().contains("missing target"),
            "{dangling}"
        );
        assert!(read(p, "nothing", None).unwrap_err().is_missing());
        assert!(matches!(
            read(p, "notes", None).unwrap_err(),
            Refused::NotAFile { .. }
        ));
    }

    #[test]
    fn the_scope_can_widen_where_a_link_may_lead_and_its_deny_always_wins() {
        let l = layout();
        let p = &l.project;
        symlink(l.outside.join("secret"), p.join("out")).unwrap();
        std::fs::write(p.join(".env"), "TOKEN").unwrap();
        symlink(p.join(".env"), p.join("env-link")).unwrap();
        let rules = ScopeRules {
            read: vec![l.outside.clone()],
            write: vec![PathBuf::from(".")],
            deny: vec![PathBuf::from(".env")],
        };
        let scope = Scope::new(p, &rules).unwrap();
        assert_eq!(read(p, "out", Some(&scope)).unwrap(), "SECRET");
        let err = read(p, "env-link", Some(&scope)).unwrap_err();
        assert!(matches!(err, Refused::Denied { .. }), "{err}");
        // Without the person's read root, the same link is refused.
        let narrow = Scope::for_cwd(p).unwrap();
        assert!(matches!(
            read(p, "out", Some(&narrow)).unwrap_err(),
            Refused::Outside { .. }
        ));
    }
}
