//! The project's `AGENTS.md`: finding the one that applies to a working directory (the prompt's
//! project-instructions layer), opening it as a project file (`project_file.rs`: a link may not
//! lead out of the directory it is in) and appending to it (`/memory TEXT`).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use seedpod_tools::Scope;

use crate::project_file::{self, Opened, Refused};

/// The file name of project instructions, looked up from the working directory upward.
pub const AGENTS_FILE: &str = "AGENTS.md";

/// The nearest `AGENTS.md`: in `cwd`, else its parent, and so on up to the root. The nearest
/// wins because a sub-project's instructions are the more specific ones. A name is matched
/// without following it: a link named `AGENTS.md` is the match, and where it may lead is
/// decided when it is opened (`open_agents_md`).
pub fn nearest_agents_md(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .map(|dir| dir.join(AGENTS_FILE))
        .find(|path| std::fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_dir()))
}

/// Open the `AGENTS.md` at `path` as a file of the directory it is in: through a link only to
/// somewhere beneath that directory or readable in `scope`.
pub fn open_agents_md(path: &Path, scope: Option<&Scope>) -> Result<Opened, Refused> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let shown = path.display().to_string();
    project_file::open(dir, Path::new(AGENTS_FILE), &shown, scope)
}

/// `/memory TEXT`: append `* TEXT` as a new line of the nearest `AGENTS.md`, or create
/// `<cwd>/AGENTS.md` when there is none. Returns the file written. A link that leads out of the
/// project is refused like a read through it (`open_agents_md`): a repository's `AGENTS.md`
/// linked to `~/.bashrc` is not appended to.
///
/// The item always starts on its own line, even when the file did not end with a newline; a
/// multi-line TEXT stays one list item (continuation lines are indented).
pub fn append_memory(cwd: &Path, text: &str, scope: Option<&Scope>) -> Result<PathBuf, io::Error> {
    let text = text.trim();
    if text.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "nothing to remember: /memory needs some text",
        ));
    }
    let (path, mut file) = match nearest_agents_md(cwd) {
        Some(path) => {
            let file = open_to_append(&path, scope)?;
            (path, file)
        }
        // Created exclusively: a link that appears at the name meanwhile is not written through.
        None => {
            let path = cwd.join(AGENTS_FILE);
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create_new(true)
                .open(&path)?;
            (path, file)
        }
    };
    let mut line = String::new();
    if !ends_with_newline(&mut file)? {
        line.push('\n');
    }
    line.push_str("* ");
    line.push_str(&text.lines().collect::<Vec<_>>().join("\n  "));
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.sync_all()?;
    Ok(path)
}

/// The existing `AGENTS.md` at `path`, checked like a read and opened without following links.
fn open_to_append(path: &Path, scope: Option<&Scope>) -> io::Result<File> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let shown = path.display().to_string();
    let refused = |r: Refused| io::Error::new(io::ErrorKind::PermissionDenied, r.to_string());
    let target =
        project_file::resolve(dir, Path::new(AGENTS_FILE), &shown, scope).map_err(refused)?;
    seedpod_tools::open_checked_append(&target, &shown)
        .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e.to_string()))
}

/// True for an empty file or one whose last byte is `\n`.
fn ends_with_newline(file: &mut std::fs::File) -> io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_agents_md_searches_upward_and_nearest_wins() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(nearest_agents_md(&deep), None);

        std::fs::write(dir.path().join(AGENTS_FILE), "root").unwrap();
        assert_eq!(nearest_agents_md(&deep), Some(dir.path().join(AGENTS_FILE)));

        std::fs::write(dir.path().join("a/b").join(AGENTS_FILE), "sub").unwrap();
        assert_eq!(
            nearest_agents_md(&deep),
            Some(dir.path().join("a/b").join(AGENTS_FILE))
        );
    }

    #[test]
    fn a_directory_named_agents_md_is_not_a_match() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(AGENTS_FILE)).unwrap();
        assert_eq!(nearest_agents_md(dir.path()), None);
    }

    #[test]
    fn append_memory_creates_the_file_in_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_memory(dir.path(), "  use cargo nextest  ", None).unwrap();
        assert_eq!(path, dir.path().join(AGENTS_FILE));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "* use cargo nextest\n"
        );
        append_memory(dir.path(), "second", None).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "* use cargo nextest\n* second\n"
        );
    }

    #[test]
    fn append_memory_starts_on_a_new_line_in_the_nearest_file() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let existing = dir.path().join(AGENTS_FILE);
        std::fs::write(&existing, "# Rules\nno tabs").unwrap();
        let path = append_memory(&sub, "run clippy\nbefore pushing", None).unwrap();
        assert_eq!(path, existing);
        assert_eq!(
            std::fs::read_to_string(&existing).unwrap(),
            "# Rules\nno tabs\n* run clippy\n  before pushing\n"
        );
        assert!(!sub.join(AGENTS_FILE).exists());
    }

    #[test]
    fn append_memory_refuses_empty_text() {
        let dir = tempfile::tempdir().unwrap();
        let err = append_memory(dir.path(), "  \n ", None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(!dir.path().join(AGENTS_FILE).exists());
    }

    /// A cloned repository's `AGENTS.md` linked to a private file: neither read nor appended to.
    #[test]
    fn a_link_out_of_the_project_is_neither_read_nor_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("repo");
        std::fs::create_dir(&project).unwrap();
        let private = root.join("id_rsa");
        std::fs::write(&private, "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(&private, project.join(AGENTS_FILE)).unwrap();
        let found = nearest_agents_md(&project).unwrap();
        assert_eq!(
            found,
            project.join(AGENTS_FILE),
            "a link is still the match"
        );
        let err = open_agents_md(&found, None).err().unwrap();
        assert!(matches!(err, Refused::Outside { .. }), "{err}");
        let err = append_memory(&project, "leak", None).unwrap_err();
        assert!(err.to_string().contains("outside the project"), "{err}");
        assert_eq!(std::fs::read_to_string(&private).unwrap(), "PRIVATE KEY");
    }

    #[test]
    fn a_link_inside_the_project_is_read_and_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/agents.md"), "# Rules\n").unwrap();
        std::os::unix::fs::symlink("docs/agents.md", root.join(AGENTS_FILE)).unwrap();
        let found = nearest_agents_md(&root).unwrap();
        let opened = open_agents_md(&found, None).ok().unwrap();
        assert_eq!(opened.head(100).unwrap(), b"# Rules\n");
        append_memory(&root, "kept", None).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("docs/agents.md")).unwrap(),
            "# Rules\n* kept\n"
        );
    }
}
