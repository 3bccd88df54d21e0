//! Pruning old tool results (docs/agent-loop.md §Pruning), decided here and committed by the
//! controller as one `context_pruned` step, so the request prefix changes only at a step and
//! providers' prompt caches keep hitting in between.
//!
//! Two passes over the tool results outside the protected zone, oldest first: from
//! `soft_trim_at` of the window, a result over `SOFT_TRIM_OVER` characters keeps its head and
//! tail; from `hard_clear_at`, results are replaced by a placeholder until the fill drops under
//! that ratio again. Already-trimmed results are never trimmed twice the same way, so a pod at a
//! steady fill commits no further steps.

use seedpod_protocol::{CallId, ModelItem, ToolResultTrim, TrimMode, thousands};

use super::estimate::tokens;
use super::settings::ContextSettings;
use super::zone::{first_user_message, protected_tail_start};

/// A result longer than this (in characters) is soft-trimmed (docs/agent-loop.md §Pruning).
pub const SOFT_TRIM_OVER: usize = 4_000;
/// Characters a soft trim keeps at each end (docs/agent-loop.md §Pruning).
pub const SOFT_TRIM_KEEP: usize = 1_500;
/// What a hard-cleared result reads.
pub const CLEARED: &str =
    "[Old tool result content cleared to save context; run the tool again if you need it.]";

/// The trims to commit now for a history whose next request would be `fill` tokens of a
/// `window`-token context; empty when nothing needs to (or can) change.
pub fn plan(
    history: &[ModelItem],
    fill: u64,
    window: u64,
    settings: &ContextSettings,
) -> Vec<ToolResultTrim> {
    if window == 0 || ratio(fill, window) < settings.soft_trim_at {
        return Vec::new();
    }
    let tail = protected_tail_start(history, settings.keep_last_assistants);
    let first_user = first_user_message(history);
    let eligible: Vec<usize> = (0..tail)
        .filter(|i| Some(*i) != first_user)
        .filter(|i| matches!(history[*i], ModelItem::ToolResult { .. }))
        .collect();
    let mut trims: Vec<ToolResultTrim> = Vec::new();
    let mut fill = fill;
    for &i in &eligible {
        let Some((call_id, content)) = result_parts(&history[i]) else {
            continue;
        };
        if let Some(trimmed) = soft_trim(content) {
            fill = fill.saturating_sub(tokens(content).saturating_sub(tokens(&trimmed)));
            trims.push(trim(i, call_id, TrimMode::Soft, trimmed));
        }
    }
    for &i in &eligible {
        if ratio(fill, window) < settings.hard_clear_at {
            break;
        }
        let Some((call_id, original)) = result_parts(&history[i]) else {
            continue;
        };
        if original == CLEARED {
            continue;
        }
        let current = trims
            .iter()
            .find(|t| t.index == i as u64)
            .map_or(original, |t| t.content.as_str());
        fill = fill.saturating_sub(tokens(current).saturating_sub(tokens(CLEARED)));
        trims.retain(|t| t.index != i as u64);
        trims.push(trim(i, call_id, TrimMode::Hard, CLEARED.to_owned()));
    }
    trims.sort_by_key(|t| t.index);
    trims
}

/// Head and tail of a long result with a note of what was left out; `None` when it is short
/// enough already.
pub fn soft_trim(content: &str) -> Option<String> {
    // A string has at least as many bytes as characters: most results end here without
    // counting, which keeps the plan cheap on every request of a long segment.
    if content.len() <= SOFT_TRIM_OVER {
        return None;
    }
    let chars = content.chars().count();
    if chars <= SOFT_TRIM_OVER {
        return None;
    }
    Some(keep_ends(
        content,
        chars,
        SOFT_TRIM_KEEP,
        SOFT_TRIM_KEEP,
        "to save context",
    ))
}

/// `head` characters from the start and `tail` from the end of `content` (`chars` long), with a
/// note between them naming what was left out and `why`.
pub fn keep_ends(content: &str, chars: usize, head: usize, tail: usize, why: &str) -> String {
    let head_end = content
        .char_indices()
        .nth(head)
        .map_or(content.len(), |(i, _)| i);
    let tail_start = content
        .char_indices()
        .nth(chars.saturating_sub(tail))
        .map_or(content.len(), |(i, _)| i)
        .max(head_end);
    let left_out = chars.saturating_sub(head + tail);
    format!(
        "{}\n\n[… {} of {} characters left out {why}; to see them, run the tool again on a \
         smaller part (read_file with offset and limit) …]\n\n{}",
        &content[..head_end],
        thousands(left_out as u64),
        thousands(chars as u64),
        &content[tail_start..]
    )
}

fn ratio(fill: u64, window: u64) -> f64 {
    fill as f64 / window as f64
}

fn result_parts(item: &ModelItem) -> Option<(&CallId, &str)> {
    match item {
        ModelItem::ToolResult {
            call_id, content, ..
        } => Some((call_id, content)),
        ModelItem::UserMessage { .. }
        | ModelItem::AssistantText { .. }
        | ModelItem::Reasoning { .. }
        | ModelItem::ToolCall { .. }
        | ModelItem::SystemMessage { .. } => None,
    }
}

fn trim(index: usize, call_id: &CallId, mode: TrimMode, content: String) -> ToolResultTrim {
    ToolResultTrim {
        index: index as u64,
        call_id: call_id.clone(),
        mode,
        content,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::items::{self, call, text, user};

    fn result(id: &str, len: usize) -> ModelItem {
        items::result(id, &"r".repeat(len))
    }

    /// Five read-and-answer exchanges, each result `len` characters.
    fn history(len: usize) -> Vec<ModelItem> {
        let mut h = vec![user("start")];
        for i in 0..5 {
            let id = format!("c{i}");
            h.extend([call(&id), result(&id, len), text("ok")]);
        }
        h
    }

    fn settings() -> ContextSettings {
        ContextSettings::default()
    }

    #[test]
    fn nothing_below_the_soft_ratio() {
        let h = history(10_000);
        assert!(plan(&h, 2_000, 10_000, &settings()).is_empty());
    }

    #[test]
    fn soft_trim_keeps_head_and_tail_outside_the_protected_zone() {
        let h = history(10_000);
        // 35% full: soft only.
        let trims = plan(&h, 3_500, 10_000, &settings());
        // Results at 2, 5, 8, 11, 14; the last 3 assistant messages start at 9 (call c3)…
        // protected tail starts at the 3rd-last assistant message.
        let tail = protected_tail_start(&h, 3);
        assert!(!trims.is_empty());
        for t in &trims {
            assert!(
                (t.index as usize) < tail,
                "{} in the protected tail",
                t.index
            );
            assert_eq!(t.mode, TrimMode::Soft);
            assert!(t.content.starts_with(&"r".repeat(SOFT_TRIM_KEEP)));
            assert!(t.content.ends_with(&"r".repeat(SOFT_TRIM_KEEP)));
            assert!(t.content.contains("7,000 of 10,000 characters left out"));
        }
    }

    #[test]
    fn a_trimmed_history_needs_no_second_soft_step() {
        let mut h = history(10_000);
        for t in plan(&h, 3_500, 10_000, &settings()) {
            h[t.index as usize] = ModelItem::ToolResult {
                call_id: t.call_id,
                content: t.content,
                is_error: false,
                images: Vec::new(),
            };
        }
        assert!(plan(&h, 3_500, 10_000, &settings()).is_empty());
    }

    #[test]
    fn hard_clear_goes_oldest_first_and_stops_under_the_ratio() {
        let h = history(40_000);
        // Each result is 10k tokens; soft trims save ~9.2k each; at 90% the soft pass alone
        // is not enough only if the fill stays high — force it with a huge fill.
        let trims = plan(&h, 60_000, 64_000, &settings());
        let hard: Vec<_> = trims.iter().filter(|t| t.mode == TrimMode::Hard).collect();
        assert!(!hard.is_empty(), "{trims:?}");
        assert_eq!(hard[0].index, 2, "oldest first");
        assert!(trims.iter().all(|t| t.index != 0));
        let cleared: Vec<_> = hard.iter().map(|t| t.content.as_str()).collect();
        assert!(cleared.iter().all(|c| *c == CLEARED));
    }

    #[test]
    fn the_first_user_message_and_short_results_are_left_alone() {
        let h = vec![
            user(&"u".repeat(50_000)),
            call("a"),
            result("a", 100),
            text("x"),
        ];
        assert!(
            plan(
                &h,
                9_000,
                10_000,
                &ContextSettings {
                    keep_last_assistants: 1,
                    ..settings()
                }
            )
            .iter()
            .all(|t| t.index == 2 && t.mode == TrimMode::Hard)
        );
    }

    #[test]
    fn keep_ends_never_splits_a_character() {
        let s = "é".repeat(5_000);
        let out = keep_ends(&s, 5_000, 10, 10, "for a test");
        assert!(out.starts_with(&"é".repeat(10)));
        assert!(out.ends_with(&"é".repeat(10)));
        assert!(out.contains("4,980 of 5,000 characters left out for a test"));
    }
}
