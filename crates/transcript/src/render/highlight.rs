//! Syntax highlighting of fenced code blocks with syntect's parser and its bundled grammars.
//!
//! syntect's themes are RGB, which would break the colour policy (a dark theme is unreadable on
//! a light terminal). So only the parser is used: each token's scope is mapped to one of a
//! handful of `Role`s, and the `Theme` gives those named ANSI colours (or none under NO_COLOR).

use std::sync::OnceLock;

use ratatui::text::Span;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

use super::theme::{Role, Theme};

/// Blocks larger than this are not highlighted: regex grammars can be slow on odd input, and a
/// layout must stay quick. The text is still shown.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;
/// Lines longer than this end highlighting for the rest of the block (minified code).
const MAX_HIGHLIGHT_LINE: usize = 2_000;

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Scope prefixes and the role they get, most specific first.
fn classes() -> &'static [(Scope, Role)] {
    static CLASSES: OnceLock<Vec<(Scope, Role)>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        [
            ("comment", Role::SyntaxComment),
            ("string", Role::SyntaxString),
            ("constant.character", Role::SyntaxString),
            ("constant.numeric", Role::SyntaxNumber),
            ("constant.language", Role::SyntaxNumber),
            ("keyword", Role::SyntaxKeyword),
            ("storage.type", Role::SyntaxKeyword),
            ("storage.modifier", Role::SyntaxKeyword),
            ("variable.language", Role::SyntaxKeyword),
            ("entity.name.function", Role::SyntaxFunction),
            ("support.function", Role::SyntaxFunction),
            ("entity.name.type", Role::SyntaxType),
            ("entity.name.class", Role::SyntaxType),
            ("entity.name.struct", Role::SyntaxType),
            ("entity.name.enum", Role::SyntaxType),
            ("support.type", Role::SyntaxType),
            ("support.class", Role::SyntaxType),
        ]
        .into_iter()
        .filter_map(|(name, role)| Scope::new(name).ok().map(|scope| (scope, role)))
        .collect()
    })
}

/// Warm the grammar set (tens of milliseconds) before the first code block needs it.
pub fn preload() {
    let _ = syntaxes();
    let _ = classes();
}

/// The lines of `code` (already sanitised, no trailing newline), each as styled spans.
pub(crate) fn highlight(code: &str, lang: &str, theme: &Theme) -> Vec<Vec<Span<'static>>> {
    let base = theme.style(Role::Assistant);
    let plain = || {
        code.split('\n')
            .map(|line| vec![Span::styled(line.to_string(), base)])
            .collect()
    };
    if !theme.is_colored() || lang.is_empty() || code.len() > MAX_HIGHLIGHT_BYTES {
        return plain();
    }
    let set = syntaxes();
    let Some(syntax) = find_syntax(set, lang) else {
        return plain();
    };
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = Vec::new();
    let mut lines = code.split('\n');
    for line in lines.by_ref() {
        if line.len() > MAX_HIGHLIGHT_LINE {
            out.push(vec![Span::styled(line.to_string(), base)]);
            break;
        }
        match highlight_line(line, &mut state, &mut stack, set, theme) {
            Some(spans) => out.push(spans),
            None => {
                out.push(vec![Span::styled(line.to_string(), base)]);
                break;
            }
        }
    }
    out.extend(lines.map(|line| vec![Span::styled(line.to_string(), base)]));
    out
}

fn find_syntax<'s>(set: &'s SyntaxSet, lang: &str) -> Option<&'s SyntaxReference> {
    // Info strings can carry more than the language (` ```rust,ignore `).
    let token = lang.split([',', ' ', '{']).next().unwrap_or(lang).trim();
    set.find_syntax_by_token(token)
}

/// One line's spans, or `None` when the grammar fails (then the rest is shown plain).
fn highlight_line(
    line: &str,
    state: &mut ParseState,
    stack: &mut ScopeStack,
    set: &SyntaxSet,
    theme: &Theme,
) -> Option<Vec<Span<'static>>> {
    let with_newline = format!("{line}\n");
    let ops = state.parse_line(&with_newline, set).ok()?;
    let mut spans = Vec::new();
    let mut at = 0;
    for (position, op) in ops {
        let position = position.min(line.len());
        if position > at {
            push_token(&mut spans, &line[at..position], stack, theme);
            at = position;
        }
        stack.apply(&op).ok()?;
    }
    if at < line.len() {
        push_token(&mut spans, &line[at..], stack, theme);
    }
    Some(spans)
}

fn push_token(spans: &mut Vec<Span<'static>>, text: &str, stack: &ScopeStack, theme: &Theme) {
    let role = classify(stack);
    let style = theme.style(role);
    // Merge with the previous token when the style is the same: fewer spans to draw.
    if let Some(last) = spans.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    spans.push(Span::styled(text.to_string(), style));
}

fn classify(stack: &ScopeStack) -> Role {
    for scope in stack.as_slice().iter().rev() {
        for (class, role) in classes() {
            if class.is_prefix_of(*scope) {
                return *role;
            }
        }
    }
    Role::Assistant
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_keywords_and_strings_get_roles() {
        let theme = Theme::colored();
        let lines = highlight("fn main() {\n    let s = \"hi\";\n}", "rust", &theme);
        assert_eq!(lines.len(), 3);
        let keyword = theme.style(Role::SyntaxKeyword);
        assert!(
            lines[0]
                .iter()
                .any(|s| s.content == "fn" && s.style == keyword)
        );
        let string = theme.style(Role::SyntaxString);
        assert!(
            lines[1]
                .iter()
                .any(|s| s.content.contains("hi") && s.style == string)
        );
        let text: String = lines[1].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "    let s = \"hi\";");
    }

    #[test]
    fn unknown_language_and_plain_theme_are_unstyled() {
        let lines = highlight("x = 1", "no-such-language", &Theme::colored());
        assert_eq!(lines, vec![vec![Span::raw("x = 1")]]);
        let lines = highlight("fn x() {}", "rust", &Theme::plain());
        assert_eq!(lines, vec![vec![Span::raw("fn x() {}")]]);
    }
}
