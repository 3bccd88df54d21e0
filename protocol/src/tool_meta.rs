//! `ToolMeta`: the facts about a tool call's outcome that a client or a script wants without
//! parsing the result text (exit code, how much output was dropped, how long it ran). Stored
//! beside the text in the `tool_result` entry; the model reads the same facts in the text, so
//! the metadata is never sent to it and an entry without any is what older pods wrote.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMeta {
    /// A command's exit code; 124 after a timeout, as coreutils' `timeout` reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended a command, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The call ran past its time limit and was stopped.
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    /// Output bytes left out of the text (a command's middle, a result cut to fit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_dropped: u64,
    /// The text is not the whole output (`bytes_dropped` says how much is missing when known).
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// Wall time from the call's start to its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// What an MCP tool returned besides text (images, audio, resources): the model reads a
    /// placeholder line for each; clients show them from here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<ToolAttachment>,
    /// What the shell sandbox saw a command do that a person must hear about. The pod alerts
    /// from these, never from the result's text (a command may print anything).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox: Vec<SandboxFinding>,
    /// Tools a `tool_search` call loaded: the segment offers them, exactly as written here,
    /// from the next request on (the store's fold appends them to the segment's tools, so a
    /// restore rebuilds the same request; docs/agent-loop.md §Tool search). Unlike the other
    /// fields this one reaches the model, in the tools array; the text says the same.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loaded_tools: Vec<crate::ToolSpec>,
    /// What a file tool kept of each file before changing it, so a rewind can put it back
    /// (docs/storage.md §Checkpoints). Never sent to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<crate::checkpoint::FileCheckpoint>,
}

/// Something a sandboxed command did that the person is alerted to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SandboxFinding {
    /// It changed files that git or seedpod run commands from; left for the person to review.
    Tampered { paths: Vec<String> },
    /// It created such files; they were removed again.
    Reverted { paths: Vec<String> },
    /// It reached for seedpod's sockets or state (refused by the sandbox).
    ReachedForSeedpod,
    #[serde(other)]
    Unknown,
}

/// Content of a tool result that is not text, described rather than carried: the bytes stay
/// out of the log and out of the model's context — but for an image that passed the checks
/// (`data`), which providers that read images in tool results are sent (`ModelItem::ToolResult
/// .images`, derived from this when the log is folded, so replay sends the same bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolAttachment {
    Image {
        mime_type: String,
        /// Decoded size.
        bytes: u64,
        /// The image, base64 (standard alphabet, padded), when it is passed to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// Why it is not passed to the model (too large, not the kind it claims, …).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        left_out: Option<String>,
    },
    Audio {
        mime_type: String,
        bytes: u64,
    },
    /// A resource embedded in the result (its text, if any, is in the result's text).
    Resource {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Set for binary resources (whose bytes were left out).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// A pointer to a resource the server can serve.
    ResourceLink {
        uri: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

impl ToolAttachment {
    /// One line for the model's text and for clients: `[image: image/png, 1,234 bytes]`.
    pub fn placeholder(&self) -> String {
        use crate::thousands;
        match self {
            ToolAttachment::Image {
                mime_type,
                bytes,
                left_out,
                ..
            } => match left_out {
                None => format!("[image: {mime_type}, {} bytes]", thousands(*bytes)),
                Some(why) => format!(
                    "[image: {mime_type}, {} bytes; not passed on: {why}]",
                    thousands(*bytes)
                ),
            },
            ToolAttachment::Audio { mime_type, bytes } => {
                format!("[audio: {mime_type}, {} bytes]", thousands(*bytes))
            }
            ToolAttachment::Resource {
                uri,
                mime_type,
                bytes,
            } => {
                let mut line = format!("[resource: {uri}");
                if let Some(mime) = mime_type {
                    line.push_str(&format!(", {mime}"));
                }
                if let Some(bytes) = bytes {
                    line.push_str(&format!(", {} bytes", thousands(*bytes)));
                }
                line.push(']');
                line
            }
            ToolAttachment::ResourceLink {
                uri,
                name,
                mime_type,
            } => match mime_type {
                Some(mime) => format!("[resource link: {name} <{uri}>, {mime}]"),
                None => format!("[resource link: {name} <{uri}>]"),
            },
            ToolAttachment::Unknown => "[content of an unknown kind]".to_owned(),
        }
    }
}

impl ToolMeta {
    /// The images of this result that are passed to models that read them, in order.
    pub fn images(&self) -> Vec<crate::ToolImage> {
        self.attachments
            .iter()
            .filter_map(|attachment| match attachment {
                ToolAttachment::Image {
                    mime_type,
                    data: Some(data),
                    ..
                } => Some(crate::ToolImage {
                    mime_type: mime_type.clone(),
                    data: data.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// Keep every image from the model (the result it came with was withheld), saying so.
    pub fn withhold_images(&mut self) {
        for attachment in &mut self.attachments {
            if let ToolAttachment::Image { data, left_out, .. } = attachment
                && data.take().is_some()
            {
                *left_out = Some("withheld with the result".to_owned());
            }
        }
    }

    /// Nothing known: such metadata is left out of the entry.
    pub fn is_empty(&self) -> bool {
        *self == ToolMeta::default()
    }

    /// A few words on how a failed command ended ("exit 3", "timed out", "signal 9"), for
    /// summary lines; `None` when there is nothing to say beyond success.
    pub fn outcome(&self) -> Option<String> {
        if self.timed_out {
            return Some("timed out".to_owned());
        }
        if let Some(signal) = self.signal {
            return Some(format!("signal {signal}"));
        }
        match self.exit_code {
            Some(0) | None => None,
            Some(code) => Some(format!("exit {code}")),
        }
    }

    /// Record `dropped` more bytes left out of the text.
    pub fn dropped(&mut self, dropped: u64) {
        if dropped > 0 {
            self.bytes_dropped = self.bytes_dropped.saturating_add(dropped);
            self.truncated = true;
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_metadata_writes_nothing_and_reads_back_from_nothing() {
        assert_eq!(serde_json::to_string(&ToolMeta::default()).unwrap(), "{}");
        let back: ToolMeta = serde_json::from_str("{}").unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn only_known_facts_are_written() {
        let meta = ToolMeta {
            exit_code: Some(3),
            duration_ms: Some(40),
            ..ToolMeta::default()
        };
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"exit_code":3,"duration_ms":40}"#
        );
    }

    #[test]
    fn the_outcome_names_what_went_wrong_first() {
        let mut meta = ToolMeta {
            exit_code: Some(124),
            timed_out: true,
            ..ToolMeta::default()
        };
        assert_eq!(meta.outcome().as_deref(), Some("timed out"));
        meta.timed_out = false;
        assert_eq!(meta.outcome().as_deref(), Some("exit 124"));
        meta.exit_code = Some(0);
        assert_eq!(meta.outcome(), None);
        meta.signal = Some(9);
        assert_eq!(meta.outcome().as_deref(), Some("signal 9"));
    }

    #[test]
    fn dropping_bytes_marks_the_text_truncated() {
        let mut meta = ToolMeta::default();
        meta.dropped(0);
        assert!(meta.is_empty());
        meta.dropped(10);
        meta.dropped(5);
        assert_eq!(meta.bytes_dropped, 15);
        assert!(meta.truncated);
    }

    #[test]
    fn withheld_images_lose_their_bytes_and_say_why() {
        let mut meta = ToolMeta {
            attachments: vec![ToolAttachment::Image {
                mime_type: "image/png".into(),
                bytes: 8,
                data: Some("iVBORw0KGgo=".into()),
                left_out: None,
            }],
            ..ToolMeta::default()
        };
        assert_eq!(meta.images().len(), 1);
        meta.withhold_images();
        assert!(meta.images().is_empty());
        assert!(meta.attachments[0].placeholder().contains("withheld"));
    }
}
