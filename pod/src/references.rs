//! Turning the references in submitted input — `@path`, `#slug`, `/slug args` — into the
//! `SystemItem`s committed after it, and reading the workflow catalogue.
//!
//! Each item's `body` is the exact text the model sees, rendered here once and stored
//! (invariant 2). A reference that cannot be honoured still yields an item, with a placeholder
//! body saying why, and a `problem` for the caller to raise as an alert: a reference is never
//! dropped silently, for the model nor for the person.
//!
//! This reads files, so the caller runs it off the controller's task (`spawn_blocking`).

use std::io::Read;
use std::path::{Path, PathBuf};

use seedpod_protocol::{PodCommand, SLASH_COMMANDS, Segment, SystemItem};
use seedpod_tools::{BINARY_SNIFF_BYTES, Blocked, Scope, Unopenable, looks_binary};

use crate::completions::{KNOWLEDGE_DIR, WORKFLOWS_DIR};
use crate::guard::group_thousands;
use crate::project_file::{self, Refused};

/// Most bytes of a workflow read for the catalogue: its front matter is at the top.
const WORKFLOW_FRONT_MATTER_BYTES: usize = 8 * 1024;

/// Default for `ReferenceContext::max_file_bytes`: a large source file fits; a log does not.
pub const DEFAULT_MAX_FILE_BYTES: usize = 100 * 1024;

/// Most entries an `@dir` listing shows; the rest are counted in a note.
pub const MAX_DIR_ENTRIES: usize = 200;

/// Where and how references are resolved.
pub struct ReferenceContext<'a> {
    /// The pod's working directory, which `.seedpod/knowledge` and `.seedpod/workflows` are in.
    pub cwd: &'a Path,
    /// The pod's read-scope check: the canonical path to read for a path as typed, or why it
    /// may not be read. Paths are never opened without it.
    pub can_read: &'a (dyn Fn(&str) -> Result<PathBuf, NotAttached> + Sync),
    /// Most bytes of one file attached; the rest is left to the `read_file` tool.
    pub max_file_bytes: usize,
    /// The pod's scope, which bounds where a knowledge note or workflow may lead besides the
    /// project (`project_file.rs`). `None`: only the project.
    pub scope: Option<&'a Scope>,
    /// `@path` references already resolved elsewhere, by path: MCP resources (`@SERVER:URI`),
    /// read by the caller before this runs (`controller/attach.rs`).
    pub premade: &'a [(String, Resolved)],
}

/// Why an `@path` was not attached. The text is the reason both tellings give: the model's
/// placeholder body (`(not attached: …)`) and the person's alert (`@PATH was not attached: …`).
#[derive(Debug, thiserror::Error)]
pub enum NotAttached {
    /// The pod's read scope refuses the path; its reason says what the scope allows.
    #[error("{}", .0.reason)]
    OutOfScope(Blocked),
    /// There is no scope to check the path against, so nothing is read.
    #[error("the pod's scope could not be set up")]
    NoScope,
    /// The checked path could not be opened as checked (it changed, or has other names).
    #[error(transparent)]
    Unopenable(#[from] Unopenable),
    /// Reading it failed.
    #[error("{}", io_reason(.cause))]
    Io { cause: std::io::Error },
    /// Neither a file nor a directory.
    #[error("not a regular file")]
    NotAFile,
    /// Its first bytes look binary (the rule `read_file` uses too).
    #[error("it looks like a binary file")]
    Binary,
}

impl From<std::io::Error> for NotAttached {
    fn from(cause: std::io::Error) -> NotAttached {
        NotAttached::Io { cause }
    }
}

/// One reference turned into an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub item: SystemItem,
    /// Why the reference could not be honoured (its item then holds a placeholder); the caller
    /// raises an alert with this text.
    pub problem: Option<String>,
}

/// A workflow in `<cwd>/.seedpod/workflows/<slug>.md`, as its front matter describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowInfo {
    pub slug: String,
    pub description: Option<String>,
    /// What the workflow expects after `/slug`, in the author's words.
    pub arguments: Option<String>,
}

/// A `/slug` that names a command rather than a workflow: the pod's own (`PodCommand`) and
/// those its clients handle themselves (`SLASH_COMMANDS`). A command wins over a workflow of
/// the same name. Of these the pod acts only on `PodCommand`s.
pub fn is_builtin_command(slug: &str) -> bool {
    PodCommand::from_name(slug).is_some() || SLASH_COMMANDS.iter().any(|(name, _)| *name == slug)
}

/// One item per reference segment, in segment order. Text, pastes, unknown segments and
/// builtin commands (`is_builtin_command`) yield nothing.
pub fn resolve(segments: &[Segment], ctx: &ReferenceContext) -> Vec<Resolved> {
    segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::FileRef { path } => {
                Some(match ctx.premade.iter().find(|(made, _)| made == path) {
                    Some((_, resolved)) => resolved.clone(),
                    None => file_reference(path, ctx),
                })
            }
            Segment::KnowledgeRef { slug } => Some(knowledge(slug, ctx)),
            Segment::WorkflowInvoke { slug, args } => {
                (!is_builtin_command(slug)).then(|| workflow(slug, args, ctx))
            }
            Segment::Text { .. } | Segment::Paste { .. } | Segment::Unknown => None,
        })
        .collect()
}

/// The workflows in `<cwd>/.seedpod/workflows`, sorted by slug. A file that cannot be read (or
/// that links out of the project, `project_file.rs`) is still listed, without a description;
/// invoking it says why. A folder that leads out of the project lists nothing.
pub fn workflows(cwd: &Path, scope: Option<&Scope>) -> Vec<WorkflowInfo> {
    let Ok(dir) = project_file::resolve(cwd, Path::new(WORKFLOWS_DIR), WORKFLOWS_DIR, scope) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<WorkflowInfo> = entries
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name())
        .filter_map(|name| {
            let slug = name.to_str()?.strip_suffix(".md")?.to_string();
            valid_slug(&slug).ok()?;
            let shown = format!("{WORKFLOWS_DIR}/{slug}.md");
            let text = match project_file::open(cwd, Path::new(&shown), &shown, scope) {
                Ok(opened) => opened.head(WORKFLOW_FRONT_MATTER_BYTES).unwrap_or_default(),
                Err(Refused::NotAFile { .. }) => return None,
                Err(_) => Vec::new(),
            };
            let text = String::from_utf8_lossy(&text);
            let (front, _) = split_front_matter(&text);
            Some(WorkflowInfo {
                slug,
                description: front.description,
                arguments: front.arguments,
            })
        })
        .collect();
    found.sort_by(|a, b| a.slug.cmp(&b.slug));
    found
}

fn file_reference(path: &str, ctx: &ReferenceContext) -> Resolved {
    let attached = (ctx.can_read)(path).and_then(|real| {
        let meta = std::fs::metadata(&real)?;
        if meta.is_dir() {
            dir_body(path, &real)
        } else if meta.is_file() {
            file_body(path, &real, meta.len(), ctx.max_file_bytes)
        } else {
            Err(NotAttached::NotAFile)
        }
    });
    match attached {
        Ok(body) => Resolved {
            item: SystemItem::FileAttachment {
                path: path.to_string(),
                body,
            },
            problem: None,
        },
        Err(reason) => Resolved {
            item: SystemItem::FileAttachment {
                path: path.to_string(),
                body: format!("[File: {path}] (not attached: {reason})"),
            },
            problem: Some(format!("@{path} was not attached: {reason}")),
        },
    }
}

fn file_body(shown: &str, real: &Path, size: u64, max_bytes: usize) -> Result<String, NotAttached> {
    let mut head = Vec::new();
    // Race-free: the checked path is opened without following symlinks (and a file with other
    // names, which may be outside the scope, is not attached).
    seedpod_tools::open_checked(real, shown)?
        .take(max_bytes.max(BINARY_SNIFF_BYTES) as u64)
        .read_to_end(&mut head)?;
    // The same rule as `read_file`'s, so `@file` and the tool agree on what is binary.
    if looks_binary(&head[..head.len().min(BINARY_SNIFF_BYTES)]) {
        return Err(NotAttached::Binary);
    }
    let (text, note) = bounded_text(&head, size, max_bytes);
    Ok(format!("[File: {shown}]\n{text}{note}"))
}

/// The first `max_bytes` of `bytes` (cut at a char boundary) as text, and the note to append
/// when that is not all `total` bytes.
fn bounded_text(bytes: &[u8], total: u64, max_bytes: usize) -> (String, String) {
    let shown = if bytes.len() > max_bytes || total > max_bytes as u64 {
        utf8_prefix_len(&bytes[..max_bytes.min(bytes.len())])
    } else {
        bytes.len()
    };
    let text = String::from_utf8_lossy(&bytes[..shown]).into_owned();
    if shown as u64 >= total {
        return (text, String::new());
    }
    let note = format!(
        "\n[… truncated: showing the first {} of {} bytes; use read_file with an offset for the rest]",
        group_thousands(shown),
        group_thousands(usize::try_from(total).unwrap_or(usize::MAX)),
    );
    (text, note)
}

/// The length of `bytes` without a UTF-8 sequence cut off at its end (shared with the prompt's
/// `AGENTS.md` cap).
pub(crate) fn utf8_prefix_len(bytes: &[u8]) -> usize {
    let tail_start = bytes.len().saturating_sub(4);
    for i in (tail_start..bytes.len()).rev() {
        let b = bytes[i];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: its lead is further back
        }
        let width = match b {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        return if i + width <= bytes.len() {
            bytes.len()
        } else {
            i
        };
    }
    bytes.len()
}

fn dir_body(shown: &str, real: &Path) -> Result<String, NotAttached> {
    let mut names: Vec<String> = std::fs::read_dir(real)?
        .filter_map(|entry| entry.ok())
        .map(|entry| {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    let mut body = format!("[Dir: {shown}]\n");
    if names.is_empty() {
        body.push_str("(empty directory)");
    }
    let listed: Vec<&str> = names
        .iter()
        .take(MAX_DIR_ENTRIES)
        .map(String::as_str)
        .collect();
    body.push_str(&listed.join("\n"));
    if names.len() > MAX_DIR_ENTRIES {
        body.push_str(&format!(
            "\n[… {} more entries not shown; {} in all]",
            group_thousands(names.len() - MAX_DIR_ENTRIES),
            group_thousands(names.len()),
        ));
    }
    Ok(body)
}

fn knowledge(slug: &str, ctx: &ReferenceContext) -> Resolved {
    let read = valid_slug(slug)
        .map_err(|bad| Unread::same(bad.to_string()))
        .and_then(|()| read_note(ctx, &format!("{KNOWLEDGE_DIR}/{slug}.md")));
    match read {
        Ok(text) => Resolved {
            item: SystemItem::Knowledge {
                slug: slug.to_string(),
                body: format!("[Knowledge: #{slug}]\n{text}"),
            },
            problem: None,
        },
        Err(unread) => Resolved {
            item: SystemItem::Knowledge {
                slug: slug.to_string(),
                body: format!("[Knowledge: #{slug}] (not attached: {})", unread.for_model),
            },
            problem: Some(format!("#{slug} was not attached: {}", unread.for_person)),
        },
    }
}

fn workflow(slug: &str, args: &str, ctx: &ReferenceContext) -> Resolved {
    let read = valid_slug(slug)
        .map_err(|bad| Unread::same(bad.to_string()))
        .and_then(|()| read_note(ctx, &format!("{WORKFLOWS_DIR}/{slug}.md")));
    match read {
        Ok(text) => {
            let (_, instructions) = split_front_matter(&text);
            let mut body = format!("[Workflow: /{slug}]\n{}", instructions.trim_end());
            let args = args.trim();
            if !args.is_empty() {
                body.push_str("\n\nArguments: ");
                body.push_str(args);
            }
            Resolved {
                item: SystemItem::Workflow {
                    slug: slug.to_string(),
                    body,
                },
                problem: None,
            }
        }
        Err(unread) => Resolved {
            item: SystemItem::Workflow {
                slug: slug.to_string(),
                body: format!("[Workflow: /{slug}] (not loaded: {})", unread.for_model),
            },
            problem: Some(format!("/{slug} was not run: {}", unread.for_person)),
        },
    }
}

/// A knowledge note or workflow file of the project (`project_file.rs`: a link out of it is
/// refused), bounded like an attachment. `shown` is its path relative to `cwd`.
fn read_note(ctx: &ReferenceContext, shown: &str) -> Result<String, Unread> {
    let opened =
        project_file::open(ctx.cwd, Path::new(shown), shown, ctx.scope).map_err(|refused| {
            Unread {
                for_model: refused.for_model(),
                for_person: refused.to_string(),
            }
        })?;
    let len = opened.len;
    let bytes = opened
        .head(ctx.max_file_bytes)
        .map_err(|e| Unread::same(format!("{shown}: {}", io_reason(&e))))?;
    let (text, note) = bounded_text(&bytes, len, ctx.max_file_bytes);
    Ok(format!("{text}{note}"))
}

/// Why a note was not read, in two tellings: the model's leaves out where a refused link leads.
struct Unread {
    for_model: String,
    for_person: String,
}

impl Unread {
    fn same(reason: String) -> Unread {
        Unread {
            for_model: reason.clone(),
            for_person: reason,
        }
    }
}

/// A slug names one file in one folder: no separators, no `..`, nothing hidden.
fn valid_slug(slug: &str) -> Result<(), BadSlug> {
    let bad = slug.is_empty()
        || slug.starts_with('.')
        || slug.contains("..")
        || slug.contains(['/', '\\', '\0']);
    if bad {
        Err(BadSlug(slug.to_owned()))
    } else {
        Ok(())
    }
}

/// A `#slug` or `/slug` that could name a file outside its folder.
#[derive(Debug, thiserror::Error)]
#[error("\"{0}\" is not a valid name (names cannot be empty, contain / or .., or start with .)")]
struct BadSlug(String);

fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => err.to_string(),
    }
}

/// The keys of a workflow's front matter that seedpod reads.
#[derive(Debug, Default, PartialEq, Eq)]
struct FrontMatter {
    description: Option<String>,
    arguments: Option<String>,
}

/// Splits a leading `---` … `---` block of `key: value` lines from the body. Text without a
/// closed block is all body. Unknown keys are ignored; values may be quoted.
fn split_front_matter(text: &str) -> (FrontMatter, &str) {
    let mut front = FrontMatter::default();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (front, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end();
        if line == "---" {
            let body = rest[offset..].trim_start_matches(['\n', '\r']);
            return (front, body);
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = unquote(value.trim());
        let value = (!value.is_empty()).then(|| value.to_string());
        match key.trim() {
            "description" => front.description = value,
            "arguments" => front.arguments = value,
            _ => {}
        }
    }
    (FrontMatter::default(), text)
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scope that allows everything under `root` except paths containing `secret`.
    fn scope(root: &Path) -> impl Fn(&str) -> Result<PathBuf, NotAttached> + Sync + '_ {
        move |path: &str| {
            if path.contains("secret") {
                Err(NotAttached::OutOfScope(Blocked {
                    path: path.to_owned(),
                    reason: "outside the pod's read scope".to_owned(),
                    kind: seedpod_tools::BlockedKind::Scope,
                }))
            } else {
                Ok(root.join(path))
            }
        }
    }

    fn resolve_one(segment: Segment, cwd: &Path, max_file_bytes: usize) -> Resolved {
        let can_read = scope(cwd);
        let ctx = ReferenceContext {
            premade: &[],
            cwd,
            can_read: &can_read,
            max_file_bytes,
            scope: None,
        };
        let mut resolved = resolve(&[segment], &ctx);
        assert_eq!(resolved.len(), 1);
        resolved.remove(0)
    }

    fn file(path: &str) -> Segment {
        Segment::FileRef { path: path.into() }
    }

    fn body(resolved: &Resolved) -> &str {
        resolved.item.history_text()
    }

    #[test]
    fn text_file_is_attached_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
        let r = resolve_one(file("a.rs"), dir.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(
            r.item,
            SystemItem::FileAttachment {
                path: "a.rs".into(),
                body: "[File: a.rs]\nfn main() {}\n".into()
            }
        );
        assert_eq!(r.problem, None);
    }

    #[test]
    fn large_file_is_truncated_at_a_char_boundary_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        // 'é' is two bytes: a 9-byte cap falls inside the fifth one.
        std::fs::write(dir.path().join("big.txt"), "é".repeat(10)).unwrap();
        let r = resolve_one(file("big.txt"), dir.path(), 9);
        assert_eq!(
            body(&r),
            "[File: big.txt]\néééé\n[… truncated: showing the first 8 of 20 bytes; use \
             read_file with an offset for the rest]"
        );
        assert_eq!(r.problem, None);
    }

    #[test]
    fn truncation_note_groups_thousands() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("log"), "x".repeat(250_000)).unwrap();
        let r = resolve_one(file("log"), dir.path(), DEFAULT_MAX_FILE_BYTES);
        assert!(body(&r).ends_with(
            "showing the first 102,400 of 250,000 bytes; use read_file with an offset for the rest]"
        ));
    }

    #[test]
    fn directory_is_listed_shallow_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/nested")).unwrap();
        std::fs::write(dir.path().join("src/b.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/nested/deep.rs"), "").unwrap();
        let r = resolve_one(file("src"), dir.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(body(&r), "[Dir: src]\na.rs\nb.rs\nnested/");
        assert_eq!(r.problem, None);
    }

    #[test]
    fn big_directory_listing_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_DIR_ENTRIES + 5 {
            std::fs::write(dir.path().join(format!("f{i:04}")), "").unwrap();
        }
        let r = resolve_one(file("."), dir.path(), DEFAULT_MAX_FILE_BYTES);
        let text = body(&r);
        assert_eq!(text.lines().count(), 1 + MAX_DIR_ENTRIES + 1);
        assert!(
            text.ends_with("[… 5 more entries not shown; 205 in all]"),
            "{text}"
        );
    }

    #[test]
    fn missing_file_gets_a_placeholder_and_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let r = resolve_one(file("nope.txt"), dir.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(
            body(&r),
            "[File: nope.txt] (not attached: no such file or directory)"
        );
        assert_eq!(
            r.problem.as_deref(),
            Some("@nope.txt was not attached: no such file or directory")
        );
    }

    #[test]
    fn out_of_scope_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret.txt"), "hunter2").unwrap();
        let r = resolve_one(file("secret.txt"), dir.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(
            body(&r),
            "[File: secret.txt] (not attached: outside the pod's read scope)"
        );
        assert!(!body(&r).contains("hunter2"));
        assert_eq!(
            r.problem.as_deref(),
            Some("@secret.txt was not attached: outside the pod's read scope")
        );
    }

    #[test]
    fn binary_file_is_not_attached() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("img.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        let r = resolve_one(file("img.png"), dir.path(), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(
            body(&r),
            "[File: img.png] (not attached: it looks like a binary file)"
        );
        assert!(r.problem.is_some());
    }

    #[test]
    fn knowledge_note_is_attached() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join(KNOWLEDGE_DIR);
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join("style.md"), "# Style\nNo unwrap.\n").unwrap();
        let r = resolve_one(
            Segment::KnowledgeRef {
                slug: "style".into(),
            },
            dir.path(),
            DEFAULT_MAX_FILE_BYTES,
        );
        assert_eq!(
            r.item,
            SystemItem::Knowledge {
                slug: "style".into(),
                body: "[Knowledge: #style]\n# Style\nNo unwrap.\n".into()
            }
        );
        assert_eq!(r.problem, None);
    }

    /// A note linked out of the project is not attached: the model gets a placeholder that
    /// names no target, the person a problem that does. A link inside the project is followed.
    #[test]
    fn knowledge_linked_out_of_the_project_is_refused_and_inside_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let notes = project.join(KNOWLEDGE_DIR);
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(root.join("private.md"), "PRIVATE-MARKER").unwrap();
        std::os::unix::fs::symlink(root.join("private.md"), notes.join("out.md")).unwrap();
        std::fs::write(project.join("shared.md"), "shared note").unwrap();
        std::os::unix::fs::symlink("../../shared.md", notes.join("in.md")).unwrap();
        let knowledge = |slug: &str| {
            resolve_one(
                Segment::KnowledgeRef { slug: slug.into() },
                &project,
                DEFAULT_MAX_FILE_BYTES,
            )
        };
        let out = knowledge("out");
        assert!(!body(&out).contains("PRIVATE-MARKER"), "{}", body(&out));
        assert!(!body(&out).contains("private.md"), "{}", body(&out));
        assert!(body(&out).contains("outside the project"), "{}", body(&out));
        let problem = out.problem.unwrap();
        assert!(problem.contains("private.md"), "{problem}");
        let inside = knowledge("in");
        assert_eq!(body(&inside), "[Knowledge: #in]\nshared note");
        assert_eq!(inside.problem, None);
    }

    #[test]
    fn missing_knowledge_note_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let r = resolve_one(
            Segment::KnowledgeRef {
                slug: "style".into(),
            },
            dir.path(),
            DEFAULT_MAX_FILE_BYTES,
        );
        assert_eq!(
            body(&r),
            "[Knowledge: #style] (not attached: .seedpod/knowledge/style.md: no such file or directory)"
        );
        assert_eq!(
            r.problem.as_deref(),
            Some("#style was not attached: .seedpod/knowledge/style.md: no such file or directory")
        );
    }

    #[test]
    fn invalid_slugs_never_touch_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join(KNOWLEDGE_DIR);
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(dir.path().join(".seedpod/escape.md"), "outside").unwrap();
        for slug in ["../escape", "a/b", "", ".hidden", "..", "a\\b"] {
            let r = resolve_one(
                Segment::KnowledgeRef { slug: slug.into() },
                dir.path(),
                DEFAULT_MAX_FILE_BYTES,
            );
            assert!(
                body(&r).contains("is not a valid name"),
                "{slug}: {}",
                body(&r)
            );
            assert!(r.problem.is_some());
            let r = resolve_one(
                Segment::WorkflowInvoke {
                    slug: slug.into(),
                    args: String::new(),
                },
                dir.path(),
                DEFAULT_MAX_FILE_BYTES,
            );
            assert!(
                body(&r).contains("is not a valid name"),
                "{slug}: {}",
                body(&r)
            );
        }
    }

    #[test]
    fn workflow_body_drops_front_matter_and_adds_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let flows = dir.path().join(WORKFLOWS_DIR);
        std::fs::create_dir_all(&flows).unwrap();
        std::fs::write(
            flows.join("review.md"),
            "---\ndescription: Review a change\narguments: a branch name\n---\n\nRead the diff.\nList problems.\n",
        )
        .unwrap();
        let invoke = |args: &str| {
            resolve_one(
                Segment::WorkflowInvoke {
                    slug: "review".into(),
                    args: args.into(),
                },
                dir.path(),
                DEFAULT_MAX_FILE_BYTES,
            )
        };
        let r = invoke("main  ");
        assert_eq!(
            r.item,
            SystemItem::Workflow {
                slug: "review".into(),
                body: "[Workflow: /review]\nRead the diff.\nList problems.\n\nArguments: main"
                    .into()
            }
        );
        assert_eq!(r.problem, None);
        assert_eq!(
            body(&invoke("")),
            "[Workflow: /review]\nRead the diff.\nList problems."
        );
    }

    #[test]
    fn missing_workflow_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let r = resolve_one(
            Segment::WorkflowInvoke {
                slug: "deploy".into(),
                args: "prod".into(),
            },
            dir.path(),
            DEFAULT_MAX_FILE_BYTES,
        );
        assert_eq!(
            body(&r),
            "[Workflow: /deploy] (not loaded: .seedpod/workflows/deploy.md: no such file or directory)"
        );
        assert_eq!(
            r.problem.as_deref(),
            Some("/deploy was not run: .seedpod/workflows/deploy.md: no such file or directory")
        );
    }

    #[test]
    fn resolve_keeps_segment_order_and_skips_commands_and_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "A").unwrap();
        let can_read = scope(dir.path());
        let ctx = ReferenceContext {
            premade: &[],
            cwd: dir.path(),
            can_read: &can_read,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            scope: None,
        };
        let segments = [
            Segment::text("see "),
            Segment::KnowledgeRef { slug: "k".into() },
            Segment::WorkflowInvoke {
                slug: "model".into(),
                args: "x".into(),
            },
            file("a"),
            Segment::Paste {
                id: 1,
                chars: 1,
                lines: 1,
                content: "p".into(),
            },
            Segment::Unknown,
        ];
        let kinds: Vec<&str> = resolve(&segments, &ctx)
            .iter()
            .map(|r| r.item.kind_name())
            .collect();
        assert_eq!(kinds, ["knowledge", "file_attachment"]);
    }

    #[test]
    fn builtin_commands() {
        for slug in [
            "clear", "memory", "model", "help", "detach", "stop", "pods", "resume", "cancel",
            "copy",
        ] {
            assert!(is_builtin_command(slug), "{slug}");
        }
        assert!(!is_builtin_command("review"));
    }

    #[test]
    fn workflows_are_listed_sorted_with_front_matter() {
        let dir = tempfile::tempdir().unwrap();
        assert!(workflows(dir.path(), None).is_empty());
        let flows = dir.path().join(WORKFLOWS_DIR);
        std::fs::create_dir_all(&flows).unwrap();
        std::fs::write(
            flows.join("review.md"),
            "---\r\ndescription: \"Review a change\"\r\narguments: branch\r\nmodel: x\r\n---\r\nbody",
        )
        .unwrap();
        std::fs::write(flows.join("plain.md"), "# Plain\nno front matter").unwrap();
        std::fs::write(flows.join("notes.txt"), "not a workflow").unwrap();
        assert_eq!(
            workflows(dir.path(), None),
            [
                WorkflowInfo {
                    slug: "plain".into(),
                    description: None,
                    arguments: None
                },
                WorkflowInfo {
                    slug: "review".into(),
                    description: Some("Review a change".into()),
                    arguments: Some("branch".into())
                },
            ]
        );
    }

    #[test]
    fn front_matter_parsing() {
        let (front, body) = split_front_matter("---\ndescription: d\narguments:\n---\nbody\n");
        assert_eq!(
            front,
            FrontMatter {
                description: Some("d".into()),
                arguments: None
            }
        );
        assert_eq!(body, "body\n");

        // No front matter, or an unclosed block: all of it is body.
        assert_eq!(split_front_matter("body").1, "body");
        let unclosed = "---\ndescription: d\nbody";
        assert_eq!(
            split_front_matter(unclosed),
            (FrontMatter::default(), unclosed)
        );
        // A rule later in the text is not front matter.
        let later = "intro\n---\ndescription: d\n---\n";
        assert_eq!(split_front_matter(later), (FrontMatter::default(), later));
    }
}
