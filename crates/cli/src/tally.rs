//! Token totals per run for `seedpod events`: usage entries are summed from `run_start` to
//! `run_end`, and the `run_end` line says what the run cost.

use seedpod_protocol::{Entry, EntryKind};

use crate::format::entry_line;

#[derive(Debug, Default)]
pub struct RunTally {
    requests: u64,
    input_tokens: u64,
    output_tokens: u64,
    /// False when the stream began mid-run (`--since`), so the sums would be partial.
    complete: bool,
}

impl RunTally {
    /// The line for `entry`, with the run's totals appended to its `run_end`.
    pub fn line(&mut self, entry: &Entry) -> String {
        let line = entry_line(entry);
        // Only three kinds matter here; everything else passes through unchanged.
        if let EntryKind::RunStart { .. } = &entry.kind {
            *self = RunTally {
                complete: true,
                ..RunTally::default()
            };
        } else if let EntryKind::Usage(usage) = &entry.kind {
            self.requests += 1;
            self.input_tokens += usage.input_tokens;
            self.output_tokens += usage.output_tokens;
        } else if let EntryKind::RunEnd { .. } = &entry.kind {
            let complete = self.complete;
            let totals = format!(
                "{line} · {} request{} · {} in / {} out tokens",
                self.requests,
                if self.requests == 1 { "" } else { "s" },
                self.input_tokens,
                self.output_tokens
            );
            *self = RunTally::default();
            if complete {
                return totals;
            }
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use seedpod_protocol::{RunEndReason, RunTrigger, Usage};

    use super::*;
    use seedpod_protocol::EntrySeq;

    fn entry(seq: u64, kind: EntryKind) -> Entry {
        Entry {
            v: 1,
            seq: EntrySeq::new(seq),
            ts: 0,
            kind,
        }
    }

    fn usage(input: u64, output: u64) -> EntryKind {
        EntryKind::Usage(Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        })
    }

    #[test]
    fn run_end_carries_the_sum_of_the_runs_usage() {
        let mut tally = RunTally::default();
        let run_end = || EntryKind::RunEnd {
            reason: RunEndReason::Completed,
            message: None,
        };
        tally.line(&entry(
            1,
            EntryKind::RunStart {
                trigger: RunTrigger::User,
            },
        ));
        tally.line(&entry(2, usage(100, 20)));
        tally.line(&entry(3, usage(150, 30)));
        let line = tally.line(&entry(4, run_end()));
        assert!(
            line.ends_with("· 2 requests · 250 in / 50 out tokens"),
            "{line}"
        );

        // A stream that joins mid-run does not claim totals it did not see.
        let line = tally.line(&entry(5, usage(1, 1)));
        assert!(!line.contains("requests"));
        let line = tally.line(&entry(6, run_end()));
        assert!(!line.contains("tokens"), "{line}");
    }
}
