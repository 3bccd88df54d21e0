//! `[mcp_serve]`: what `seedpod mcp serve NAME` lets the MCP client (another agent, an editor)
//! do with the pod. Read from the user's own `config.toml` only: a project's file is written by
//! whoever wrote the project, and letting an agent answer approvals is exactly the widening
//! that only a person may choose (docs/design.md, invariant 6).

use serde::Deserialize;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServeFile {
    /// Whether the `answer_approval` tool may approve or deny the pod's waiting tool calls.
    /// Off unless a person turns it on.
    pub answer_approvals: Option<bool>,
}

/// The settings `mcp serve` runs with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct McpServeSettings {
    pub answer_approvals: bool,
}

impl McpServeSettings {
    /// The settings from the user's `config.toml` in `config_dir`, refused like every user
    /// config when someone else could have written it.
    pub fn load(config_dir: &std::path::Path) -> Result<McpServeSettings, crate::ConfigError> {
        let path = config_dir.join(crate::file::CONFIG_FILE);
        crate::file::check_owned(&path)?;
        let file = crate::file::load(&path)?;
        Ok(McpServeSettings::from_user_file(file.as_ref()))
    }

    /// The settings from the user's config file, if it has any; the defaults otherwise.
    pub fn from_user_file(file: Option<&crate::file::ConfigFile>) -> McpServeSettings {
        let answer_approvals = file
            .and_then(|file| file.mcp_serve.as_ref())
            .and_then(|serve| serve.answer_approvals)
            .unwrap_or(false);
        McpServeSettings { answer_approvals }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn answering_approvals_is_off_unless_written_true() {
        let parse = |text: &str| crate::file::parse(Path::new("config.toml"), text).unwrap();
        let cases = [
            ("", false),
            ("[mcp_serve]\n", false),
            ("[mcp_serve]\nanswer_approvals = false\n", false),
            ("[mcp_serve]\nanswer_approvals = true\n", true),
        ];
        for (text, on) in cases {
            let file = parse(text);
            assert_eq!(
                McpServeSettings::from_user_file(Some(&file)).answer_approvals,
                on,
                "{text:?}"
            );
        }
        assert!(!McpServeSettings::from_user_file(None).answer_approvals);
        let typo = crate::file::parse(Path::new("c"), "[mcp_serve]\nanswer_aprovals = true\n");
        assert!(typo.is_err(), "a misspelt key is an error, not a silent no");
    }
}
