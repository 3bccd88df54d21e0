//! Wrapping styled text to a width. Word wrap for prose (breaks at spaces and between wide
//! CJK characters, splits a word only when it is longer than a line); hard wrap for code and
//! tool output (breaks at the column, keeps every space). Both measure grapheme clusters with
//! `text::grapheme_width`, so no line is ever wider than asked.

use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use super::text::{grapheme_width, width};

/// One grapheme cluster of the input: where it is and how wide it draws.
struct Atom {
    span: usize,
    start: usize,
    end: usize,
    width: usize,
    space: bool,
    /// Wide and breakable on either side (CJK ideographs, kana, emoji; not Hangul, which
    /// separates words with spaces).
    breakable: bool,
}

/// Word-wrap one logical line (no newlines) into lines at most `width` columns wide; `first`
/// prefixes the first line and `rest` every following one.
pub(crate) fn wrap(
    spans: &[Span<'static>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    layout(spans, width, first, rest, true)
}

/// Break one logical line at exactly the width, keeping spaces (code, tool output).
pub(crate) fn hard_wrap(
    spans: &[Span<'static>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    layout(spans, width, first, rest, false)
}

/// Word-wrap text that may contain newlines, in one style: the first line gets `first`, every
/// other visual line `rest`.
pub(crate) fn wrap_text(
    text: &str,
    style: ratatui::style::Style,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (n, logical) in text.split('\n').enumerate() {
        let prefix = if n == 0 { first } else { rest };
        let spans = [Span::styled(logical.to_string(), style)];
        out.extend(wrap(&spans, width, prefix, rest));
    }
    out
}

/// The drawn width of a line.
pub(crate) fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| width(&s.content)).sum()
}

/// Cut a line to `max` columns: the last guard that keeps every renderer inside its width.
pub(crate) fn clip(line: Line<'static>, max: usize) -> Line<'static> {
    if line_width(&line) <= max {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in line.spans {
        let mut kept = String::new();
        for g in span.content.graphemes(true) {
            let w = grapheme_width(g);
            if used + w > max {
                break;
            }
            used += w;
            kept.push_str(g);
        }
        let full = kept.len() == span.content.len();
        if !kept.is_empty() {
            spans.push(Span::styled(kept, span.style));
        }
        if !full {
            break;
        }
    }
    Line::from(spans).style(line.style)
}

fn layout(
    spans: &[Span<'static>],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    words: bool,
) -> Vec<Line<'static>> {
    let atoms = atoms(spans);
    let first_avail = width.saturating_sub(prefix_width(first)).max(1);
    let rest_avail = width.saturating_sub(prefix_width(rest)).max(1);
    let ranges = break_lines(&atoms, first_avail, rest_avail, words);
    ranges
        .into_iter()
        .enumerate()
        .map(|(n, (start, mut end))| {
            if words {
                while end > start && atoms[end - 1].space {
                    end -= 1;
                }
            }
            let prefix = if n == 0 { first } else { rest };
            build_line(spans, &atoms[start..end], prefix)
        })
        .collect()
}

fn prefix_width(prefix: &[Span<'static>]) -> usize {
    prefix.iter().map(|s| width(&s.content)).sum()
}

fn atoms(spans: &[Span<'static>]) -> Vec<Atom> {
    let mut atoms = Vec::new();
    for (index, span) in spans.iter().enumerate() {
        for (start, g) in span.content.grapheme_indices(true) {
            atoms.push(Atom {
                span: index,
                start,
                end: start + g.len(),
                width: grapheme_width(g),
                space: g == " ",
                breakable: grapheme_width(g) > 1 && !is_hangul(g),
            });
        }
    }
    atoms
}

/// Where a word wrap may break before atom `i`: at the start of a word, or between two
/// characters when either is wide (CJK text has no spaces to break at).
fn breaks_before(atoms: &[Atom], i: usize) -> bool {
    let (prev, cur) = (&atoms[i - 1], &atoms[i]);
    if cur.space {
        return false;
    }
    prev.space || prev.breakable || cur.breakable
}

fn is_hangul(g: &str) -> bool {
    g.chars().next().is_some_and(|c| {
        matches!(c, '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}' | '\u{AC00}'..='\u{D7AF}')
    })
}

/// Greedy line breaking; returns atom ranges, one per output line.
fn break_lines(
    atoms: &[Atom],
    first_avail: usize,
    rest_avail: usize,
    words: bool,
) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut used = 0;
    let mut avail = first_avail;
    let mut last_break = None;
    let mut i = 0;
    while i < atoms.len() {
        let atom = &atoms[i];
        if words && i > start && breaks_before(atoms, i) {
            last_break = Some(i);
        }
        // Spaces never force a break in word mode: trailing ones are trimmed.
        if used + atom.width <= avail || (words && atom.space) {
            used += atom.width;
            i += 1;
            continue;
        }
        if words && i > start && atoms[start..i].iter().all(|a| a.space) {
            // Only indentation so far and the word does not fit after it: drop the indentation.
            start = i;
            used = 0;
            last_break = None;
            continue;
        }
        let cut = match last_break {
            Some(b) if b > start => b,
            Some(_) | None => i,
        };
        if cut == start {
            // Not even one grapheme fits (a wide character in a one-column space): it gets a
            // line of its own, which `clip` then empties, rather than looping forever.
            lines.push((start, start + 1));
            start += 1;
        } else {
            lines.push((start, cut));
            start = cut;
        }
        if words {
            while start < atoms.len() && atoms[start].space {
                start += 1;
            }
        }
        i = start;
        used = 0;
        avail = rest_avail;
        last_break = None;
    }
    if start < atoms.len() || lines.is_empty() {
        lines.push((start, atoms.len()));
    }
    lines
}

fn build_line(spans: &[Span<'static>], atoms: &[Atom], prefix: &[Span<'static>]) -> Line<'static> {
    let mut out: Vec<Span<'static>> = prefix.to_vec();
    let mut i = 0;
    while i < atoms.len() {
        let span = atoms[i].span;
        let mut j = i;
        while j + 1 < atoms.len() && atoms[j + 1].span == span {
            j += 1;
        }
        let source = &spans[span];
        let text = &source.content[atoms[i].start..atoms[j].end];
        out.push(Span::styled(text.to_string(), source.style));
        i = j + 1;
    }
    Line::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'static>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn plain(s: &str) -> Vec<Span<'static>> {
        vec![Span::raw(s.to_string())]
    }

    #[test]
    fn wraps_at_spaces() {
        let lines = wrap(&plain("the quick brown fox jumps"), 10, &[], &[]);
        assert_eq!(texts(&lines), ["the quick", "brown fox", "jumps"]);
    }

    #[test]
    fn splits_words_longer_than_a_line() {
        let lines = wrap(&plain("abcdefghijkl xy"), 5, &[], &[]);
        assert_eq!(texts(&lines), ["abcde", "fghij", "kl xy"]);
    }

    #[test]
    fn breaks_between_cjk_characters() {
        let lines = wrap(&plain("日本語のテキストです"), 7, &[], &[]);
        assert_eq!(texts(&lines), ["日本語", "のテキ", "ストで", "す"]);
        assert!(lines.iter().all(|l| line_width(l) <= 7));
    }

    #[test]
    fn keeps_hangul_words_whole() {
        let lines = wrap(&plain("한국어 텍스트도 있습니다"), 10, &[], &[]);
        assert_eq!(texts(&lines), ["한국어", "텍스트도", "있습니다"]);
    }

    #[test]
    fn prefixes_first_and_rest() {
        let lines = wrap(
            &plain("one two three"),
            9,
            &[Span::raw("> ")],
            &[Span::raw("  ")],
        );
        assert_eq!(texts(&lines), ["> one two", "  three"]);
    }

    #[test]
    fn keeps_styles_across_breaks() {
        let spans = vec![
            Span::raw("plain "),
            Span::styled("bold words here", ratatui::style::Style::new().bold()),
        ];
        let lines = wrap(&spans, 12, &[], &[]);
        assert_eq!(texts(&lines), ["plain bold", "words here"]);
        assert_eq!(lines[1].spans.len(), 1);
    }

    #[test]
    fn hard_wrap_keeps_spaces() {
        let lines = hard_wrap(&plain("  a  b  c"), 4, &[], &[]);
        assert_eq!(texts(&lines), ["  a ", " b  ", "c"]);
    }

    #[test]
    fn wide_char_in_one_column_does_not_loop() {
        let lines = wrap(&plain("日本"), 1, &[], &[]);
        assert_eq!(lines.len(), 2);
        let clipped: Vec<_> = lines.into_iter().map(|l| clip(l, 1)).collect();
        assert!(clipped.iter().all(|l| line_width(l) <= 1));
    }

    #[test]
    fn clip_cuts_to_width() {
        let line = Line::from(vec![Span::raw("abc"), Span::raw("日本")]);
        assert_eq!(clip(line, 4).to_string(), "abc");
    }
}
