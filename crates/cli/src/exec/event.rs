//! What `seedpod exec` reports: the events of `--json` (one object per line on stdout, the
//! schema `docs/exec.md` documents) and the run's outcome with its exit code. The events are
//! this command's own small schema, not the pod's frames: a script reads what the log holds
//! (committed text, calls, results) and one `end` line, and keeps working when the protocol
//! grows.

use serde::Serialize;

/// How an `exec` run ended, and the exit code a script sees for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model finished its answer.
    Completed,
    /// The model or its provider failed (an error after retries, a refusal), the run hit a
    /// limit or made no progress, or the pod could not run it.
    Failed,
    /// A tool call needed a person's approval that the flags did not give.
    NeedsApproval,
    /// Ctrl-C, SIGTERM or SIGHUP, or the run was cancelled from elsewhere.
    Interrupted,
}

impl Outcome {
    /// The process exit code. 2 is every seedpod command's code for a usage error (`exit.rs`),
    /// so the codes of outcomes step around it; 130 is the shell's code for Ctrl-C.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Completed => 0,
            Outcome::Failed => 1,
            Outcome::NeedsApproval => 3,
            Outcome::Interrupted => 130,
        }
    }
}

/// One line of `exec --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExecEvent<'a> {
    /// The pod is ready and has the task.
    Started { pod: &'a str, cwd: &'a str },
    /// One committed assistant message, cleaned as the log keeps it.
    Text { text: &'a str },
    /// The model's committed reasoning.
    Reasoning { text: &'a str },
    /// The model called a tool; `arguments` is its raw argument text.
    ToolCall {
        call_id: &'a str,
        tool: &'a str,
        arguments: &'a str,
    },
    /// A tool call's committed result.
    ToolResult {
        call_id: &'a str,
        tool: &'a str,
        content: &'a str,
        is_error: bool,
    },
    /// A call asked for approval and what `exec` answered: approved by `by` (a flag), or
    /// refused, which ends the run.
    Approval {
        call_id: &'a str,
        tool: &'a str,
        summary: &'a str,
        decision: ApprovalOutcome,
        #[serde(skip_serializing_if = "Option::is_none")]
        by: Option<&'a str>,
    },
    /// A notice from the pod (a retry, a failed server, an error).
    Alert { level: &'a str, message: &'a str },
    /// Tokens of one model response.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The last line: how the run ended, the exit code, and the pod (kept or removed).
    End {
        status: Outcome,
        exit_code: i32,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<&'a str>,
        pod: &'a str,
        kept: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOutcome {
    Approved,
    Refused,
}

impl ExecEvent<'_> {
    pub fn to_line(&self) -> String {
        // Serialising these plain structs cannot fail; an empty object would still parse.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire of `--json` as `docs/exec.md` documents it.
    #[test]
    fn golden_lines() {
        let cases = [
            (
                ExecEvent::Started {
                    pod: "exec-7",
                    cwd: "/w",
                },
                r#"{"type":"started","pod":"exec-7","cwd":"/w"}"#,
            ),
            (
                ExecEvent::ToolCall {
                    call_id: "c1",
                    tool: "shell",
                    arguments: r#"{"command":"ls"}"#,
                },
                r#"{"type":"tool_call","call_id":"c1","tool":"shell","arguments":"{\"command\":\"ls\"}"}"#,
            ),
            (
                ExecEvent::Approval {
                    call_id: "c1",
                    tool: "shell",
                    summary: "shell: ls",
                    decision: ApprovalOutcome::Refused,
                    by: None,
                },
                r#"{"type":"approval","call_id":"c1","tool":"shell","summary":"shell: ls","decision":"refused"}"#,
            ),
            (
                ExecEvent::End {
                    status: Outcome::NeedsApproval,
                    exit_code: Outcome::NeedsApproval.exit_code(),
                    message: Some("m"),
                    pod: "exec-7",
                    kept: false,
                },
                r#"{"type":"end","status":"needs_approval","exit_code":3,"message":"m","pod":"exec-7","kept":false}"#,
            ),
        ];
        for (event, line) in cases {
            assert_eq!(event.to_line(), line);
        }
    }

    #[test]
    fn every_outcome_has_its_own_code_and_none_is_the_usage_code() {
        let all = [
            Outcome::Completed,
            Outcome::Failed,
            Outcome::NeedsApproval,
            Outcome::Interrupted,
        ];
        let codes: std::collections::BTreeSet<i32> = all.iter().map(|o| o.exit_code()).collect();
        assert_eq!(codes.len(), all.len());
        assert!(!codes.contains(&2));
        assert_eq!(Outcome::Completed.exit_code(), 0);
    }
}
