//! The docs a maintainer needs stay true to the code: every `DESIGN §N` and `invariant N` cited in
//! a comment has its target in `docs/design.md`; every docs file a comment or a doc points at
//! exists, with the section it names; no comment or doc sends the reader to issue notes or seed
//! documents, which are not in the repository; and `docs/architecture.md`'s crate table names
//! exactly the workspace's members.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e crate lives in the repository")
        .to_path_buf()
}

/// Every `.rs`, `.md` and `.toml` file of the repository outside `target/` and hidden
/// directories.
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
        } else if name.ends_with(".rs") || name.ends_with(".md") || name.ends_with(".toml") {
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

/// One line of commentary: the file (relative to the repository), its line number, its text.
struct Remark {
    file: String,
    line: usize,
    text: String,
}

/// The commentary of every source and doc, except this file (whose comments and messages talk
/// about the very patterns it looks for).
fn remarks(root: &Path) -> Vec<Remark> {
    let mut files = Vec::new();
    sources(root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        if path.ends_with("tests/tests/e2e/docs.rs") {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let file = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let lines = if file.ends_with(".rs") {
            rust_comments(&text)
        } else if file.ends_with(".md") {
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect()
        } else {
            toml_comments(&text)
        };
        out.extend(lines.into_iter().map(|(line, text)| Remark {
            file: file.clone(),
            line,
            text,
        }));
    }
    out
}

/// The text of the comments (`//`, `///`, `//!`, `/* */`) of a Rust file, by line. A small
/// lexer, so that what a string or character literal holds is never taken for a comment: a test
/// may well send "work on issue 12" to a model.
fn rust_comments(source: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut comments: BTreeMap<usize, String> = BTreeMap::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\n' {
                j += 1;
            }
            let text: String = chars[i + 2..j].iter().collect();
            comments.entry(line).or_default().push_str(&text);
            i = j;
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 1;
            i += 2;
            while i < chars.len() && depth > 0 {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    } else {
                        comments.entry(line).or_default().push(chars[i]);
                    }
                    i += 1;
                }
            }
        } else if c == '"' {
            // A string: up to the next quote that no backslash escapes.
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('a', '"', '\'', '\u{1b}'), or else a lifetime or a label.
            if at(i + 1) == '\\' {
                let mut j = i + 3;
                while j < chars.len() && chars[j] != '\'' && chars[j] != '\n' {
                    j += 1;
                }
                i = j + 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ident(c) {
            // A whole identifier; `r`, `br` or `cr` right before a quote (or hashes and a
            // quote) open a raw string, which runs to a quote followed by as many hashes.
            let start = i;
            while i < chars.len() && ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if matches!(word.as_str(), "r" | "br" | "cr") && matches!(at(i), '"' | '#') {
                let mut hashes = 0;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                if at(i) != '"' {
                    // A raw identifier (`r#type`): the identifier follows.
                    continue;
                }
                i += 1;
                while i < chars.len() {
                    if chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                        i += 1 + hashes;
                        break;
                    }
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else {
            i += 1;
        }
    }
    comments.into_iter().collect()
}

/// The comment lines of a TOML file.
fn toml_comments(source: &str) -> Vec<(usize, String)> {
    source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('#'))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

/// The headings of a markdown file, outside fenced code blocks.
fn headings(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(line.trim_start_matches('#').trim().to_string());
        }
    }
    out
}

/// The anchor a markdown renderer gives a heading: lower case, spaces as hyphens, punctuation
/// other than hyphens and underscores dropped.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// The section names cited after `§`, each up to the punctuation that ends it or the end of the
/// line. So a citation reads `docs/agent-loop.md §Pruning`, `(docs/agent-loop.md §Loop brakes)`
/// or `§Loop brakes and §Reminders`, and a sentence that goes on after a name needs a comma or
/// a colon before it does.
fn section_names(after: &str) -> Vec<String> {
    let mut name = String::new();
    let mut rest = "";
    let mut chars = after.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends_sentence = c == '.' && chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if matches!(c, ')' | '(' | ',' | ';' | ':' | '"' | '`' | '*' | ']' | '[') || ends_sentence {
            if c == ',' {
                rest = &after[i + 1..];
            }
            break;
        }
        name.push(c);
    }
    let mut names: Vec<String> = name.split(" and §").map(|n| n.trim().to_string()).collect();
    if let Some(more) = rest.trim_start().strip_prefix('§') {
        names.extend(section_names(more));
    }
    names
}

/// What a line cites in `docs/`: (file name, the section or anchor it names, if any). A path
/// `docs/NAME.md` anywhere; inside `docs/` also a bare `NAME.md` followed by `§`.
fn docs_citations(text: &str, in_docs: bool) -> Vec<(String, Option<Section>)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(".md") {
        let end = from + found + ".md".len();
        from = end;
        let before = &text[..end - ".md".len()];
        let name_start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .last()
            .map_or(before.len(), |(i, _)| i);
        let name = &before[name_start..];
        if name.is_empty() {
            continue;
        }
        let prefix = &before[..name_start];
        let after = text[end..].trim_start_matches('`');
        let cites_section = after.trim_start().starts_with('§');
        let is_docs_path = prefix.ends_with("docs/")
            && !prefix[..prefix.len() - "docs/".len()]
                .chars()
                .next_back()
                .is_some_and(path_char);
        let is_sibling =
            in_docs && cites_section && !prefix.chars().next_back().is_some_and(path_char);
        if !is_docs_path && !is_sibling {
            continue;
        }
        let section = if let Some(anchor) = after.strip_prefix('#') {
            let anchor: String = anchor
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            Some(Section::Anchor(anchor))
        } else if cites_section {
            let rest = after.trim_start().trim_start_matches('§');
            Some(Section::Named(section_names(rest)))
        } else if let Some(quoted) = after.strip_prefix(", \"") {
            quoted
                .split_once('"')
                .map(|(name, _)| Section::Named(vec![name.to_string()]))
        } else {
            None
        };
        out.push((format!("{name}.md"), section));
    }
    out
}

enum Section {
    /// `§Name` (or several: `§A and §B`) or `, "Name"`: for each, a heading containing it.
    Named(Vec<String>),
    /// `#anchor` in a link: a heading with exactly that anchor.
    Anchor(String),
}

#[test]
fn every_docs_file_a_comment_cites_exists_with_its_section() {
    let root = repo();
    let mut broken = Vec::new();
    let mut seen = 0;
    for remark in remarks(&root) {
        let in_docs = remark.file.starts_with("docs/");
        let mut cites = docs_citations(&remark.text, in_docs);
        if remark.file.ends_with(".md") {
            // A link to a heading of the same file.
            let mut rest = remark.text.as_str();
            while let Some(at) = rest.find("](#") {
                rest = &rest[at + 3..];
                let anchor: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                    .collect();
                let own = remark.file.rsplit('/').next().unwrap_or(&remark.file);
                if remark.file.starts_with("docs/") {
                    cites.push((own.to_string(), Some(Section::Anchor(anchor))));
                }
            }
        }
        for (name, section) in cites {
            seen += 1;
            let where_ = format!("{}:{}", remark.file, remark.line);
            let Ok(doc) = fs::read_to_string(root.join("docs").join(&name)) else {
                broken.push(format!("{where_}: docs/{name} does not exist"));
                continue;
            };
            let heads = headings(&doc);
            match section {
                Some(Section::Named(wanted)) => {
                    for wanted in wanted {
                        let lower = wanted.to_lowercase();
                        if lower.is_empty()
                            || !heads.iter().any(|h| h.to_lowercase().contains(&lower))
                        {
                            broken.push(format!(
                                "{where_}: docs/{name} has no heading containing \"{wanted}\" \
                                 (its headings: {heads:?})"
                            ));
                        }
                    }
                }
                Some(Section::Anchor(anchor)) if !heads.iter().any(|h| slug(h) == anchor) => {
                    broken.push(format!(
                        "{where_}: docs/{name} has no heading with the anchor #{anchor}"
                    ));
                }
                Some(Section::Anchor(_)) | None => {}
            }
        }
    }
    assert!(seen > 30, "the scan found the docs citations: {seen}");
    assert!(
        broken.is_empty(),
        "{} citations of docs/ lead nowhere; fix the citation or the heading:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// Whether `text` has `word` at `at` with no letter or digit right before it.
fn word_at(text: &str, at: usize) -> bool {
    !text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric())
}

/// Why a line of commentary sends the reader outside the repository, if it does: issue
/// numbers and notes, and the seed documents the product started from. `text` is lower case.
fn outside_reference(text: &str, original: &str) -> Option<&'static str> {
    // "issue 12", "issues 3 and 4", "Issue #15" (not ".../issues/15" in a URL).
    let mut from = 0;
    while let Some(found) = text[from..].find("issue") {
        let at = from + found;
        from = at + "issue".len();
        if !word_at(text, at) {
            continue;
        }
        let rest = text[from..].strip_prefix('s').unwrap_or(&text[from..]);
        let rest = rest.trim_start_matches(' ').trim_start_matches('#');
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            return Some("an issue number");
        }
    }
    for (phrase, what) in [
        ("issue note", "the issue notes"),
        ("the issue's", "an issue"),
        ("the issue says", "an issue"),
        ("the issue asks", "an issue"),
        ("spine issue", "an issue"),
        ("issue budget", "an issue's budget"),
        ("must-show", "an issue's must-show list"),
        ("seed doc", "the seed documents"),
        ("seeds/", "the seed documents"),
        ("seed §", "a seed document"),
    ] {
        if text.contains(phrase) {
            return Some(what);
        }
    }
    // "seed 004", "Seed 001's": a seed by its three-digit number.
    let mut from = 0;
    while let Some(found) = text[from..].find("seed") {
        let at = from + found;
        from = at + "seed".len();
        if !word_at(text, at) {
            continue;
        }
        let digits: String = text[from..]
            .trim_start_matches(' ')
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if digits.len() == 3 {
            return Some("a seed document");
        }
    }
    // "(#15)", "see #15", "fixes #15": an issue by its number alone.
    let mut from = 0;
    while let Some(found) = text[from..].find('#') {
        let at = from + found;
        from = at + 1;
        if !text[from..].starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let before = text[..at].trim_end_matches(' ');
        if before.ends_with('(')
            || ["see", "fixes", "fixed", "closes", "closed", "per", "cf."]
                .iter()
                .any(|w| before.ends_with(w) && word_at(before, before.len() - w.len()))
        {
            return Some("an issue number");
        }
    }
    // The design brief outside the repository (the repository's own is docs/design.md).
    if original.contains("DESIGN.md") {
        return Some("the design brief outside the repository");
    }
    None
}

#[test]
fn no_comment_or_doc_cites_an_issue_or_a_seed() {
    let root = repo();
    let mut offenders = Vec::new();
    let mut scanned = 0;
    for remark in remarks(&root) {
        scanned += 1;
        if let Some(what) = outside_reference(&remark.text.to_lowercase(), &remark.text) {
            offenders.push(format!(
                "  {}:{}: cites {what}: {}",
                remark.file,
                remark.line,
                remark.text.trim_start_matches(['/', '!']).trim()
            ));
        }
    }
    assert!(scanned > 5_000, "the scan found the comments: {scanned}");
    assert!(
        offenders.is_empty(),
        "{} comments or doc lines cite issues or seed documents, which are not in the \
         repository. Say the reason in words, or point at the docs/ section that says it \
         (`docs/agent-loop.md §Pruning`):\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}

#[test]
fn the_comment_scanner_reads_comments_and_nothing_else() {
    let source = r##"//! Issue 1 in a module comment.
fn f() -> &'static str {
    let a = "issue 2 in a string // not a comment";
    let b = r#"issue 3 in a raw "string" // still not"#;
    let c = '"'; // issue 4 after a quote character
    let d = '\''; /* issue 5 in a block */
    let e = "a string
    over two lines // with no comment";
    for x in b"bytes".iter() {} // issue 6 after a byte string
    "done" // issue 7
}
"##;
    let found: Vec<(usize, String)> = rust_comments(source);
    let lines: Vec<usize> = found.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, vec![1, 5, 6, 9, 10], "{found:?}");
    assert!(
        found
            .iter()
            .all(|(_, t)| t.contains("issue") || t.contains("Issue"))
    );
    let flagged = |t: &str| outside_reference(&t.to_lowercase(), t).is_some();
    for text in [
        "Issue 15: fuzzing",
        "see issue #4",
        "issues 3 and 4",
        "seed 004 §6",
        "Seed 001's retry limits",
        "(the numbers in the issue notes)",
        "as the issue says",
        "fixed in (#12)",
        "must-show 6",
    ] {
        assert!(flagged(text), "{text}");
    }
    for text in [
        "open a GitHub issue at https://github.com/o/r/issues/12",
        "issues are welcome",
        "the seed of the new segment",
        "[Paste #1 · 1,234 chars]",
        "`#slug` attaches a note",
        "DESIGN §4 and invariant 7",
        "SEEDPOD_SOAK_SEED=123",
    ] {
        assert!(!flagged(text), "{text}");
    }
}

#[test]
fn the_citation_reader_finds_files_and_sections() {
    let read = |text: &str, in_docs: bool| -> Vec<String> {
        docs_citations(text, in_docs)
            .into_iter()
            .map(|(name, section)| match section {
                Some(Section::Named(names)) => format!("{name} {}", names.join(" | ")),
                Some(Section::Anchor(anchor)) => format!("{name} #{anchor}"),
                None => name,
            })
            .collect()
    };
    assert_eq!(
        read("(docs/agent-loop.md §Loop brakes and §Reminders).", false),
        ["agent-loop.md Loop brakes | Reminders"]
    );
    assert_eq!(
        read("see docs/agent-loop.md §Pruning, §Compaction: why", false),
        ["agent-loop.md Pruning | Compaction"]
    );
    assert_eq!(
        read("(docs/decisions.md, \"Errors carry their cause\")", false),
        ["decisions.md Errors carry their cause"]
    );
    assert_eq!(
        read("[docs/x.md](docs/configuration.md#mcp-servers)", false),
        ["x.md", "configuration.md #mcp-servers"]
    );
    assert_eq!(
        read("`configuration.md` §Context.", true),
        ["configuration.md Context"]
    );
    assert!(read("`configuration.md` §Context.", false).is_empty());
    assert!(read("project/docs/rules.md and AGENTS.md", false).is_empty());
    assert_eq!(
        slug("Context: windows, pruning and compaction"),
        "context-windows-pruning-and-compaction"
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
