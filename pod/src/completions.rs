//! Answers `list_completions`: suggestions for the composer's `@file`, `/command`,
//! `/workflow` and `#knowledge` (docs/protocol.md).
//!
//! Walking a directory tree is blocking I/O and may be slow on a big tree, so the controller
//! runs `answer` on a blocking thread and never waits for it; the walk itself is bounded so a
//! huge checkout costs a bounded amount of work per keystroke.

use std::path::Path;

use seedpod_protocol::{Completion, CompletionKind, RequestId, SLASH_COMMANDS, ServerMsg};
use seedpod_tools::{Access, Scope};

use crate::project_file;

/// Most suggestions returned in one answer; a popup never shows more.
pub const MAX_COMPLETIONS: usize = 50;

/// Most directory entries a file completion looks at before it stops and says `truncated`.
pub const MAX_FILES_VISITED: usize = 20_000;

/// Where knowledge notes and workflows live, relative to the pod's working directory.
pub const KNOWLEDGE_DIR: &str = ".seedpod/knowledge";
pub const WORKFLOWS_DIR: &str = ".seedpod/workflows";

/// The reply frame for request `id`.
pub fn answer(id: RequestId, cwd: &Path, kind: CompletionKind, prefix: &str) -> ServerMsg {
    answer_in_scope(id, cwd, None, kind, prefix)
}

/// `answer`, offering only files the pod's scope lets the model read (a denied `.env` is not
/// suggested, and a denied directory is not walked).
pub fn answer_in_scope(
    id: RequestId,
    cwd: &Path,
    scope: Option<&Scope>,
    kind: CompletionKind,
    prefix: &str,
) -> ServerMsg {
    let (items, truncated) = match kind {
        CompletionKind::File => files(cwd, scope, prefix),
        CompletionKind::Command => commands(prefix),
        CompletionKind::Workflow => slugs(cwd, WORKFLOWS_DIR, scope, prefix),
        CompletionKind::Knowledge => slugs(cwd, KNOWLEDGE_DIR, scope, prefix),
        // Answered by the controller, which holds the provider (`model_completions`).
        CompletionKind::Model | CompletionKind::Unknown => (Vec::new(), false),
    };
    ServerMsg::Completions {
        id,
        kind,
        items,
        truncated,
    }
}

fn commands(prefix: &str) -> (Vec<Completion>, bool) {
    let items = SLASH_COMMANDS
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(name, detail)| Completion::new(*name, *detail))
        .collect();
    (items, false)
}

/// `*.md` file stems in `cwd/folder` that start with `prefix`, sorted; the detail is the note's
/// first non-empty line (its title), so the popup says what each slug is about. Both are read
/// as project files (`project_file.rs`): nothing a link leads to outside the project is shown.
fn slugs(cwd: &Path, folder: &str, scope: Option<&Scope>, prefix: &str) -> (Vec<Completion>, bool) {
    let Ok(dir) = project_file::resolve(cwd, Path::new(folder), folder, scope) else {
        return (Vec::new(), false);
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), false);
    };
    let mut found: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let stem = entry.file_name().to_str()?.strip_suffix(".md")?.to_string();
            stem.starts_with(prefix).then_some(stem)
        })
        .collect();
    found.sort();
    let truncated = found.len() > MAX_COMPLETIONS;
    let items = found
        .into_iter()
        .take(MAX_COMPLETIONS)
        .map(|slug| {
            let title = title_of(cwd, &format!("{folder}/{slug}.md"), scope);
            Completion::new(slug, title)
        })
        .collect();
    (items, truncated)
}

/// First non-empty line of a note without its markdown heading marks, cut to a popup's width.
fn title_of(cwd: &Path, rel: &str, scope: Option<&Scope>) -> String {
    const TITLE_CHARS: usize = 60;
    /// Enough of a note to find its title line.
    const TITLE_BYTES: usize = 4 * 1024;
    let Ok(opened) = project_file::open(cwd, Path::new(rel), rel, scope) else {
        return String::new();
    };
    let Ok(bytes) = opened.head(TITLE_BYTES) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(TITLE_CHARS).collect())
        .unwrap_or_default()
}

/// Files and directories under `cwd` whose relative path, or whose own name, starts with
/// `prefix`. Paths that match on the path itself come first, then shorter ones.
fn files(cwd: &Path, scope: Option<&Scope>, prefix: &str) -> (Vec<Completion>, bool) {
    // A prefix naming a directory (`src/ma`) only needs that directory walked.
    let start = match prefix.rfind('/') {
        Some(slash) => cwd.join(&prefix[..slash]),
        None => cwd.to_path_buf(),
    };
    if prefix.split('/').any(|part| part == "..") || !start.starts_with(cwd) {
        // Completion stays inside the pod's directory.
        return (Vec::new(), false);
    }
    let scope = scope.cloned();
    let walker = ignore::WalkBuilder::new(&start)
        // .gitignore counts even when the directory is not (yet) a git checkout.
        .require_git(false)
        // Entries are canonical (the pod's cwd is, and links are not followed), so the cheap
        // check applies: this walk runs per keystroke.
        .filter_entry(move |entry| match &scope {
            Some(scope) => scope.allows(entry.path(), Access::Read),
            None => true,
        })
        .build();
    let mut matches: Vec<(bool, String)> = Vec::new();
    let mut truncated = false;
    for (visited, entry) in walker.enumerate() {
        if visited >= MAX_FILES_VISITED {
            truncated = true;
            break;
        }
        let Ok(entry) = entry else { continue };
        let Ok(relative) = entry.path().strip_prefix(cwd) else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            continue;
        };
        if relative.is_empty() {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let name = entry.file_name().to_string_lossy();
        let on_path = relative.starts_with(prefix);
        if !on_path && !name.starts_with(prefix) {
            continue;
        }
        let value = if is_dir {
            format!("{relative}/")
        } else {
            relative.to_string()
        };
        matches.push((on_path, value));
    }
    matches.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(a.1.cmp(&b.1))
    });
    if matches.len() > MAX_COMPLETIONS {
        truncated = true;
    }
    let items = matches
        .into_iter()
        .take(MAX_COMPLETIONS)
        .map(|(_, value)| {
            let detail = if value.ends_with('/') {
                "directory"
            } else {
                ""
            };
            Completion::new(value, detail)
        })
        .collect();
    (items, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::RequestId;

    fn values(msg: ServerMsg) -> (Vec<String>, bool) {
        match msg {
            ServerMsg::Completions {
                items, truncated, ..
            } => (items.into_iter().map(|c| c.value).collect(), truncated),
            other => panic!("not completions: {other:?}"),
        }
    }

    #[test]
    fn files_the_scope_denies_are_not_offered() {
        let dir = tree();
        std::fs::write(dir.path().join("secret.env"), "KEY=1").unwrap();
        let rules = seedpod_tools::ScopeRules {
            read: vec![],
            write: vec![dir.path().to_path_buf()],
            deny: vec![dir.path().join("secret.env"), dir.path().join("src")],
        };
        let scope = Scope::new(dir.path(), &rules).unwrap();
        let (found, _) = values(answer_in_scope(
            RequestId::new(1),
            dir.path(),
            Some(&scope),
            CompletionKind::File,
            "s",
        ));
        assert!(found.is_empty(), "{found:?}");
        let (unscoped, _) = values(answer(
            RequestId::new(1),
            dir.path(),
            CompletionKind::File,
            "s",
        ));
        assert!(unscoped.contains(&"secret.env".to_string()), "{unscoped:?}");
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/markdown")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("src/markdown/mod.rs"), "").unwrap();
        std::fs::write(root.join("target/debug/main.o"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("README.md"), "# hi").unwrap();
        dir
    }

    #[test]
    fn files_honour_gitignore_and_match_path_or_name() {
        let dir = tree();
        let (found, truncated) = values(answer(
            RequestId::new(1),
            dir.path(),
            CompletionKind::File,
            "src/ma",
        ));
        assert_eq!(
            found,
            vec!["src/main.rs", "src/markdown/", "src/markdown/mod.rs"]
        );
        assert!(!truncated);
        let (found, _) = values(answer(
            RequestId::new(1),
            dir.path(),
            CompletionKind::File,
            "ma",
        ));
        assert!(found.contains(&"src/main.rs".to_string()), "{found:?}");
        assert!(
            !found.iter().any(|f| f.starts_with("target")),
            "ignored files are not offered: {found:?}"
        );
    }

    #[test]
    fn file_completion_stays_inside_the_directory() {
        let dir = tree();
        let (found, _) = values(answer(
            RequestId::new(1),
            dir.path(),
            CompletionKind::File,
            "../",
        ));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn knowledge_and_workflows_are_md_slugs_with_titles() {
        let dir = tempfile::tempdir().unwrap();
        let knowledge = dir.path().join(KNOWLEDGE_DIR);
        std::fs::create_dir_all(&knowledge).unwrap();
        std::fs::write(knowledge.join("style.md"), "\n# How we write\nbody").unwrap();
        std::fs::write(knowledge.join("setup.md"), "Setup").unwrap();
        std::fs::write(knowledge.join("notes.txt"), "not a note").unwrap();
        let msg = answer(
            RequestId::new(2),
            dir.path(),
            CompletionKind::Knowledge,
            "st",
        );
        let ServerMsg::Completions { items, .. } = msg else {
            panic!("not completions");
        };
        assert_eq!(items, vec![Completion::new("style", "How we write")]);
        let (found, _) = values(answer(
            RequestId::new(3),
            dir.path(),
            CompletionKind::Workflow,
            "",
        ));
        assert!(found.is_empty(), "no workflows dir: {found:?}");
    }

    #[test]
    fn commands_are_the_slash_commands() {
        let (found, _) = values(answer(
            RequestId::new(4),
            Path::new("/"),
            CompletionKind::Command,
            "d",
        ));
        assert_eq!(found, vec!["detach"]);
        let (all, _) = values(answer(
            RequestId::new(4),
            Path::new("/"),
            CompletionKind::Command,
            "",
        ));
        assert_eq!(all.len(), SLASH_COMMANDS.len());
    }

    #[test]
    fn a_huge_tree_is_cut_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_COMPLETIONS + 5) {
            std::fs::write(dir.path().join(format!("f{i}.txt")), "").unwrap();
        }
        let (found, truncated) = values(answer(
            RequestId::new(5),
            dir.path(),
            CompletionKind::File,
            "f",
        ));
        assert_eq!(found.len(), MAX_COMPLETIONS);
        assert!(truncated);
    }
}

/// The server's models that start with `prefix`, for `/model NAME` (at most `MAX_COMPLETIONS`).
pub fn model_completions(
    id: RequestId,
    models: Result<Vec<String>, String>,
    prefix: &str,
) -> ServerMsg {
    let mut found: Vec<String> = models
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.starts_with(prefix))
        .collect();
    found.sort();
    let truncated = found.len() > MAX_COMPLETIONS;
    found.truncate(MAX_COMPLETIONS);
    ServerMsg::Completions {
        id,
        kind: CompletionKind::Model,
        items: found
            .into_iter()
            .map(|m| Completion::new(m, "model"))
            .collect(),
        truncated,
    }
}

/// How long a fetched model list answers completions before the server is asked again.
pub const MODEL_LIST_FRESH: std::time::Duration = std::time::Duration::from_secs(60);

/// The last model list and when it came, shared by the controller and the task that fetches
/// it (a lock held only to copy in or out).
#[derive(Clone, Default)]
pub struct ModelListCache(std::sync::Arc<std::sync::Mutex<Option<FetchedModels>>>);

/// A model list and when it was fetched.
type FetchedModels = (std::time::Instant, Vec<String>);

impl ModelListCache {
    /// The list, if it was fetched less than `MODEL_LIST_FRESH` ago.
    pub fn fresh(&self) -> Option<Vec<String>> {
        let guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        guard
            .as_ref()
            .filter(|(at, _)| at.elapsed() < MODEL_LIST_FRESH)
            .map(|(_, models)| models.clone())
    }

    pub fn store(&self, models: Vec<String>) {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *guard = Some((std::time::Instant::now(), models));
    }
}
