//! MCP resources: two tools for the model (`mcp_list_resources`, `mcp_read_resource`) and what
//! an `@SERVER:URI` reference in a person's input attaches (docs/configuration.md §MCP prompts
//! and resources).
//!
//! The tools are offered by a segment only when one of its servers was ready and said it has
//! resources when the segment started (`McpHub::offer`), so the segment's tool list, and with
//! it replay, stays fixed. A call is judged per server (`McpHub::resource_policy`): reading
//! changes nothing, so a server with `trust_read_only` lets it run without asking; a server's
//! `mcp__SERVER__*` key and the tools' own `[approvals]` keys are read first.
//!
//! What a server returns is contained like a tool result: text cut to the server's
//! `max_output` (an attachment to the attachment cap), binary contents a placeholder line with
//! the type and size (an image goes the way a tool's image goes, `image.rs`).

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolResult, ContentBlock, EmbeddedResource, ReadResourceResult, Resource, ResourceContents,
};
use seedpod_engine::{Tool, ToolOutput};
use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Preview, ToolDecl, ToolSpec,
};
use serde::Deserialize;
use serde_json::json;

use super::McpHub;
use super::prompts::clean_line;
use crate::policy::Policy;

pub const LIST_RESOURCES: &str = "mcp_list_resources";
pub const READ_RESOURCE: &str = "mcp_read_resource";

/// Most resources of one server kept (for completion and for the listing tool).
pub const MAX_RESOURCES_PER_SERVER: usize = 500;
/// Most characters of a resource's name or description shown.
const MAX_DETAIL_CHARS: usize = 120;

/// `mcp_list_resources`: reads the servers' lists; changes nothing.
pub const LIST_DECL: ToolDecl = ToolDecl {
    name: LIST_RESOURCES,
    default_policy: Policy::Ask,
    effect: Effect::ReadOnly,
    note: None,
    small_note: None,
    in_small_prompt: InSmallPrompt::Always,
    summary: CallSummary::raw,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

/// `mcp_read_resource`: reads one resource of a server; changes nothing. It asks by default
/// like any MCP call; `trust_read_only` on its server lets it run (`McpHub::resource_policy`).
pub const READ_DECL: ToolDecl = ToolDecl {
    name: READ_RESOURCE,
    default_policy: Policy::Ask,
    effect: Effect::ReadOnly,
    note: None,
    small_note: None,
    in_small_prompt: InSmallPrompt::Always,
    summary: CallSummary::raw,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

pub fn is_resource_tool(name: &str) -> bool {
    name == LIST_RESOURCES || name == READ_RESOURCE
}

/// One resource as the pod knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// As the server wrote it: what `resources/read` names.
    pub uri: String,
    /// Its name and description, one line each, control characters shown escaped.
    pub name: String,
    pub description: String,
    pub mime_type: Option<String>,
}

impl ResourceInfo {
    pub fn from_rmcp(resource: Resource) -> ResourceInfo {
        ResourceInfo {
            name: clean_line(
                resource.title.as_deref().unwrap_or(&resource.name),
                MAX_DETAIL_CHARS,
            ),
            description: resource
                .description
                .map(|d| clean_line(&d, MAX_DETAIL_CHARS))
                .unwrap_or_default(),
            mime_type: resource.mime_type.map(|m| clean_line(&m, MAX_DETAIL_CHARS)),
            uri: resource.uri,
        }
    }

    /// Whether `@SERVER:URI` can name it: one word, nothing a terminal would act on.
    pub fn typeable(&self) -> bool {
        !self.uri.is_empty()
            && !self
                .uri
                .chars()
                .any(|c| c.is_whitespace() || seedpod_protocol::printable::is_control(c))
    }

    /// The popup's line and the listing's: name, type, description.
    pub fn detail(&self) -> String {
        let mut detail = self.name.clone();
        if let Some(mime) = &self.mime_type {
            detail.push_str(&format!(" ({mime})"));
        }
        if !self.description.is_empty() {
            detail.push_str(&format!(" — {}", self.description));
        }
        detail
    }
}

/// `SERVER:URI` split at its first colon, when `SERVER` could be a server's name.
pub fn split_reference(path: &str) -> Option<(&str, &str)> {
    let (server, uri) = path.split_once(':')?;
    let named = !server.is_empty()
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (named && !uri.is_empty()).then_some((server, uri))
}

/// The two tools' specs, in the order a segment offers them.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: LIST_RESOURCES.into(),
            description: "List the resources (documents, files, records) the connected MCP \
                          servers offer: each one's server, URI, name and type. Read one with \
                          mcp_read_resource."
                .into(),
            parameters: json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "server": {"type": "string", "description": "Only this MCP server's resources."}
                }
            }),
        },
        ToolSpec {
            name: READ_RESOURCE.into(),
            description: "Read one resource of an MCP server by its URI (as mcp_list_resources \
                          gives it). Text comes back as text; binary contents as a line with \
                          their type and size."
                .into(),
            parameters: json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name."},
                    "uri": {"type": "string", "description": "The resource's URI."}
                },
                "required": ["server", "uri"]
            }),
        },
    ]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    server: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    server: String,
    uri: String,
}

/// The server a call of `tool` with `arguments` is about: `Some(None)` for a listing of every
/// server, `None` when the arguments are not what the tool takes (the call then refuses).
pub fn server_of_call(tool: &str, arguments: &str) -> Option<Option<String>> {
    match tool {
        LIST_RESOURCES => {
            let args: ListArgs = if arguments.trim().is_empty() {
                ListArgs { server: None }
            } else {
                serde_json::from_str(arguments).ok()?
            };
            Some(args.server)
        }
        READ_RESOURCE => serde_json::from_str::<ReadArgs>(arguments)
            .ok()
            .map(|a| Some(a.server)),
        _ => None,
    }
}

/// The two tools in a registry, reading through the hub.
pub fn tools(hub: &McpHub) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ResourceTool {
            hub: hub.clone(),
            name: LIST_RESOURCES,
        }),
        Arc::new(ResourceTool {
            hub: hub.clone(),
            name: READ_RESOURCE,
        }),
    ]
}

struct ResourceTool {
    hub: McpHub,
    name: &'static str,
}

impl Tool for ResourceTool {
    fn spec(&self) -> ToolSpec {
        specs()
            .into_iter()
            .find(|s| s.name == self.name)
            .unwrap_or_else(|| specs().remove(0))
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let hub = self.hub.clone();
        let name = self.name;
        async move {
            match name {
                READ_RESOURCE => {
                    let args: ReadArgs = match serde_json::from_str(&arguments) {
                        Ok(args) => args,
                        Err(e) => {
                            return ToolOutput::error(format!(
                                "{READ_RESOURCE} takes {{\"server\": \"NAME\", \"uri\": \"URI\"}}: {e}"
                            ));
                        }
                    };
                    match hub.read_resource(&args.server, &args.uri).await {
                        Ok((result, max)) => contents_output(result, max),
                        Err(why) => ToolOutput::error(why),
                    }
                }
                _ => match server_of_call(LIST_RESOURCES, &arguments) {
                    Some(server) => hub.resource_listing(server.as_deref()),
                    None => ToolOutput::error(format!(
                        "{LIST_RESOURCES} takes {{}} or {{\"server\": \"NAME\"}}"
                    )),
                },
            }
        }
        .boxed()
    }
}

/// A resource's contents as the model reads them, through the same path as a tool's result
/// (`result.rs`): text as text, an image as a tool's image, other binary contents a line.
pub fn contents_output(result: ReadResourceResult, max: usize) -> ToolOutput {
    let blocks: Vec<ContentBlock> = result
        .contents
        .into_iter()
        .map(|contents| match contents {
            ResourceContents::TextResourceContents { text, .. } => ContentBlock::text(text),
            ResourceContents::BlobResourceContents {
                mime_type: Some(mime),
                blob,
                ..
            } if mime.starts_with("image/") => ContentBlock::image(blob, mime),
            // A blob, or contents of a kind newer than this client: a placeholder line.
            other => ContentBlock::Resource(EmbeddedResource::new(other)),
        })
        .collect();
    super::result::to_output(CallToolResult::success(blocks), READ_RESOURCE, max)
}

/// The body of the `file_attachment` item an `@SERVER:URI` reference commits: a header line,
/// then the text contents (at most `max_bytes`, cut at a character with a note) or a line per
/// binary part.
pub fn attachment_body(reference: &str, result: ReadResourceResult, max_bytes: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    for contents in result.contents {
        match contents {
            ResourceContents::TextResourceContents { text, .. } => parts.push(text),
            ResourceContents::BlobResourceContents {
                mime_type, blob, ..
            } => parts.push(format!(
                "[binary contents: {}, {} bytes; not attached]",
                mime_type.as_deref().unwrap_or("no type given"),
                seedpod_protocol::thousands(super::image::base64_len(&blob))
            )),
            _ => parts.push("[contents of a kind this pod does not know; not attached]".into()),
        }
    }
    let text = parts.join("\n");
    let text = if text.len() > max_bytes {
        let mut end = max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}\n[… cut here: the resource has {} bytes, {} attached; the model can read it \
             with {READ_RESOURCE}]",
            &text[..end],
            seedpod_protocol::thousands(text.len() as u64),
            seedpod_protocol::thousands(end as u64)
        )
    } else {
        text
    };
    format!("[Resource: {reference}]\n{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_at_the_first_colon_only_after_a_server_name() {
        assert_eq!(
            split_reference("docs:file:///a b"),
            Some(("docs", "file:///a b"))
        );
        assert_eq!(split_reference("src/main.rs"), None);
        assert_eq!(split_reference("C\\x:y"), None);
        assert_eq!(split_reference("docs:"), None);
        assert_eq!(split_reference(":x"), None);
    }

    #[test]
    fn hostile_names_are_one_escaped_line_and_odd_uris_are_not_offered_to_type() {
        let info = ResourceInfo::from_rmcp(
            Resource::new("test://red", "\u{1b}[31mred\u{1b}[0m\nline")
                .with_description("\u{1b}]52;c;eA==\u{7}x".repeat(50)),
        );
        assert!(
            !info.detail().chars().any(|c| c.is_control()),
            "{}",
            info.detail()
        );
        assert!(info.detail().chars().count() < 2 * MAX_DETAIL_CHARS + 20);
        assert!(info.typeable());
        let odd = ResourceInfo::from_rmcp(Resource::new("x://a b\u{1b}", "odd"));
        assert!(!odd.typeable());
    }

    #[test]
    fn contents_are_capped_and_binary_is_described_not_inlined() {
        let result = ReadResourceResult::new(vec![
            ResourceContents::text("é".repeat(1000), "x://t"),
            ResourceContents::blob("AAECAwQFBgcICQ==", "x://b"),
        ]);
        let body = attachment_body("s:x://t", result.clone(), 101);
        assert!(body.starts_with("[Resource: s:x://t]\n"), "{body}");
        assert!(body.contains("cut here: the resource has"), "{body}");
        assert!(body.len() < 400, "{}", body.len());
        let whole = attachment_body("s:x://t", result.clone(), 1 << 20);
        assert!(whole.ends_with("[binary contents: no type given, 10 bytes; not attached]"));
        let out = contents_output(result, 1 << 20);
        assert!(!out.is_error);
        assert!(out.content.contains("[resource: x://b"), "{}", out.content);
        assert!(!out.content.contains("AAECAwQF"), "{}", out.content);
        let small = contents_output(
            ReadResourceResult::new(vec![ResourceContents::text("z".repeat(10_000), "x://t")]),
            1000,
        );
        assert!(small.content.contains("ask mcp_read_resource for less"));
    }

    #[test]
    fn a_call_names_its_server_or_is_refused() {
        assert_eq!(server_of_call(LIST_RESOURCES, "{}"), Some(None));
        assert_eq!(server_of_call(LIST_RESOURCES, ""), Some(None));
        assert_eq!(
            server_of_call(LIST_RESOURCES, r#"{"server":"t"}"#),
            Some(Some("t".into()))
        );
        assert_eq!(
            server_of_call(READ_RESOURCE, r#"{"server":"t","uri":"x"}"#),
            Some(Some("t".into()))
        );
        assert_eq!(server_of_call(READ_RESOURCE, r#"{"uri":"x"}"#), None);
        assert_eq!(
            server_of_call(READ_RESOURCE, r#"{"server":"t","uri":"x","y":1}"#),
            None
        );
        assert_eq!(server_of_call("read_file", "{}"), None);
    }
}
