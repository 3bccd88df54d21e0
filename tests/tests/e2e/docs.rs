//! The docs a maintainer needs stay true to the code: every `DESIGN §N` and `invariant N` cited in
//! a comment has its target in `docs/design.md`, and `docs/architecture.md`'s crate table names
//! exactly the workspace's members.

use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e crate lives in the repository")
        .to_path_buf()
}

/// Every `.rs` and `.md` file of the repository outside `target/` and hidden directories.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            sources(&path, found);
        } else if name.ends_with(".rs") || name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The number right after `marker` at each place it occurs in `text` (`§1.3` gives "1.3").
fn cited(text: &str, marker: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find(marker) {
        rest = &rest[at + marker.len()..];
        let number: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let number = number.trim_end_matches('.').to_string();
        if !number.is_empty() {
            out.push(number);
        }
    }
    out
}

#[test]
fn every_design_reference_in_the_code_has_a_target() {
    let root = repo();
    let design = fs::read_to_string(root.join("docs/design.md")).expect("docs/design.md exists");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(
        files.len() > 50,
        "the walk found the sources: {}",
        files.len()
    );
    let mut missing = Vec::new();
    let mut seen = 0;
    for file in files {
        if file.ends_with("docs/design.md") || file.ends_with("tests/tests/e2e/docs.rs") {
            continue;
        }
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for section in cited(&text, "design §") {
            seen += 1;
            let target = if section.contains('.') {
                format!("(§{section})")
            } else {
                format!("## §{section} ")
            };
            if !design.contains(&target) {
                missing.push(format!("{}: DESIGN §{section}", file.display()));
            }
        }
        for invariant in cited(&text, "invariant ") {
            seen += 1;
            if !design.contains(&format!("### Invariant {invariant}:")) {
                missing.push(format!("{}: invariant {invariant}", file.display()));
            }
        }
    }
    assert!(seen > 20, "the scan found the references: {seen}");
    assert!(
        missing.is_empty(),
        "references without a target in docs/design.md: {missing:#?}"
    );
}

#[test]
fn the_architecture_crate_table_names_the_workspace_members() {
    let root = repo();
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("the workspace manifest");
    let members: Vec<String> = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| {
            list.split(',')
                .map(|m| m.trim().trim_matches('"').to_string())
                .filter(|m| !m.is_empty())
                .collect()
        })
        .expect("a members list");
    assert!(members.len() >= 10, "{members:?}");
    let architecture =
        fs::read_to_string(root.join("docs/architecture.md")).expect("docs/architecture.md");
    let listed: Vec<String> = architecture
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(path, _)| path.trim_end_matches('/').to_string())
        .collect();
    for member in &members {
        assert!(
            listed.contains(member),
            "workspace member {member} is missing from docs/architecture.md's crate table ({listed:?})"
        );
    }
    for path in &listed {
        assert!(
            members.contains(path),
            "docs/architecture.md lists {path}, which is not a workspace member ({members:?})"
        );
    }
}
