//! Which approval requests `seedpod exec` answers for the person who ran it, and which end the
//! run. Nobody sits at an `exec` run to answer a prompt, so the person decides up front, with
//! flags; what the flags do not cover is never approved (DESIGN invariant 6: only a person
//! widens what the model may do, and the flags are that person speaking). The default covers
//! nothing: a call the configuration says to ask about ends the run (`docs/exec.md`).

use clap::ValueEnum;
use seedpod_protocol::Effect;

use crate::exit::Exit;

/// `--approve`: how much the person approves in advance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ApproveLevel {
    /// Nothing: a call that asks ends the run.
    #[default]
    None,
    /// Calls of the built-in tools that only read (`read_file`, `list_dir`, `grep`, …). Never
    /// an MCP tool, whatever its server says of it: a server's hint is its own claim.
    ReadOnly,
    /// Every call that asks, shell commands included.
    All,
}

/// The person's advance answers: a level and the tools named with `--allow`.
#[derive(Debug, Clone)]
pub struct ExecPolicy {
    level: ApproveLevel,
    allow: Vec<String>,
}

/// What `exec` does with one approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Approve it once; the string names the flag that covers it, for the record on stderr.
    Approve(String),
    /// End the run: nobody said yes to this call.
    Refuse,
}

impl ExecPolicy {
    /// The policy for these flags. A name in `--allow` that no tool has is refused, so a typo
    /// (`--allow shel`) fails before the run instead of failing it midway.
    pub fn new(level: ApproveLevel, allow: &[String]) -> anyhow::Result<ExecPolicy> {
        for tool in allow {
            if seedpod_pod::catalogue::decl_for(tool).is_none() {
                let known: Vec<&str> = seedpod_pod::catalogue::declared()
                    .into_iter()
                    .map(|decl| decl.name)
                    .collect();
                return Err(Exit::usage(format!(
                    "--allow {tool}: no tool has that name; write a built-in tool ({}) or an MCP \
                     tool as mcp__SERVER__TOOL",
                    known.join(", ")
                )));
            }
        }
        Ok(ExecPolicy {
            level,
            allow: allow.to_vec(),
        })
    }

    /// The answer to a request to run a call of `tool`.
    pub fn decide(&self, tool: &str) -> Decision {
        if self.allow.iter().any(|allowed| allowed == tool) {
            return Decision::Approve(format!("--allow {tool}"));
        }
        match self.level {
            ApproveLevel::All => Decision::Approve("--approve all".into()),
            ApproveLevel::ReadOnly if only_reads(tool) => {
                Decision::Approve("--approve read-only".into())
            }
            ApproveLevel::ReadOnly | ApproveLevel::None => Decision::Refuse,
        }
    }

    /// What to tell the person whose run a call of `tool` ended: the flags that would let it
    /// through.
    pub fn advice(&self, tool: &str) -> String {
        if only_reads(tool) {
            format!("rerun with --approve read-only (or --allow {tool}) to approve such calls")
        } else {
            format!("rerun with --allow {tool} (or --approve all) to approve such calls")
        }
    }
}

/// Whether `tool` is a built-in tool declared to change nothing. An MCP tool's declaration is
/// the MCP kind's (`Effect::Changes`), and a name without a declaration is no tool.
fn only_reads(tool: &str) -> bool {
    seedpod_pod::catalogue::decl_for(tool).is_some_and(|decl| decl.effect == Effect::ReadOnly)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(level: ApproveLevel, allow: &[&str]) -> ExecPolicy {
        let allow: Vec<String> = allow.iter().map(|s| s.to_string()).collect();
        ExecPolicy::new(level, &allow).expect("valid flags")
    }

    /// The calls each flag set lets through, and the ones it must not: a write or a command
    /// dressed as something that reads, an MCP tool named like a built-in one, an unknown name.
    #[test]
    fn each_flag_approves_what_it_says_and_nothing_more() {
        use ApproveLevel::*;
        let approve = |why: &str| Decision::Approve(why.to_string());
        let cases = [
            (None, &[][..], "read_file", Decision::Refuse),
            (None, &[][..], "shell", Decision::Refuse),
            (
                ReadOnly,
                &[][..],
                "read_file",
                approve("--approve read-only"),
            ),
            (
                ReadOnly,
                &[][..],
                "list_dir",
                approve("--approve read-only"),
            ),
            (ReadOnly, &[][..], "shell", Decision::Refuse),
            (ReadOnly, &[][..], "write_file", Decision::Refuse),
            (ReadOnly, &[][..], "edit_file", Decision::Refuse),
            (ReadOnly, &[][..], "spawn_pod", Decision::Refuse),
            (ReadOnly, &[][..], "mcp__files__read_file", Decision::Refuse),
            (ReadOnly, &[][..], "read_file_and_delete", Decision::Refuse),
            (ReadOnly, &[][..], "", Decision::Refuse),
            (All, &[][..], "shell", approve("--approve all")),
            (All, &[][..], "mcp__files__write", approve("--approve all")),
            (None, &["shell"][..], "shell", approve("--allow shell")),
            (None, &["shell"][..], "write_file", Decision::Refuse),
            (None, &["shell"][..], "Shell", Decision::Refuse),
            (
                None,
                &["mcp__files__read"][..],
                "mcp__files__read",
                approve("--allow mcp__files__read"),
            ),
            (
                None,
                &["mcp__files__read"][..],
                "mcp__files__write",
                Decision::Refuse,
            ),
            (
                ReadOnly,
                &["shell"][..],
                "read_file",
                approve("--approve read-only"),
            ),
        ];
        for (level, allow, tool, expected) in cases {
            assert_eq!(
                policy(level, allow).decide(tool),
                expected,
                "--approve {level:?} --allow {allow:?}: {tool}"
            );
        }
    }

    #[test]
    fn an_allowed_name_that_is_no_tool_is_refused_before_the_run() {
        let err = ExecPolicy::new(ApproveLevel::None, &["shel".to_string()]).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("--allow shel"), "{message}");
        assert!(message.contains("shell"), "lists the tools: {message}");
        assert_eq!(crate::exit::code_of(&err), 2);
    }

    #[test]
    fn the_advice_names_a_flag_that_would_let_the_call_through() {
        let none = policy(ApproveLevel::None, &[]);
        for tool in ["shell", "read_file", "mcp__git__commit"] {
            let advice = none.advice(tool);
            let flags: Vec<&str> = advice
                .split(['(', ')', ' '])
                .filter(|w| w.starts_with("--"))
                .collect();
            assert!(!flags.is_empty(), "{advice}");
            let followed = match advice.contains("--approve read-only") {
                true => policy(ApproveLevel::ReadOnly, &[]),
                false => policy(ApproveLevel::None, &[tool]),
            };
            assert!(
                matches!(followed.decide(tool), Decision::Approve(_)),
                "following \"{advice}\" approves {tool}"
            );
        }
    }
}
