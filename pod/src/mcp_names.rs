//! The names MCP tools go by: `mcp__SERVER__TOOL`. Provider function names allow only
//! `[A-Za-z0-9_-]` and at most 64 characters, so a tool name with other characters, or one
//! that makes the whole too long, is cleaned and cut, and a hash of the server's own name for
//! the tool is added so two tools never share a name. The same server and tool always give the
//! same name (a segment's tools are fixed in its log, and `[approvals]` keys name them).

use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};

/// The declaration of every MCP tool, as a kind (`seedpod_protocol::tool_decl`): each comes from
/// a server the person connected, so one no `[approvals]` key covers asks (`McpHub::policy`
/// has the rest of the rule); what it changes is the server's to say. The catalogue lists MCP
/// tools by name and description, with one note after them (`prompt/catalogue.rs`).
pub const DECL: ToolDecl = ToolDecl {
    name: "mcp__SERVER__TOOL",
    default_policy: Policy::Ask,
    effect: Effect::Changes,
    note: None,
    small_note: None,
    in_small_prompt: InSmallPrompt::Always,
    summary: CallSummary::raw,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};

/// Every MCP tool's name starts with this.
pub const PREFIX: &str = "mcp__";
/// The longest function name OpenAI-compatible servers accept.
pub const MAX_NAME_CHARS: usize = 64;

/// The name the model calls `tool` of `server` by. `server` is a valid server name (the
/// configuration checks it: `[A-Za-z0-9_-]`, at most 24 characters, no `__`).
pub fn exposed_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let plain = format!("{PREFIX}{server}__{clean}");
    if clean == tool && !tool.is_empty() && plain.len() <= MAX_NAME_CHARS {
        return plain;
    }
    // `_` and eight hex digits of the original name.
    let suffix = format!("_{:08x}", fnv1a(tool.as_bytes()));
    let room = MAX_NAME_CHARS - suffix.len();
    // Only ASCII is left, so byte and char counts agree.
    let mut name = plain;
    name.truncate(room);
    name.push_str(&suffix);
    name
}

/// The server part of an MCP tool's name, or `None` for any other name.
pub fn server_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(PREFIX)?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some(server)
}

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        name.len() <= MAX_NAME_CHARS
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_kept_and_others_are_cleaned_cut_and_told_apart() {
        assert_eq!(exposed_name("t", "echo"), "mcp__t__echo");
        assert_eq!(exposed_name("git-2", "git_log"), "mcp__git-2__git_log");
        let dotted = exposed_name("fs", "read.file");
        let underscored = exposed_name("fs", "read_file");
        assert!(dotted.starts_with("mcp__fs__read_file_"), "{dotted}");
        assert_ne!(dotted, underscored);
        let long = "a".repeat(100);
        let cut = exposed_name("server", &long);
        assert_eq!(cut.len(), MAX_NAME_CHARS);
        assert_ne!(cut, exposed_name("server", &"a".repeat(101)));
        for hostile in ["", "ÿ", "a b", "../../etc", "名前", "x\ny", &"é".repeat(80)] {
            let name = exposed_name("s", hostile);
            assert!(valid(&name), "{hostile:?} gave {name:?}");
            assert_eq!(name, exposed_name("s", hostile), "deterministic");
            assert_eq!(server_of(&name), Some("s"));
        }
    }

    #[test]
    fn the_server_is_read_back_from_mcp_names_only() {
        assert_eq!(server_of("mcp__t__echo"), Some("t"));
        assert_eq!(server_of("mcp__t__a__b"), Some("t"));
        assert_eq!(server_of("read_file"), None);
        assert_eq!(server_of("mcp__t"), None);
        assert_eq!(server_of("mcp____x"), None);
    }
}
