//! The environment a `shell` command gets: an allow-list, not the pod's whole environment. The
//! pod was started with the person's provider key, and often with other tokens (a registry's,
//! a cloud's) and proxy URLs that carry a password; none of that is the model's to read, and a
//! command's output goes straight to the model.
//!
//! What passes: the names a shell and the usual toolchains need to find programs, a home, a
//! locale and their caches ([`NAMES`], [`PREFIXES`]). Even then a name that says it holds a
//! secret ([`SECRET_WORDS`]) and a value that is a URL with a password are left out.

use std::ffi::OsStr;

/// Passed by exact name.
const NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "TMPDIR",
    "SSH_AUTH_SOCK",
    "GNUPGHOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "CLICOLOR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "HOSTNAME",
    "CI",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOFLAGS",
    "GOPROXY",
    "GOPRIVATE",
    "GOCACHE",
    "GOMODCACHE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PYTHONPATH",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "NVM_DIR",
    "NVM_BIN",
    "NODE_PATH",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_DIR",
    "DENO_INSTALL",
    "SDKMAN_DIR",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH",
];

/// Passed by prefix: the locale, the Rust toolchain's many settings, git's identity and tools.
const PREFIXES: &[&str] = &["LC_", "CARGO_", "RUSTUP_", "RUST", "GIT_"];

/// A name containing one of these (case-insensitively) is left out whatever else it matches:
/// `CARGO_REGISTRY_TOKEN`, `RUSTUP_…_PASSWORD`.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "API_KEY",
    "APIKEY",
    "AUTH",
    "COOKIE",
    "PRIVATE",
];

/// Whether the variable `name` with `value` may reach a command.
pub(crate) fn passes(name: &str, value: &OsStr) -> bool {
    let listed = NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p));
    let upper = name.to_ascii_uppercase();
    let secret_name = SECRET_WORDS.iter().any(|w| upper.contains(w));
    listed && !secret_name && !has_url_password(&value.to_string_lossy())
}

/// `scheme://user:password@host`: a proxy or index URL carrying its credentials.
fn has_url_password(value: &str) -> bool {
    value.split("://").skip(1).any(|rest| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// Replace the command's environment with what [`passes`] of the pod's own.
pub(crate) fn scrub(command: &mut tokio::process::Command) {
    command.env_clear();
    for (name, value) in std::env::vars_os() {
        if let Some(text) = name.to_str()
            && passes(text, &value)
        {
            command.env(&name, &value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tokens_and_url_passwords_never_pass() {
        let refused = [
            ("OPENAI_API_KEY", "sk-1"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("SEEDPOD_HOME", "/home/p/.seedpod"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("CARGO_REGISTRY_TOKEN", "cio"),
            ("CARGO_REGISTRIES_X_TOKEN", "cio"),
            ("RUSTUP_DIST_SERVER_PASSWORD", "p"),
            ("AWS_SECRET_ACCESS_KEY", "a"),
            ("HTTPS_PROXY", "http://alice:hunter2@proxy:3128"),
            ("GOPROXY", "https://u:p@goproxy.example/mod,direct"),
            ("DATABASE_URL", "postgres://localhost/db"),
        ];
        for (name, value) in refused {
            assert!(!passes(name, OsStr::new(value)), "{name}={value}");
        }
        let passed = [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/p"),
            ("LC_ALL", "C.UTF-8"),
            ("CARGO_HOME", "/home/p/.cargo"),
            ("RUSTFLAGS", "-Dwarnings"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("NO_PROXY", "localhost,127.0.0.1"),
            ("GOPROXY", "https://proxy.golang.org,direct"),
        ];
        for (name, value) in passed {
            assert!(passes(name, OsStr::new(value)), "{name}={value}");
        }
    }
}
