//! Cross-app access's `id_token_command` (docs/configuration.md §MCP OAuth): the person's own
//! command that prints a fresh ID token from their enterprise identity provider — the way
//! kubectl's credential plugins and git's credential helpers work (`gcloud auth
//! print-identity-token`, a company script). seedpod does no OpenID Connect login itself; the
//! tool the person already logs in with does.
//!
//! The command runs directly (no shell unless the person wrote one), in its own process group
//! with a time limit, its output capped (`hooks::run`). Only its stdout is the token; its
//! stderr is shown when it fails, so the person sees why (an expired login, say). The token
//! itself is never logged, written or put in a message.

use std::time::Duration;

use crate::hooks::run::{MAX_HOOK_OUTPUT_BYTES, Ran, run_program};

use super::machine::MachineError;

/// How long the command may take: long enough for a CLI that refreshes its own login over
/// the network, short enough that a command waiting for input does not stall a connect.
pub const ID_TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of its stderr quoted in an error.
const MAX_STDERR_SHOWN: usize = 1000;

/// Run `argv` (`${VAR}` already expanded) and return the ID token it printed. Messages name
/// the program as `written` in the configuration, never what it expanded to.
pub async fn fetch(argv: &[String], written: &str) -> Result<String, MachineError> {
    fetch_within(argv, written, ID_TOKEN_TIMEOUT).await
}

pub(crate) async fn fetch_within(
    argv: &[String],
    written: &str,
    limit: Duration,
) -> Result<String, MachineError> {
    let named = format!(
        "id_token_command ({})",
        seedpod_protocol::printable_line(written)
    );
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("/"));
    match run_program(argv, &cwd, b"", limit).await {
        Ran::NotStarted(why) => Err(MachineError::Config(format!("{named}: {why}"))),
        Ran::TimedOut => Err(MachineError::Refused(format!(
            "{named} printed no ID token within {} s and was stopped; it must print the token \
             and exit without asking anything",
            limit.as_secs()
        ))),
        Ran::Exited {
            status,
            stdout,
            stderr,
            stdout_cut,
        } => {
            // Before the exit status: a command cut off mid-output dies of the closed pipe.
            if stdout_cut {
                return Err(MachineError::Refused(format!(
                    "{named} printed more than {} KiB; it should print one ID token",
                    MAX_HOOK_OUTPUT_BYTES / 1024
                )));
            }
            if !status.success() {
                let said = shown_stderr(&stderr);
                let code = status
                    .code()
                    .map_or_else(|| "was killed".to_owned(), |c| format!("exited with {c}"));
                return Err(MachineError::Refused(match said.is_empty() {
                    true => format!("{named} {code} and printed no reason"),
                    false => format!("{named} {code}: {said}"),
                }));
            }
            let token = stdout.trim();
            if token.is_empty() {
                return Err(MachineError::Refused(format!(
                    "{named} printed nothing; it should print an ID token on its standard \
                     output"
                )));
            }
            if !looks_like_jwt(token) {
                // Not quoted: whatever it printed may be a secret of another kind.
                return Err(MachineError::Refused(format!(
                    "{named} printed something that is not an ID token (a JWT: three \
                     base64url parts joined by dots, on one line)"
                )));
            }
            Ok(token.to_owned())
        }
    }
}

/// The end of a failed command's stderr, one printable line.
fn shown_stderr(stderr: &str) -> String {
    let joined = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = joined.chars().collect();
    let tail: String = match chars.len() > MAX_STDERR_SHOWN {
        true => {
            let cut: String = chars[chars.len() - MAX_STDERR_SHOWN..].iter().collect();
            format!("…{cut}")
        }
        false => joined,
    };
    seedpod_protocol::printable_line(&tail).into_owned()
}

/// A compact JWS: three base64url parts, the first two not empty.
fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    let base64url = |part: &str| {
        part.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    parts.len() == 3
        && !parts[0].is_empty()
        && !parts[1].is_empty()
        && parts.iter().all(|part| base64url(part))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl";

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    async fn fails(argv: Vec<String>, limit: Duration) -> String {
        match fetch_within(&argv, &argv[0], limit).await {
            Ok(token) => panic!("took {token:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[tokio::test]
    async fn the_token_printed_is_taken_trimmed() {
        let got = fetch_within(
            &sh(&format!("printf '  {TOKEN}\\n\\n'")),
            "sh",
            ID_TOKEN_TIMEOUT,
        )
        .await
        .unwrap();
        assert_eq!(got, TOKEN);
    }

    #[tokio::test]
    async fn arguments_reach_the_program_without_a_shell() {
        // `printf` run directly: `$(…)` and `;` are data, not shell syntax.
        let argv: Vec<String> = ["printf", "%s", "a.b.c;$(touch /tmp/x)"]
            .map(String::from)
            .to_vec();
        let err = fails(argv, ID_TOKEN_TIMEOUT).await;
        assert!(err.contains("not an ID token"), "{err}");
        let argv: Vec<String> = ["printf", "%s", TOKEN].map(String::from).to_vec();
        assert_eq!(
            fetch_within(&argv, &argv[0], ID_TOKEN_TIMEOUT)
                .await
                .unwrap(),
            TOKEN
        );
    }

    #[tokio::test]
    async fn a_command_that_hangs_is_stopped_at_its_limit() {
        let err = fails(sh("sleep 1000"), Duration::from_secs(1)).await;
        assert!(err.contains("printed no ID token within 1 s"), "{err}");
    }

    #[tokio::test]
    async fn a_command_that_prints_megabytes_is_cut_off() {
        let err = fails(sh("yes eyJ"), ID_TOKEN_TIMEOUT).await;
        assert!(err.contains("more than 64 KiB"), "{err}");
    }

    #[tokio::test]
    async fn a_failing_command_shows_its_stderr_in_one_printable_line() {
        let err = fails(
            sh("printf 'session expired:\\n\\033[2J run okta login\\n' >&2; exit 3"),
            ID_TOKEN_TIMEOUT,
        )
        .await;
        assert!(err.contains("exited with 3"), "{err}");
        assert!(err.contains("session expired: "), "{err}");
        assert!(err.contains("run okta login"), "{err}");
        assert!(!err.contains('\u{1b}') && !err.contains('\n'), "{err:?}");
        let long = fails(
            sh("head -c 100000 /dev/zero | tr '\\0' x >&2; exit 1"),
            ID_TOKEN_TIMEOUT,
        )
        .await;
        assert!(long.len() < 1200, "{} bytes", long.len());
    }

    #[tokio::test]
    async fn nothing_or_something_else_printed_is_refused_without_echoing_it() {
        let err = fails(sh("true"), ID_TOKEN_TIMEOUT).await;
        assert!(err.contains("printed nothing"), "{err}");
        let err = fails(sh("echo hunter2-not-a-token"), ID_TOKEN_TIMEOUT).await;
        assert!(err.contains("not an ID token"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        let err = fails(
            sh(&format!("echo '{TOKEN}'; echo '{TOKEN}'")),
            ID_TOKEN_TIMEOUT,
        )
        .await;
        assert!(err.contains("not an ID token"), "{err}");
    }

    #[tokio::test]
    async fn a_missing_program_is_a_configuration_error() {
        let argv = vec!["/nonexistent/okta-print-token".to_owned()];
        match fetch_within(&argv, &argv[0], ID_TOKEN_TIMEOUT).await {
            Err(MachineError::Config(why)) => {
                assert!(why.contains("okta-print-token"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }
}
