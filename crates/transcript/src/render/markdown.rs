//! Assistant markdown → lines: headings, emphasis, lists, block quotes, links, inline code,
//! fenced code (highlighted), tables and rules. Streaming text goes through the same path, so
//! an unclosed fence simply renders as code until it closes.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::highlight;
use super::table::{self, Table};
use super::text::{sanitize, width};
use super::theme::{Role, Theme};
use super::wrap::{hard_wrap, wrap};

/// Bullets by nesting depth.
const BULLETS: [&str; 3] = ["• ", "◦ ", "▪ "];

pub(crate) fn markdown(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let text = sanitize(text);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut md = Md::new(width, theme);
    for event in Parser::new_ext(&text, options) {
        md.event(event);
    }
    md.flush();
    md.out
}

/// A block that indents what it contains.
enum Container {
    Quote,
    /// A list item; `pending` until its marker has been drawn on its first line.
    Item {
        marker: String,
        pending: bool,
    },
}

struct Md<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    /// The current block's inline content, split at hard breaks.
    inline: Vec<Vec<Span<'static>>>,
    /// Inline styles in effect (emphasis, links, heading), innermost last.
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Open lists: the next number of an ordered list, `None` for bullets.
    lists: Vec<Option<u64>>,
    /// A blank line is owed before the next block.
    gap: bool,
    /// A fenced or indented code block being collected: (language, text).
    code: Option<(String, String)>,
    table: Option<Table>,
    table_row: Vec<Vec<Span<'static>>>,
    /// Open links: their target, and where their text starts in the current inline line.
    links: Vec<(String, usize)>,
}

impl<'t> Md<'t> {
    fn new(width: usize, theme: &'t Theme) -> Md<'t> {
        Md {
            theme,
            width,
            out: Vec::new(),
            inline: vec![Vec::new()],
            styles: Vec::new(),
            containers: Vec::new(),
            lists: Vec::new(),
            gap: false,
            code: None,
            table: None,
            table_row: Vec::new(),
            links: Vec::new(),
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&text);
                } else {
                    self.text(&text, self.style());
                }
            }
            Event::Code(code) => {
                let style = self.style().patch(self.theme.style(Role::Code));
                if self.theme.is_colored() {
                    self.push(Span::styled(code.to_string(), style));
                } else {
                    // Without colour, the backticks are what marks code.
                    self.push(Span::styled(format!("`{code}`"), style));
                }
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text, self.style()),
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.style().patch(self.theme.style(Role::Dim));
                self.text(html.trim_end_matches('\n'), style);
            }
            Event::FootnoteReference(label) => {
                self.push(Span::styled(format!("[^{label}]"), self.style()));
            }
            // The model's own line breaks are kept (every agent TUI does): markdown would join
            // the lines of an address, a poem or a list written without markers into one.
            Event::SoftBreak | Event::HardBreak => self.inline.push(Vec::new()),
            Event::Rule => {
                self.block_start();
                let prefix = self.prefix(true);
                let avail = self.width.saturating_sub(spans_width(&prefix)).max(1);
                let mut spans = prefix;
                spans.push(Span::styled("─".repeat(avail), self.theme.style(Role::Dim)));
                self.out.push(Line::from(spans));
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.push(Span::styled(mark, self.theme.style(Role::Dim)));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                let mut style = self.theme.style(Role::Heading);
                style = match level {
                    HeadingLevel::H1 => style.add_modifier(Modifier::UNDERLINED),
                    HeadingLevel::H2 => style,
                    HeadingLevel::H3 | HeadingLevel::H4 | HeadingLevel::H5 | HeadingLevel::H6 => {
                        style.add_modifier(Modifier::ITALIC)
                    }
                };
                self.styles.push(style);
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(first) => {
                // Text of a tight item comes without a paragraph; draw it before the sublist.
                self.flush();
                if self.lists.is_empty() {
                    self.block_start();
                }
                self.lists.push(first);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    Some(None) | None => BULLETS[depth % BULLETS.len()].to_string(),
                };
                self.containers.push(Container::Item {
                    marker,
                    pending: true,
                });
            }
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => self.table_row.clear(),
            Tag::TableCell => self.inline = vec![Vec::new()],
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let start = self.inline.last().map_or(0, Vec::len);
                self.links.push((dest_url.to_string(), start));
                self.push_style(self.theme.style(Role::Link));
            }
            Tag::Image { .. } => {
                self.push(Span::styled("[image: ", self.theme.style(Role::Dim)));
                self.push_style(self.theme.style(Role::Dim));
            }
            Tag::FootnoteDefinition(label) => {
                self.block_start();
                self.push(Span::styled(
                    format!("[^{label}]: "),
                    self.theme.style(Role::Dim),
                ));
            }
            Tag::HtmlBlock
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::FootnoteDefinition | TagEnd::HtmlBlock => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                self.code_block();
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.gap = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_block(&table);
                }
                self.gap = true;
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.head = std::mem::take(&mut self.table_row);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(std::mem::take(&mut self.table_row));
                }
            }
            TagEnd::TableCell => {
                let lines = std::mem::replace(&mut self.inline, vec![Vec::new()]);
                let cell = lines.into_iter().flatten().collect();
                self.table_row.push(cell);
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some((url, start)) = self.links.pop() {
                    self.link_target(&url, start);
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                self.push(Span::styled("]", self.theme.style(Role::Dim)));
            }
            TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    /// Show a link's target after its text, unless the text already is the target.
    fn link_target(&mut self, url: &str, start: usize) {
        let shown: String = self
            .inline
            .last()
            .map(|line| {
                line.iter()
                    .skip(start)
                    .map(|s| s.content.as_ref())
                    .collect()
            })
            .unwrap_or_default();
        let bare = url.strip_prefix("mailto:").unwrap_or(url);
        if url.is_empty() || shown == url || shown == bare {
            return;
        }
        self.push(Span::styled(
            format!(" ({url})"),
            self.theme.style(Role::Dim),
        ));
    }

    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(self.theme.style(Role::Assistant), |acc, s| acc.patch(*s))
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(style);
    }

    fn push(&mut self, span: Span<'static>) {
        if let Some(line) = self.inline.last_mut() {
            line.push(span);
        }
    }

    /// Inline text; a newline inside it (HTML, math) starts a new line.
    fn text(&mut self, text: &str, style: Style) {
        for (n, piece) in text.split('\n').enumerate() {
            if n > 0 {
                self.inline.push(Vec::new());
            }
            if !piece.is_empty() {
                self.push(Span::styled(piece.to_string(), style));
            }
        }
    }

    /// Before a block: draw what is pending and pay the blank line owed.
    fn block_start(&mut self) {
        self.flush();
        if self.gap && !self.out.is_empty() {
            let prefix = self.prefix(false);
            let text: String = prefix.iter().map(|s| s.content.as_ref()).collect();
            let trimmed = text.trim_end().to_string();
            self.out.push(Line::from(Span::styled(
                trimmed,
                self.theme.style(Role::Quote),
            )));
        }
        self.gap = false;
    }

    /// Containers' prefix: quote bars and list markers (on an item's first line) or the
    /// markers' width in spaces.
    fn prefix(&mut self, first: bool) -> Vec<Span<'static>> {
        let quote = self
            .theme
            .style(Role::Quote)
            .patch(self.theme.style(Role::Dim));
        let marker_style = self.theme.style(Role::Dim);
        let mut spans = Vec::new();
        for container in &mut self.containers {
            match container {
                Container::Quote => spans.push(Span::styled("│ ", quote)),
                Container::Item { marker, pending } => {
                    if first && *pending {
                        spans.push(Span::styled(marker.clone(), marker_style));
                        *pending = false;
                    } else {
                        spans.push(Span::raw(" ".repeat(width(marker))));
                    }
                }
            }
        }
        spans
    }

    /// Wrap and emit the pending inline content.
    fn flush(&mut self) {
        if self.table.is_some() || self.inline.iter().all(Vec::is_empty) {
            self.inline = vec![Vec::new()];
            return;
        }
        let lines = std::mem::replace(&mut self.inline, vec![Vec::new()]);
        for (n, spans) in lines.iter().enumerate() {
            let first = self.prefix(n == 0);
            let rest = self.prefix(false);
            self.out.extend(wrap(spans, self.width, &first, &rest));
        }
    }

    /// A fenced block: its language on a line of its own, then its lines indented (behind a
    /// bar without colour, where nothing else tells code from prose), each wrapped line
    /// continuing under its own indentation.
    fn code_block(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        let code = code.strip_suffix('\n').unwrap_or(&code);
        let indent = if self.theme.is_colored() {
            Span::raw(CODE_INDENT)
        } else {
            Span::styled(CODE_BAR, self.theme.style(Role::Dim))
        };
        let lang = lang.split_whitespace().next().unwrap_or("");
        let mut labelled = false;
        if !lang.is_empty() {
            let mut spans = self.prefix(true);
            spans.push(Span::raw(CODE_INDENT));
            spans.push(Span::styled(
                sanitize(lang).into_owned(),
                self.theme.style(Role::Dim),
            ));
            self.out.extend(hard_wrap(&spans, self.width, &[], &[]));
            labelled = true;
        }
        for (n, spans) in highlight(code, lang, self.theme).into_iter().enumerate() {
            let mut first = self.prefix(n == 0 && !labelled);
            first.push(indent.clone());
            let mut rest = self.prefix(false);
            rest.push(indent.clone());
            let own: String = spans
                .iter()
                .flat_map(|s| s.content.chars())
                .take_while(|c| *c == ' ')
                .collect();
            // Deep indentation would leave no room: then the wrap starts at the block's edge.
            if width(&own) * 2 < self.width {
                rest.push(Span::raw(own));
            }
            self.out
                .extend(hard_wrap(&spans, self.width, &first, &rest));
        }
    }

    fn table_block(&mut self, table: &Table) {
        let probe = self.prefix(false);
        let avail = self.width.saturating_sub(spans_width(&probe)).max(1);
        for (n, line) in table::render(table, avail, self.theme)
            .into_iter()
            .enumerate()
        {
            let mut spans = self.prefix(n == 0);
            spans.extend(line.spans);
            self.out.push(Line::from(spans));
        }
    }
}

/// Code lines sit this far in from the text around them.
const CODE_INDENT: &str = "  ";

/// The same room without colour: a bar, so code stands apart from prose.
const CODE_BAR: &str = "│ ";

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| width(&s.content)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str, width: usize) -> Vec<String> {
        markdown(text, width, &Theme::plain())
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn paragraphs_are_separated_by_one_blank_line() {
        assert_eq!(render("one\n\ntwo", 20), ["one", "", "two"]);
    }

    #[test]
    fn a_single_line_break_is_kept() {
        assert_eq!(
            render("Step one: build\nStep two: test", 40),
            ["Step one: build", "Step two: test"]
        );
        // Inside a list item and a quote too, with their indent.
        assert_eq!(render("- first\n  more", 20), ["• first", "  more"]);
        assert_eq!(render("> a\n> b", 20), ["│ a", "│ b"]);
    }

    #[test]
    fn tight_lists_have_markers_and_hanging_indent() {
        let lines = render("- alpha beta gamma\n- two\n  1. nested", 12);
        assert_eq!(lines, ["• alpha beta", "  gamma", "• two", "  1. nested"]);
    }

    #[test]
    fn quotes_keep_their_bar_on_every_line() {
        assert_eq!(render("> a b c d", 5), ["│ a b", "│ c d"]);
    }

    #[test]
    fn links_show_their_target_once() {
        assert_eq!(
            render("[docs](https://x.y) and <https://x.y>", 80),
            ["docs (https://x.y) and https://x.y"]
        );
    }

    #[test]
    fn code_blocks_are_indented_and_not_word_wrapped() {
        let lines = render("```\nlet  x = 1;\n```", 40);
        assert_eq!(lines, ["│ let  x = 1;"], "a bar marks code without colour");
        let colored: Vec<String> = markdown("```\nlet  x = 1;\n```", 40, &Theme::colored())
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert_eq!(colored, ["  let  x = 1;"]);
    }

    #[test]
    fn code_blocks_say_their_language_and_wrap_under_their_indentation() {
        let lines = render(
            "```rust\nfn main() {\n    let total = first + second + third;\n}\n```",
            30,
        );
        assert_eq!(
            lines,
            [
                "  rust",
                "│ fn main() {",
                "│     let total = first + seco",
                "│     nd + third;",
                "│ }",
            ]
        );
    }
}
