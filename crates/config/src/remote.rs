//! `[remote]`: how `seedpod` reaches pods on other machines (`HOST:NAME`). It runs `ssh`
//! (which brings authentication, keys, agents, jump hosts and encryption) and, on the other
//! side, `seedpod bridge NAME`; nothing listens on a network port.
//!
//! ```toml
//! [remote]
//! ssh = "ssh -o ConnectTimeout=5"   # the command and options; split at white space
//! timeout_secs = 10                 # how long `ls --all` waits for each host
//!
//! [remote.hosts.gpu]                # `gpu:NAME`, and a line in `ls --all`
//! host = "me@gpu-box.lan"           # what ssh is given (default: the alias itself)
//! bin = "/opt/seedpod/bin/seedpod"  # seedpod on that machine (default: `seedpod` on PATH)
//! ```
//!
//! Only the user's file may say this: `ssh` and `bin` are commands this machine runs, so a
//! project file's `[remote]` is left out until the project is trusted (`loosen.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::ConfigError;
use crate::source::{Setting, Source};

pub const DEFAULT_SSH: &str = "ssh";
pub const DEFAULT_BIN: &str = "seedpod";
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteFile {
    pub ssh: Option<String>,
    pub timeout_secs: Option<u64>,
    pub hosts: Option<BTreeMap<String, RemoteHostFile>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteHostFile {
    pub host: Option<String>,
    pub bin: Option<String>,
}

/// One machine: how ssh reaches it and where seedpod is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHost {
    /// The name in `HOST:NAME`.
    pub alias: String,
    /// What ssh is given: `user@host`, or an alias of `~/.ssh/config`.
    pub destination: String,
    pub bin: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RemoteSettings {
    /// The ssh command and its options, as words.
    pub ssh: Setting<Vec<String>>,
    pub timeout_secs: Setting<u64>,
    /// The configured machines, by alias.
    pub hosts: BTreeMap<String, RemoteHost>,
}

impl RemoteSettings {
    pub(crate) fn defaults() -> RemoteSettings {
        RemoteSettings {
            ssh: Setting::default(vec![DEFAULT_SSH.to_owned()]),
            timeout_secs: Setting::default(DEFAULT_TIMEOUT_SECS),
            hosts: BTreeMap::new(),
        }
    }

    pub(crate) fn layer(&mut self, file: RemoteFile, source: &Source) -> Result<(), ConfigError> {
        if let Some(ssh) = file.ssh {
            let words: Vec<String> = ssh.split_whitespace().map(str::to_owned).collect();
            if words.is_empty() {
                return Err(ConfigError::Invalid {
                    key: "remote.ssh".into(),
                    value: format!("{ssh:?}"),
                    origin: source.clone(),
                    reason: "is empty; name the ssh command (and its options)".into(),
                });
            }
            self.ssh = Setting::new(words, source.clone());
        }
        if let Some(secs) = file.timeout_secs {
            if secs == 0 || secs > 3_600 {
                return Err(ConfigError::Invalid {
                    key: "remote.timeout_secs".into(),
                    value: secs.to_string(),
                    origin: source.clone(),
                    reason: "must be between 1 and 3600".into(),
                });
            }
            self.timeout_secs = Setting::new(secs, source.clone());
        }
        for (alias, host) in file.hosts.unwrap_or_default() {
            if let Some(reason) = host_problem(&alias) {
                return Err(ConfigError::Invalid {
                    key: format!("remote.hosts.{alias}"),
                    value: format!("{alias:?}"),
                    origin: source.clone(),
                    reason,
                });
            }
            let destination = host.host.unwrap_or_else(|| alias.clone());
            if let Some(reason) = host_problem(&destination) {
                return Err(ConfigError::Invalid {
                    key: format!("remote.hosts.{alias}.host"),
                    value: format!("{destination:?}"),
                    origin: source.clone(),
                    reason,
                });
            }
            let bin = host.bin.unwrap_or_else(|| DEFAULT_BIN.to_owned());
            if bin.trim().is_empty() {
                return Err(ConfigError::Invalid {
                    key: format!("remote.hosts.{alias}.bin"),
                    value: format!("{bin:?}"),
                    origin: source.clone(),
                    reason: "is empty; name seedpod's path on that machine".into(),
                });
            }
            self.hosts.insert(
                alias.clone(),
                RemoteHost {
                    alias,
                    destination,
                    bin,
                },
            );
        }
        Ok(())
    }

    /// How to reach `alias`: as configured, or ssh's own idea of that name with `seedpod` on
    /// the PATH.
    pub fn host(&self, alias: &str) -> RemoteHost {
        self.hosts
            .get(alias)
            .cloned()
            .unwrap_or_else(|| RemoteHost {
                alias: alias.to_owned(),
                destination: alias.to_owned(),
                bin: DEFAULT_BIN.to_owned(),
            })
    }
}

/// Why `host` cannot be given to ssh, if it cannot: empty, white space, or a leading `-`
/// (ssh would read it as an option: `-oProxyCommand=…` runs a command).
pub fn host_problem(host: &str) -> Option<String> {
    if host.is_empty() {
        return Some("is empty".into());
    }
    if host.starts_with('-') {
        return Some("starts with `-`, which ssh would take for an option".into());
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("contains white space".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layered(text: &str) -> Result<RemoteSettings, String> {
        let file: RemoteFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut settings = RemoteSettings::defaults();
        settings
            .layer(file, &Source::Default)
            .map_err(|e| e.to_string())?;
        Ok(settings)
    }

    #[test]
    fn hosts_default_to_their_alias_and_seedpod_on_the_path() {
        let settings = layered(
            "ssh = \"ssh -o ConnectTimeout=5\"\n[hosts.gpu]\nhost = \"me@gpu.lan\"\nbin = \"/opt/sp\"\n",
        )
        .unwrap();
        assert_eq!(settings.ssh.value, ["ssh", "-o", "ConnectTimeout=5"]);
        assert_eq!(settings.host("gpu").destination, "me@gpu.lan");
        assert_eq!(settings.host("gpu").bin, "/opt/sp");
        let other = settings.host("build");
        assert_eq!(
            (other.destination.as_str(), other.bin.as_str()),
            ("build", "seedpod")
        );
    }

    #[test]
    fn a_host_that_ssh_would_read_as_an_option_is_refused() {
        for (text, want) in [
            ("[hosts.\"-oProxyCommand=sh\"]\n", "`-`"),
            ("[hosts.a]\nhost = \"-oProxyCommand=touch x\"\n", "`-`"),
            ("[hosts.a]\nhost = \"a b\"\n", "white space"),
            ("ssh = \"  \"\n", "empty"),
            ("timeout_secs = 0\n", "between"),
            ("[hosts.a]\nport = 22\n", "unknown field"),
        ] {
            let err = layered(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
        assert!(host_problem("me@host").is_none());
    }
}
