//! `[approvals]`: what happens when the model calls each tool — its section of the file,
//! layering and validation.
//!
//! The keys are not written here: they are the names of the tools a pod can be given, read
//! from their declarations (`seedpod_protocol::ToolDecl`), which the caller passes in
//! (`Inputs::tools`; the pod's catalogue in the product). So a tool's key and its default live
//! in one place, beside the tool, and a name no declaration has is an error naming its line and
//! the valid names (a misspelt `shel = "deny"` must not leave shell on `ask`). MCP tool keys
//! (`mcp__SERVER__TOOL`, `mcp__SERVER__*`) are checked for their shape only: servers are
//! configured, not declared.

use std::collections::BTreeMap;
use std::path::PathBuf;

use seedpod_protocol::{Effect, InSmallPrompt, ToolDecl};
use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;
use crate::source::{Setting, Source};

pub use seedpod_protocol::Policy;

/// `[approvals]` as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApprovalsFile {
    /// Keys that name a tool, in the order written; checked against the declared tools when
    /// the file is layered.
    pub tools: Vec<WrittenKey>,
    /// MCP tool keys, by key as written.
    pub mcp: BTreeMap<String, Policy>,
}

/// One tool's key as written.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenKey {
    pub tool: String,
    pub policy: Policy,
    /// Where the key starts in the file's text, for an error naming its line (`line`).
    pub(crate) offset: usize,
    /// Its line in the file (from 1), once the file's text has been seen (`file::parse`).
    pub line: usize,
}

impl ApprovalsFile {
    /// The policy the file writes for `tool`, if it names it.
    pub fn get(&self, tool: &str) -> Option<Policy> {
        self.tools.iter().find(|k| k.tool == tool).map(|k| k.policy)
    }

    /// Give each key its line in `text`, the file it was read from.
    pub(crate) fn locate(&mut self, text: &str) {
        for key in &mut self.tools {
            let before = &text[..key.offset.min(text.len())];
            key.line = before.matches('\n').count() + 1;
        }
    }
}

/// One key of `[approvals]`, checked as it is read so an error points at its line.
enum ApprovalKey {
    Tool(String),
    Mcp(String),
}

impl<'de> Deserialize<'de> for ApprovalKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = ApprovalKey;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tool name")
            }

            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<ApprovalKey, E> {
                if key.starts_with("mcp__") {
                    crate::mcp::approval_key_server(key).map_err(E::custom)?;
                    return Ok(ApprovalKey::Mcp(key.to_owned()));
                }
                Ok(ApprovalKey::Tool(key.to_owned()))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for ApprovalsFile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FileVisitor;
        impl<'de> serde::de::Visitor<'de> for FileVisitor {
            type Value = ApprovalsFile;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of tool = policy")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ApprovalsFile, A::Error> {
                let mut file = ApprovalsFile::default();
                while let Some(key) = map.next_key::<Spanned<ApprovalKey>>()? {
                    let offset = key.span().start;
                    let policy: Policy = map.next_value()?;
                    match key.into_inner() {
                        ApprovalKey::Mcp(key) => {
                            if policy == Policy::Sandboxed {
                                return Err(serde::de::Error::custom(format!(
                                    "{key:?}: \"sandboxed\" applies to shell only; use allow, \
                                     ask or deny"
                                )));
                            }
                            file.mcp.insert(key, policy);
                        }
                        ApprovalKey::Tool(tool) => file.tools.push(WrittenKey {
                            tool,
                            policy,
                            offset,
                            line: 0,
                        }),
                    }
                }
                Ok(file)
            }
        }
        deserializer.deserialize_map(FileVisitor)
    }
}

fn quote_policy(policy: Policy) -> String {
    format!("\"{}\"", policy.as_str())
}

/// The policy of each declared tool, and the MCP keys. Reading is by name (`policy`, `all`).
#[derive(Debug, Clone, PartialEq)]
pub struct Approvals {
    /// One per declared tool, in the declarations' order.
    tools: Vec<ToolApproval>,
    /// `mcp__SERVER__TOOL` and `mcp__SERVER__*` keys. An MCP tool no key covers asks.
    mcp: BTreeMap<String, Setting<Policy>>,
}

/// A declared tool's key and its setting.
#[derive(Debug, Clone, PartialEq)]
struct ToolApproval {
    name: &'static str,
    effect: Effect,
    setting: Setting<Policy>,
}

impl Approvals {
    /// Each of `tools` at its declared default policy.
    pub(crate) fn defaults(tools: &[&'static ToolDecl]) -> Approvals {
        Approvals {
            tools: tools
                .iter()
                .map(|decl| ToolApproval {
                    name: decl.name,
                    effect: decl.effect,
                    setting: Setting::default(decl.default_policy),
                })
                .collect(),
            mcp: BTreeMap::new(),
        }
    }

    /// Layer one file's `[approvals]`; a key that names no declared tool is an error naming
    /// the file, its line and the valid names.
    pub(crate) fn layer(
        &mut self,
        file: ApprovalsFile,
        source: &Source,
    ) -> Result<(), ConfigError> {
        for key in file.tools {
            let Some(slot) = self.tools.iter_mut().find(|t| t.name == key.tool) else {
                return Err(self.unknown(&key, source));
            };
            slot.setting.layer(Some(key.policy), source);
        }
        for (key, policy) in file.mcp {
            self.mcp.insert(key, Setting::new(policy, source.clone()));
        }
        Ok(())
    }

    fn unknown(&self, key: &WrittenKey, source: &Source) -> ConfigError {
        let path = match source {
            Source::UserFile(path) | Source::ProjectFile(path) => path.clone(),
            Source::Default
            | Source::Env(_)
            | Source::Flag(_)
            | Source::Detected(_)
            | Source::Recorded => PathBuf::new(),
        };
        let names: Vec<String> = self.tools.iter().map(|t| format!("`{}`", t.name)).collect();
        ConfigError::Parse {
            path,
            message: format!(
                "line {}: unknown field `{}`, expected one of {}, or an MCP tool key \
                 (`mcp__SERVER__TOOL`, `mcp__SERVER__*`)",
                key.line,
                key.tool,
                names.join(", ")
            ),
        }
    }

    /// The policy of MCP tool `tool` (`mcp__SERVER__TOOL` as the model sees it): its own key,
    /// else its server's `mcp__SERVER__*`, else `None` (the pod then asks, unless the server
    /// is trusted for read-only tools and this one says it is).
    pub fn mcp_policy(&self, tool: &str) -> Option<Setting<Policy>> {
        if let Some(setting) = self.mcp.get(tool) {
            return Some(setting.clone());
        }
        let server = tool.strip_prefix("mcp__")?.split_once("__")?.0;
        self.mcp.get(&format!("mcp__{server}__*")).cloned()
    }

    /// The MCP keys as configured, for `config show` and the pod's policies.
    pub fn mcp_keys(&self) -> &BTreeMap<String, Setting<Policy>> {
        &self.mcp
    }

    /// The policy of the declared tool `tool`; `None` for a name no declaration has.
    pub fn policy(&self, tool: &str) -> Option<Setting<Policy>> {
        self.tools
            .iter()
            .find(|t| t.name == tool)
            .map(|t| t.setting.clone())
    }

    /// `sandboxed` is a way to run commands: only a tool that runs them can have it.
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        for tool in &self.tools {
            let setting = &tool.setting;
            if tool.effect != Effect::RunsCommands && setting.value == Policy::Sandboxed {
                return Err(ConfigError::Invalid {
                    key: format!("approvals.{}", tool.name),
                    value: quote_policy(setting.value),
                    origin: setting.source.clone(),
                    reason: "\"sandboxed\" applies to shell only; use allow, ask or deny".into(),
                });
            }
        }
        Ok(())
    }

    /// Whether a person asked for the tools of `tools` that the compact prompt (small windows)
    /// offers only when asked for (`InSmallPrompt::WhenConfigured`: the child-pod tools): some file
    /// sets one of their keys to `allow` or `ask`. Setting one to `deny` does not bring the
    /// others back.
    pub fn asked_for_in_small_prompt(&self, tools: &[&'static ToolDecl]) -> bool {
        tools
            .iter()
            .filter(|decl| decl.in_small_prompt == InSmallPrompt::WhenConfigured)
            .filter_map(|decl| self.policy(decl.name))
            .any(|p| p.source != Source::Default && p.value != Policy::Deny)
    }

    /// Every declared tool and its policy, in the declarations' order.
    pub fn all(&self) -> Vec<(&'static str, Setting<Policy>)> {
        self.tools
            .iter()
            .map(|t| (t.name, t.setting.clone()))
            .collect()
    }
}
