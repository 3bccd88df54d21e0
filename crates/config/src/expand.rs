//! `${VAR}` and `${VAR:-default}` in an MCP server's `command`, `args`, `env` values, `url`
//! and header values (docs/configuration.md §MCP servers).
//!
//! Expansion happens when the pod starts or connects to the server, from the pod's
//! environment; the expanded text is handed to the process or the request and kept nowhere
//! else, so a value never reaches a config file, `pod.json` or the log. Errors name the
//! variable, never a value.
//!
//! One pass, no recursion: what a variable holds (and a default) is taken as it is, even when
//! it contains `${`. `$${` writes a literal `${`; any other `$` is itself.

use std::collections::BTreeMap;

use crate::mcp::McpTransport;

/// Why a template could not be expanded, in the person's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error(
        "${0} is not set in the pod's environment and has no default (`${{{0}:-default}}` gives one)"
    )]
    Unset(String),
    #[error("`${{` without a closing `}}`")]
    Unclosed,
    #[error("`${{{0}}}`: not an environment variable name")]
    BadName(String),
}

/// Whether `text` asks for expansion at all.
pub fn is_template(text: &str) -> bool {
    text.contains("${")
}

/// `text` with each `${VAR}` / `${VAR:-default}` replaced by what `lookup` gives. An empty
/// value counts as unset for `:-`, as in the shell.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(literal) = after.strip_prefix("${") {
            out.push_str("${");
            rest = literal;
            continue;
        }
        let Some(body) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let end = body.find('}').ok_or(ExpandError::Unclosed)?;
        let inner = &body[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if !crate::mcp::is_variable_name(name) {
            return Err(ExpandError::BadName(name.to_owned()));
        }
        match (
            lookup(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(ExpandError::Unset(name.to_owned())),
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A stdio or HTTP transport with its templates expanded (header values that are templates
/// too; a header value that is a bare variable name stays one, read by the pod as before).
/// The error names the key and the variable.
pub fn transport(
    written: &McpTransport,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpTransport, String> {
    let one = |key: &str, text: &str| expand(text, lookup).map_err(|e| format!("{key}: {e}"));
    Ok(match written {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => McpTransport::Stdio {
            command: one("command", command)?,
            args: args
                .iter()
                .map(|arg| one("args", arg))
                .collect::<Result<_, _>>()?,
            env: env
                .iter()
                .map(|(k, v)| Ok((k.clone(), one(&format!("env.{k}"), v)?)))
                .collect::<Result<BTreeMap<_, _>, String>>()?,
            env_vars: env_vars.clone(),
            cwd: cwd.clone(),
        },
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        } => McpTransport::Http {
            url: one("url", url)?,
            headers: headers.clone(),
            bearer_token_env: bearer_token_env.clone(),
        },
    })
}

/// The value of header `header` as written (`written`): a template is expanded; otherwise
/// it names the variable that holds the value.
pub fn header_value(
    header: &str,
    written: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    if is_template(written) {
        return expand(written, lookup).map_err(|e| format!("header {header}: {e}"));
    }
    lookup(written).ok_or_else(|| {
        format!("header {header} comes from ${written}, which is not set in the pod's environment")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME_DIR" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            "TRICKY" => Some("${HOME_DIR}".into()),
            _ => None,
        }
    }

    #[test]
    fn variables_and_defaults_expand_in_one_pass() {
        let cases = [
            ("plain", "plain"),
            ("${HOME_DIR}/x", "/home/me/x"),
            ("a${HOME_DIR}b${HOME_DIR}", "a/home/meb/home/me"),
            ("${NOPE:-fallback}", "fallback"),
            ("${HOME_DIR:-fallback}", "/home/me"),
            ("${EMPTY:-fallback}", "fallback"),
            ("${EMPTY}", ""),
            ("${NOPE:-}", ""),
            // No recursion: a value or a default holding `${` stays as it is.
            ("${TRICKY}", "${HOME_DIR}"),
            ("${NOPE:-${HOME_DIR}", "${HOME_DIR"),
            // `$${` is a literal `${`; a lone `$` is itself.
            ("$${HOME_DIR}", "${HOME_DIR}"),
            ("cost $5 $HOME_DIR", "cost $5 $HOME_DIR"),
            ("end$", "end$"),
        ];
        for (text, want) in cases {
            assert_eq!(expand(text, &env).as_deref(), Ok(want), "{text}");
        }
    }

    #[test]
    fn an_unset_variable_names_the_variable_and_bad_templates_are_refused() {
        assert_eq!(
            expand("--token=${SECRET_TOKEN}", &env),
            Err(ExpandError::Unset("SECRET_TOKEN".into()))
        );
        assert!(
            expand("${SECRET_TOKEN}", &env)
                .unwrap_err()
                .to_string()
                .contains("$SECRET_TOKEN"),
        );
        assert_eq!(expand("${HOME_DIR", &env), Err(ExpandError::Unclosed));
        assert_eq!(
            expand("${A B}", &env),
            Err(ExpandError::BadName("A B".into()))
        );
    }

    #[test]
    fn a_transport_expands_every_field_and_names_the_key_that_failed() {
        let written = McpTransport::Stdio {
            command: "${HOME_DIR}/bin/srv".into(),
            args: vec!["--dir=${HOME_DIR}".into()],
            env: BTreeMap::from([("TOKEN".into(), "${NOPE:-none}".into())]),
            env_vars: vec![],
            cwd: None,
        };
        let McpTransport::Stdio {
            command, args, env, ..
        } = transport(&written, &super::tests::env).unwrap()
        else {
            panic!("stdio")
        };
        assert_eq!(command, "/home/me/bin/srv");
        assert_eq!(args, ["--dir=/home/me"]);
        assert_eq!(env["TOKEN"], "none");
        let http = McpTransport::Http {
            url: "https://${MISSING}/mcp".into(),
            headers: BTreeMap::new(),
            bearer_token_env: None,
        };
        let err = transport(&http, &super::tests::env).unwrap_err();
        assert!(err.starts_with("url:") && err.contains("$MISSING"), "{err}");
    }

    #[test]
    fn a_header_is_a_template_or_names_its_variable() {
        assert_eq!(
            header_value("Authorization", "Bearer ${HOME_DIR}", &env).as_deref(),
            Ok("Bearer /home/me")
        );
        assert_eq!(
            header_value("X-Key", "HOME_DIR", &env).as_deref(),
            Ok("/home/me")
        );
        assert!(
            header_value("X-Key", "NOPE", &env)
                .unwrap_err()
                .contains("$NOPE")
        );
    }
}
