//! `Segment`: one typed piece of what a person submitted (typed text, a paste chip, a reference).
//!
//! The composer keeps references typed so clients can render chips and the pod can resolve them;
//! the model sees `flatten_to_text`, rendered once at commit time and stored beside the segments.

use serde::{Deserialize, Serialize};

/// One piece of user input. Unknown kinds from a newer client decode to `Unknown` and flatten to
/// nothing rather than failing the whole input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Segment {
    Text {
        text: String,
    },
    /// A large paste, shown as a chip by clients and sent to the model as its content.
    Paste {
        id: u32,
        chars: usize,
        lines: usize,
        content: String,
    },
    /// `@path`: the pod attaches the file as a `file_attachment` system item.
    FileRef {
        path: String,
    },
    /// `#slug`: a knowledge note.
    KnowledgeRef {
        slug: String,
    },
    /// `/slug args`: a workflow invocation.
    WorkflowInvoke {
        slug: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        args: String,
    },
    #[serde(other)]
    Unknown,
}

impl Segment {
    pub fn text(text: impl Into<String>) -> Self {
        Segment::Text { text: text.into() }
    }
}

/// The text a model sees for a list of segments. Pure and deterministic: the same segments always
/// give the same text. References keep their sigil so the model can relate the attachment that
/// follows to what the person typed.
pub fn flatten_to_text(segments: &[Segment]) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Text { text } => out.push_str(text),
            Segment::Paste { content, .. } => out.push_str(content),
            Segment::FileRef { path } => {
                out.push('@');
                out.push_str(path);
            }
            Segment::KnowledgeRef { slug } => {
                out.push('#');
                out.push_str(slug);
            }
            Segment::WorkflowInvoke { slug, args } => {
                out.push('/');
                out.push_str(slug);
                if !args.is_empty() {
                    out.push(' ');
                    out.push_str(args);
                }
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// Typed text (from `seedpod send`, or a script) as segments: each `@path` that starts a word
/// becomes a file reference, and text that begins with `/slug` a workflow invocation. `#` is
/// left alone here: too much pasted text (`#include`, `#[derive]`) starts words with it; the TUI
/// makes knowledge references explicitly. `flatten_to_text` of the result is `text` again.
pub fn parse_typed(text: &str) -> Vec<Segment> {
    if let Some(rest) = text.strip_prefix('/') {
        let (slug, args) = match rest.split_once(char::is_whitespace) {
            Some((slug, args)) => (slug, args),
            None => (rest, ""),
        };
        if is_slug(slug) && !args.contains('\n') && args.trim() == args {
            return vec![Segment::WorkflowInvoke {
                slug: slug.to_string(),
                args: args.to_string(),
            }];
        }
    }
    let mut segments = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let starts_word = rest[..at].chars().next_back().map_or(
            plain.is_empty() || plain.ends_with(char::is_whitespace),
            char::is_whitespace,
        );
        let after = &rest[at + 1..];
        let word_len = after.find(char::is_whitespace).unwrap_or(after.len());
        // Sentence punctuation after a path belongs to the sentence.
        let path =
            after[..word_len].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', '"']);
        if !starts_word || path.is_empty() {
            plain.push_str(&rest[..at + 1]);
            rest = after;
            continue;
        }
        plain.push_str(&rest[..at]);
        if !plain.is_empty() {
            segments.push(Segment::text(std::mem::take(&mut plain)));
        }
        segments.push(Segment::FileRef {
            path: path.to_string(),
        });
        rest = &after[path.len()..];
    }
    plain.push_str(rest);
    if !plain.is_empty() || segments.is_empty() {
        segments.push(Segment::text(plain));
    }
    segments
}

fn is_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_becomes_references_and_flattens_back() {
        let cases = [
            "look at @src/main.rs, then @notes.txt.",
            "mail me@example.com about @a",
            "@only",
            "no refs at all",
            "",
            "an @ alone",
            "/review fast please",
            "/not a slug/",
            "multi\nline @x\n",
        ];
        for text in cases {
            assert_eq!(flatten_to_text(&parse_typed(text)), text, "{text:?}");
        }
        assert_eq!(
            parse_typed("look at @src/main.rs, then"),
            vec![
                Segment::text("look at "),
                Segment::FileRef {
                    path: "src/main.rs".into()
                },
                Segment::text(", then"),
            ]
        );
        assert_eq!(
            parse_typed("mail me@example.com"),
            vec![Segment::text("mail me@example.com")]
        );
        assert_eq!(
            parse_typed("/review fast"),
            vec![Segment::WorkflowInvoke {
                slug: "review".into(),
                args: "fast".into()
            }]
        );
    }

    #[test]
    fn flatten_joins_every_kind_in_order() {
        let segments = vec![
            Segment::text("look at "),
            Segment::FileRef {
                path: "src/main.rs".into(),
            },
            Segment::text(" with "),
            Segment::KnowledgeRef {
                slug: "style".into(),
            },
            Segment::text(" then "),
            Segment::WorkflowInvoke {
                slug: "review".into(),
                args: "fast".into(),
            },
            Segment::Paste {
                id: 1,
                chars: 3,
                lines: 1,
                content: "\nxyz".into(),
            },
            Segment::Unknown,
        ];
        assert_eq!(
            flatten_to_text(&segments),
            "look at @src/main.rs with #style then /review fast\nxyz"
        );
    }

    #[test]
    fn unknown_segment_kind_decodes_to_unknown() {
        let s: Segment = serde_json::from_str(r#"{"type":"hologram","beam":1}"#).unwrap();
        assert_eq!(s, Segment::Unknown);
    }

    #[test]
    fn golden_paste_json() {
        let s = Segment::Paste {
            id: 2,
            chars: 5,
            lines: 2,
            content: "a\nbcd".into(),
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"type":"paste","id":2,"chars":5,"lines":2,"content":"a\nbcd"}"#
        );
    }
}
