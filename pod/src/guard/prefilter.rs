//! Which pattern families can match a text at all, decided by plain words before any regular
//! expression is compiled or run.
//!
//! Every family's expression needs certain words: "ignore all previous instructions" cannot
//! match a text without "ignore", "disregard" or "forget" in it. One Aho-Corasick pass over the
//! text finds which of those words it holds, and only a family whose words are all there is
//! compiled (once per process) and run. Ordinary input — "hello", "fix the failing test" — then
//! compiles nothing: a pod's first input no longer pays ~12 ms for the whole set
//! (docs/decisions.md, "The input guard compiles a family only when a text needs it").
//!
//! The words are a necessary condition, never a sufficient one: a family the prefilter lets
//! through may still find nothing. They must never be stricter than the expression, or the guard
//! would miss what it used to catch; `tests::the_prefilter_never_hides_a_match` runs every
//! family unfiltered over the corpus and the unit tests' texts to hold that.
//!
//! Matching is ASCII case-insensitive on the normalised text. The expressions are Unicode
//! case-insensitive, which also lets `ſ` match `s` and the Kelvin sign match `k`; normalisation
//! folds those two to ASCII (`normalize.rs`), so no word can hide behind them.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::InjectionPattern;

/// One way for a family to match: every group must have one of its words in the text.
type Clause = &'static [&'static [&'static str]];

/// What a text must hold before a family's expression is worth running.
enum Needs {
    /// At least one clause holds.
    Words(&'static [Clause]),
    /// A character `normalize::is_invisible` knows, in the original text (the family looks at
    /// the text before normalisation removes them).
    InvisibleCharacter,
}

const IGNORE: &[&str] = &["ignore", "disregard", "forget"];
const INSTRUCTION_WORDS: &[&str] = &[
    "instruction",
    "prompt",
    "direction",
    "rules",
    "guidelines",
    "context",
];
const SECRETS: &[&str] = &[
    ".ssh",
    "id_rsa",
    "id_ed25519",
    ".env",
    ".aws",
    "api",
    "secret",
    "credentials",
    "password",
    "private",
    "token",
    "environment",
];
const AI_NAMES: &[&str] = &[
    "ai",
    "llm",
    "assistant",
    "agent",
    "bot",
    "copilot",
    "claude",
    "gpt",
    "language",
];

impl InjectionPattern {
    /// The words each alternative of `source()` needs; keep the two in step.
    fn needs(&self) -> Needs {
        match self {
            InjectionPattern::IgnoreInstructions => Needs::Words(&[
                &[IGNORE, INSTRUCTION_WORDS],
                &[IGNORE, &["everything", "anything"]],
                &[
                    &["stop"],
                    &["following"],
                    &["instruction", "rules", "guidelines"],
                ],
            ]),
            InjectionPattern::RoleOverride => Needs::Words(&[
                &[&["you"], &["now"]],
                &[&["act"], &["system", "root", "admin"]],
                &[&["pretend"], &["system"]],
                &[
                    &["mode"],
                    &["god", "jailbreak", "dan", "unrestricted", "unfiltered"],
                ],
                &[&["anything"], &["now"]],
            ]),
            InjectionPattern::FakeSystemTags => Needs::Words(&[
                &[&["system"], &["<", "["], &[">", "]"]],
                &[&["sys"], &["<<"], &[">>"]],
                &[&["start_header_id", "start_of_turn"]],
                &[&["system"], &["#"], &[":"]],
            ]),
            InjectionPattern::InstructionInjection => Needs::Words(&[
                &[&["override"]],
                &[&["new"], &["instruction"]],
                &[&["your"], &["instructions"]],
                &[&["updated"], &["prompt"]],
                &[&["inst"], &["["], &["]"]],
            ]),
            InjectionPattern::NulBytes => Needs::Words(&[&[&["\0"]]]),
            InjectionPattern::DelimiterEscape => {
                Needs::Words(&[&[&["[/", "<|", "</"]], &[&["end"]]])
            }
            InjectionPattern::ForgedMarker => Needs::Words(&[&[&[
                "[notification",
                "[interrupted",
                "[pod_event",
                "[system",
                "[tool",
                "[pod",
                "[file",
                "[dir",
                "[knowledge",
                "[workflow",
                "[summary",
                "##",
            ]]]),
            InjectionPattern::Exfiltration => Needs::Words(&[
                &[
                    &[
                        "send",
                        "post",
                        "upload",
                        "mail",
                        "forward",
                        "transmit",
                        "exfiltrate",
                        "leak",
                        "copy",
                    ],
                    SECRETS,
                ],
                &[&["prompt", "instructions"]],
                &[&["repeat"], &["above"]],
                &[&["!["], &["http"]],
                &[
                    &["append", "add", "attach", "include", "encode"],
                    &[
                        "secret",
                        "key",
                        "token",
                        "password",
                        "conversation",
                        "history",
                    ],
                    &["url", "query", "parameter", "link", "image"],
                ],
            ]),
            InjectionPattern::Concealment => Needs::Words(&[
                &[
                    &["not", "don", "never"],
                    &["user", "human", "person", "operator"],
                ],
                &[&["mention"]],
                &[&["keep", "hide"], &["user", "human", "person"]],
            ]),
            InjectionPattern::AiAddressed => Needs::Words(&[
                &[
                    &[
                        "note",
                        "message",
                        "instruction",
                        "attention",
                        "important",
                        "reminder",
                    ],
                    AI_NAMES,
                    &[":", ","],
                ],
                &[&["if"], &["you"], AI_NAMES],
                &[
                    AI_NAMES,
                    &["reading", "processing", "parsing", "summari", "analy"],
                    &["this"],
                ],
                &[&["dear"]],
                &[&["for"], &["llm", "ai"], &["processing", "reading"]],
            ]),
            InjectionPattern::ToolCoaxing => Needs::Words(&[
                &[&["run", "execute"], &["without"]],
                &[&["silently", "secretly", "quietly"]],
                &[
                    AI_NAMES,
                    &["must", "should"],
                    &["run", "execute", "call", "invoke"],
                ],
                &[&["immediately"]],
            ]),
            InjectionPattern::HiddenCharacters => Needs::InvisibleCharacter,
        }
    }
}

/// Every word any family needs, once, in a stable order.
fn all_words() -> Vec<&'static str> {
    let mut words: Vec<&'static str> = InjectionPattern::ALL
        .iter()
        .filter_map(|pattern| match pattern.needs() {
            Needs::Words(clauses) => Some(clauses),
            Needs::InvisibleCharacter => None,
        })
        .flat_map(|clauses| clauses.iter().copied())
        .flat_map(|clause| clause.iter().copied())
        .flat_map(|group| group.iter().copied())
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// The words and the automaton that finds them; built on the first scan (tens of microseconds).
struct Finder {
    words: Vec<&'static str>,
    automaton: AhoCorasick,
}

#[allow(
    clippy::expect_used,
    reason = "the words are constants, built (and so checked) by every test run"
)]
static FINDER: LazyLock<Finder> = LazyLock::new(|| {
    let words = all_words();
    let automaton = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&words)
        .expect("the guard's words build an automaton");
    Finder { words, automaton }
});

/// Which of the needed words a text holds.
pub struct Present {
    found: Vec<bool>,
    invisible: bool,
}

impl Present {
    /// One pass over `normalized` (overlapping, so "[pod" and "[pod_event" both count) and one
    /// over `original` for invisible characters.
    pub fn of(original: &str, normalized: &str) -> Present {
        let finder = &*FINDER;
        let mut found = vec![false; finder.words.len()];
        for hit in finder.automaton.find_overlapping_iter(normalized) {
            found[hit.pattern().as_usize()] = true;
        }
        Present {
            found,
            invisible: original.chars().any(super::normalize::is_invisible),
        }
    }

    fn has(&self, word: &str) -> bool {
        FINDER
            .words
            .binary_search(&word)
            .is_ok_and(|at| self.found[at])
    }

    /// Whether `pattern`'s expression could match: false means it certainly cannot.
    pub fn may_match(&self, pattern: InjectionPattern) -> bool {
        match pattern.needs() {
            Needs::Words(clauses) => clauses.iter().any(|clause| {
                clause
                    .iter()
                    .all(|group| group.iter().any(|word| self.has(word)))
            }),
            Needs::InvisibleCharacter => self.invisible,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_input_needs_no_family() {
        for text in [
            "hello",
            "fix the failing test in src/lib.rs",
            "what does this function return?",
        ] {
            let present = Present::of(text, &super::super::normalize::normalize(text));
            let families: Vec<_> = InjectionPattern::ALL
                .into_iter()
                .filter(|p| present.may_match(*p))
                .collect();
            assert!(families.is_empty(), "{text:?} needs {families:?}");
        }
    }

    #[test]
    fn words_are_found_in_any_ascii_case_and_overlapping() {
        let text = "[POD_Event] x";
        let present = Present::of(text, text);
        assert!(present.has("[pod_event") && present.has("[pod"));
        assert!(!present.has("[file"));
    }

    /// Unicode case-insensitive matching lets a few non-ASCII characters stand for an ASCII
    /// letter; each must be folded by normalisation, or a word could hide behind it.
    #[test]
    fn no_character_that_case_folds_to_an_ascii_letter_survives_normalisation() {
        let letter = regex::Regex::new("(?i)^[a-z]$").expect("a valid expression");
        let mut buf = [0u8; 4];
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if c.is_ascii() || !letter.is_match(c.encode_utf8(&mut buf)) {
                continue;
            }
            let normalized = super::super::normalize::normalize(&c.to_string());
            assert!(
                normalized.is_ascii(),
                "{c:?} (U+{:04X}) stays {normalized:?}",
                c as u32
            );
        }
    }

    #[test]
    fn every_word_is_lowercase_so_ascii_folding_covers_it() {
        for word in all_words() {
            assert_eq!(word, word.to_ascii_lowercase(), "{word:?}");
        }
    }
}
