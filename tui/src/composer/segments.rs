//! Turning what the composer holds into the typed `Segment`s the pod receives: chips become
//! `paste` segments, accepted completions become references, the rest stays text.

use seedpod_protocol::Segment;

use super::paste::Paste;

/// Which reference an accepted completion made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sigil {
    /// `@path`
    File,
    /// `#slug`
    Knowledge,
    /// `/slug` at the start of the input
    Workflow,
}

impl Sigil {
    pub fn char(self) -> char {
        match self {
            Sigil::File => '@',
            Sigil::Knowledge => '#',
            Sigil::Workflow => '/',
        }
    }
}

/// A completion the person accepted. Only accepted ones become references, so `email@host`
/// or a `#4` typed by hand stay plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub sigil: Sigil,
    pub value: String,
}

impl Reference {
    fn token(&self) -> String {
        format!("{}{}", self.sigil.char(), self.value)
    }
}

/// A span of the text that is not plain text.
struct Special {
    start: usize,
    end: usize,
    segment: Segment,
}

/// The segments for `text`. A workflow reference at the very start takes the rest of the
/// input as its arguments.
pub fn to_segments(text: &str, pastes: &[Paste], references: &[Reference]) -> Vec<Segment> {
    if let Some(workflow) = references.iter().find(|r| r.sigil == Sigil::Workflow) {
        let token = workflow.token();
        if let Some(rest) = text.strip_prefix(&token)
            && (rest.is_empty() || rest.starts_with(char::is_whitespace))
        {
            let args = seedpod_protocol::flatten_to_text(&to_segments(rest, pastes, &[]));
            return vec![Segment::WorkflowInvoke {
                slug: workflow.value.clone(),
                args: args.trim().to_string(),
            }];
        }
    }
    let mut specials = Vec::new();
    for paste in pastes {
        let label = paste.label();
        if let Some(start) = text.find(&label) {
            specials.push(Special {
                start,
                end: start + label.len(),
                segment: Segment::Paste {
                    id: paste.id,
                    chars: paste.chars(),
                    lines: paste.lines(),
                    content: paste.content.clone(),
                },
            });
        }
    }
    for reference in references {
        let segment = match reference.sigil {
            Sigil::File => Segment::FileRef {
                path: reference.value.clone(),
            },
            Sigil::Knowledge => Segment::KnowledgeRef {
                slug: reference.value.clone(),
            },
            Sigil::Workflow => continue,
        };
        for start in word_occurrences(text, &reference.token()) {
            specials.push(Special {
                start,
                end: start + reference.token().len(),
                segment: segment.clone(),
            });
        }
    }
    specials.sort_by_key(|s| s.start);
    let mut out = Vec::new();
    let mut at = 0;
    for special in specials {
        if special.start < at {
            continue; // overlaps an earlier span
        }
        if special.start > at {
            out.push(Segment::text(&text[at..special.start]));
        }
        out.push(special.segment);
        at = special.end;
    }
    if at < text.len() {
        out.push(Segment::text(&text[at..]));
    }
    out
}

/// Byte offsets where `token` stands as a whole word (whitespace or text edge on both sides).
fn word_occurrences(text: &str, token: &str) -> Vec<usize> {
    text.match_indices(token)
        .filter(|(start, _)| {
            let before = text[..*start].chars().next_back();
            let after = text[start + token.len()..].chars().next();
            before.is_none_or(char::is_whitespace) && after.is_none_or(char::is_whitespace)
        })
        .map(|(start, _)| start)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(sigil: Sigil, value: &str) -> Reference {
        Reference {
            sigil,
            value: value.into(),
        }
    }

    #[test]
    fn plain_text_is_one_segment() {
        assert_eq!(
            to_segments("hello @world #4", &[], &[]),
            vec![Segment::text("hello @world #4")]
        );
    }

    #[test]
    fn chips_and_references_become_typed_segments() {
        let paste = Paste {
            id: 1,
            content: "a\nb\nc".into(),
        };
        let text = format!("see @src/main.rs and {} per #style", paste.label());
        let refs = [
            reference(Sigil::File, "src/main.rs"),
            reference(Sigil::Knowledge, "style"),
        ];
        assert_eq!(
            to_segments(&text, std::slice::from_ref(&paste), &refs),
            vec![
                Segment::text("see "),
                Segment::FileRef {
                    path: "src/main.rs".into()
                },
                Segment::text(" and "),
                Segment::Paste {
                    id: 1,
                    chars: 5,
                    lines: 3,
                    content: "a\nb\nc".into()
                },
                Segment::text(" per "),
                Segment::KnowledgeRef {
                    slug: "style".into()
                },
            ]
        );
    }

    #[test]
    fn a_reference_inside_a_word_stays_text() {
        let refs = [reference(Sigil::File, "x")];
        assert_eq!(
            to_segments("mail me@x", &[], &refs),
            vec![Segment::text("mail me@x")]
        );
    }

    #[test]
    fn an_edited_chip_is_plain_text() {
        let paste = Paste {
            id: 1,
            content: "a\nb\nc".into(),
        };
        let text = "[Paste #1 · 5 chars · 3 line";
        assert_eq!(to_segments(text, &[paste], &[]), vec![Segment::text(text)]);
    }

    #[test]
    fn a_leading_workflow_takes_the_rest_as_arguments() {
        let refs = [reference(Sigil::Workflow, "review")];
        assert_eq!(
            to_segments("/review  the parser ", &[], &refs),
            vec![Segment::WorkflowInvoke {
                slug: "review".into(),
                args: "the parser".into()
            }]
        );
    }
}

/// What the composer should hold to send `segments` again (a withdrawn queued input): pastes
/// come back as chips; references come back as their typed text (`@path`), which is what a
/// person would edit.
pub fn to_entry(segments: &[Segment]) -> crate::history::HistoryEntry {
    let mut text = String::new();
    let mut pastes = Vec::new();
    for segment in segments {
        if let Segment::Paste { id, content, .. } = segment {
            let paste = Paste {
                id: *id,
                content: content.clone(),
            };
            text.push_str(&paste.label());
            pastes.push(paste);
        } else {
            text.push_str(&seedpod_protocol::flatten_to_text(std::slice::from_ref(
                segment,
            )));
        }
    }
    crate::history::HistoryEntry { text, pastes }
}

#[cfg(test)]
mod entry_tests {
    use super::*;

    #[test]
    fn a_withdrawn_input_comes_back_with_its_chip() {
        let segments = vec![
            Segment::text("look at "),
            Segment::Paste {
                id: 2,
                chars: 3,
                lines: 1,
                content: "abc".into(),
            },
            Segment::text(" and "),
            Segment::FileRef {
                path: "src/main.rs".into(),
            },
        ];
        let entry = to_entry(&segments);
        assert_eq!(
            entry.text,
            "look at [Paste #2 · 3 chars · 1 line] and @src/main.rs"
        );
        assert_eq!(entry.pastes[0].content, "abc");
        // Sent again unchanged, the paste is a paste segment once more.
        let again = to_segments(&entry.text, &entry.pastes, &[]);
        assert!(again.contains(&segments[1]), "{again:?}");
    }
}
