//! Semantic colours (see `tui/STYLE.md`). Renderers ask for a role, never a colour,
//! so the whole policy lives here: named ANSI colours on the terminal's own foreground and
//! background (readable on light and dark terminals), and no colour at all under `NO_COLOR`.

use ratatui::style::{Color, Modifier, Style};

/// What a piece of text is, for choosing its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The `›` marker of what the person typed.
    User,
    /// Assistant prose.
    Assistant,
    /// Secondary text: thinking, separators, hints, raw bodies.
    Dim,
    /// Tool call markers.
    Tool,
    Ok,
    Error,
    Warn,
    /// Notification banners.
    Notification,
    /// `@file`, `#knowledge`, `/workflow` and paste chips.
    Chip,
    /// Inline code.
    Code,
    Heading,
    Link,
    /// Block quote bars.
    Quote,
    /// The focused cell's header.
    Focus,
    /// Syntax highlighting inside fenced code blocks.
    SyntaxKeyword,
    SyntaxString,
    SyntaxComment,
    SyntaxNumber,
    SyntaxType,
    SyntaxFunction,
}

/// The styles every renderer uses. Build one with [`Theme::from_env`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    colored: bool,
}

impl Theme {
    /// Coloured unless `NO_COLOR` is set to a non-empty value (no-color.org).
    pub fn from_env() -> Theme {
        match std::env::var_os("NO_COLOR") {
            Some(value) if !value.is_empty() => Theme::plain(),
            Some(_) | None => Theme::colored(),
        }
    }

    /// No colours; only the few modifiers that carry meaning (bold, dim, italic, reversed).
    pub fn plain() -> Theme {
        Theme { colored: false }
    }

    pub fn colored() -> Theme {
        Theme { colored: true }
    }

    pub fn is_colored(&self) -> bool {
        self.colored
    }

    /// The style for a role. The app may use it for its own widgets (composer chips, footer).
    pub fn style(&self, role: Role) -> Style {
        let shape = modifiers(role);
        if !self.colored {
            return shape;
        }
        match color(role) {
            Some(fg) => shape.fg(fg),
            None => shape,
        }
    }
}

/// Modifiers are kept under `NO_COLOR`, so they are used sparingly and only where they mean
/// something.
fn modifiers(role: Role) -> Style {
    let style = Style::new();
    match role {
        Role::User | Role::Heading | Role::Notification => style.add_modifier(Modifier::BOLD),
        Role::Dim | Role::SyntaxComment => style.add_modifier(Modifier::DIM),
        Role::Link => style.add_modifier(Modifier::UNDERLINED),
        Role::Focus => style.add_modifier(Modifier::REVERSED),
        Role::Assistant
        | Role::Tool
        | Role::Ok
        | Role::Error
        | Role::Warn
        | Role::Chip
        | Role::Code
        | Role::Quote
        | Role::SyntaxKeyword
        | Role::SyntaxString
        | Role::SyntaxNumber
        | Role::SyntaxType
        | Role::SyntaxFunction => style,
    }
}

/// Named ANSI colours only: the terminal's palette decides the exact shade, so they suit its
/// background. Yellow is kept to short labels (it is faint on light backgrounds).
fn color(role: Role) -> Option<Color> {
    match role {
        Role::User | Role::Code => Some(Color::Cyan),
        Role::Tool | Role::Chip | Role::Link | Role::SyntaxFunction => Some(Color::Blue),
        Role::Ok | Role::SyntaxString => Some(Color::Green),
        Role::Error => Some(Color::Red),
        Role::Warn => Some(Color::Yellow),
        Role::Notification | Role::SyntaxKeyword => Some(Color::Magenta),
        Role::SyntaxNumber | Role::SyntaxType => Some(Color::Cyan),
        Role::Assistant
        | Role::Dim
        | Role::Heading
        | Role::Quote
        | Role::Focus
        | Role::SyntaxComment => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_has_no_colours_but_keeps_meaningful_modifiers() {
        let theme = Theme::plain();
        assert_eq!(theme.style(Role::Error).fg, None);
        assert_eq!(theme.style(Role::Notification).fg, None);
        assert!(
            theme
                .style(Role::Notification)
                .add_modifier
                .contains(Modifier::BOLD)
        );
    }

    #[test]
    fn colored_uses_named_colours_and_default_background() {
        let theme = Theme::colored();
        assert_eq!(theme.style(Role::Error).fg, Some(Color::Red));
        assert_eq!(theme.style(Role::Error).bg, None);
        assert_eq!(theme.style(Role::Assistant).fg, None);
    }
}
