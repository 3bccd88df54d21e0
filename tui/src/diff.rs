//! What an edit asked for approval would change, as hunks a person can read in the approval
//! modal: for a tool whose declaration previews a file edit (`Preview::FileEdit`), its `old`
//! against its `new`; for one that writes a file whole (`Preview::FileWrite`), its `content`
//! against what the file holds now, which the pod puts in the request (the TUI never reads the
//! pod's files). The diff
//! itself is `similar`'s (see `docs/decisions.md`); this module only shapes it: hunks with a few
//! lines of context, line numbers, and how many lines go and come.

use std::time::Duration;

use seedpod_protocol::{ApprovalRequest, Preview, Replaces};
use similar::{ChangeTag, TextDiff};

/// Unchanged lines shown around each change; changes closer than twice this share a hunk.
pub const CONTEXT_LINES: usize = 3;

/// How long working out a diff may take before `similar` settles for a coarser one (more
/// lines shown removed and added than strictly changed). Keeps a huge rewrite from stalling a
/// frame; the result is still a correct diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// What a call does to its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// A write of a file that does not exist yet: every line is new.
    Create,
    /// A write over a file whose current text the pod sent: a diff against it.
    Change,
    /// A write over a file whose current text the pod did not send (too large, binary), and
    /// why: only the new text is known.
    Replace { why: String },
    /// An edit: `old` replaced by `new` where it occurs — once, or everywhere (`every`).
    /// When the pod sent the file's text the edit is applied to it and the diff is the file's
    /// (with its line numbers); otherwise it is between the two snippets.
    Edit { every: bool },
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub tag: Tag,
    /// 1-based line numbers in the old and the new text (`None` on the side it is not on).
    pub old: Option<usize>,
    pub new: Option<usize>,
    /// The line without its line break.
    pub text: String,
    /// A changed last line without a line break (so `x` against `x⏎` is visibly a change).
    pub no_newline: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Same,
    Removed,
    Added,
}

/// A run of changes with their context: lines `old_start..old_start + old_len` of the old text
/// become `new_start..new_start + new_len` of the new (1-based; a length of 0 starts after).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<DiffLine>,
}

/// The file a call touches and what it would change there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub kind: ChangeKind,
    pub hunks: Vec<Hunk>,
    /// Lines added and removed in all.
    pub added: usize,
    pub removed: usize,
    /// The whole file was compared, so the line numbers are the file's.
    pub in_file: bool,
}

impl FileChange {
    /// Whether the line numbers are the file's: the whole file was compared.
    pub fn numbered(&self) -> bool {
        self.in_file
    }
}

/// What a request for a call previewed as `preview` (its tool's declaration says) would change;
/// `None` for a call that changes no file as a whole, or arguments that do not parse.
pub fn file_change(request: &ApprovalRequest, preview: Preview) -> Option<FileChange> {
    let serde_json::Value::Object(args) =
        serde_json::from_str::<serde_json::Value>(&request.arguments).ok()?
    else {
        return None;
    };
    let text = |key: &str| args.get(key).and_then(serde_json::Value::as_str);
    let path = text("path")?.to_string();
    let edited: String;
    let (kind, old, new, in_file) = match preview {
        Preview::FileEdit => {
            let every = args
                .get("replace_all")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            let (old, new) = (text("old")?, text("new")?);
            match &request.replaces {
                // The file as it is, with the edit applied as the tool would: a diff of the
                // file, so the change shows at its own line numbers.
                Some(Replaces::Text { content }) if !old.is_empty() && content.contains(old) => {
                    edited = if every {
                        content.replace(old, new)
                    } else {
                        content.replacen(old, new, 1)
                    };
                    (
                        ChangeKind::Edit { every },
                        content.as_str(),
                        edited.as_str(),
                        true,
                    )
                }
                _ => (ChangeKind::Edit { every }, old, new, false),
            }
        }
        Preview::FileWrite => {
            let new = text("content")?;
            match &request.replaces {
                Some(Replaces::Text { content }) => {
                    (ChangeKind::Change, content.as_str(), new, true)
                }
                Some(Replaces::Unshown { why }) => {
                    (ChangeKind::Replace { why: why.clone() }, "", new, true)
                }
                Some(Replaces::Unknown) => (
                    ChangeKind::Replace {
                        why: "this seedpod cannot show it".into(),
                    },
                    "",
                    new,
                    true,
                ),
                // The pod sends the current text of a file that exists: none means a new file.
                None => (ChangeKind::Create, "", new, true),
            }
        }
        Preview::Command | Preview::Arguments => return None,
    };
    let hunks = hunks(old, new);
    let count = |tag: Tag| {
        hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.tag == tag)
            .count()
    };
    Some(FileChange {
        path,
        kind,
        added: count(Tag::Added),
        removed: count(Tag::Removed),
        hunks,
        in_file,
    })
}

/// The hunks that turn `old` into `new`, line by line, with `CONTEXT_LINES` of context.
pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    diff.grouped_ops(CONTEXT_LINES)
        .iter()
        .filter_map(|group| {
            let (first, last) = (group.first()?, group.last()?);
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            let lines = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| {
                    let tag = match change.tag() {
                        ChangeTag::Equal => Tag::Same,
                        ChangeTag::Delete => Tag::Removed,
                        ChangeTag::Insert => Tag::Added,
                    };
                    let value = change.value();
                    let text = value.trim_end_matches(['\n', '\r']);
                    DiffLine {
                        tag,
                        old: change.old_index().map(|i| i + 1),
                        new: change.new_index().map(|i| i + 1),
                        no_newline: tag != Tag::Same && text.len() == value.len(),
                        text: text.to_string(),
                    }
                })
                .collect();
            Some(Hunk {
                // Unified-diff style: an empty side starts at the line before it.
                old_start: old_range.start + usize::from(!old_range.is_empty()),
                old_len: old_range.len(),
                new_start: new_range.start + usize::from(!new_range.is_empty()),
                new_len: new_range.len(),
                lines,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, arguments: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            call_id: seedpod_protocol::CallId::new("c"),
            tool: tool.into(),
            arguments: arguments.to_string(),
            summary: String::new(),
            always: None,
            replaces: None,
        }
    }

    /// What the request would change, previewed as its tool's declaration says.
    fn file_change(request: &ApprovalRequest) -> Option<FileChange> {
        super::file_change(request, crate::test_support::preview_of(&request.tool))
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    /// Each line as `tag old new text`, for compact expectations.
    fn shape(hunk: &Hunk) -> Vec<String> {
        hunk.lines
            .iter()
            .map(|l| {
                let tag = match l.tag {
                    Tag::Same => ' ',
                    Tag::Removed => '-',
                    Tag::Added => '+',
                };
                let n = |n: Option<usize>| n.map_or("_".to_string(), |n| n.to_string());
                format!("{tag}{} {} {}", n(l.old), n(l.new), l.text)
            })
            .collect()
    }

    #[test]
    fn a_one_line_change_deep_in_a_file_is_one_small_hunk_with_its_line_numbers() {
        let old = numbered(200);
        let new = old.replace("line 100\n", "line one hundred\n");
        let hunks = hunks(&old, &new);
        assert_eq!(hunks.len(), 1);
        let hunk = &hunks[0];
        assert_eq!(
            (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len),
            (97, 7, 97, 7)
        );
        assert_eq!(
            shape(hunk),
            vec![
                " 97 97 line 97",
                " 98 98 line 98",
                " 99 99 line 99",
                "-100 _ line 100",
                "+_ 100 line one hundred",
                " 101 101 line 101",
                " 102 102 line 102",
                " 103 103 line 103",
            ]
        );
    }

    #[test]
    fn changes_far_apart_are_separate_hunks_and_close_ones_share_one() {
        let old = numbered(40);
        let far = old
            .replace("line 5\n", "five\n")
            .replace("line 30\n", "thirty\n");
        assert_eq!(hunks(&old, &far).len(), 2);
        let close = old
            .replace("line 5\n", "five\n")
            .replace("line 9\n", "nine\n");
        assert_eq!(hunks(&old, &close).len(), 1);
        assert!(hunks(&old, &old).is_empty(), "no change, no hunk");
    }

    #[test]
    fn a_missing_line_break_at_the_end_is_a_visible_change() {
        let hunks = hunks("x\n", "x");
        let lines = &hunks[0].lines;
        assert_eq!(lines.len(), 2);
        assert!(!lines[0].no_newline && lines[1].no_newline);
        assert_eq!(lines[0].text, lines[1].text);
    }

    #[test]
    fn writes_create_change_or_replace_and_edits_edit() {
        let write = request(
            "write_file",
            serde_json::json!({"path": "b.txt", "content": "one\ntwo\n"}),
        );
        let created = file_change(&write).expect("a write");
        assert_eq!(created.kind, ChangeKind::Create);
        assert_eq!((created.added, created.removed), (2, 0));
        assert_eq!(
            (created.hunks[0].new_start, created.hunks[0].new_len),
            (1, 2)
        );

        let mut replacing = write.clone();
        replacing.replaces = Some(Replaces::Text {
            content: "one\nold\n".into(),
        });
        let changed = file_change(&replacing).expect("a write");
        assert_eq!(changed.kind, ChangeKind::Change);
        assert_eq!((changed.added, changed.removed), (1, 1));
        assert!(changed.numbered());

        let mut unshown = write;
        unshown.replaces = Some(Replaces::Unshown {
            why: "the file has 9000000 bytes".into(),
        });
        let replaced = file_change(&unshown).expect("a write");
        assert_eq!(
            replaced.kind,
            ChangeKind::Replace {
                why: "the file has 9000000 bytes".into()
            }
        );
        assert_eq!((replaced.added, replaced.removed), (2, 0));

        let edit = request(
            "edit_file",
            serde_json::json!({"path": "a.rs", "old": "x();", "new": "y();", "replace_all": true}),
        );
        let edited = file_change(&edit).expect("an edit");
        assert_eq!(edited.path, "a.rs");
        assert_eq!(edited.kind, ChangeKind::Edit { every: true });
        assert!(!edited.numbered());
        assert_eq!((edited.added, edited.removed), (1, 1));

        // With the file's text, an edit at line 100 shows at line 100.
        let file: String = (1..=200).map(|n| format!("line {n}\n")).collect();
        let mut in_file = request(
            "edit_file",
            serde_json::json!({"path": "a.rs", "old": "line 100\n", "new": "line one hundred\n"}),
        );
        in_file.replaces = Some(Replaces::Text { content: file });
        let edited = file_change(&in_file).expect("an edit");
        assert!(edited.numbered());
        assert_eq!((edited.added, edited.removed), (1, 1));
        let changed = edited.hunks[0]
            .lines
            .iter()
            .find(|l| l.tag == Tag::Added)
            .expect("the added line");
        assert_eq!(
            (changed.new, changed.text.as_str()),
            (Some(100), "line one hundred")
        );

        let shell = request("shell", serde_json::json!({"command": "ls"}));
        assert_eq!(file_change(&shell), None);
    }
}
