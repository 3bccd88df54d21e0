//! A transcript as Markdown: a heading per segment and per message, tool calls as one compact
//! line each, summaries, reports and notes as quotes. Messages are written as the model and the
//! person wrote them (they are Markdown already); what seedpod adds around them — tool
//! summaries in code spans, quoted notes — is quoted so it cannot break out of its place.

use super::Header;
use super::transcript::{Block, Part, ToolOutcome};

pub fn render(header: &Header, parts: &[Part]) -> String {
    let mut out = format!(
        "# Transcript of pod {}\n\n{}\n",
        header.pod,
        header.description()
    );
    for part in parts {
        out.push_str(&format!(
            "\n## Segment {} ({})\n",
            part.segment, part.origin
        ));
        for block in &part.blocks {
            out.push('\n');
            out.push_str(&block_md(block));
        }
    }
    out
}

fn block_md(block: &Block) -> String {
    match block {
        Block::User { text } => format!("### You\n\n{}\n", text.trim_end()),
        Block::Assistant {
            text,
            interrupted: false,
        } => format!("### Assistant\n\n{}\n", text.trim_end()),
        Block::Assistant {
            text,
            interrupted: true,
        } => format!("### Assistant (interrupted)\n\n{}\n", text.trim_end()),
        Block::Thinking { text } => quote("*Thinking*", text),
        Block::Tool {
            summary, result, ..
        } => format!("- {} → {}\n", code_span(summary), outcome(result.as_ref())),
        Block::Summary { text } => {
            quote("**Summary of the earlier conversation** (compaction)", text)
        }
        Block::Note { label, text } => quote(&format!("**{}**", one_line(label)), text),
        Block::RunEnded { text } => quote("**Run ended**", text),
    }
}

/// How a tool call ended, in a few words.
fn outcome(result: Option<&ToolOutcome>) -> String {
    match result {
        None => "no result".into(),
        Some(ToolOutcome {
            is_error: false,
            content,
        }) => format!("ok ({} lines)", content.lines().count()),
        Some(ToolOutcome {
            is_error: true,
            content,
        }) => {
            let first = content.lines().next().unwrap_or_default();
            format!("error: {}", code_span(&cut(first, 200)))
        }
    }
}

/// `title` then `text`, all as a block quote.
fn quote(title: &str, text: &str) -> String {
    let mut out = format!("> {title}\n>\n");
    for line in text.trim_end().lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `text` as an inline code span: fenced with more backticks than it contains in a row, on one
/// line, so nothing in it is read as Markdown.
pub fn code_span(text: &str) -> String {
    let text = one_line(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A space inside the fence keeps a leading or trailing backtick apart from it.
    format!("{fence} {text} {fence}")
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_span_outlasts_the_backticks_inside_it() {
        assert_eq!(code_span("ls"), "` ls `");
        assert_eq!(code_span("echo `date`"), "`` echo `date` ``");
        assert_eq!(code_span("a ``` b\nc"), "```` a ``` b c ````");
    }

    #[test]
    fn a_note_cannot_leave_its_quote() {
        let md = quote(
            "**Notification**",
            "line one\n\n# not a heading\n<script>x</script>",
        );
        for line in md.lines() {
            assert!(line.starts_with('>'), "{line:?} in {md}");
        }
    }
}
