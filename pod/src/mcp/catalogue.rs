//! What a server offers besides tools — prompts and resources — and the hub's answers about
//! them: completion for the composer, a prompt run as input, a resource read for the model or
//! for an `@SERVER:URI` attachment, and how a resource call is judged.
//!
//! The lists are fetched when a server starts (only what its capabilities announce) and again
//! when it says they changed; a server that fails to list them still serves its tools.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ReadResourceResult};
use rmcp::service::{Peer, RoleClient};
use seedpod_engine::ToolOutput;
use seedpod_protocol::{Completion, McpState};

use super::prompts::{MAX_PROMPTS_PER_SERVER, PromptInfo};
use super::resources::{
    LIST_RESOURCES, MAX_RESOURCES_PER_SERVER, READ_RESOURCE, ResourceInfo, split_reference,
};
use super::{McpHub, Slot};
use crate::policy::Policy;

/// A server's prompts and resources, as it last listed them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    pub prompts: Vec<PromptInfo>,
    pub resources: Vec<ResourceInfo>,
    /// It announced resources (the resource tools are offered for it).
    pub has_resources: bool,
    /// What people are told when a list was cut short (`pager.rs`), if one was.
    pub note: Option<String>,
}

/// List what `peer` announced it has, each list within `limit`.
pub(super) async fn list(server: &str, peer: &Peer<RoleClient>, limit: Duration) -> Catalogue {
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let (has_prompts, has_resources) = capabilities.as_ref().map_or((false, false), |c| {
        (c.prompts.is_some(), c.resources.is_some())
    });
    let mut catalogue = Catalogue {
        has_resources,
        ..Catalogue::default()
    };
    let mut notes: Vec<String> = Vec::new();
    if has_prompts {
        match tokio::time::timeout(limit, super::pager::prompts(peer)).await {
            Ok(Ok(listed)) => {
                notes.extend(listed.note("prompts"));
                catalogue.prompts = listed
                    .items
                    .into_iter()
                    .take(MAX_PROMPTS_PER_SERVER)
                    .map(|p| PromptInfo::from_rmcp(server, p))
                    .collect();
            }
            Ok(Err(err)) => {
                tracing::warn!(event = "mcp_prompts_unlisted", server, error = %super::words::service_error(&err));
            }
            Err(_) => tracing::warn!(event = "mcp_prompts_unlisted", server, error = "timed out"),
        }
    }
    if has_resources {
        match tokio::time::timeout(limit, super::pager::resources(peer)).await {
            Ok(Ok(listed)) => {
                notes.extend(listed.note("resources"));
                catalogue.resources = listed
                    .items
                    .into_iter()
                    .take(MAX_RESOURCES_PER_SERVER)
                    .map(ResourceInfo::from_rmcp)
                    .collect();
            }
            Ok(Err(err)) => {
                tracing::warn!(event = "mcp_resources_unlisted", server, error = %super::words::service_error(&err));
            }
            Err(_) => {
                tracing::warn!(
                    event = "mcp_resources_unlisted",
                    server,
                    error = "timed out"
                );
            }
        }
    }
    catalogue.note = (!notes.is_empty()).then(|| notes.join(". "));
    catalogue
}

impl McpHub {
    /// The running connection of `server`, waiting (within its startup timeout) for one that is
    /// starting; `Err` says why there is none, in a person's words.
    async fn ready_peer(&self, server: &str) -> Result<(&Slot, Peer<RoleClient>), String> {
        let Some(slot) = self.slot(server) else {
            return Err(format!(
                "there is no MCP server named {server}; this pod's servers: {}",
                self.server_names()
            ));
        };
        let mut view = slot.view.clone();
        let _ = tokio::time::timeout(
            slot.startup_timeout,
            view.wait_for(|v| !matches!(v.state, McpState::Starting | McpState::Restarting)),
        )
        .await;
        let current = slot.view.borrow();
        match (&current.peer, current.state) {
            (Some(peer), McpState::Ready) => Ok((slot, peer.clone())),
            (_, state) => Err(format!(
                "MCP server {server} is not running ({}{})",
                state.as_str(),
                current
                    .last_error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )),
        }
    }

    fn server_names(&self) -> String {
        let names: Vec<&str> = self.inner.servers.iter().map(|s| s.name.as_str()).collect();
        match names.is_empty() {
            true => "none".into(),
            false => names.join(", "),
        }
    }

    /// The prompts of ready servers whose command starts with `prefix`, for `/` completion.
    pub fn prompt_completions(&self, prefix: &str) -> Vec<Completion> {
        let mut items = Vec::new();
        for slot in &self.inner.servers {
            let view = slot.view.borrow();
            if view.state != McpState::Ready {
                continue;
            }
            for prompt in &view.catalogue.prompts {
                if prompt.command.starts_with(prefix) {
                    items.push(Completion::new(prompt.command.clone(), prompt.detail()));
                }
            }
        }
        items
    }

    /// For `@SERVER:…` completion: the resources of `SERVER` whose URI starts with what follows
    /// the colon, as `SERVER:URI`. `None` when `prefix` names no server of this pod (a path).
    pub fn resource_completions(&self, prefix: &str) -> Option<Vec<Completion>> {
        let (server, typed) = prefix.split_once(':')?;
        let slot = self.slot(server)?;
        let view = slot.view.borrow();
        Some(
            view.catalogue
                .resources
                .iter()
                .filter(|r| r.typeable() && r.uri.starts_with(typed))
                .map(|r| Completion::new(format!("{server}:{}", r.uri), r.detail()))
                .collect(),
        )
    }

    /// The prompt `/command` runs, if `command` is one a server of this pod lists; `Err` says
    /// what is wrong (no such server, not running, no such prompt) and what there is.
    pub fn prompt(&self, command: &str) -> Result<(String, PromptInfo), String> {
        let server = super::names::server_of(command).unwrap_or_default();
        // Quoted back to the person: shown escaped, never as terminal sequences.
        let shown = seedpod_protocol::printable_line(command);
        let server_shown = seedpod_protocol::printable_line(server);
        let Some(slot) = self.slot(server) else {
            return Err(format!(
                "/{shown}: there is no MCP server named {server_shown}; this pod's servers: {}",
                self.server_names()
            ));
        };
        let view = slot.view.borrow();
        if view.state != McpState::Ready {
            return Err(format!(
                "/{shown}: MCP server {server_shown} is not running ({}); nothing was sent",
                view.state.as_str()
            ));
        }
        match view.catalogue.prompts.iter().find(|p| p.command == command) {
            Some(prompt) => Ok((server.to_owned(), prompt.clone())),
            None => {
                let known: Vec<&str> = view
                    .catalogue
                    .prompts
                    .iter()
                    .map(|p| p.command.as_str())
                    .collect();
                Err(format!(
                    "/{shown}: MCP server {server_shown} has no such prompt; its prompts: {}",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ))
            }
        }
    }

    /// Run `prompt` of `server` with `typed` arguments: the text to send as input.
    pub async fn run_prompt(
        &self,
        server: &str,
        prompt: &PromptInfo,
        typed: &str,
    ) -> Result<String, String> {
        let arguments = prompt.arguments_from(typed)?;
        let (slot, peer) = self.ready_peer(server).await?;
        let params = GetPromptRequestParams::new(prompt.original.clone()).with_arguments(arguments);
        match tokio::time::timeout(slot.tool_timeout, peer.get_prompt(params)).await {
            Ok(Ok(result)) => Ok(super::prompts::render(server, &prompt.original, result)),
            Ok(Err(err)) => Err(format!(
                "/{}: MCP server {server} did not give the prompt: {}",
                prompt.command,
                super::words::service_error(&err)
            )),
            Err(_) => Err(format!(
                "/{}: MCP server {server} did not answer within {}s (tool_timeout_secs)",
                prompt.command,
                slot.tool_timeout.as_secs()
            )),
        }
    }

    /// Whether `path` of an `@path` reference names a resource of one of this pod's servers;
    /// `Some(Err)` when it names the server but not a resource it can attach now.
    pub fn check_reference(&self, path: &str) -> Option<Result<(), String>> {
        let (server, uri) = split_reference(path)?;
        let slot = self.slot(server)?;
        let view = slot.view.borrow();
        // What the person typed is quoted back: shown escaped, never as terminal sequences.
        let path = seedpod_protocol::printable_line(path);
        if view.state != McpState::Ready {
            return Some(Err(format!(
                "@{path}: MCP server {server} is not running ({}); nothing was sent",
                view.state.as_str()
            )));
        }
        if !view.catalogue.has_resources {
            return Some(Err(format!(
                "@{path}: MCP server {server} offers no resources; nothing was sent"
            )));
        }
        if !view.catalogue.resources.iter().any(|r| r.uri == uri) {
            return Some(Err(format!(
                "@{path}: MCP server {server} lists no resource {}; nothing was sent (type \
                 @{server}: to see its resources)",
                seedpod_protocol::printable_line(uri)
            )));
        }
        Some(Ok(()))
    }

    /// Read `uri` of `server`; the result, and the server's `max_output`.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<(ReadResourceResult, usize), String> {
        let (slot, peer) = self.ready_peer(server).await?;
        if !slot.view.borrow().catalogue.has_resources {
            return Err(format!("MCP server {server} offers no resources"));
        }
        let params = ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(slot.tool_timeout, peer.read_resource(params)).await {
            Ok(Ok(result)) => Ok((result, slot.max_output)),
            Ok(Err(err)) => Err(format!(
                "MCP server {server} could not read {}: {}",
                seedpod_protocol::printable_line(uri),
                super::words::service_error(&err)
            )),
            Err(_) => Err(format!(
                "MCP server {server} did not answer the read of {} within {}s \
                 (tool_timeout_secs)",
                seedpod_protocol::printable_line(uri),
                slot.tool_timeout.as_secs()
            )),
        }
    }

    /// `mcp_list_resources`: the resources of `server`, or of every server that has some.
    pub fn resource_listing(&self, server: Option<&str>) -> ToolOutput {
        if let Some(name) = server
            && self.slot(name).is_none()
        {
            return ToolOutput::error(format!(
                "there is no MCP server named {name}; this pod's servers: {}",
                self.server_names()
            ));
        }
        let mut lines = Vec::new();
        for slot in &self.inner.servers {
            if server.is_some_and(|name| name != slot.name) {
                continue;
            }
            let view = slot.view.borrow();
            if !view.catalogue.has_resources {
                continue;
            }
            if view.state != McpState::Ready {
                lines.push(format!(
                    "{}: not running ({})",
                    slot.name,
                    view.state.as_str()
                ));
                continue;
            }
            if view.catalogue.resources.is_empty() {
                lines.push(format!("{}: no resources listed", slot.name));
            }
            for resource in &view.catalogue.resources {
                lines.push(format!(
                    "{} {} {}",
                    slot.name,
                    seedpod_protocol::printable_line(&resource.uri),
                    resource.detail()
                ));
            }
        }
        if lines.is_empty() {
            return ToolOutput::error(match server {
                Some(name) => format!("MCP server {name} offers no resources"),
                None => "no MCP server of this pod offers resources".into(),
            });
        }
        let text = format!(
            "One resource a line: server, URI, name (type) — description. Read one with \
             {READ_RESOURCE}.\n{}",
            lines.join("\n")
        );
        ToolOutput::ok(text)
    }

    /// Whether a new segment offers the resource tools: a ready server said it has resources,
    /// and the configuration does not deny them.
    pub(super) fn offers_resources(&self) -> bool {
        let any = self.inner.servers.iter().any(|slot| {
            let view = slot.view.borrow();
            view.state == McpState::Ready && view.catalogue.has_resources
        });
        any && self.inner.policies.for_tool(READ_RESOURCE) != Policy::Deny
    }

    /// How a call of a resource tool with `arguments` is judged: its own `[approvals]` key's
    /// `deny` or `allow` stand; else each server it reads from decides — `deny` on its
    /// `mcp__SERVER__*` key denies, `trust_read_only` allows (a read changes nothing), and
    /// otherwise it asks. Arguments it cannot read ask (the call then refuses them).
    pub fn resource_policy(&self, tool: &str, arguments: &str) -> Policy {
        let configured = self.inner.policies.for_tool(tool);
        if configured != Policy::Ask {
            return configured;
        }
        let Some(server) = super::resources::server_of_call(tool, arguments) else {
            return Policy::Ask;
        };
        let judged: Vec<Policy> = self
            .inner
            .servers
            .iter()
            .filter(|slot| match &server {
                Some(name) => slot.name == *name,
                None => slot.view.borrow().catalogue.has_resources,
            })
            .map(|slot| {
                let key = format!("{}{}__{}", super::names::PREFIX, slot.name, "*");
                match self.inner.policies.mcp_key(&key) {
                    Some(policy) => policy,
                    None if slot.trust_read_only => Policy::Allow,
                    None => Policy::Ask,
                }
            })
            .collect();
        if judged.contains(&Policy::Deny) {
            Policy::Deny
        } else if judged.is_empty() || judged.iter().any(|p| *p != Policy::Allow) {
            // A server this pod does not have runs nothing; the call says so (asking is the
            // careful answer to a name the check cannot place).
            if judged.is_empty() && tool == LIST_RESOURCES {
                return Policy::Allow;
            }
            Policy::Ask
        } else {
            Policy::Allow
        }
    }
}

/// The catalogue a view starts with.
pub(super) fn empty() -> Arc<Catalogue> {
    Arc::new(Catalogue::default())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::sync::watch;

    use super::*;
    use crate::mcp::server::ServerView;
    use crate::mcp::{Inner, Slot};
    use crate::policy::Policies;

    /// A hub with servers `a` (trust_read_only) and `b` (not), both ready with resources.
    fn hub(tools: [(&str, Policy); 2], keys: &[(&str, Policy)]) -> McpHub {
        let slot = |name: &str, trust_read_only: bool| {
            let (tx, view) = watch::channel(ServerView::new(McpState::Ready));
            tx.send_modify(|v| {
                v.catalogue = Arc::new(Catalogue {
                    has_resources: true,
                    resources: vec![ResourceInfo::from_rmcp(rmcp::model::Resource::new(
                        "x://r", "r",
                    ))],
                    prompts: Vec::new(),
                    note: None,
                });
            });
            // The view keeps its last value after its sender is gone.
            Slot {
                name: name.into(),
                transport: "stdio",
                trust_read_only,
                required: false,
                startup_timeout: Duration::from_secs(1),
                tool_timeout: Duration::from_secs(1),
                tool_max: Duration::from_secs(10),
                max_output: 1024,
                view,
                control: None,
            }
        };
        let policies = Policies::new(tools.map(|(name, policy)| (name.to_owned(), policy)))
            .with_mcp(keys.iter().map(|(k, p)| ((*k).to_owned(), *p)));
        McpHub {
            inner: Arc::new(Inner {
                servers: vec![slot("a", true), slot("b", false)],
                policies,
                offered_hints: Mutex::default(),
                ..Inner::default()
            }),
        }
    }

    /// Who may read what without a person: the attacks are a model naming a server it may not
    /// read freely, one the pod does not have, or arguments the check cannot place.
    #[test]
    fn resource_calls_are_judged_by_the_server_they_read() {
        let asks = [(LIST_RESOURCES, Policy::Ask), (READ_RESOURCE, Policy::Ask)];
        let read = |server: &str| format!(r#"{{"server":"{server}","uri":"x://r"}}"#);
        let h = hub(asks, &[]);
        let cases = [
            (READ_RESOURCE, read("a"), Policy::Allow),
            (READ_RESOURCE, read("b"), Policy::Ask),
            (READ_RESOURCE, read("nope"), Policy::Ask),
            (READ_RESOURCE, r#"{"uri":"x://r"}"#.to_owned(), Policy::Ask),
            (READ_RESOURCE, "not json".to_owned(), Policy::Ask),
            (
                READ_RESOURCE,
                r#"{"server":"a","uri":"x","server2":"b"}"#.to_owned(),
                Policy::Ask,
            ),
            (
                LIST_RESOURCES,
                r#"{"server":"a"}"#.to_owned(),
                Policy::Allow,
            ),
            // Every server with resources is read: the strictest decides.
            (LIST_RESOURCES, "{}".to_owned(), Policy::Ask),
        ];
        for (tool, arguments, expected) in &cases {
            assert_eq!(
                h.resource_policy(tool, arguments),
                *expected,
                "{tool} {arguments}"
            );
        }
        // A server's `*` key decides before its trust: `deny` denies even a trusted one.
        let h = hub(
            asks,
            &[("mcp__a__*", Policy::Deny), ("mcp__b__*", Policy::Allow)],
        );
        assert_eq!(h.resource_policy(READ_RESOURCE, &read("a")), Policy::Deny);
        assert_eq!(h.resource_policy(READ_RESOURCE, &read("b")), Policy::Allow);
        assert_eq!(h.resource_policy(LIST_RESOURCES, "{}"), Policy::Deny);
        // The tools' own keys stand whatever the servers say.
        let h = hub(
            [(LIST_RESOURCES, Policy::Ask), (READ_RESOURCE, Policy::Deny)],
            &[],
        );
        assert_eq!(h.resource_policy(READ_RESOURCE, &read("a")), Policy::Deny);
        assert!(!h.offers_resources(), "a denied read is not offered");
        let h = hub(asks, &[]);
        assert!(h.offers_resources());
    }

    #[test]
    fn references_are_checked_against_the_servers_list() {
        let h = hub(
            [(LIST_RESOURCES, Policy::Ask), (READ_RESOURCE, Policy::Ask)],
            &[],
        );
        assert_eq!(h.check_reference("a:x://r"), Some(Ok(())));
        let refused = h.check_reference("a:x://other").unwrap().unwrap_err();
        assert!(refused.contains("lists no resource x://other"), "{refused}");
        let refused = h.check_reference("a:x://\u{1b}[2J").unwrap().unwrap_err();
        assert!(!refused.contains('\u{1b}'), "{refused}");
        // Not a server of this pod: an ordinary path.
        assert_eq!(h.check_reference("src/main.rs"), None);
        assert_eq!(h.check_reference("c:x://r"), None);
        let items = h.resource_completions("a:x:").unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].value, "a:x://r");
        assert_eq!(h.resource_completions("src/ma"), None);
    }
}
