//! What a standing approval covers: a whole tool, or for `shell` one command rule.
//!
//! A rule is matched against the *words* of a command that the tools crate has already judged
//! to be a single simple command with no escapes (no newline, comment, redirection,
//! substitution, assignment, wrapper or program-specific escape such as `git -c`). A command it
//! cannot judge has no words, and no rule covers it: it is asked about every time.
//!
//! On the wire a rule keeps the shape older pods wrote: `"prefix": "git status"` (words joined
//! by single spaces; prefix words never contain whitespace) or `"exact": ["git", "commit", "-m",
//! "fix it"]`.

use serde::{Deserialize, Serialize};

/// What a `shell` standing approval covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandRule {
    /// Commands whose words start with these: a program, or a program and its subcommand
    /// (`git status` covers `git status --short`, not `git push`).
    Prefix(Vec<String>),
    /// Exactly this command, word for word.
    Exact(Vec<String>),
}

impl CommandRule {
    /// Does this rule cover a command with these words?
    pub fn covers(&self, words: &[String]) -> bool {
        match self {
            CommandRule::Prefix(prefix) => {
                !prefix.is_empty()
                    && words.len() >= prefix.len()
                    && words[..prefix.len()] == **prefix
            }
            CommandRule::Exact(exact) => words == exact.as_slice(),
        }
    }

    /// For people: `git status …` or the exact command, quoted as a shell would need it.
    pub fn display(&self) -> String {
        match self {
            CommandRule::Prefix(words) => format!("{} …", quote_words(words)),
            CommandRule::Exact(words) => quote_words(words),
        }
    }
}

/// Words as one shell line: plain words as they are, others in single quotes. The line parses
/// back to the same words (a property test in seedpod-tools checks it against bash's grammar).
pub fn quote_words(words: &[String]) -> String {
    words
        .iter()
        .enumerate()
        // A first word with `=` would read as an assignment (`a=b cmd`), not a program.
        .map(|(i, w)| quote_word_as(w, i == 0 && w.contains('=')))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word for a shell line: as it is when it is plain, in single quotes otherwise. The one
/// shell quoter: approval rules are shown with it, and remote pods' ssh command lines are
/// built with it.
pub fn quote_word(word: &str) -> String {
    quote_word_as(word, false)
}

fn quote_word_as(word: &str, force: bool) -> String {
    // A leading `=` (`==`) is read as an operator by the grammar; quoted, it is a word.
    let plain = !force
        && !word.is_empty()
        && !word.starts_with('=')
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '+' | ',' | '@')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// An `approve_always` answer: calls of `tool` (for `shell`, the commands `rule` covers) run
/// without asking, until revoked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StandingWire", into = "StandingWire")]
pub struct StandingApproval {
    pub tool: String,
    /// `None`: every call of the tool. Never `None` for `shell`, whose "always" is a rule.
    pub rule: Option<CommandRule>,
}

impl StandingApproval {
    /// Does this standing approval cover a call of `tool` whose command words are `words`
    /// (`None`: not a command a rule may cover)?
    pub fn covers(&self, tool: &str, words: Option<&[String]>) -> bool {
        self.tool == tool
            && match &self.rule {
                None => true,
                Some(rule) => words.is_some_and(|w| rule.covers(w)),
            }
    }

    /// For people: `shell: git status …` or `write_file`.
    pub fn display(&self) -> String {
        match &self.rule {
            Some(rule) => format!("{}: {}", self.tool, rule.display()),
            None => self.tool.clone(),
        }
    }
}

/// The two optional wire fields a rule is written as.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct RuleWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<Vec<String>>,
}

impl RuleWire {
    pub(crate) fn into_rule(self) -> Option<CommandRule> {
        // `exact` is the narrower of the two; a line with both (no pod writes one) means it.
        match (self.exact, self.prefix) {
            (Some(exact), _) => Some(CommandRule::Exact(exact)),
            (None, Some(prefix)) => Some(CommandRule::Prefix(
                prefix.split_whitespace().map(str::to_string).collect(),
            )),
            (None, None) => None,
        }
    }

    pub(crate) fn from_rule(rule: Option<CommandRule>) -> RuleWire {
        match rule {
            Some(CommandRule::Prefix(words)) => RuleWire {
                prefix: Some(words.join(" ")),
                exact: None,
            },
            Some(CommandRule::Exact(words)) => RuleWire {
                prefix: None,
                exact: Some(words),
            },
            None => RuleWire::default(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct StandingWire {
    tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exact: Option<Vec<String>>,
}

impl From<StandingWire> for StandingApproval {
    fn from(wire: StandingWire) -> StandingApproval {
        StandingApproval {
            tool: wire.tool,
            rule: RuleWire {
                prefix: wire.prefix,
                exact: wire.exact,
            }
            .into_rule(),
        }
    }
}

impl From<StandingApproval> for StandingWire {
    fn from(standing: StandingApproval) -> StandingWire {
        let RuleWire { prefix, exact } = RuleWire::from_rule(standing.rule);
        StandingWire {
            tool: standing.tool,
            prefix,
            exact,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn a_prefix_covers_commands_that_start_with_all_its_words() {
        let rule = CommandRule::Prefix(words("git status"));
        assert!(rule.covers(&words("git status")));
        assert!(rule.covers(&words("git status --short")));
        assert!(!rule.covers(&words("git push")));
        assert!(!rule.covers(&words("git")));
        assert!(!rule.covers(&words("git statusx")));
        assert!(!CommandRule::Prefix(Vec::new()).covers(&words("rm -rf x")));
    }

    #[test]
    fn an_exact_rule_covers_only_its_own_words() {
        let rule = CommandRule::Exact(vec![
            "git".into(),
            "commit".into(),
            "-m".into(),
            "a b".into(),
        ]);
        assert!(rule.covers(&rule_words(&rule)));
        assert!(!rule.covers(&words("git commit -m a b")));
        assert!(!rule.covers(&words("git commit")));
        assert_eq!(rule.display(), "git commit -m 'a b'");
    }

    fn rule_words(rule: &CommandRule) -> Vec<String> {
        match rule {
            CommandRule::Prefix(w) | CommandRule::Exact(w) => w.clone(),
        }
    }

    #[test]
    fn standing_approvals_cover_their_tool_and_only_judged_commands() {
        let status = StandingApproval {
            tool: "shell".into(),
            rule: Some(CommandRule::Prefix(words("git status"))),
        };
        assert!(status.covers("shell", Some(&words("git status"))));
        assert!(
            !status.covers("shell", None),
            "an unjudged command is never covered"
        );
        assert!(!status.covers("write_file", Some(&words("git status"))));
        let whole = StandingApproval {
            tool: "write_file".into(),
            rule: None,
        };
        assert!(whole.covers("write_file", None));
        assert_eq!(status.display(), "shell: git status …");
        assert_eq!(whole.display(), "write_file");
    }

    #[test]
    fn the_wire_keeps_the_legacy_prefix_shape() {
        let legacy: StandingApproval =
            serde_json::from_str(r#"{"tool":"shell","prefix":"cargo"}"#).unwrap();
        assert_eq!(legacy.rule, Some(CommandRule::Prefix(words("cargo"))));
        assert_eq!(
            serde_json::to_string(&legacy).unwrap(),
            r#"{"tool":"shell","prefix":"cargo"}"#
        );
        let exact = StandingApproval {
            tool: "shell".into(),
            rule: Some(CommandRule::Exact(words("ls -la"))),
        };
        let json = serde_json::to_string(&exact).unwrap();
        assert_eq!(json, r#"{"tool":"shell","exact":["ls","-la"]}"#);
        assert_eq!(
            serde_json::from_str::<StandingApproval>(&json).unwrap(),
            exact
        );
        let whole: StandingApproval = serde_json::from_str(r#"{"tool":"edit_file"}"#).unwrap();
        assert_eq!(whole.rule, None);
    }

    #[test]
    fn quoting_makes_odd_words_visible() {
        assert_eq!(quote_words(&words("ls -la")), "ls -la");
        assert_eq!(
            quote_words(&["echo".into(), "it's".into(), String::new(), "a\nb".into()]),
            "echo 'it'\\''s' '' 'a\nb'"
        );
    }
}
