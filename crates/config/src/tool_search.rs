//! `[tool_search]`: when a segment stops offering its MCP tools up front and offers
//! `tool_search` instead, which finds and loads them on demand (docs/agent-loop.md §Tool
//! search). A budget on what goes with every request: it changes how many schemas the model
//! sees at once, never what it may run, so a project file may set it without trust.
//!
//! Kept apart from the other sections so the storage keys being added elsewhere merge cleanly.

use serde::Deserialize;

use crate::context::unsigned;
use crate::error::ConfigError;
use crate::source::{Setting, Source};

/// More offered tools than this and the MCP tools wait behind `tool_search`. Forty schemas is
/// about what the built-in tools and two or three small servers take; a model chooses well
/// among that many, and past it each server costs thousands of tokens a request.
pub const DEFAULT_MAX_TOOLS: u64 = 40;
/// The share of a known window the offered schemas may take before the MCP tools wait behind
/// `tool_search`: a tenth leaves the conversation the room it needs in a small window.
pub const DEFAULT_MAX_SCHEMA_SHARE: f64 = 0.1;
/// A count above this is a typo (a server offers at most 128 tools).
const MAX_MAX_TOOLS: u64 = 10_000;

/// `[tool_search]` as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchFile {
    pub max_tools: Option<i64>,
    pub max_schema_share: Option<f64>,
}

/// The resolved `[tool_search]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSearchSettings {
    /// The most tools a segment offers up front before its MCP tools are deferred; 0: always
    /// defer them.
    pub max_tools: Setting<u64>,
    /// The most of a known window (0–1) the offered schemas may take, estimated at four bytes
    /// a token, before the MCP tools are deferred; 1: no limit by share.
    pub max_schema_share: Setting<f64>,
}

impl ToolSearchSettings {
    pub(crate) fn defaults() -> ToolSearchSettings {
        ToolSearchSettings {
            max_tools: Setting::default(DEFAULT_MAX_TOOLS),
            max_schema_share: Setting::default(DEFAULT_MAX_SCHEMA_SHARE),
        }
    }

    pub(crate) fn layer(
        &mut self,
        file: ToolSearchFile,
        source: &Source,
    ) -> Result<(), ConfigError> {
        let max_tools = file
            .max_tools
            .map(|v| unsigned("tool_search.max_tools".into(), v, source))
            .transpose()?;
        self.max_tools.layer(max_tools, source);
        self.max_schema_share.layer(file.max_schema_share, source);
        Ok(())
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.max_tools.value > MAX_MAX_TOOLS {
            return Err(ConfigError::invalid(
                "tool_search.max_tools",
                &self.max_tools,
                "must be at most 10000",
            ));
        }
        let share = self.max_schema_share.value;
        if !(share > 0.0 && share <= 1.0) {
            return Err(ConfigError::invalid(
                "tool_search.max_schema_share",
                &self.max_schema_share,
                "must be above 0 and at most 1",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_outside_zero_to_one_and_huge_counts_are_refused() {
        let mut settings = ToolSearchSettings::defaults();
        assert!(settings.validate().is_ok());
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            settings.max_schema_share = Setting::default(bad);
            let err = settings.validate().unwrap_err().to_string();
            assert!(err.contains("tool_search.max_schema_share"), "{err}");
        }
        settings.max_schema_share = Setting::default(1.0);
        assert!(settings.validate().is_ok());
        settings.max_tools = Setting::default(MAX_MAX_TOOLS + 1);
        assert!(settings.validate().is_err());
    }
}
