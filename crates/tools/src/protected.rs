//! Paths the file tools never write, even inside the write scope: the files that change policy
//! or make a program the person runs (an approved `git status`, a new shell, the editor) run
//! something the person did not ask for (DESIGN invariant 6). This module is the one place that
//! decides it; `crates/tools/README.md` shows the same list with the reasons.
//!
//! Matching is done on the canonical path the write would land on (the scope resolves symlinks
//! and `..` first), and names are compared ASCII case-insensitively: on a case-insensitive
//! filesystem (macOS, a mounted FAT/NTFS volume, a casefolded ext4 directory) `.GIT/config` *is*
//! `.git/config`, and the tools cannot cheaply tell which kind of filesystem a path is on, while
//! refusing `.GIT/config` on a case-sensitive one costs nothing anyone needs. A name matches as
//! any component of the path, not only at the project's top, so nested repositories, submodules
//! and sub-projects are covered too.
//!
//! Reads stay allowed: the model may read `.git/config` to understand a repository.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Why a path is protected. Each reason is addressed to the model: it says what the file does
/// and so why a person must make the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// A project's `.seedpod/` (its config, workflows), except `memory/` and `knowledge/`.
    SeedpodProject,
    /// Anything inside a `.git` directory, a `.git` file, or a directory that is a bare repository.
    GitDir,
    /// `.gitattributes`: names filter and diff drivers that git runs on checkout, add and diff.
    GitAttributes,
    /// `.gitmodules`: `git submodule init/sync` copies it into `.git/config`.
    GitModules,
    /// `.vscode/` and `.idea/`: editor tasks and settings name programs the editor runs.
    Editor,
    /// seedpod's own directories: the user config, pods' data and logs, sockets.
    SeedpodHome,
    /// Startup files the `shell` tool's login shell (and every new terminal) runs.
    ShellStartup,
    /// The person's global git config, attributes and hooks.
    GitGlobal,
    /// `~/.ssh`: `config` can run a `ProxyCommand`, `authorized_keys` lets others in.
    Ssh,
}

impl Rule {
    pub(crate) fn why(self) -> &'static str {
        match self {
            Rule::SeedpodProject => {
                "the project's .seedpod/ holds seedpod's own policy (config.toml sets approvals \
                 and scope) and the workflows a person runs as their own request; only \
                 .seedpod/memory/ and .seedpod/knowledge/ are open to the file tools"
            }
            Rule::GitDir => {
                "git reads its config, hooks and attributes from inside a .git directory (or a \
                 bare repository, or wherever a .git file points), and they can make git run \
                 commands, even an approved `git status`"
            }
            Rule::GitAttributes => {
                ".gitattributes selects filter and diff drivers, which git runs as commands on \
                 checkout, add and diff"
            }
            Rule::GitModules => {
                ".gitmodules is copied into .git/config by `git submodule init/sync` and says \
                 what git fetches"
            }
            Rule::Editor => {
                "editor settings and tasks (.vscode/, .idea/) name programs the editor runs, \
                 some as soon as the folder is opened"
            }
            Rule::SeedpodHome => {
                "seedpod's own directories hold the person's config (approvals, scope), the pods' \
                 logs and metadata, and their sockets"
            }
            Rule::ShellStartup => {
                "shell startup files run at the start of every shell, including each command \
                 the shell tool runs"
            }
            Rule::GitGlobal => {
                "the global git config, attributes and hooks apply to every repository and can \
                 make git run commands"
            }
            Rule::Ssh => "~/.ssh configures which commands ssh runs and who may log in",
        }
    }
}

/// Directory names that are protected wherever they occur in a path, with the rule they carry.
/// `.seedpod` is handled apart because of its open subdirectories.
const PROTECTED_NAMES: &[(&str, Rule)] = &[
    (".git", Rule::GitDir),
    (".gitattributes", Rule::GitAttributes),
    (".gitmodules", Rule::GitModules),
    (".vscode", Rule::Editor),
    (".idea", Rule::Editor),
];

/// The project's seedpod directory.
const SEEDPOD_DIR: &str = ".seedpod";

/// Subdirectories of `.seedpod/` the model may write: notes, not policy. The memory flush is
/// told to append to `.seedpod/memory/DATE.md`; knowledge files are text a person or the model
/// attaches with `#slug`, like `AGENTS.md`, which the model may also write.
const OPEN_SEEDPOD_DIRS: &[&str] = &["memory", "knowledge"];

/// Shell startup files in the person's home directory. `shell` under `[shell] login = true` runs
/// `bash -lc`, which reads the login files; all of them run in the terminals the person opens.
const SHELL_STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
];

/// Directories outside any project whose contents change seedpod's policy or make the person's
/// programs run commands. Given by the pod (the tools do not read the environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedDirs {
    /// seedpod's own directories (`Home`'s config, data, state and run).
    pub seedpod: Vec<PathBuf>,
    /// The person's home directory: its shell startup files, `.gitconfig`, `.config/git/` and
    /// `.ssh/` are protected.
    pub user_home: Option<PathBuf>,
}

/// [`ProtectedDirs`] resolved to canonical prefixes, each with its rule.
#[derive(Debug, Clone, Default)]
pub(crate) struct Protected {
    prefixes: Vec<(PathBuf, Rule)>,
}

impl Protected {
    /// `canonical` turns a configured path into the form checked paths have.
    pub(crate) fn new(dirs: &ProtectedDirs, canonical: impl Fn(&Path) -> PathBuf) -> Protected {
        let mut prefixes: Vec<(PathBuf, Rule)> = dirs
            .seedpod
            .iter()
            .map(|dir| (canonical(dir), Rule::SeedpodHome))
            .collect();
        if let Some(home) = &dirs.user_home {
            let home = canonical(home);
            for file in SHELL_STARTUP_FILES {
                prefixes.push((home.join(file), Rule::ShellStartup));
            }
            prefixes.push((home.join(".gitconfig"), Rule::GitGlobal));
            prefixes.push((home.join(".config/git"), Rule::GitGlobal));
            prefixes.push((home.join(".ssh"), Rule::Ssh));
        }
        Protected { prefixes }
    }

    /// The rule that forbids writing the canonical path `path`, if any.
    pub(crate) fn rule_for(&self, path: &Path) -> Option<Rule> {
        by_name(path)
            .or_else(|| {
                self.prefixes
                    .iter()
                    .find(|(prefix, _)| starts_with_folded(path, prefix))
                    .map(|&(_, rule)| rule)
            })
            .or_else(|| in_bare_repository(path).then_some(Rule::GitDir))
    }
}

fn same_name(name: &OsStr, wanted: &str) -> bool {
    name.as_encoded_bytes()
        .eq_ignore_ascii_case(wanted.as_bytes())
}

/// The rule a component name of `path` triggers.
fn by_name(path: &Path) -> Option<Rule> {
    let names: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        if let Some(&(_, rule)) = PROTECTED_NAMES.iter().find(|(n, _)| same_name(name, n)) {
            return Some(rule);
        }
        if same_name(name, SEEDPOD_DIR) {
            let open = names
                .get(i + 1)
                .is_some_and(|next| OPEN_SEEDPOD_DIRS.iter().any(|d| same_name(next, d)))
                && names.len() > i + 2;
            if !open {
                return Some(Rule::SeedpodProject);
            }
        }
    }
    None
}

/// `path` is `prefix` or below it, comparing names ASCII case-insensitively.
fn starts_with_folded(path: &Path, prefix: &Path) -> bool {
    let mut path = path.components();
    prefix.components().all(|want| match (path.next(), want) {
        (Some(Component::Normal(got)), Component::Normal(want)) => got
            .as_encoded_bytes()
            .eq_ignore_ascii_case(want.as_encoded_bytes()),
        (Some(got), want) => got == want,
        (None, _) => false,
    })
}

/// Whether an existing ancestor of `path` looks like a git directory that is not named `.git`
/// (a bare repository, or what a `.git` file points to): git itself takes a directory with
/// `HEAD`, `objects/` and `refs/` for one, and would read its `config` and `hooks/`.
fn in_bare_repository(path: &Path) -> bool {
    path.ancestors().skip(1).any(|dir| {
        dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected() -> Protected {
        let dirs = ProtectedDirs {
            seedpod: vec!["/h/config".into(), "/h/data".into()],
            user_home: Some("/home/u".into()),
        };
        Protected::new(&dirs, Path::to_path_buf)
    }

    #[test]
    fn the_list_by_path() {
        let p = protected();
        let cases: &[(&str, Option<Rule>)] = &[
            ("/p/.seedpod/config.toml", Some(Rule::SeedpodProject)),
            ("/p/.seedpod", Some(Rule::SeedpodProject)),
            (
                "/p/.seedpod/workflows/deploy.md",
                Some(Rule::SeedpodProject),
            ),
            ("/p/.seedpod/new-thing.toml", Some(Rule::SeedpodProject)),
            ("/p/.seedpod/memory", Some(Rule::SeedpodProject)),
            ("/p/sub/.seedpod/config.toml", Some(Rule::SeedpodProject)),
            ("/p/.SEEDPOD/Config.toml", Some(Rule::SeedpodProject)),
            ("/p/.seedpod/memory/2026-01-01.md", None),
            ("/p/.seedpod/knowledge/style.md", None),
            ("/p/.seedpod/Memory/notes.md", None),
            ("/p/.git/config", Some(Rule::GitDir)),
            ("/p/.git/hooks/pre-commit", Some(Rule::GitDir)),
            ("/p/.git/info/attributes", Some(Rule::GitDir)),
            ("/p/.git/modules/m/config", Some(Rule::GitDir)),
            ("/p/.git/worktrees/w/config.worktree", Some(Rule::GitDir)),
            ("/p/.git", Some(Rule::GitDir)),
            ("/p/vendor/lib/.git/config", Some(Rule::GitDir)),
            ("/p/.GIT/config", Some(Rule::GitDir)),
            ("/p/.Git/HOOKS/post-checkout", Some(Rule::GitDir)),
            ("/p/.gitattributes", Some(Rule::GitAttributes)),
            ("/p/src/.gitattributes", Some(Rule::GitAttributes)),
            ("/p/.gitmodules", Some(Rule::GitModules)),
            ("/p/.vscode/tasks.json", Some(Rule::Editor)),
            ("/p/.idea/workspace.xml", Some(Rule::Editor)),
            ("/h/config/config.toml", Some(Rule::SeedpodHome)),
            ("/h/config", Some(Rule::SeedpodHome)),
            ("/h/data/pods/p/pod.json", Some(Rule::SeedpodHome)),
            ("/H/Config/x", Some(Rule::SeedpodHome)),
            ("/home/u/.bashrc", Some(Rule::ShellStartup)),
            ("/home/u/.profile", Some(Rule::ShellStartup)),
            ("/home/u/.zshenv", Some(Rule::ShellStartup)),
            ("/home/u/.gitconfig", Some(Rule::GitGlobal)),
            ("/home/u/.config/git/config", Some(Rule::GitGlobal)),
            ("/home/u/.ssh/authorized_keys", Some(Rule::Ssh)),
            // Not protected: ordinary files, look-alike names, shell files outside the home.
            ("/p/src/main.rs", None),
            ("/p/AGENTS.md", None),
            ("/p/.gitignore", None),
            ("/p/.envrc", None),
            ("/p/.git-blame-ignore-revs", None),
            ("/p/git/config", None),
            ("/p/.gitx/config", None),
            ("/p/dotfiles/.bashrc", None),
            ("/home/u/.bashrc.d/x", None),
            ("/h/configs/x", None),
            ("/home/u/project/src/lib.rs", None),
        ];
        for (path, want) in cases {
            assert_eq!(p.rule_for(Path::new(path)), *want, "{path}");
        }
    }

    #[test]
    fn a_bare_repository_is_a_git_dir_by_its_contents() {
        let tmp = tempfile::tempdir().unwrap();
        let bare = tmp.path().join("repo.git");
        std::fs::create_dir_all(bare.join("objects")).unwrap();
        std::fs::create_dir_all(bare.join("refs")).unwrap();
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let p = Protected::default();
        assert_eq!(p.rule_for(&bare.join("config")), Some(Rule::GitDir));
        assert_eq!(
            p.rule_for(&bare.join("hooks/pre-receive")),
            Some(Rule::GitDir)
        );
        assert_eq!(p.rule_for(&tmp.path().join("README.md")), None);
    }
}

/// The attacks, through the real tools: every spelling of a protected path, by `write_file` and
/// by `edit_file`, is refused and leaves the file as it was.
#[cfg(test)]
mod tool_tests {
    use std::os::unix::fs::symlink;

    use serde_json::json;

    use super::ProtectedDirs;
    use crate::test_support::Fixture;

    const ORIGINAL: &str = "[core]\n\tbare = false\n";

    fn fixture() -> Fixture {
        let f = Fixture::with_protected(|cwd| ProtectedDirs {
            // Inside the write scope on purpose: protection beats the write roots.
            seedpod: vec![
                cwd.join("seedpod-home/config"),
                cwd.join("seedpod-home/data"),
            ],
            user_home: Some(cwd.to_path_buf()),
        });
        for file in [
            ".seedpod/config.toml",
            ".seedpod/workflows/deploy.md",
            ".git/config",
            ".git/info/attributes",
            ".gitattributes",
            ".gitmodules",
            "vendor/lib/.git/config",
            ".vscode/tasks.json",
            "seedpod-home/config/config.toml",
            ".bashrc",
            ".ssh/config",
            "repo.git/config",
            "repo.git/HEAD",
        ] {
            f.write(file, ORIGINAL);
        }
        std::fs::create_dir_all(f.path(".git/hooks")).unwrap();
        std::fs::create_dir_all(f.path("repo.git/objects")).unwrap();
        std::fs::create_dir_all(f.path("repo.git/refs")).unwrap();
        std::fs::create_dir_all(f.path("x")).unwrap();
        f.write("wt/.git", "gitdir: ../.git/worktrees/wt\n");
        symlink(f.path(".git/config"), f.path("cfg")).unwrap();
        symlink(f.path(".git"), f.path("gitdir")).unwrap();
        symlink(f.path(".seedpod"), f.path("sp")).unwrap();
        f
    }

    /// Every path form of the list; each names a file that exists with [`ORIGINAL`] or must
    /// not come to exist.
    fn attacks(f: &Fixture) -> Vec<String> {
        let abs_git_config = f.path(".git/config").display().to_string();
        let mut paths: Vec<String> = [
            ".seedpod/config.toml",
            "./.seedpod/config.toml",
            "x/../.seedpod/config.toml",
            "sp/config.toml",
            ".seedpod/workflows/deploy.md",
            ".seedpod/workflows/new.md",
            ".seedpod/other.toml",
            ".seedpod/memory",
            ".git/config",
            "./x/../.git/config",
            "cfg",
            "gitdir/config",
            "gitdir/hooks/pre-commit",
            ".git/hooks/post-checkout",
            ".git/info/attributes",
            ".git/config.worktree",
            ".git/worktrees/wt/config.worktree",
            ".git/modules/m/hooks/post-checkout",
            ".GIT/config",
            ".Git/hooks/pre-commit",
            "vendor/lib/.git/config",
            "wt/.git",
            "new/.git/config",
            ".gitattributes",
            "src/.gitattributes",
            ".gitmodules",
            ".vscode/tasks.json",
            ".idea/workspace.xml",
            "seedpod-home/config/config.toml",
            "seedpod-home/data/pods/p/pod.json",
            ".bashrc",
            ".profile",
            ".gitconfig",
            ".config/git/config",
            ".ssh/config",
            "repo.git/config",
            "repo.git/hooks/pre-receive",
        ]
        .iter()
        .map(|p| p.to_string())
        .collect();
        paths.push(abs_git_config);
        paths
    }

    fn snapshot(f: &Fixture, paths: &[String]) -> Vec<(String, Option<String>)> {
        paths
            .iter()
            .map(|p| {
                let read = std::fs::read_to_string(f.cwd.join(p)).ok();
                (p.clone(), read)
            })
            .collect()
    }

    #[tokio::test]
    async fn write_file_and_edit_file_refuse_every_protected_path() {
        let f = fixture();
        let paths = attacks(&f);
        let before = snapshot(&f, &paths);
        for path in &paths {
            let write = json!({"path": path, "content": "[core]\n\tfsmonitor = touch PWNED\n"});
            let edit =
                json!({"path": path, "old": "bare = false", "new": "fsmonitor = touch PWNED"});
            for (tool, args) in [("write_file", write), ("edit_file", edit)] {
                let err = f.err(tool, &args.to_string()).await;
                assert!(
                    err.starts_with("access blocked: writes to \""),
                    "{tool} {path}: {err}"
                );
                assert!(err.contains("Ask the person"), "{tool} {path}: {err}");
                assert!(err.contains("reading it is allowed"), "{err}");
            }
        }
        assert_eq!(snapshot(&f, &paths), before, "a protected file changed");
        for never in [
            ".git/hooks/post-checkout",
            ".GIT",
            "new",
            ".idea",
            ".config",
        ] {
            assert!(!f.path(never).exists(), "{never} was created");
        }
    }

    #[tokio::test]
    async fn the_refusal_says_what_the_file_does_and_where_it_resolves() {
        let f = fixture();
        let err = f
            .err(
                "write_file",
                &json!({"path": "cfg", "content": "x"}).to_string(),
            )
            .await;
        assert!(
            err.contains(&format!(
                "\"cfg\" (which resolves to {})",
                f.path(".git/config").display()
            )),
            "{err}"
        );
        assert!(err.contains("can make git run commands"), "{err}");
        let err = f
            .err(
                "write_file",
                &json!({"path": ".seedpod/config.toml", "content": "x"}).to_string(),
            )
            .await;
        assert!(err.contains("config.toml sets approvals"), "{err}");
    }

    #[tokio::test]
    async fn reads_stay_allowed_and_notes_stay_writable() {
        let f = fixture();
        let read = f
            .ok("read_file", &json!({"path": ".git/config"}).to_string())
            .await;
        assert!(read.contains("bare = false"), "{read}");
        for path in [
            ".seedpod/memory/2026-11-23.md",
            ".seedpod/knowledge/style.md",
            "AGENTS.md",
            ".gitignore",
            ".envrc",
            "src/main.rs",
        ] {
            f.ok(
                "write_file",
                &json!({"path": path, "content": "note\n"}).to_string(),
            )
            .await;
            f.ok(
                "edit_file",
                &json!({"path": path, "old": "note", "new": "kept"}).to_string(),
            )
            .await;
            assert_eq!(f.read(path), "kept\n", "{path}");
        }
    }

    /// A hard link shares the file, but the tools write atomically (a new file renamed over the
    /// name), so writing the link replaces the link, not `.git/config`.
    #[tokio::test]
    async fn a_hard_link_to_a_protected_file_does_not_carry_the_write() {
        let f = fixture();
        std::fs::hard_link(f.path(".git/config"), f.path("linked")).unwrap();
        // Editing reads first, and a file with other names is not read.
        let refused = f
            .err(
                "edit_file",
                &json!({"path": "linked", "old": "bare = false", "new": "fsmonitor = touch PWNED"})
                    .to_string(),
            )
            .await;
        assert!(refused.contains("2 hard links"), "{refused}");
        // Writing replaces the name; the other name keeps the old content.
        f.ok(
            "write_file",
            &json!({"path": "linked", "content": "x"}).to_string(),
        )
        .await;
        assert_eq!(f.read(".git/config"), ORIGINAL);
    }
}
