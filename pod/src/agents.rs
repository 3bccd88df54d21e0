//! The project's `AGENTS.md`: finding the one that applies to a working directory (the prompt's
//! project-instructions layer) and appending to it (`/memory TEXT`).

use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The file name of project instructions, looked up from the working directory upward.
pub const AGENTS_FILE: &str = "AGENTS.md";

/// The nearest `AGENTS.md`: in `cwd`, else its parent, and so on up to the root. The nearest
/// wins because a sub-project's instructions are the more specific ones.
pub fn nearest_agents_md(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .map(|dir| dir.join(AGENTS_FILE))
        .find(|path| path.is_file())
}

/// `/memory TEXT`: append `* TEXT` as a new line of the nearest `AGENTS.md`, or create
/// `<cwd>/AGENTS.md` when there is none. Returns the file written.
///
/// The item always starts on its own line, even when the file did not end with a newline; a
/// multi-line TEXT stays one list item (continuation lines are indented).
pub fn append_memory(cwd: &Path, text: &str) -> Result<PathBuf, io::Error> {
    let text = text.trim();
    if text.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "nothing to remember: /memory needs some text",
        ));
    }
    let path = nearest_agents_md(cwd).unwrap_or_else(|| cwd.join(AGENTS_FILE));
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&path)?;
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
        let path = append_memory(dir.path(), "  use cargo nextest  ").unwrap();
        assert_eq!(path, dir.path().join(AGENTS_FILE));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "* use cargo nextest\n"
        );
        append_memory(dir.path(), "second").unwrap();
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
        let path = append_memory(&sub, "run clippy\nbefore pushing").unwrap();
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
        let err = append_memory(dir.path(), "  \n ").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(!dir.path().join(AGENTS_FILE).exists());
    }
}
