//! Big pastes and the message length cap (`[input] max_message_chars`).
//!
//! The cap is for what a person types. A paste that would take a message over it is not cut
//! silently and does not push the typed text out: it goes into the message as its head and
//! its tail with a line naming it, the whole paste stays in the log (the `user_input`'s
//! segments), and the model reads the rest with the `read_paste` tool. Only typed text that is
//! itself over the cap is cut, with a note, as before.
//!
//! A paste is named by a hash of its content (`p-1a2b3c4d`): stable across restarts and
//! versions (FNV-1a, written here, not std's hasher), and needing no log position, which an
//! input does not have until it is committed.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_engine::{Tool, ToolOutput, ToolRegistry};
use seedpod_protocol::{
    CallSummary, Effect, Entry, EntryKind, GuardScan, InFlush, InSmallPrompt, Preview, Segment,
    SystemItem, ToolDecl, ToolSpec, flatten_to_text, thousands,
};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use crate::policy::{Policies, Policy};

/// The tool's name, as the model calls it.
pub const READ_PASTE: &str = "read_paste";
/// The declaration every list of tools derives from (`seedpod_protocol::tool_decl`): it reads
/// what the person already sent.
pub const DECL: ToolDecl = ToolDecl {
    name: READ_PASTE,
    default_policy: Policy::Allow,
    effect: Effect::ReadOnly,
    note: None,
    small_note: None,
    in_small_prompt: InSmallPrompt::Always,
    summary: CallSummary::raw,
    guard: GuardScan::Everything,
    preview: Preview::Arguments,
    in_flush: InFlush::Never,
};
/// A paste longer than this is shortened when the message is over the cap.
const SHORTEN_ABOVE: usize = 4_000;
/// What stays of a shortened paste: its first and last characters.
const HEAD_CHARS: usize = 2_000;
const TAIL_CHARS: usize = 1_000;
/// Lines one `read_paste` call returns unless asked for fewer.
const DEFAULT_LINES: usize = 400;
/// Characters one call returns at most, whatever the lines.
const MAX_CALL_CHARS: usize = 60_000;

/// The name a paste goes by in the message and in `read_paste`.
pub fn paste_key(content: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in content.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("p-{:08x}", hash >> 32)
}

/// The text the model reads for `segments` under a cap of `max_chars`, and whether anything
/// was shortened or cut.
pub fn model_text(segments: &[Segment], max_chars: usize) -> (String, bool) {
    let whole = flatten_to_text(segments);
    if whole.chars().count() <= max_chars {
        return (whole, false);
    }
    let fitted: Vec<Segment> = segments
        .iter()
        .map(|segment| match segment {
            Segment::Paste {
                id,
                chars,
                lines,
                content,
            } if content.chars().count() > SHORTEN_ABOVE => Segment::Paste {
                id: *id,
                chars: *chars,
                lines: *lines,
                content: shortened(content),
            },
            other => other.clone(),
        })
        .collect();
    let text = flatten_to_text(&fitted);
    let typed: usize = segments
        .iter()
        .filter(|s| !matches!(s, Segment::Paste { .. }))
        .map(|s| flatten_to_text(std::slice::from_ref(s)).chars().count())
        .sum();
    if typed <= max_chars {
        // What was typed is never cut: the shortened pastes may take the message a little
        // over the cap, which is for typing.
        return (text, true);
    }
    // The typing alone is over the cap: its old rule, with its note.
    match crate::guard::cap_message(&text, max_chars) {
        Some(capped) => (capped, true),
        None => (text, true),
    }
}

/// A paste as its head, a line that names it and says how to read the rest, and its tail.
fn shortened(content: &str) -> String {
    shortened_to(content, "paste", HEAD_CHARS, TAIL_CHARS)
}

/// A notification the model reads: whole when it has at most `max_chars` characters, else its
/// head (two thirds of the room) and tail with a line naming it, which `read_paste` reads
/// whole — the notification itself stays whole in the log (`docs/configuration.md`, `[notify]
/// max_chars`).
pub fn within(message: &str, max_chars: usize) -> String {
    if message.chars().count() <= max_chars {
        return message.to_owned();
    }
    // The naming line takes about 250 characters; what is left goes to the head and the tail.
    let room = max_chars.saturating_sub(250).max(60);
    shortened_to(message, "notification", room * 2 / 3, room / 3)
}

/// `content` as its first `head_chars` and last `tail_chars` characters around a line that
/// names it (`what`, its key, its size) and says how to read it whole.
fn shortened_to(content: &str, what: &str, head_chars: usize, tail_chars: usize) -> String {
    let total = content.chars().count();
    let head_end = content
        .char_indices()
        .nth(head_chars)
        .map_or(content.len(), |(i, _)| i);
    let tail_start = content
        .char_indices()
        .nth(total.saturating_sub(tail_chars))
        .map_or(content.len(), |(i, _)| i)
        .max(head_end);
    let lines = content.lines().count();
    format!(
        "{}\n[{what} {}: {} characters in {} lines; the part between its first {} and last {} \
         characters is not shown here. read_paste with \"paste\": \"{}\" reads it whole, by \
         lines]\n{}",
        &content[..head_end],
        paste_key(content),
        thousands(total as u64),
        thousands(lines as u64),
        thousands(head_chars as u64),
        thousands(tail_chars as u64),
        paste_key(content),
        &content[tail_start..]
    )
}

/// The paste named `key` among the person's inputs and the notifications in `entries`,
/// newest first.
pub fn find(entries: &[Arc<Entry>], key: &str) -> Option<String> {
    entries.iter().rev().find_map(|entry| match &entry.kind {
        EntryKind::UserInput { segments, .. } => segments.iter().find_map(|s| match s {
            Segment::Paste { content, .. } if paste_key(content) == key => Some(content.clone()),
            _ => None,
        }),
        EntryKind::SystemItem {
            item: SystemItem::Notification { message, .. },
            ..
        } if paste_key(message) == key => Some(message.clone()),
        _ => None,
    })
}

/// Lines `offset`.. (1-based) of `content`, numbered like `read_file`'s, at most `limit` lines
/// and `MAX_CALL_CHARS` characters, with a note when there is more.
pub fn lines_of(content: &str, offset: usize, limit: usize) -> String {
    let all: Vec<&str> = content.lines().collect();
    let start = offset.max(1) - 1;
    if start >= all.len() {
        return format!(
            "the paste has {} lines; offset {offset} is past its end",
            all.len()
        );
    }
    let mut out = String::new();
    let mut next = start;
    for (i, line) in all.iter().enumerate().skip(start).take(limit.max(1)) {
        let numbered = format!("{:>6}\t{line}\n", i + 1);
        if !out.is_empty() && out.len() + numbered.len() > MAX_CALL_CHARS {
            break;
        }
        out.push_str(&numbered);
        next = i + 1;
    }
    if next < all.len() {
        out.push_str(&format!(
            "[{} more lines; read_paste with offset {} goes on]\n",
            all.len() - next,
            next + 1
        ));
    }
    out
}

/// `read_paste` asks the controller, which holds the segment's entries, for the content of
/// the paste named `key` in this segment's inputs.
pub struct PasteQuery {
    pub key: String,
    pub reply: oneshot::Sender<Option<String>>,
}

/// Paste queries queued to the controller (bounded: the tool waits when it is full).
pub const PASTE_QUEUE_CAPACITY: usize = 16;

/// The `read_paste` tool: asks the controller, which holds the segment's entries.
pub struct ReadPaste {
    tx: mpsc::Sender<PasteQuery>,
}

impl ReadPaste {
    /// Offer the tool unless `policies` deny it.
    pub fn register(
        registry: &mut ToolRegistry,
        tx: mpsc::Sender<PasteQuery>,
        policies: &Policies,
    ) {
        if policies.offers(&DECL) {
            registry.register(Arc::new(ReadPaste { tx }));
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    paste: String,
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

/// The spec, also used to describe a pod without running it.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: READ_PASTE.into(),
        description: "Read a paste the person sent, or a notification, that was too long to \
            show whole (the message names it: [paste p-…] or [notification p-…]). Lines come \
            numbered; use offset and limit to read part of it."
            .into(),
        parameters: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["paste"],
            "properties": {
                "paste": {"type": "string", "description": "The paste's name from the message, e.g. p-1a2b3c4d."},
                "offset": {"type": "integer", "minimum": 1, "description": "The first line, counting from 1. Default: 1."},
                "limit": {"type": "integer", "minimum": 1, "description": "The most lines to return. Default: 400."}
            }
        }),
    }
}

impl Tool for ReadPaste {
    fn spec(&self) -> ToolSpec {
        spec()
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let tx = self.tx.clone();
        async move {
            let args: ReadArgs = match serde_json::from_str(&arguments) {
                Ok(args) => args,
                Err(e) => {
                    return ToolOutput::error(format!(
                        "read_paste takes {{\"paste\": \"p-…\", \"offset\": 1, \"limit\": 400}}: {e}"
                    ));
                }
            };
            let (reply, rx) = oneshot::channel();
            let asked = tx
                .send(PasteQuery {
                    key: args.paste.clone(),
                    reply,
                })
                .await;
            let found = match asked {
                Ok(()) => rx.await.ok().flatten(),
                Err(_) => return ToolOutput::error("the pod is stopping"),
            };
            match found {
                Some(content) => ToolOutput::ok(lines_of(
                    &content,
                    args.offset.unwrap_or(1),
                    args.limit.unwrap_or(DEFAULT_LINES),
                )),
                None => ToolOutput::error(format!(
                    "no paste {} in this conversation's current segment (a compaction or /clear \
                     leaves earlier pastes behind); ask the person to paste it again",
                    args.paste
                )),
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests;
