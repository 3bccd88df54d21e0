//! The `seedpod` binary under test, never a stale one.
//!
//! `seedpod-e2e` does not depend on the `seedpod` package (cargo has no stable way to depend on
//! another package's binary), so `cargo test -p seedpod-e2e` does not build it: whatever
//! `target/<profile>/seedpod` was built last would be tested. So, once per process, the binary
//! cargo last built for this profile is checked against the dep-info file cargo wrote beside it
//! (`seedpod.d`, every source file it was compiled from) and the manifests and lock file: when
//! any of them is newer than the binary, or either file is missing, `cargo build -p seedpod` is
//! run with this test executable's target directory and profile, and a failed build fails the
//! test. Why not always run cargo: the binary `cargo test --workspace` builds has the features
//! every test target asks of its dependencies, and `cargo build -p seedpod` would build all of
//! the workspace again without them just to make the same program. `docs/testing.md` says more.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

/// The `seedpod` package and its binary, as `crates/cli/Cargo.toml` names them.
const PACKAGE: &str = "seedpod";
const BINARY: &str = "seedpod";
/// The program `seedpod` runs for every command but the one-shots; it must be as fresh.
const CORE: &str = "seedpod-core";

/// Path of the `seedpod` binary under test: `SEEDPOD_BIN` when set (to test an installed
/// binary on purpose), else this profile's `seedpod`, built first when it is older than its
/// sources.
pub fn seedpod_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("SEEDPOD_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => fresh_binary(&Layout::of_this_executable()),
    })
    .clone()
}

/// Where cargo put this executable, and so where it puts `seedpod` for the same build.
struct Layout {
    /// `target/<profile>` (or `target/<triple>/<profile>` in a cross build).
    profile_dir: PathBuf,
    target_dir: PathBuf,
    /// `--target TRIPLE` when the build named one.
    triple: Option<String>,
    /// The cargo profile: `debug` is `dev`'s directory, and `test` and `bench` build into
    /// `dev`'s and `release`'s.
    profile: String,
}

impl Layout {
    fn of_this_executable() -> Layout {
        let exe = std::env::current_exe().expect("the path of this test executable");
        let dir = exe.parent().expect("an executable lives in a directory");
        // Test and bench executables live in `<profile>/deps/`, binaries in `<profile>/`.
        let profile_dir = if dir.ends_with("deps") {
            dir.parent().expect("deps/ lives in a profile directory")
        } else {
            dir
        };
        let above = profile_dir
            .parent()
            .expect("a profile directory lives in the target directory");
        // Cargo leaves these files at the root of its target directory; a directory between
        // the root and the profile is a `--target` triple.
        let is_root =
            |dir: &Path| dir.join("CACHEDIR.TAG").exists() || dir.join(".rustc_info.json").exists();
        let (target_dir, triple) = match above.parent() {
            Some(root) if !is_root(above) && is_root(root) => {
                (root.to_path_buf(), Some(file_name(above)))
            }
            _ => (above.to_path_buf(), None),
        };
        let profile = match file_name(profile_dir).as_str() {
            "debug" => "dev".to_string(),
            other => other.to_string(),
        };
        Layout {
            profile_dir: profile_dir.to_path_buf(),
            target_dir,
            triple,
            profile,
        }
    }

    fn binary(&self) -> PathBuf {
        self.profile_dir.join(BINARY)
    }

    fn core(&self) -> PathBuf {
        self.profile_dir.join(CORE)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("a directory with a name")
        .to_string_lossy()
        .into_owned()
}

/// The binary of `layout`, built first unless it is newer than everything it was built from.
fn fresh_binary(layout: &Layout) -> PathBuf {
    let binary = layout.binary();
    let why_stale = || stale(&binary).or_else(|| stale(&layout.core()));
    if let Some(why) = why_stale() {
        // Straight to stderr, past the test harness's capture: a person waiting should see why.
        let _ = writeln!(
            std::io::stderr(),
            "seedpod-e2e: building {BINARY} first: {why}"
        );
        build(layout);
        if let Some(why) = why_stale() {
            panic!("`cargo build -p {PACKAGE}` succeeded but {why}");
        }
    }
    binary
}

/// Why `binary` cannot be trusted to be built from the tree as it is now, if it cannot.
fn stale(binary: &Path) -> Option<String> {
    let built = match modified(binary) {
        Some(time) => time,
        None => return Some(format!("there is no {}", binary.display())),
    };
    let depinfo = binary.with_extension("d");
    let Ok(text) = std::fs::read_to_string(&depinfo) else {
        // `cargo test` builds the binary for the CLI's own integration tests without writing
        // the dep-info beside it (only `cargo build` does); then every file of the workspace
        // but the tests' own counts, which is what the binary can have been built from.
        return newer_in_workspace(built);
    };
    let workspace = workspace_root();
    let sources: Vec<PathBuf> = dependencies(&text)
        .into_iter()
        .map(|path| workspace.join(path))
        .collect();
    if sources.is_empty() {
        return Some(format!("{} lists no sources", depinfo.display()));
    }
    let inputs = sources.iter().cloned().chain(manifests(&sources));
    for input in inputs {
        match modified(&input) {
            Some(time) if time <= built => {}
            Some(_) => return Some(format!("{} changed since it was built", input.display())),
            None => return Some(format!("{} is gone since it was built", input.display())),
        }
    }
    None
}

/// Why the binary built at `built` may be older than the workspace: the first file (outside
/// `target/`, `.git/` and the end-to-end tests, which it is not built from) changed since.
fn newer_in_workspace(built: SystemTime) -> Option<String> {
    let root = workspace_root();
    let skip = [root.join("target"), root.join(".git"), root.join("tests")];
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                if !skip.contains(&path) {
                    dirs.push(path);
                }
            } else if meta.modified().is_ok_and(|time| time > built) {
                return Some(format!("{} changed since it was built", path.display()));
            }
        }
    }
    None
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("seedpod-e2e lives in the workspace")
        .to_path_buf()
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The files after the colon of a make rule as cargo writes it: one line, paths separated by
/// spaces, a space inside a path escaped with a backslash.
fn dependencies(depinfo: &str) -> Vec<PathBuf> {
    let line = depinfo.lines().next().unwrap_or_default();
    let Some((_, deps)) = line.split_once(": ") else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' if !current.is_empty() => paths.push(PathBuf::from(std::mem::take(&mut current))),
            ' ' => {}
            other => current.push(other),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

/// The manifest of every package the sources belong to, and the workspace's manifest and lock
/// file: a changed dependency or feature changes the binary without touching a source file.
fn manifests(sources: &[PathBuf]) -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("seedpod-e2e lives in the workspace");
    let mut found: HashSet<PathBuf> =
        [workspace.join("Cargo.toml"), workspace.join("Cargo.lock")].into();
    let mut searched = HashSet::new();
    for source in sources {
        for dir in source.ancestors().skip(1) {
            if !searched.insert(dir.to_path_buf()) {
                break;
            }
            let manifest = dir.join("Cargo.toml");
            if manifest.exists() {
                found.insert(manifest);
                break;
            }
        }
    }
    found.into_iter().collect()
}

/// `cargo build -p seedpod --bins` (the front and the core) into `layout`; panics, with cargo's exit status, when
/// it fails (cargo has printed why on stderr).
fn build(layout: &Layout) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("seedpod-e2e lives in the workspace")
        .join("Cargo.toml");
    let mut cmd = Command::new(&cargo);
    cmd.args(["build", "-p", PACKAGE, "--bins", "--profile"])
        .arg(&layout.profile)
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&layout.target_dir);
    if let Some(triple) = &layout.triple {
        cmd.args(["--target", triple]);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", Path::new(&cargo).display()));
    assert!(
        status.success(),
        "`cargo build -p {PACKAGE} --bins` failed ({status}); the end-to-end tests need the \
         binaries built from this tree"
    );
}

#[cfg(test)]
mod tests {
    use super::dependencies;
    use std::path::PathBuf;

    #[test]
    fn a_dep_info_rule_gives_its_files_with_escaped_spaces_kept() {
        let text = "/t/debug/seedpod: /w/a.rs /w/my\\ dir/b.rs /w/c.rs\n\n/w/a.rs:\n";
        assert_eq!(
            dependencies(text),
            [
                PathBuf::from("/w/a.rs"),
                PathBuf::from("/w/my dir/b.rs"),
                PathBuf::from("/w/c.rs")
            ]
        );
        assert!(dependencies("garbage").is_empty());
    }
}
