//! Which prompt a segment gets: the full one, or the compact one for a model whose window is
//! small, where a full prompt would take the room the conversation needs (docs/agent-loop.md
//! §The system prompt's share).

use crate::context::SMALL_WINDOW_TOKENS;

/// The shape of a segment's system prompt and tool schemas. People and the docs call the small
/// one "the compact prompt" (`as_str`, `child_tools_in_compact`); in the code "compact" means
/// compaction only, so the variant is `Small`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptMode {
    /// Every layer at full length: identity, tool catalogue, per-tool protocols, workflows,
    /// instructions (AGENTS.md up to 64 KiB).
    #[default]
    Full,
    /// For a window of at most `SMALL_WINDOW_TOKENS`: a short identity, a one-line note per
    /// tool, a one-line pointer to workflows, instructions capped harder, shortened tool
    /// schemas and no child-pod tools unless configured — so a fresh pod's system prompt and
    /// tools take under a quarter of a 4,096-token window.
    Small,
}

impl PromptMode {
    /// Small when the window is known and small; full when it is large or unknown (an unknown
    /// window is usually a hosted model's, and a small one is learned from the first "too long"
    /// answer, which moves the conversation to a segment with the small prompt at once:
    /// `controller/context.rs` `recompose`).
    pub fn for_window(window: Option<u64>) -> PromptMode {
        match window {
            Some(tokens) if tokens <= SMALL_WINDOW_TOKENS => PromptMode::Small,
            Some(_) | None => PromptMode::Full,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PromptMode::Full => "full",
            PromptMode::Small => "compact",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_known_windows_are_compact_and_the_rest_full() {
        assert_eq!(PromptMode::for_window(None), PromptMode::Full);
        assert_eq!(PromptMode::for_window(Some(2_048)), PromptMode::Small);
        assert_eq!(
            PromptMode::for_window(Some(SMALL_WINDOW_TOKENS)),
            PromptMode::Small
        );
        assert_eq!(
            PromptMode::for_window(Some(SMALL_WINDOW_TOKENS + 1)),
            PromptMode::Full
        );
        assert_eq!(PromptMode::for_window(Some(200_000)), PromptMode::Full);
    }
}
