//! An MCP `tools/call` result as the model reads it: text content as text, images, audio and
//! resources as one placeholder line each (described in the result's metadata for clients;
//! an image that passes `image.rs`'s checks is kept there too, for models that read images),
//! structured content as JSON when there is no text, `isError` kept, and the whole capped like
//! `shell`'s output with a note saying what was left out.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use seedpod_engine::ToolOutput;
use seedpod_protocol::{ToolAttachment, ToolMeta, thousands};

/// The result of MCP tool `tool` as the model reads it: at most `max` bytes of it (the
/// server's `max_output`, docs/configuration.md §MCP servers), its first and last halves.
pub fn to_output(result: CallToolResult, tool: &str, max: usize) -> ToolOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut attachments = Vec::new();
    let mut images = super::image::Images::default();
    for block in result.content {
        match block {
            ContentBlock::Text(text) => parts.push(text.text),
            ContentBlock::Image(image) => {
                attachments.push(images.attach(&image.data, image.mime_type));
            }
            ContentBlock::Audio(audio) => attachments.push(ToolAttachment::Audio {
                bytes: base64_len(&audio.data),
                mime_type: audio.mime_type,
            }),
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => {
                    attachments.push(ToolAttachment::Resource {
                        uri,
                        mime_type,
                        bytes: None,
                    });
                    parts.push(text);
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => attachments.push(ToolAttachment::Resource {
                    uri,
                    mime_type,
                    bytes: Some(base64_len(&blob)),
                }),
                _ => attachments.push(ToolAttachment::Unknown),
            },
            ContentBlock::ResourceLink(link) => attachments.push(ToolAttachment::ResourceLink {
                uri: link.uri,
                name: link.name,
                mime_type: link.mime_type,
            }),
            // Content kinds newer than this client: said to be there, not shown.
            _ => attachments.push(ToolAttachment::Unknown),
        }
    }
    // Structured content duplicates the text by the spec's advice; it is the result only when
    // the server sent nothing else.
    if parts.is_empty()
        && attachments.is_empty()
        && let Some(structured) = result.structured_content
    {
        parts.push(structured.to_string());
    }
    let is_error = result.is_error.unwrap_or(false);
    let mut text = parts.join("\n");
    for attachment in &attachments {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&attachment.placeholder());
    }
    if text.is_empty() {
        text = if is_error {
            "the tool failed and said nothing more".to_owned()
        } else {
            "(the tool returned no content)".to_owned()
        };
    }
    let mut meta = ToolMeta {
        attachments,
        ..ToolMeta::default()
    };
    let text = cap(text, max, tool, &mut meta);
    ToolOutput {
        content: text,
        is_error,
        meta: Box::new(meta),
    }
}

/// `text` cut to about `max` bytes, keeping its start and end (at character boundaries) with a
/// note in between that names `tool`, so the model knows which tool to ask for less.
pub fn cap(text: String, max: usize, tool: &str, meta: &mut ToolMeta) -> String {
    if text.len() <= max {
        return text;
    }
    let mut head_end = max / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (max - max / 2);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let dropped = (tail_start - head_end) as u64;
    meta.dropped(dropped);
    format!(
        "{}\n[… {} bytes of the result of {tool} dropped here ({} in total); ask {tool} for less \
         at a time …]\n{}",
        &text[..head_end],
        thousands(dropped),
        thousands(text.len() as u64),
        &text[tail_start..]
    )
}

use super::image::base64_len;

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, EmbeddedResource};

    #[test]
    fn text_is_text_and_the_rest_are_placeholders_described_in_the_metadata() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::text("second"),
            ContentBlock::Resource(EmbeddedResource::new(ResourceContents::text(
                "inside",
                "file:///a.txt",
            ))),
        ]);
        result.is_error = Some(true);
        let out = to_output(result, "mcp__t__x", 1024);
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "first\nsecond\ninside\n[image: image/png, 5 bytes; not passed on: its bytes are not a \
             image/png image]\n[resource: file:///a.txt, text/plain]"
        );
        assert_eq!(out.meta.attachments.len(), 2);
        assert!(!out.meta.truncated);
    }

    #[test]
    fn structured_content_stands_in_only_for_missing_text() {
        let mut result = CallToolResult::success(Vec::new());
        result.structured_content = Some(serde_json::json!({"n": 1}));
        assert_eq!(to_output(result, "mcp__t__x", 1024).content, r#"{"n":1}"#);
        let empty = to_output(CallToolResult::success(Vec::new()), "mcp__t__x", 1024);
        assert_eq!(empty.content, "(the tool returned no content)");
        assert!(!empty.is_error);
    }

    #[test]
    fn a_huge_result_keeps_its_ends_and_says_what_was_dropped() {
        let text = format!("{}{}", "é".repeat(200_000), "END");
        let max = 200 * 1024;
        let out = to_output(
            CallToolResult::success(vec![ContentBlock::text(text.clone())]),
            "mcp__fs__read_text_file",
            max,
        );
        assert!(out.content.len() < max + 300);
        assert!(out.content.starts_with('é') && out.content.ends_with("END"));
        // The note names the tool that produced the result.
        assert!(
            out.content
                .contains("of the result of mcp__fs__read_text_file dropped here")
                && out.content.contains("ask mcp__fs__read_text_file for less"),
            "{}",
            &out.content[max / 2 - 10..max / 2 + 200]
        );
        assert!(!out.content.contains("read_file "));
        assert!(out.meta.truncated && out.meta.bytes_dropped > 0);
        // A smaller `max_output` keeps less.
        let small = to_output(
            CallToolResult::success(vec![ContentBlock::text(text)]),
            "mcp__fs__read_text_file",
            4096,
        );
        assert!(small.content.len() < 4096 + 300, "{}", small.content.len());
    }
}
