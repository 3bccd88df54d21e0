//! `seedpod ls`: one row per pod — name, state, pid, provider/model, tokens, how full its
//! context is, cwd — as an aligned table or as JSON lines. Everything comes from `pod.json` and
//! the running pods' `status` answers; a listing never reads a log.

use anyhow::Result;
use seedpod_client::{Home, PodListing};
use seedpod_protocol::WindowSource;

use crate::pods::CLIENT_NAME;

/// Marks a window the pod learned from a "too long" answer (the configuration said more, or
/// nothing); explained by a line under the table.
const LEARNED_LEGEND: &str = "* window learned from the model server's \"too long\" answer (the configured window was wrong or unknown)";

pub async fn ls(home: &Home, json: bool) -> Result<()> {
    // A demo killed before it could delete its pod leaves one behind: gone from the listing
    // and the data directory (`demo::reap_stale`).
    for name in crate::demo::reap_stale(home).await {
        eprintln!("removed pod {name}, left behind by a demo that is no longer running");
    }
    let pods = seedpod_client::list_pods(home, CLIENT_NAME).await;
    if json {
        for pod in &pods {
            println!("{}", json_line(pod));
        }
    } else {
        print!("{}", table(&pods));
    }
    Ok(())
}

fn json_line(pod: &PodListing) -> serde_json::Value {
    let context = pod.context();
    serde_json::json!({
        "name": pod.name,
        "parent": pod.meta.parent,
        "state": pod.state(),
        "pid": pod.status().map(|s| s.pid),
        "cwd": pod.cwd(),
        "provider": pod.provider(),
        "model": pod.model(),
        "queued": pod.status().map(|s| s.queue.len()).unwrap_or(0),
        "usage": pod.usage(),
        // The whole life of the pod, across compactions and `/clear` (`usage` is the active
        // segment's alone).
        "totals": pod.totals(),
        "context_tokens": context.map(|c| c.tokens),
        "context_window": context.and_then(|c| c.window),
        "context_window_source": context.and_then(|c| c.source).map(|s| s.as_str()),
        "context_basis": context.map(|c| c.basis),
        "last_activity_ms": pod.last_activity_ms,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// The longest state name `ls` shows.
const LONGEST_STATE: &str = "waiting_for_approval";

/// Columns in order. The last one (CWD) is not padded.
const COLUMNS: [(&str, Align); 7] = [
    ("NAME", Align::Left),
    ("STATE", Align::Left),
    ("PID", Align::Right),
    ("PROVIDER/MODEL", Align::Left),
    ("TOKENS IN/OUT", Align::Right),
    ("CONTEXT", Align::Left),
    ("CWD", Align::Left),
];

fn row(pod: &PodListing) -> [String; 7] {
    let dash = || "-".to_string();
    // Models, cwds and names come from pod.json and the pods: shown, never obeyed.
    [
        pod.name.to_string(),
        pod.state().to_string(),
        pod.status().map(|s| s.pid.to_string()).unwrap_or_else(dash),
        format!("{}/{}", pod.provider(), pod.model()),
        pod.lifetime_usage()
            .map(|u| format!("{}/{}", u.input_tokens, u.output_tokens))
            .unwrap_or_else(dash),
        pod.context().map(|fill| fill.label()).unwrap_or_else(dash),
        pod.cwd().display().to_string(),
    ]
    .map(|cell| crate::terminal::cell(&cell).into_owned())
}

/// The table, every column as wide as its widest cell, and the legend when a row needs it.
pub(crate) fn table(pods: &[PodListing]) -> String {
    let header = COLUMNS.map(|(name, _)| name.to_string());
    let rows: Vec<[String; 7]> = pods.iter().map(row).collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    // The state column is as wide as the longest state always, so the columns after it stay
    // put from one `ls` to the next as pods change state (`watch seedpod ls`).
    widths[1] = widths[1].max(LONGEST_STATE.len());
    for cells in &rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for cells in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let (_, align) = COLUMNS[i];
            let pad = " ".repeat(widths[i] - cell.chars().count());
            let last = i + 1 == cells.len();
            match (align, last) {
                (_, true) => line.push_str(cell),
                (Align::Left, false) => line.push_str(&format!("{cell}{pad}  ")),
                (Align::Right, false) => line.push_str(&format!("{pad}{cell}  ")),
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let learned = pods
        .iter()
        .filter_map(PodListing::context)
        .any(|c| c.window.is_some() && c.source == Some(WindowSource::Learned));
    if learned {
        out.push_str(LEARNED_LEGEND);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use seedpod_client::Liveness;
    use seedpod_protocol::{PodState, PodStatus, ProviderKind, Usage};
    use seedpod_store::{PodConfig, PodMeta};

    use super::*;
    use seedpod_protocol::{ContextFill, FillBasis, PodName, SegmentId};

    /// An estimate of the next request, as most fills are.
    fn fill(tokens: u64, window: Option<u64>, source: Option<WindowSource>) -> ContextFill {
        ContextFill {
            tokens,
            window,
            source,
            basis: FillBasis::Estimate,
        }
    }

    /// The server's count of the last request.
    fn counted(tokens: u64, window: Option<u64>, source: Option<WindowSource>) -> ContextFill {
        ContextFill {
            basis: FillBasis::LastRequest,
            ..fill(tokens, window, source)
        }
    }

    fn listing(name: &str, state: Option<PodState>, context: ContextFill) -> PodListing {
        let config = PodConfig::new(ProviderKind::Scripted, "script");
        let meta = PodMeta::new(
            PodName::new(name.to_string()).unwrap(),
            PathBuf::from("/w"),
            SegmentId::new("s1"),
            config,
            1,
        );
        let liveness = match state {
            None => Liveness::Stopped,
            Some(state) => Liveness::Running(Box::new(PodStatus {
                name: name.parse().unwrap(),
                state,
                pid: 4_242,
                cwd: "/w".into(),
                provider: "scripted".into(),
                model: "script".into(),
                segment_id: SegmentId::new("s1"),
                entries: 1,
                queue: Vec::new(),
                usage: Usage::default(),
                clients: 0,
                server_version: "0".into(),
                pending_approval: None,
                context,
                log_broken: None,
                totals: None,
            })),
        };
        PodListing {
            name: name.parse().unwrap(),
            meta,
            liveness,
            last_activity_ms: None,
        }
    }

    #[test]
    fn every_state_lines_up_and_a_learned_window_is_explained() {
        let pods = [
            listing(
                "a",
                Some(PodState::WaitingForApproval),
                counted(9_920, Some(16_000), Some(WindowSource::Config)),
            ),
            listing(
                "bb",
                Some(PodState::Compacting),
                fill(150_000, Some(200_000), Some(WindowSource::Learned)),
            ),
            listing("ccc", Some(PodState::Idle), fill(5_200, None, None)),
            listing("down", None, ContextFill::default()),
        ];
        let text = table(&pods);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        // Each column starts at the same offset on every line: the header's.
        let cwd_at = lines[0].find("CWD").unwrap();
        let context_at = lines[0].find("CONTEXT").unwrap();
        for line in &lines[1..5] {
            assert_eq!(line.find("/w"), Some(cwd_at), "{text}");
            assert_eq!(line.chars().nth(context_at - 1), Some(' '), "{text}");
        }
        assert_eq!(&lines[1][context_at..context_at + 10], "62% of 16k");
        assert_eq!(&lines[2][context_at..context_at + 13], "~75% of 200k*");
        assert_eq!(&lines[3][context_at..context_at + 5], "~5.2k");
        assert_eq!(&lines[4][context_at..context_at + 2], "- ");
        assert!(lines[1].starts_with("a     waiting_for_approval"), "{text}");
        assert!(lines[2].starts_with("bb    compacting "), "{text}");
        assert!(lines[4].starts_with("down  stopped "), "{text}");
        assert_eq!(lines[5], LEARNED_LEGEND);

        let without = table(&pods[2..]);
        assert!(!without.contains(LEARNED_LEGEND), "{without}");
        // Without a pod waiting for approval the columns are where they were with one.
        let pid_at = |text: &str| text.lines().next().and_then(|l| l.find("PID"));
        assert_eq!(pid_at(&without), pid_at(&text), "{without}");
    }

    #[test]
    fn json_lines_carry_the_context_as_integers_or_null() {
        let up = json_line(&listing(
            "up",
            Some(PodState::Idle),
            fill(9_920, Some(16_000), Some(WindowSource::Learned)),
        ));
        assert_eq!(up["context_tokens"], 9_920);
        assert_eq!(up["context_window"], 16_000);
        assert_eq!(up["context_window_source"], "learned");
        assert_eq!(up["context_basis"], "estimate");
        let unknown = json_line(&listing("u", Some(PodState::Idle), fill(5, None, None)));
        assert_eq!(unknown["context_tokens"], 5);
        assert!(unknown["context_window"].is_null());
        assert!(unknown["context_window_source"].is_null());
        let down = json_line(&listing("down", None, ContextFill::default()));
        assert!(down["context_tokens"].is_null());
        assert!(down["context_window"].is_null());
    }
}
