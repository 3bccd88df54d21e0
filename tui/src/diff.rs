//! What an edit asked for approval would change, as a line diff a person can read in the
//! approval modal: `edit_file`'s `old` against its `new`, `write_file`'s content against what the
//! file holds now, which the pod puts in the request (the TUI never reads the pod's files).

use seedpod_protocol::{ApprovalRequest, Replaces};

/// Above this many line pairs the diff is not worked out line by line: everything old is shown
/// removed, everything new added. Keeps a huge edit from stalling a frame.
const MAX_DIFF_CELLS: usize = 250_000;

/// Rows of an edit's diff the approval modal shows at once; ↑↓ scroll through the rest.
pub const DIFF_ROWS: usize = 14;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    Removed(String),
    Added(String),
}

/// The file an edit request touches and what it would change there; `None` for other tools
/// or arguments that do not parse.
pub fn edit_diff(request: &ApprovalRequest) -> Option<(String, Vec<DiffLine>)> {
    let serde_json::Value::Object(args) =
        serde_json::from_str::<serde_json::Value>(&request.arguments).ok()?
    else {
        return None;
    };
    let text = |key: &str| args.get(key).and_then(serde_json::Value::as_str);
    let path = text("path")?.to_string();
    match request.tool.as_str() {
        "edit_file" => Some((path, line_diff(text("old")?, text("new")?))),
        // Against what the file holds now when the pod sent it (a new file: all added).
        "write_file" => Some((
            path,
            match &request.replaces {
                Some(Replaces::Text { content }) => line_diff(content, text("content")?),
                Some(Replaces::Unshown { .. } | Replaces::Unknown) | None => text("content")?
                    .lines()
                    .map(|l| DiffLine::Added(l.to_string()))
                    .collect(),
            },
        )),
        _ => None,
    }
}

/// A line diff of `old` to `new` (longest common subsequence), removals before additions.
pub fn line_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    if old.len().saturating_mul(new.len()) > MAX_DIFF_CELLS {
        let removed = old.iter().map(|l| DiffLine::Removed(l.to_string()));
        let added = new.iter().map(|l| DiffLine::Added(l.to_string()));
        return removed.chain(added).collect();
    }
    // common[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            out.push(DiffLine::Same(old[i].to_string()));
            i += 1;
            j += 1;
        } else if i < old.len() && (j == new.len() || common[i + 1][j] >= common[i][j + 1]) {
            out.push(DiffLine::Removed(old[i].to_string()));
            i += 1;
        } else {
            out.push(DiffLine::Added(new[j].to_string()));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, arguments: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c".into(),
            tool: tool.into(),
            arguments: arguments.to_string(),
            summary: String::new(),
            always: None,
            replaces: None,
        }
    }

    #[test]
    fn changed_lines_are_removed_then_added_between_unchanged_ones() {
        use DiffLine::{Added, Removed, Same};
        assert_eq!(
            line_diff("a\nb\nc", "a\nB\nc\nd"),
            vec![
                Same("a".into()),
                Removed("b".into()),
                Added("B".into()),
                Same("c".into()),
                Added("d".into()),
            ]
        );
        assert_eq!(line_diff("", "x"), vec![Added("x".into())]);
    }

    #[test]
    fn edits_and_writes_have_a_diff_and_other_tools_none() {
        let edit = request(
            "edit_file",
            serde_json::json!({"path": "a.rs", "old": "x();", "new": "y();"}),
        );
        let (path, lines) = edit_diff(&edit).expect("an edit diff");
        assert_eq!(path, "a.rs");
        assert_eq!(lines.len(), 2);
        let write = request(
            "write_file",
            serde_json::json!({"path": "b.txt", "content": "one\ntwo\n"}),
        );
        assert_eq!(edit_diff(&write).map(|(_, l)| l.len()), Some(2));
        // Replacing a file the pod read: the diff is against what it holds now.
        let mut replacing = write;
        replacing.replaces = Some(Replaces::Text {
            content: "one\nold\n".into(),
        });
        assert_eq!(
            edit_diff(&replacing).map(|(_, l)| l),
            Some(vec![
                DiffLine::Same("one".into()),
                DiffLine::Removed("old".into()),
                DiffLine::Added("two".into())
            ])
        );
        let shell = request("shell", serde_json::json!({"command": "ls"}));
        assert_eq!(edit_diff(&shell), None);
    }
}
