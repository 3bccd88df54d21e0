//! Word wrapping for the app's own one-line texts that must be read whole (the banner, a
//! warning in the footer): broken between words, a word wider than a row cut by columns, and
//! at most a few rows, the last ending with `…` when even they are not enough.

use seedpod_transcript::render::{truncate, width, wrap_columns};

/// `text` in rows of at most `columns`, at most `max_rows` of them.
pub fn wrap_words(text: &str, columns: u16, max_rows: usize) -> Vec<String> {
    let columns = usize::from(columns.max(1));
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let needed = width(&row) + usize::from(!row.is_empty()) + width(word);
        if needed <= columns {
            if !row.is_empty() {
                row.push(' ');
            }
            row.push_str(word);
            continue;
        }
        if !row.is_empty() {
            rows.push(std::mem::take(&mut row));
        }
        let mut pieces = wrap_columns(word, columns);
        row = pieces.pop().unwrap_or_default();
        rows.extend(pieces);
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    if rows.len() > max_rows {
        let rest = rows[max_rows - 1..].join(" ");
        rows.truncate(max_rows - 1);
        rows.push(truncate(&rest, columns));
    }
    rows
}

/// A line of a listing wrapped between words, its continuation rows indented under its text
/// (two more than its own indentation), so a wrapped entry still reads as one.
pub fn wrap_indented(line: &str, columns: u16) -> Vec<String> {
    let text = line.trim_start();
    let indent = line.len() - text.len();
    let columns = usize::from(columns);
    if indent + 4 >= columns {
        return wrap_words(line, columns as u16, usize::MAX);
    }
    let first = " ".repeat(indent);
    let hang = " ".repeat(indent + 2);
    let mut rows = Vec::new();
    let mut rest = text.to_string();
    let first_rows = wrap_words(&rest, (columns - indent) as u16, usize::MAX);
    let Some(head) = first_rows.first() else {
        return vec![line.to_string()];
    };
    rows.push(format!("{first}{head}"));
    rest = first_rows[1..].join(" ");
    if !rest.is_empty() {
        for row in wrap_words(&rest, (columns - indent - 2) as u16, usize::MAX) {
            rows.push(format!("{hang}{row}"));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaks_between_words_within_the_width() {
        assert_eq!(
            wrap_words("a demo banner that is long", 12, 3),
            ["a demo", "banner that", "is long"]
        );
        assert_eq!(wrap_words("short", 12, 3), ["short"]);
        assert_eq!(wrap_words("", 12, 3), [""]);
    }

    #[test]
    fn indented_lines_wrap_under_their_text() {
        assert_eq!(
            wrap_indented("  github: 3 tools, connected", 16),
            ["  github: 3", "    tools,", "    connected"]
        );
        assert_eq!(wrap_indented("plain", 16), ["plain"]);
    }

    #[test]
    fn cuts_a_long_word_and_the_last_row() {
        assert_eq!(wrap_words("abcdefghij", 4, 3), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_words("one two three four", 5, 2), ["one", "two …"]);
    }
}
