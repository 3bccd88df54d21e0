//! `tool_search`: finds the MCP tools a segment does not offer up front and loads them
//! (docs/agent-loop.md §Tool search).
//!
//! When a segment's tools are over the `[tool_search]` budget (`defer`), its MCP tools wait
//! behind this tool: the prompt names them, a search returns the best matches' names,
//! descriptions and schemas, and the result's `meta.loaded_tools` carries those specs. The
//! store's fold appends them to the segment's tools when the result is committed, so they are
//! offered from the next request on and a restore rebuilds the same request from the log.
//!
//! Loading widens nothing: only tools the person configured and did not deny can be found
//! (`McpHub::tool_specs`), and a loaded tool keeps its own approval policy.
//!
//! Must not own: the approval flow, the log, which tools a server offers.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_engine::{Tool, ToolOutput, ToolRegistry};
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Preview, ToolDecl, ToolMeta, ToolSpec,
};
use serde::Deserialize;
use serde_json::json;

use crate::mcp::McpHub;
use crate::mcp::names::server_of;
use crate::policy::{Policies, Policy};

/// The tool's name, as the model calls it.
pub const TOOL_SEARCH: &str = "tool_search";

/// The declaration every list of tools derives from: it reads the servers' tool lists and
/// changes nothing but which schemas the next request carries.
pub const DECL: ToolDecl = ToolDecl {
    name: TOOL_SEARCH,
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: None,
    small_note: Some("loads the MCP tools the prompt lists as not loaded; call them after."),
    in_small_prompt: InSmallPrompt::Always,
    summary: CallSummary::raw,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

/// Most tools one call loads: each costs its schema on every later request.
pub const MAX_LOADED: usize = 5;

/// The `[tool_search]` budget a segment plan checks (`seedpod_config::tool_search`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// More offered tools than this and the MCP tools are deferred.
    pub max_tools: u64,
    /// The most of a known window the offered schemas may take.
    pub max_schema_share: f64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_tools: seedpod_config::tool_search::DEFAULT_MAX_TOOLS,
            max_schema_share: seedpod_config::tool_search::DEFAULT_MAX_SCHEMA_SHARE,
        }
    }
}

impl Budget {
    /// Whether `specs`, offered whole, would be over the budget for a `window` (tokens, when
    /// known). Schemas are estimated at four bytes a token, as the fill is.
    pub fn exceeded_by(&self, specs: &[ToolSpec], window: Option<u64>) -> bool {
        if specs.len() as u64 > self.max_tools {
            return true;
        }
        let Some(window) = window else {
            return false;
        };
        let bytes: usize = specs
            .iter()
            .map(|s| serde_json::to_string(s).map_or(0, |text| text.len()))
            .sum();
        (bytes as f64 / 4.0) > self.max_schema_share * window as f64
    }
}

/// The tools a segment offers up front and those it defers, from every offered spec (which may
/// include `tool_search`'s own). Deferring needs `tool_search` among them (registered: a pod
/// with MCP servers that does not deny it) and the budget exceeded; then every MCP tool waits
/// and `tool_search` goes last, followed by the MCP tools named in `loaded` (what the segment
/// before loaded: its kept messages may call them) as they are offered now. Otherwise every
/// spec but `tool_search` is offered.
pub fn split(
    specs: &[ToolSpec],
    budget: &Budget,
    window: Option<u64>,
    loaded: &[ToolSpec],
) -> (Vec<ToolSpec>, Vec<ToolSpec>) {
    let search = specs.iter().find(|s| s.name == TOOL_SEARCH).cloned();
    let others: Vec<ToolSpec> = specs
        .iter()
        .filter(|s| s.name != TOOL_SEARCH)
        .cloned()
        .collect();
    let has_mcp = others.iter().any(|s| server_of(&s.name).is_some());
    match search {
        Some(search) if has_mcp && budget.exceeded_by(&others, window) => {
            let (mut mcp, mut offered): (Vec<ToolSpec>, Vec<ToolSpec>) = others
                .into_iter()
                .partition(|s| server_of(&s.name).is_some());
            offered.push(search);
            for kept in loaded {
                if let Some(at) = mcp.iter().position(|s| s.name == kept.name) {
                    offered.push(mcp.remove(at));
                }
            }
            (offered, mcp)
        }
        Some(_) | None => (others, Vec::new()),
    }
}

/// The spec the model is offered.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: TOOL_SEARCH.into(),
        description: format!(
            "Find MCP tools that are not loaded yet (the system prompt lists them) and load \
             them: returns each match's name, description and parameters, and you can call it \
             from your next step on. At most {MAX_LOADED} tools a call."
        ),
        parameters: json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "query": {"type": "string", "description": "Words for what the tool should do, e.g. \"create issue\"."},
                "names": {"type": "array", "items": {"type": "string"}, "description": "Exact tool names to load."}
            }
        }),
    }
}

/// The `tool_search` tool: reads the servers' current tool lists through the hub.
pub struct ToolSearch {
    hub: McpHub,
}

impl ToolSearch {
    /// Register the tool for a pod with MCP servers, unless `policies` deny it.
    pub fn register(registry: &mut ToolRegistry, hub: &McpHub, policies: &Policies) {
        if !hub.is_empty() && policies.offers(&DECL) {
            registry.register(Arc::new(ToolSearch { hub: hub.clone() }));
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    names: Vec<String>,
}

impl Tool for ToolSearch {
    fn spec(&self) -> ToolSpec {
        spec()
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let hub = self.hub.clone();
        async move {
            let args: SearchArgs = match serde_json::from_str(&arguments) {
                Ok(args) => args,
                Err(e) => {
                    return ToolOutput::error(format!(
                        "tool_search takes {{\"query\": \"words\"}} or {{\"names\": [\"mcp__…\"]}}: {e}"
                    ));
                }
            };
            // A restored pod does not wait for its servers; a search does, within their
            // startup timeouts, so it sees what they offer.
            hub.settle().await;
            found(&hub.tool_specs(), &args)
        }
        .boxed()
    }
}

/// The result for `args` over the loadable `specs`.
fn found(specs: &[ToolSpec], args: &SearchArgs) -> ToolOutput {
    let query = args.query.as_deref().unwrap_or("").trim();
    if query.is_empty() && args.names.is_empty() {
        return ToolOutput::error("tool_search needs a query or names");
    }
    let matches = matches(specs, query, &args.names);
    if matches.is_empty() {
        return ToolOutput::error(format!(
            "no MCP tool matches {}; try other words",
            describe(query, &args.names)
        ));
    }
    let mut text = format!(
        "Loaded {} tool{} for {}; call {} from your next step on:",
        matches.len(),
        if matches.len() == 1 { "" } else { "s" },
        describe(query, &args.names),
        if matches.len() == 1 { "it" } else { "them" },
    );
    for spec in &matches {
        text.push_str(&format!(
            "\n\n{}: {}\nParameters: {}",
            spec.name,
            spec.description.trim(),
            spec.parameters
        ));
    }
    ToolOutput::ok(text).with_meta(ToolMeta {
        loaded_tools: matches,
        ..ToolMeta::default()
    })
}

fn describe(query: &str, names: &[String]) -> String {
    match (query.is_empty(), names.is_empty()) {
        (false, true) => format!("\"{query}\""),
        (true, _) => names.join(", "),
        (false, false) => format!("\"{query}\" and {}", names.join(", ")),
    }
}

/// The named tools first (in the order named), then the best matches of the query's words, up
/// to `MAX_LOADED`. A word in a tool's name counts three, in its description one; ties keep
/// the servers' order, so the same search over the same tools loads the same ones.
fn matches(specs: &[ToolSpec], query: &str, names: &[String]) -> Vec<ToolSpec> {
    let mut chosen: Vec<ToolSpec> = names
        .iter()
        .filter_map(|name| specs.iter().find(|s| &s.name == name))
        .cloned()
        .collect();
    chosen.dedup_by(|a, b| a.name == b.name);
    let words = words(query);
    if !words.is_empty() {
        let mut scored: Vec<(usize, &ToolSpec)> = specs
            .iter()
            .filter(|s| !chosen.iter().any(|c| c.name == s.name))
            .map(|s| (score(s, &words), s))
            .filter(|(score, _)| *score > 0)
            .collect();
        // Stable: equal scores keep the servers' order.
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        chosen.extend(scored.into_iter().map(|(_, s)| s.clone()));
    }
    chosen.truncate(MAX_LOADED);
    chosen
}

/// Lower-case words of letters and digits; a plural `s` is dropped so "issues" finds "issue".
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(|w| {
            let w = w.to_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if stem.len() > 2 => stem.to_owned(),
                _ => w,
            }
        })
        .collect()
}

fn score(spec: &ToolSpec, query: &[String]) -> usize {
    let name = words(&spec.name);
    let description = words(&spec.description);
    query
        .iter()
        .map(|word| {
            let in_name = name.iter().any(|w| w == word);
            let in_description = description.iter().any(|w| w == word);
            usize::from(in_name) * 3 + usize::from(in_description)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
        }
    }

    fn catalogue() -> Vec<ToolSpec> {
        vec![
            tool("read_file", "Read a file."),
            tool("mcp__gh__list_issues", "List the issues of a repository."),
            tool("mcp__gh__create_issue", "Create an issue."),
            tool(
                "mcp__gh__create_comment",
                "Comment on an issue or a review.",
            ),
            tool("mcp__db__query", "Run a SQL query."),
        ]
    }

    fn names(specs: &[ToolSpec]) -> Vec<&str> {
        specs.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn over_the_count_the_mcp_tools_wait_and_tool_search_goes_last() {
        let mut specs = catalogue();
        specs.insert(1, spec());
        let budget = Budget {
            max_tools: 3,
            max_schema_share: 1.0,
        };
        let (offered, deferred) = split(&specs, &budget, None, &[]);
        assert_eq!(names(&offered), ["read_file", TOOL_SEARCH]);
        assert_eq!(names(&deferred), names(&catalogue()[1..]));

        // A new segment keeps what the one before loaded, after tool_search, as offered now.
        let before = [
            tool("mcp__db__query", "Old text."),
            tool("mcp__gone__x", ""),
        ];
        let (offered, deferred) = split(&specs, &budget, None, &before);
        assert_eq!(
            names(&offered),
            ["read_file", TOOL_SEARCH, "mcp__db__query"]
        );
        assert_eq!(offered[2], catalogue()[4]);
        assert_eq!(deferred.len(), 3);

        // Within the budget, everything but tool_search is offered.
        let roomy = Budget {
            max_tools: 10,
            max_schema_share: 1.0,
        };
        let (offered, deferred) = split(&specs, &roomy, Some(1_000_000), &[]);
        assert_eq!(names(&offered), names(&catalogue()));
        assert!(deferred.is_empty());

        // Without tool_search registered (denied, or no servers) nothing is deferred.
        let (offered, deferred) = split(&catalogue(), &budget, None, &[]);
        assert_eq!(offered.len(), 5);
        assert!(deferred.is_empty());
    }

    #[test]
    fn a_small_window_defers_by_share_of_the_schemas() {
        let mut specs = catalogue();
        specs.push(spec());
        let budget = Budget {
            max_tools: 100,
            max_schema_share: 0.1,
        };
        let (_, deferred) = split(&specs, &budget, Some(200), &[]);
        assert_eq!(deferred.len(), 4, "a 200-token window");
        let (_, deferred) = split(&specs, &budget, Some(1_000_000), &[]);
        assert!(deferred.is_empty());
        let (_, deferred) = split(&specs, &budget, None, &[]);
        assert!(deferred.is_empty(), "an unknown window counts tools only");
    }

    #[test]
    fn names_come_first_then_the_best_matches_of_the_words() {
        let specs = catalogue();
        let found = matches(&specs, "create issues", &[]);
        assert_eq!(
            names(&found),
            [
                "mcp__gh__create_issue",
                "mcp__gh__list_issues",
                "mcp__gh__create_comment"
            ]
        );
        let found = matches(&specs, "sql", &["mcp__gh__create_comment".into()]);
        assert_eq!(names(&found), ["mcp__gh__create_comment", "mcp__db__query"]);
        assert!(matches(&specs, "teleport", &["mcp__nope__x".into()]).is_empty());
    }

    #[test]
    fn a_result_shows_each_schema_and_carries_the_loaded_specs() {
        let specs = catalogue();
        let args = SearchArgs {
            query: Some("sql".into()),
            names: Vec::new(),
        };
        let output = found(&specs, &args);
        assert!(!output.is_error);
        assert!(
            output
                .content
                .starts_with("Loaded 1 tool for \"sql\"; call it from your next step on:"),
            "{}",
            output.content
        );
        assert!(
            output
                .content
                .contains("mcp__db__query: Run a SQL query.\nParameters: {\"type\":\"object\"}")
        );
        assert_eq!(output.meta.loaded_tools, vec![specs[4].clone()]);

        let none = found(
            &specs,
            &SearchArgs {
                query: Some("teleport".into()),
                names: Vec::new(),
            },
        );
        assert!(none.is_error && none.meta.loaded_tools.is_empty());
        let empty = found(
            &specs,
            &SearchArgs {
                query: None,
                names: Vec::new(),
            },
        );
        assert!(empty.is_error);
    }
}
