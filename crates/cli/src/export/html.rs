//! A transcript as one self-contained HTML file: inline CSS, no script, nothing fetched (a
//! Content-Security-Policy that allows only the inline style says so to the browser too), and
//! every piece of text from the log escaped. Messages are shown as text, not rendered from
//! Markdown: a link, an image or a tag in a message stays the characters it was, so nothing a
//! model or a tool wrote can run or load when the file is opened. Tool calls fold into
//! `<details>`.

use super::Header;
use super::transcript::{Block, Part, ToolOutcome};

const STYLE: &str = "\
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}\
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2.5rem;border-bottom:1px solid #ccc}\
.msg{margin:1rem 0;padding:.6rem .9rem;border-radius:6px}\
.who{font-weight:600;font-size:.85rem;margin-bottom:.3rem}\
.text,pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}\
pre{font:13px/1.4 ui-monospace,monospace;background:#f4f4f4;padding:.5rem;border-radius:4px}\
.user{background:#eef4ff}.assistant{background:#f7f7f7}.thinking{color:#666;font-style:italic}\
.note,.summary,.ended{border-left:3px solid #c9a400;background:#fffbe8}\
.ended{border-color:#c0392b;background:#fdecea}\
details.tool{margin:.4rem 0 .4rem 1rem;font-size:.9rem}details.tool summary{cursor:pointer}\
details.error summary{color:#c0392b}.label{font-size:.8rem;color:#666;margin:.4rem 0 .2rem}\
@media (prefers-color-scheme:dark){body{color:#ddd;background:#161616}pre{background:#222}\
.user{background:#1c2636}.assistant{background:#202020}.note,.summary{background:#2a2614}\
.ended{background:#3a1c1c}.thinking,.label{color:#999}}";

/// Only the inline style above may apply; nothing loads, nothing runs.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

pub fn render(header: &Header, parts: &[Part]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
    ));
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<title>Transcript of pod {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&header.pod)
    ));
    out.push_str(&format!(
        "<h1>Transcript of pod {}</h1>\n<p>{}</p>\n",
        escape(&header.pod),
        escape(&header.description())
    ));
    for part in parts {
        out.push_str(&format!(
            "<section>\n<h2>Segment {} ({})</h2>\n",
            escape(part.segment.as_str()),
            escape(&part.origin)
        ));
        for block in &part.blocks {
            out.push_str(&block_html(block));
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn block_html(block: &Block) -> String {
    match block {
        Block::User { text } => message("user", "You", text),
        Block::Assistant {
            text,
            interrupted: false,
        } => message("assistant", "Assistant", text),
        Block::Assistant {
            text,
            interrupted: true,
        } => message("assistant", "Assistant (interrupted)", text),
        Block::Thinking { text } => message("assistant thinking", "Thinking", text),
        Block::Summary { text } => message(
            "summary",
            "Summary of the earlier conversation (compaction)",
            text,
        ),
        Block::Note { label, text } => message("note", label, text),
        Block::RunEnded { text } => message("ended", "Run ended", text),
        Block::Tool {
            summary,
            arguments,
            result,
            ..
        } => {
            let (class, status, body) = match result {
                None => ("tool", "no result", String::new()),
                Some(ToolOutcome { content, is_error }) => (
                    if *is_error { "tool error" } else { "tool" },
                    if *is_error { "error" } else { "ok" },
                    format!(
                        "<div class=\"label\">result</div><pre>{}</pre>",
                        escape(content)
                    ),
                ),
            };
            format!(
                "<details class=\"{class}\"><summary>{} — {status}</summary>\
                 <div class=\"label\">arguments</div><pre>{}</pre>{body}</details>\n",
                escape(summary),
                escape(arguments)
            )
        }
    }
}

fn message(class: &str, who: &str, text: &str) -> String {
    format!(
        "<div class=\"msg {class}\"><div class=\"who\">{}</div><div class=\"text\">{}</div></div>\n",
        escape(who),
        escape(text.trim_end())
    )
}

/// Text as HTML character data or an attribute value: the five characters HTML gives meaning
/// to become references, so no text can open a tag, end one, or leave an attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        let cases = [
            (
                "</script><script>alert(1)</script>",
                "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;",
            ),
            (
                "<img src=x onerror=\"alert(1)\">",
                "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;",
            ),
            ("a & b 'c'", "a &amp; b &#39;c&#39;"),
            ("&lt;", "&amp;lt;"),
        ];
        for (text, escaped) in cases {
            assert_eq!(escape(text), escaped);
        }
    }
}
