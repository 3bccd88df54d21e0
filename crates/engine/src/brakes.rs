//! Loop brakes (docs/agent-loop.md §Loop brakes): a model that keeps failing, or keeps asking
//! the same thing and getting the same answer, is told to change approach and then stopped,
//! instead of burning the iteration budget (and the person's money) on a loop.
//!
//! Everything here is a pure function of the run's committed tool calls and results, which the
//! host hands over in `PreparedRequest::run_calls`: the loop keeps no counters of its own, so a
//! run resumed after a pause or a crash brakes exactly as the uninterrupted run would have.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use seedpod_protocol::{CallId, ModelItem};

pub use seedpod_config::agent_loop::{
    DEFAULT_FAILURES_IN_A_ROW, DEFAULT_REPEAT_LIMIT, DEFAULT_SAME_CALL_FAILURES,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrakeLimits {
    /// 0 turns the note off.
    pub same_call_failures: u32,
    /// 0 turns this brake off.
    pub failures_in_a_row: u32,
    /// 0 turns this brake off.
    pub repeat_limit: u32,
}

impl Default for BrakeLimits {
    fn default() -> Self {
        BrakeLimits {
            same_call_failures: DEFAULT_SAME_CALL_FAILURES,
            failures_in_a_row: DEFAULT_FAILURES_IN_A_ROW,
            repeat_limit: DEFAULT_REPEAT_LIMIT,
        }
    }
}

/// One answered tool call of the run, as the brakes see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    pub name: String,
    pub arguments: String,
    pub is_error: bool,
    /// A digest of the result text: equal digests mean the call learned nothing new.
    pub result: u64,
}

impl CallRecord {
    pub fn new(name: &str, arguments: &str, is_error: bool, content: &str) -> Self {
        CallRecord {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            is_error,
            result: digest(content),
        }
    }

    fn same_call(&self, name: &str, arguments: &str) -> bool {
        self.name == name && same_arguments(&self.arguments, arguments)
    }
}

/// The answered calls among `items` (a run's part of history), in call order.
pub fn calls_in(items: &[ModelItem]) -> Vec<CallRecord> {
    let mut asked: HashMap<&CallId, (&str, &str)> = HashMap::new();
    let mut calls = Vec::new();
    for item in items {
        match item {
            ModelItem::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                asked.insert(call_id, (name, arguments));
            }
            ModelItem::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                if let Some((name, arguments)) = asked.get(call_id) {
                    calls.push(CallRecord::new(name, arguments, *is_error, content));
                }
            }
            ModelItem::UserMessage { .. }
            | ModelItem::AssistantText { .. }
            | ModelItem::Reasoning { .. }
            | ModelItem::SystemMessage { .. } => {}
        }
    }
    calls
}

/// Why the run must stop now, or `None` to go on.
pub fn stop_reason(calls: &[CallRecord], limits: &BrakeLimits) -> Option<String> {
    let failing = calls.iter().rev().take_while(|c| c.is_error).count();
    if limits.failures_in_a_row > 0 && failing >= limits.failures_in_a_row as usize {
        let last = calls.last().map_or("", |c| c.name.as_str());
        return Some(format!(
            "stopped: {failing} tool calls failed in a row (the last was {last}); the model \
             was not getting anywhere. Say how to go on, or change [loop] failures_in_a_row"
        ));
    }
    if let Some(last) = calls.last() {
        let repeats = calls
            .iter()
            .rev()
            .take_while(|c| c.same_call(&last.name, &last.arguments) && c.result == last.result)
            .count();
        if limits.repeat_limit > 0 && repeats >= limits.repeat_limit as usize {
            return Some(format!(
                "stopped: the model called {} with the same arguments {repeats} times in a row \
                 and got the same result each time. Say how to go on, or change [loop] \
                 repeat_limit",
                last.name
            ));
        }
    }
    None
}

/// The note added to a failed result when this exact call has now failed `same_call_failures`
/// times in the run (counting this one); `earlier` are the run's calls answered before it.
pub fn repeat_note(
    earlier: &[CallRecord],
    name: &str,
    arguments: &str,
    limits: &BrakeLimits,
) -> Option<String> {
    if limits.same_call_failures == 0 {
        return None;
    }
    let failures = 1 + earlier
        .iter()
        .filter(|c| c.is_error && c.same_call(name, arguments))
        .count();
    (failures == limits.same_call_failures as usize).then(|| {
        format!(
            "\n[this exact call has now failed {failures} times in this run. Do not send it \
             again unchanged: read the error, change the arguments or try another way, or \
             tell the person what is in the way]"
        )
    })
}

fn digest(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Arguments that mean the same call: equal as JSON values (so `{"a":1, "b":2}` and
/// `{"b":2,"a":1}` are one call), or equal as text when either is not JSON.
fn same_arguments(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
