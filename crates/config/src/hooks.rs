//! `[hooks]`: the person's own commands that run at points of a pod's life (before and after a
//! tool call, on input, at the end of a turn, on a notification, before a compaction, at
//! start). What each event sends and what a hook may answer is `docs/hooks.md`.
//!
//! ```toml
//! [hooks]
//! pre_tool_may_allow = false     # may a pre_tool hook's "allow" skip an `ask`? (user file only)
//!
//! [[hooks.pre_tool]]
//! command = "~/bin/no-rm"        # run with `sh -c`; the event arrives as JSON on stdin
//! matcher = "shell"              # tool name or glob (`mcp__github__*`); default: every tool
//! timeout_secs = 10              # killed with its whole process group after this
//! ```
//!
//! Hooks are commands this machine runs, so a project file's `[hooks]` is left out until the
//! project is trusted (`loosen.rs`), and `pre_tool_may_allow` is the person's alone: a project
//! file that sets it is refused even when trusted (DESIGN invariant 6).

use std::time::Duration;

use serde::Deserialize;

use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// How long a hook may run unless its `timeout_secs` says otherwise.
pub const DEFAULT_HOOK_TIMEOUT_SECS: u64 = 10;
/// The longest `timeout_secs` accepted: a hook blocks the call, input or turn it answers.
pub const MAX_HOOK_TIMEOUT_SECS: u64 = 600;

/// When a hook runs. The names are the `[hooks]` keys and the `event` field of the JSON a hook
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool call runs: may deny it, send it to a person, or (when allowed) approve it.
    PreTool,
    /// After a tool call ran: may add context the model reads after the result.
    PostTool,
    /// On a person's input, before it is recorded: may add context or block it.
    UserPrompt,
    /// When the pod finished answering an input (a run ended).
    TurnEnd,
    /// On a notification (`seedpod notify`, a child's report) and on an alert.
    Notification,
    /// Before the conversation is compacted into a new segment.
    PreCompact,
    /// When the pod process starts, new or restored.
    SessionStart,
}

impl HookEvent {
    pub const ALL: [HookEvent; 7] = [
        HookEvent::PreTool,
        HookEvent::PostTool,
        HookEvent::UserPrompt,
        HookEvent::TurnEnd,
        HookEvent::Notification,
        HookEvent::PreCompact,
        HookEvent::SessionStart,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreTool => "pre_tool",
            HookEvent::PostTool => "post_tool",
            HookEvent::UserPrompt => "user_prompt",
            HookEvent::TurnEnd => "turn_end",
            HookEvent::Notification => "notification",
            HookEvent::PreCompact => "pre_compact",
            HookEvent::SessionStart => "session_start",
        }
    }

    /// Whether the event is about one tool call, so a `matcher` means something.
    pub fn is_about_a_tool(self) -> bool {
        match self {
            HookEvent::PreTool | HookEvent::PostTool => true,
            HookEvent::UserPrompt
            | HookEvent::TurnEnd
            | HookEvent::Notification
            | HookEvent::PreCompact
            | HookEvent::SessionStart => false,
        }
    }
}

/// `[hooks]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    pub pre_tool_may_allow: Option<bool>,
    pub pre_tool: Option<Vec<HookFile>>,
    pub post_tool: Option<Vec<HookFile>>,
    pub user_prompt: Option<Vec<HookFile>>,
    pub turn_end: Option<Vec<HookFile>>,
    pub notification: Option<Vec<HookFile>>,
    pub pre_compact: Option<Vec<HookFile>>,
    pub session_start: Option<Vec<HookFile>>,
}

impl HooksFile {
    /// The hooks of each event, in the file's order.
    pub fn by_event(&self) -> Vec<(HookEvent, &[HookFile])> {
        let lists = [
            &self.pre_tool,
            &self.post_tool,
            &self.user_prompt,
            &self.turn_end,
            &self.notification,
            &self.pre_compact,
            &self.session_start,
        ];
        HookEvent::ALL
            .into_iter()
            .zip(lists)
            .filter_map(|(event, list)| Some((event, list.as_deref()?)))
            .collect()
    }

    /// How many commands the file would run.
    pub fn count(&self) -> usize {
        self.by_event().iter().map(|(_, list)| list.len()).sum()
    }
}

/// One `[[hooks.EVENT]]` entry as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookFile {
    pub command: String,
    pub matcher: Option<String>,
    pub timeout_secs: Option<u64>,
}

/// One hook as a pod runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub event: HookEvent,
    /// Given to `sh -c` as written; never joined with anything from the event.
    pub command: String,
    /// A tool name or glob (`*`, `?`); `None`: every tool.
    pub matcher: Option<String>,
    pub timeout: Duration,
    /// The file that configured it.
    pub source: Source,
}

impl Hook {
    /// Whether the hook runs for a call of `tool` (always, for an event not about a tool).
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (&self.matcher, tool) {
            (Some(pattern), Some(tool)) => glob_matches(pattern, tool),
            (Some(_), None) | (None, _) => true,
        }
    }
}

/// Every configured hook, user file's first, each file's in its order.
#[derive(Debug, Clone, PartialEq)]
pub struct HooksSettings {
    pub hooks: Vec<Hook>,
    /// Whether a `pre_tool` hook's `allow` may answer a call the policy would ask about.
    pub pre_tool_may_allow: Setting<bool>,
}

impl Default for HooksSettings {
    fn default() -> Self {
        HooksSettings {
            hooks: Vec::new(),
            pre_tool_may_allow: Setting::default(false),
        }
    }
}

impl HooksSettings {
    /// The hooks that run for `event` (and, for a tool event, a call of `tool`), in order.
    pub fn for_event(&self, event: HookEvent, tool: Option<&str>) -> Vec<Hook> {
        self.hooks
            .iter()
            .filter(|h| h.event == event && h.matches(tool))
            .cloned()
            .collect()
    }

    pub(crate) fn layer(&mut self, file: HooksFile, source: &Source) -> Result<(), ConfigError> {
        if let Some(may) = file.pre_tool_may_allow {
            if matches!(source, Source::ProjectFile(_)) {
                return Err(ConfigError::Invalid {
                    key: "hooks.pre_tool_may_allow".into(),
                    value: may.to_string(),
                    origin: source.clone(),
                    reason: "is the person's own choice: set it in your config.toml, not in a \
                             project's .seedpod/config.toml"
                        .into(),
                });
            }
            self.pre_tool_may_allow = Setting::new(may, source.clone());
        }
        for (event, list) in file.by_event() {
            for (at, hook) in list.iter().enumerate() {
                let key = format!("hooks.{}[{at}]", event.as_str());
                self.hooks.push(resolve(event, hook, &key, source)?);
            }
        }
        Ok(())
    }
}

fn resolve(
    event: HookEvent,
    hook: &HookFile,
    key: &str,
    source: &Source,
) -> Result<Hook, ConfigError> {
    let invalid = |field: &str, value: String, reason: &str| ConfigError::Invalid {
        key: format!("{key}.{field}"),
        value,
        origin: source.clone(),
        reason: reason.into(),
    };
    if hook.command.trim().is_empty() {
        return Err(invalid(
            "command",
            format!("{:?}", hook.command),
            "is empty; name the command to run",
        ));
    }
    let secs = hook.timeout_secs.unwrap_or(DEFAULT_HOOK_TIMEOUT_SECS);
    if secs == 0 || secs > MAX_HOOK_TIMEOUT_SECS {
        return Err(invalid(
            "timeout_secs",
            secs.to_string(),
            "must be between 1 and 600",
        ));
    }
    if let Some(matcher) = &hook.matcher {
        if !event.is_about_a_tool() {
            return Err(invalid(
                "matcher",
                format!("{matcher:?}"),
                "only pre_tool and post_tool hooks are matched by tool name; remove it",
            ));
        }
        if matcher.trim().is_empty() {
            return Err(invalid(
                "matcher",
                format!("{matcher:?}"),
                "is empty; name a tool or a glob such as \"mcp__github__*\", or leave it out to match every tool",
            ));
        }
    }
    Ok(Hook {
        event,
        command: hook.command.clone(),
        matcher: hook.matcher.clone(),
        timeout: Duration::from_secs(secs),
        source: source.clone(),
    })
}

/// Whether `name` matches `pattern`: `*` stands for any run of characters, `?` for one, and
/// everything else for itself. Iterative, with one backtrack point, so a hostile pattern costs
/// at most `pattern × name` steps.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn globs_match_whole_names_only() {
        let cases = [
            ("shell", "shell", true),
            ("shell", "shell2", false),
            ("shell", "my_shell", false),
            ("mcp__github__*", "mcp__github__create_issue", true),
            ("mcp__github__*", "mcp__gitlab__create_issue", false),
            ("*", "anything", true),
            ("*_file", "write_file", true),
            ("*_file", "write_files", false),
            ("?ead_file", "read_file", true),
            ("a*b*c", "aXbYbZc", true),
            ("a*b*c", "aXbYbZ", false),
            ("", "", true),
            ("", "x", false),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(glob_matches(pattern, name), expected, "{pattern} vs {name}");
        }
    }

    #[test]
    fn a_pathological_glob_ends_quickly() {
        let pattern = "*a".repeat(200) + "b";
        let name = "a".repeat(5_000);
        assert!(!glob_matches(&pattern, &name));
    }

    fn user() -> Source {
        Source::UserFile(PathBuf::from("/home/me/.config/seedpod/config.toml"))
    }

    fn project() -> Source {
        Source::ProjectFile(PathBuf::from("/work/p/.seedpod/config.toml"))
    }

    fn parse(text: &str) -> HooksFile {
        #[derive(Deserialize)]
        struct Wrap {
            hooks: HooksFile,
        }
        toml::from_str::<Wrap>(text).expect("valid toml").hooks
    }

    #[test]
    fn hooks_layer_in_file_order_with_defaults() {
        let mut settings = HooksSettings::default();
        let file = parse(
            "[hooks]\n[[hooks.pre_tool]]\ncommand = \"a\"\nmatcher = \"shell\"\n\
             [[hooks.pre_tool]]\ncommand = \"b\"\ntimeout_secs = 3\n\
             [[hooks.turn_end]]\ncommand = \"c\"\n",
        );
        settings.layer(file, &user()).expect("valid");
        let pre = settings.for_event(HookEvent::PreTool, Some("shell"));
        assert_eq!(
            pre.iter().map(|h| h.command.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(
            pre[0].timeout,
            Duration::from_secs(DEFAULT_HOOK_TIMEOUT_SECS)
        );
        assert_eq!(pre[1].timeout, Duration::from_secs(3));
        let other = settings.for_event(HookEvent::PreTool, Some("read_file"));
        assert_eq!(other.len(), 1, "the shell matcher leaves read_file to b");
        assert_eq!(settings.for_event(HookEvent::TurnEnd, None).len(), 1);
        assert!(!settings.pre_tool_may_allow.value);
    }

    #[test]
    fn bad_hooks_are_refused_in_words() {
        let cases = [
            ("[[hooks.pre_tool]]\ncommand = \"  \"\n", "is empty"),
            (
                "[[hooks.pre_tool]]\ncommand = \"x\"\ntimeout_secs = 0\n",
                "between 1 and 600",
            ),
            (
                "[[hooks.pre_tool]]\ncommand = \"x\"\ntimeout_secs = 601\n",
                "between 1 and 600",
            ),
            (
                "[[hooks.turn_end]]\ncommand = \"x\"\nmatcher = \"shell\"\n",
                "only pre_tool",
            ),
            (
                "[[hooks.post_tool]]\ncommand = \"x\"\nmatcher = \"\"\n",
                "leave it out",
            ),
        ];
        for (text, words) in cases {
            let mut settings = HooksSettings::default();
            let err = settings
                .layer(parse(&format!("[hooks]\n{text}")), &user())
                .expect_err(text);
            assert!(err.to_string().contains(words), "{text}: {err}");
        }
    }

    #[test]
    fn only_the_users_file_may_let_a_hook_approve() {
        let file = parse("[hooks]\npre_tool_may_allow = true\n");
        let mut settings = HooksSettings::default();
        let err = settings
            .layer(file.clone(), &project())
            .expect_err("refused");
        assert!(err.to_string().contains("your config.toml"), "{err}");
        assert!(!settings.pre_tool_may_allow.value);
        settings
            .layer(file, &user())
            .expect("the user's own choice");
        assert!(settings.pre_tool_may_allow.value);
    }
}
