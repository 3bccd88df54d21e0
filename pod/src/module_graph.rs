//! The shape of this crate, checked: its top-level modules import each other without a cycle,
//! and only the modules that build and serve a pod (`server`, `connection`, `restore`) know the
//! controller. The subsystems below it (children, MCP, pastes, context, prompts…) talk to it
//! through their own message types (`controller/inbox.rs`), so each can be read, tested and
//! changed without the controller's other state.
//!
//! Read from the source: every `crate::NAME` path outside comments and test code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules allowed to name the controller: they assemble it, serve its socket, or restore
/// what it is built from.
const ABOVE_THE_CONTROLLER: [&str; 3] = ["connection", "restore", "server"];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("the crate's source directory is readable");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            // Test modules may reach anywhere.
            if name != "tests" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The source without comments and without a trailing `#[cfg(test)] mod …` block.
fn production_code(source: &str) -> String {
    let code = match source.find("#[cfg(test)]\nmod ") {
        Some(at) => &source[..at],
        None => source,
    };
    code.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                ""
            } else {
                line.split(" // ").next().unwrap_or(line)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every module named right after `crate::`, including each of a `crate::{a, b::c}` group.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Split the group at its own commas, not those of nested groups.
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.extend(head_of(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            names.extend(head_of(&item));
        } else {
            names.extend(head_of(rest));
        }
    }
    names
}

/// The first identifier of a path.
fn head_of(path: &str) -> Option<String> {
    let head: String = path
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!head.is_empty()).then_some(head)
}

fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or("");
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "module_graph" {
            continue;
        }
        let source = std::fs::read_to_string(&file).expect("a source file is readable");
        let edges = graph.entry(module.clone()).or_default();
        for named in named_modules(&production_code(&source)) {
            if named != module {
                edges.insert(named);
            }
        }
    }
    graph
}

/// A cycle through `start`, if there is one, as the modules along it.
fn cycle_from(graph: &Graph, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &Graph,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(at).into_iter().flatten() {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    let mut seen = BTreeSet::new();
    walk(graph, start, start, &mut path, &mut seen).then(|| {
        path.push(start.to_string());
        path
    })
}

#[test]
fn the_modules_import_each_other_without_a_cycle() {
    let graph = graph();
    assert!(graph.contains_key("controller") && graph.contains_key("children"));
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|module| cycle_from(&graph, module))
        .map(|cycle| cycle.join(" → "))
        .collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

#[test]
fn only_the_modules_that_build_and_serve_a_pod_know_the_controller() {
    let graph = graph();
    let knowing: Vec<&String> = graph
        .iter()
        .filter(|(module, edges)| *module != "controller" && edges.contains("controller"))
        .map(|(module, _)| module)
        .collect();
    assert_eq!(knowing, ABOVE_THE_CONTROLLER.iter().collect::<Vec<_>>());
}

#[test]
fn the_reader_sees_grouped_imports_and_skips_comments_and_tests() {
    let code = production_code(
        "use crate::{bus::Bus, children, mcp::{names, McpHub}};\n\
         // see crate::restore\n\
         let x = crate::paste::find(); // crate::lock\n\
         #[cfg(test)]\nmod tests { use crate::server; }\n",
    );
    let names: Vec<String> = named_modules(&code).into_iter().collect();
    assert_eq!(names, ["bus", "children", "mcp", "paste"]);
    let mut graph = Graph::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("a".into());
    assert_eq!(
        cycle_from(&graph, "a"),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
}
