//! The readable text of an error body that is not JSON: a proxy's or a web server's HTML page
//! ("502 Bad Gateway" from nginx, a captive portal, a login page) or plain text spread over
//! lines. What a person is shown of it is one line of words, never markup or escaped line
//! breaks (docs/design.md §Errors and bad input).
//!
//! This is not an HTML parser and does not need to be: it only has to find the words a page
//! shows. Tags are dropped, the content of `<head>`, `<script>` and `<style>` is skipped (the
//! page's `<title>` is kept, as the first words), the common entities are decoded and all
//! whitespace becomes single spaces.

/// Elements whose content is never shown on the page.
const HIDDEN: &[&str] = &["head", "script", "style"];

/// Whether `body` is markup rather than a sentence: it starts with a tag or a doctype.
pub(crate) fn is_markup(body: &str) -> bool {
    let start = body.trim_start();
    start.starts_with('<') && start[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '!')
}

/// `body` on one line: the words of a page (its title first), or a plain text with its line
/// breaks and runs of whitespace made single spaces.
pub(crate) fn one_line(body: &str) -> String {
    if !is_markup(body) {
        return collapse(body);
    }
    let title = element_text(body, "title").map(|t| collapse(&decode(&t)));
    let shown = collapse(&decode(&visible_text(body)));
    match title {
        Some(title) if !title.is_empty() && !shown.starts_with(&title) => {
            if shown.is_empty() {
                title
            } else {
                format!("{title}: {shown}")
            }
        }
        Some(_) | None => shown,
    }
}

/// Runs of whitespace (line breaks included) as single spaces, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text inside the first `<name>` element, if the page has one.
fn element_text(page: &str, name: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let open = lower.find(&format!("<{name}"))?;
    let content = open + lower[open..].find('>')? + 1;
    let close = lower[content..]
        .find(&format!("</{name}"))
        .map_or(page.len(), |at| content + at);
    Some(page[content..close].to_owned())
}

/// The page without its tags and without the content of the elements a browser never shows.
/// Each tag becomes a space, so `<td>a</td><td>b</td>` reads `a b`.
fn visible_text(page: &str) -> String {
    let lower = page.to_ascii_lowercase();
    let mut text = String::with_capacity(page.len() / 2);
    let mut at = 0;
    while at < page.len() {
        let Some(offset) = page[at..].find('<') else {
            text.push_str(&page[at..]);
            break;
        };
        text.push_str(&page[at..at + offset]);
        let tag = at + offset;
        let Some(end) = page[tag..].find('>').map(|e| tag + e + 1) else {
            // An unclosed `<` is text, as a browser shows it.
            text.push_str(&page[tag..]);
            break;
        };
        text.push(' ');
        at = match HIDDEN.iter().find(|name| opens(&lower[tag..end], name)) {
            Some(name) => lower[end..]
                .find(&format!("</{name}"))
                .and_then(|close| {
                    lower[end + close..]
                        .find('>')
                        .map(|gt| end + close + gt + 1)
                })
                .unwrap_or(page.len()),
            None => end,
        };
    }
    text
}

/// Whether the tag `tag` (`<…>`, lowercased) opens element `name`.
fn opens(tag: &str, name: &str) -> bool {
    tag.strip_prefix('<')
        .and_then(|rest| rest.strip_prefix(name))
        .is_some_and(|rest| rest.starts_with(|c: char| c == '>' || c == '/' || c.is_whitespace()))
}

/// The entities error pages use; an unknown one stays as written.
fn decode(text: &str) -> String {
    const ENTITIES: &[(&str, &str)] = &[
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&apos;", "'"),
        ("&amp;", "&"),
    ];
    if !text.contains('&') {
        return text.to_owned();
    }
    ENTITIES
        .iter()
        .fold(text.to_owned(), |text, (entity, char)| {
            text.replace(entity, char)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_nginx_error_page_reads_as_its_words() {
        let page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
                    <center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n\
                    </body>\r\n</html>\r\n";
        assert_eq!(one_line(page), "502 Bad Gateway nginx/1.25.3");
    }

    #[test]
    fn a_title_the_body_does_not_repeat_comes_first() {
        let page = "<!DOCTYPE html><html><head><title>Sign in</title>\
                    <style>body { color: red }</style><script>var x = '<p>';</script></head>\
                    <body><p>Your session &amp; token expired.</p>\n\n<p>Log in again.</p></body></html>";
        assert_eq!(
            one_line(page),
            "Sign in: Your session & token expired. Log in again."
        );
    }

    #[test]
    fn plain_text_loses_its_line_breaks_only() {
        assert_eq!(
            one_line("upstream\nconnect error\n\n  or reset"),
            "upstream connect error or reset"
        );
        assert!(!is_markup("< 5 tokens left"));
        assert_eq!(one_line("a < b and c > d"), "a < b and c > d");
    }

    #[test]
    fn broken_markup_never_panics_and_keeps_its_text() {
        for page in [
            "<html><body>half a tag <b",
            "<title>only a title",
            "<script>never closed",
            "<",
            "<a",
        ] {
            let _ = one_line(page);
        }
        assert_eq!(one_line("<title>only a title"), "only a title");
        assert_eq!(one_line("<p>multi ✓ byte é</p>"), "multi ✓ byte é");
    }
}
