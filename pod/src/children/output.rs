//! `read_pod_output`: what a child committed since a cursor, read from its log files.
//!
//! The child pod is alive and appending to its active segment while its parent reads it, so this
//! reader never changes anything on disk. It does not use `seedpod_store::read_segment`: that one
//! is for the log's owner at restore, and it moves a torn tail to a side file — here that "torn
//! tail" is usually the line the child is writing at this very moment. Instead the file's bytes
//! are read as they are, only newline-terminated lines count, and reading stops at the first line
//! of the active segment that does not parse, leaving the cursor on it for the next call.
//!
//! A cursor is the index (0-based line) of the next entry to read in a segment. When a segment is
//! exhausted and a later one exists (the child cleared or compacted its history), reading goes on
//! at entry 0 of the next. Each entry becomes a line or two written for a model: what the child
//! was asked, said and did, with long tool traffic cut; bookkeeping entries are consumed silently.

use std::borrow::Cow;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use seedpod_protocol::{
    ApprovalDecision, Entry, EntryKind, ModelItem, Origin, PodName, RunEndReason, RunTrigger,
    SegmentId, SystemItem,
};
use seedpod_store::{OutputCursor, PodMeta, segment_path};

/// How many characters of rendered output one call returns unless the caller asks otherwise:
/// enough for a few turns of a child's work without crowding the parent's context.
pub const DEFAULT_BUDGET_CHARS: usize = 12_000;

/// A tool call's arguments are shown up to this many characters: enough to tell what was done.
const ARGUMENTS_CHARS: usize = 200;

/// A tool result is shown up to this many characters; the child saw all of it, the parent needs
/// the gist.
const RESULT_CHARS: usize = 600;

/// A system item's body (notification, attached file, reminder…) is shown up to this many
/// characters.
const SYSTEM_CHARS: usize = 300;

/// An input is shown up to this many characters; the parent wrote most of them itself.
const INPUT_CHARS: usize = 1_000;

/// Short free text (a run's error message, a denial's reason) is shown up to this many characters.
const NOTE_CHARS: usize = 300;

/// Room kept for the "… [N more chars cut]" note when an entry is cut to fit the page.
const CUT_NOTE_CHARS: usize = 32;

/// One page of a child's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPage {
    /// The rendered entries under a header naming the pod and the range read, or a
    /// "nothing new" line.
    pub text: String,
    /// Where the next call should continue: just after the last entry consumed, or the given
    /// cursor when nothing was.
    pub next: OutputCursor,
    /// Readable entries remain after `next` (the page filled up before the end of the log).
    pub more: bool,
    /// How many entries this page consumed, including bookkeeping that renders no line.
    pub entries: usize,
}

/// Why a child's output could not be read, worded for the model that asked.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(
        "pod \"{pod}\" has no log segment \"{segment}\" (the cursor is from another pod or \
         mistyped); omit `since` to read its output from the start"
    )]
    UnknownSegment { pod: String, segment: SegmentId },
    #[error(
        "could not read pod \"{pod}\"'s log {}: {cause}; check that its pod directory is \
         intact, then try again",
        path.display()
    )]
    Unreadable {
        pod: String,
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// Read `meta`'s log from `since` (its first segment's start when `None`), rendering entries
/// until the next one would take the text past `budget_chars`. The first entry is always
/// consumed, cut to fit if need be, so a caller paging through the log always makes progress.
pub fn read_output(
    pod_dir: &Path,
    meta: &PodMeta,
    since: Option<&OutputCursor>,
    budget_chars: usize,
) -> Result<OutputPage, OutputError> {
    let order = segment_order(meta);
    let start = match since {
        Some(cursor) if order.contains(&&cursor.segment) => cursor.clone(),
        Some(cursor) => {
            return Err(OutputError::UnknownSegment {
                pod: meta.name.to_string(),
                segment: cursor.segment.clone(),
            });
        }
        None => OutputCursor {
            segment: order[0].clone(),
            index: 0,
        },
    };
    let mut page = Page::new(&meta.name, &start.segment, budget_chars);
    let mut at = start.clone();
    let more = loop {
        let later = order
            .iter()
            .skip_while(|id| **id != &at.segment)
            .nth(1)
            .copied();
        match read_segment(pod_dir, &meta.name, &at, later.is_some(), &mut page)? {
            Stop::End(index) => match later {
                Some(next) => {
                    at = OutputCursor {
                        segment: next.clone(),
                        index: 0,
                    }
                }
                None => {
                    at.index = index;
                    break false;
                }
            },
            Stop::Full(index) => {
                at.index = index;
                break true;
            }
            Stop::Blocked(index, note) => {
                at.index = index;
                page.note = Some(note);
                break false;
            }
        }
    };
    Ok(page.finish(&start, at, more))
}

/// The pod's segments in reading order, the active one included even if `segments` lacks it.
fn segment_order(meta: &PodMeta) -> Vec<&SegmentId> {
    let mut order: Vec<&SegmentId> = meta.segments.iter().collect();
    if !order.contains(&&meta.active_segment) {
        order.push(&meta.active_segment);
    }
    order
}

/// Why reading one segment stopped, with the index of the first entry not consumed.
enum Stop {
    /// No more complete lines (a partial last line is the child still writing it).
    End(u64),
    /// The page is full; this entry did not fit.
    Full(u64),
    /// This complete line of the segment being written does not parse; the note says so.
    Blocked(u64, String),
}

/// Offer `page` the entries of `at.segment` from `at.index` on. `closed` says a later segment
/// exists, so nothing writes this one any more: a line that does not parse there will never
/// become readable and is skipped with a note instead of stopping the reader for good.
fn read_segment(
    pod_dir: &Path,
    pod: &PodName,
    at: &OutputCursor,
    closed: bool,
    page: &mut Page,
) -> Result<Stop, OutputError> {
    let path = segment_path(pod_dir, &at.segment);
    let unreadable = |cause| OutputError::Unreadable {
        pod: pod.to_string(),
        path: path.clone(),
        cause,
    };
    // An archived earlier segment reads the same (docs/storage.md, "Archived segments").
    let mut reader = BufReader::new(seedpod_store::open_segment(&path).map_err(unreadable)?);
    let mut line = Vec::new();
    let mut index = 0u64;
    loop {
        line.clear();
        reader.read_until(b'\n', &mut line).map_err(unreadable)?;
        let Some(json) = line.strip_suffix(b"\n") else {
            return Ok(Stop::End(index.max(at.index)));
        };
        if index >= at.index {
            let offered = match serde_json::from_slice::<Entry>(json) {
                Ok(entry) => {
                    let origin = if let EntryKind::SegmentStart(start) = &entry.kind {
                        Some(&start.origin)
                    } else {
                        None
                    };
                    page.offer(&at.segment, index, render(&entry.kind), origin)
                }
                Err(err) if closed => {
                    let line = format!("(entry {index} could not be read, skipped: {err})");
                    page.offer(&at.segment, index, Some(line), None)
                }
                Err(err) => {
                    let note = format!(
                        "(entry {index} of segment {} is not readable yet: {err}; it may still \
                         be being written — read again shortly)",
                        at.segment
                    );
                    return Ok(Stop::Blocked(index, note));
                }
            };
            if !offered {
                return Ok(Stop::Full(index));
            }
        }
        index += 1;
    }
}

/// The text being assembled, kept within the budget.
struct Page<'a> {
    pod: &'a PodName,
    /// The segment the read began in: entering any other one is announced.
    start_segment: &'a SegmentId,
    budget: usize,
    /// Finished sections, every line newline-terminated.
    text: String,
    text_chars: usize,
    /// The segment being added to.
    section: Option<Section>,
    entries: usize,
    /// Entries that rendered a line. Until one has, an entry too big for the page is cut to fit
    /// rather than left for later, so every call moves the cursor.
    shown: usize,
    /// Said after the entries, if it fits: why reading stopped early.
    note: Option<String>,
}

/// The entries read from one segment.
struct Section {
    segment: SegmentId,
    /// Whether this section opens the page (its heading names the pod).
    first_on_page: bool,
    /// Set when the segment is not the one the read began in: how the child came to start it.
    new_because: Option<String>,
    first: u64,
    last: u64,
    body: String,
    body_chars: usize,
}

impl Section {
    /// The section's heading if its last entry were `last`.
    fn heading(&self, pod: &PodName, last: u64) -> String {
        let (segment, first) = (&self.segment, self.first);
        let range = if first == last {
            format!("entry {first}")
        } else {
            format!("entries {first}–{last}")
        };
        match (self.first_on_page, &self.new_because) {
            (true, None) => format!("pod {pod}: {range} of segment {segment}"),
            (true, Some(why)) => {
                format!("pod {pod}: {range} of segment {segment}, a new segment ({why})")
            }
            (false, why) => format!(
                "── new segment {segment} ({}): {range} ──",
                why.as_deref().unwrap_or("the pod started a new history")
            ),
        }
    }
}

impl<'a> Page<'a> {
    fn new(pod: &'a PodName, start_segment: &'a SegmentId, budget: usize) -> Page<'a> {
        Page {
            pod,
            start_segment,
            budget,
            text: String::new(),
            text_chars: 0,
            section: None,
            entries: 0,
            shown: 0,
            note: None,
        }
    }

    /// Consume entry `index` of `segment`, rendered as `line` (`None`: nothing to show), if it
    /// fits. `origin` is the entry's, when it starts its segment.
    fn offer(
        &mut self,
        segment: &SegmentId,
        index: u64,
        mut line: Option<String>,
        origin: Option<&Origin>,
    ) -> bool {
        let (mut section, opened) = match self.section.take() {
            Some(section) if section.segment == *segment => (section, false),
            previous => {
                if let Some(previous) = previous {
                    self.flush(previous);
                }
                let new_because = (segment != self.start_segment)
                    .then(|| origin.map_or("the pod started a new history".into(), origin_text));
                let section = Section {
                    segment: segment.clone(),
                    first_on_page: self.text.is_empty(),
                    new_because,
                    first: index,
                    last: index,
                    body: String::new(),
                    body_chars: 0,
                };
                (section, true)
            }
        };
        let fixed = self.text_chars
            + section.heading(self.pod, index).chars().count()
            + 1
            + section.body_chars;
        let needed = line.as_ref().map_or(0, |line| line.chars().count() + 1);
        if fixed + needed > self.budget {
            if self.shown > 0 {
                if !opened {
                    self.section = Some(section);
                }
                return false;
            }
            if let Some(line) = &mut line {
                let room = self.budget.saturating_sub(fixed + 1 + CUT_NOTE_CHARS);
                *line = cut(line, room).into_owned();
            }
        }
        if let Some(line) = line {
            section.body_chars += line.chars().count() + 1;
            section.body.push_str(&line);
            section.body.push('\n');
            self.shown += 1;
        }
        section.last = index;
        self.entries += 1;
        self.section = Some(section);
        true
    }

    fn flush(&mut self, section: Section) {
        let heading = section.heading(self.pod, section.last);
        self.text_chars += heading.chars().count() + 1 + section.body_chars;
        self.text.push_str(&heading);
        self.text.push('\n');
        self.text.push_str(&section.body);
    }

    fn finish(mut self, start: &OutputCursor, next: OutputCursor, more: bool) -> OutputPage {
        if self.entries == 0 {
            let mut text = format!("pod {}: nothing new since {start}", self.pod);
            if let Some(note) = self.note {
                text.push('\n');
                text.push_str(&note);
            }
            return OutputPage {
                text,
                next: start.clone(),
                more: false,
                entries: 0,
            };
        }
        if let Some(section) = self.section.take() {
            self.flush(section);
        }
        if self.shown == 0 {
            self.text
                .push_str("(only bookkeeping entries: nothing the pod said or did)\n");
        }
        if let Some(note) = self.note.take()
            && self.text_chars + note.chars().count() < self.budget
        {
            self.text.push_str(&note);
        }
        let text = self.text.trim_end_matches('\n').to_owned();
        OutputPage {
            text,
            next,
            more,
            entries: self.entries,
        }
    }
}

/// The line (or lines, continuation indented) a model reads for one entry; `None` for
/// bookkeeping that tells it nothing about the child's work.
fn render(kind: &EntryKind) -> Option<String> {
    let text = match kind {
        EntryKind::SegmentStart(_)
        | EntryKind::TurnEnd { .. }
        | EntryKind::Usage(_)
        | EntryKind::Queued { .. }
        | EntryKind::Dequeued { .. }
        | EntryKind::Outbox { .. }
        | EntryKind::OutboxDelivered { .. }
        | EntryKind::ContextWindow(_)
        | EntryKind::ContextPruned { .. }
        | EntryKind::AssistantRaw { .. } => return None,
        EntryKind::RunStart { trigger } => format!("— turn started: {}", trigger_text(*trigger)),
        EntryKind::UserInput { text, .. } => format!("input: {}", cut(text, INPUT_CHARS)),
        EntryKind::AssistantItem { item } => render_item(item),
        EntryKind::AssistantInterrupted { text } => {
            format!("said (interrupted): {}", cut(text, NOTE_CHARS))
        }
        EntryKind::ToolResult {
            name,
            content,
            is_error,
            ..
        } => {
            let error = if *is_error { "error: " } else { "" };
            format!("{name} → {error}{}", cut(content, RESULT_CHARS))
        }
        EntryKind::SystemItem { item, .. } => match item {
            SystemItem::Unknown => "(a system item of a kind this seedpod does not know)".into(),
            known => cut(known.history_text(), SYSTEM_CHARS).into_owned(),
        },
        EntryKind::RunEnd { reason, message } => {
            let mut line = format!("— turn ended: {}", run_end_text(*reason));
            if let Some(message) = message {
                line.push_str(": ");
                line.push_str(&cut(message, NOTE_CHARS));
            }
            line
        }
        EntryKind::ConfigChanged { model } => {
            format!(
                "(model changed to {}/{})",
                model.provider.as_str(),
                model.model
            )
        }
        EntryKind::ApprovalRequest(request) => {
            format!(
                "waiting for approval: {}",
                cut(&request.summary, NOTE_CHARS)
            )
        }
        EntryKind::ApprovalAnswer { decision, .. } => match decision {
            ApprovalDecision::Approve => "approval: approved".into(),
            ApprovalDecision::ApproveAlways(standing) => {
                format!("approval: approved always ({})", standing.display())
            }
            ApprovalDecision::Deny { reason } => {
                format!("approval: denied: {}", cut(reason, NOTE_CHARS))
            }
            ApprovalDecision::Unknown => "approval: answered".into(),
        },
        EntryKind::ApprovalRevoked { standing } => {
            format!("approval revoked: {}", standing.display())
        }
        EntryKind::Notice { message, .. } => format!("note: {}", cut(message, NOTE_CHARS)),
        EntryKind::ApprovalStanding { standing, .. } => {
            format!(
                "approval: allowed by the standing rule {}",
                standing.display()
            )
        }
        EntryKind::Unknown => "(an entry of a kind this seedpod does not know)".into(),
    };
    Some(text.trim_end().replace('\n', "\n  "))
}

fn render_item(item: &ModelItem) -> String {
    match item {
        ModelItem::AssistantText { text } => format!("said: {text}"),
        ModelItem::Reasoning { text, .. } => {
            format!("(thought for {} chars)", text.chars().count())
        }
        ModelItem::ToolCall {
            name, arguments, ..
        } => format!("called {name}({})", cut(arguments, ARGUMENTS_CHARS)),
        ModelItem::ToolResult {
            content, is_error, ..
        } => {
            let error = if *is_error { "error: " } else { "" };
            format!("tool result → {error}{}", cut(content, RESULT_CHARS))
        }
        ModelItem::UserMessage { text } => format!("input: {}", cut(text, INPUT_CHARS)),
        ModelItem::SystemMessage { text } => cut(text, SYSTEM_CHARS).into_owned(),
    }
}

fn trigger_text(trigger: RunTrigger) -> &'static str {
    match trigger {
        RunTrigger::User => "input from a person",
        RunTrigger::Notification => "a notification",
        RunTrigger::PodEvent => "a report from its own child pod",
        RunTrigger::Parent => "input from you, its parent",
        RunTrigger::Unknown => "for a reason this seedpod does not know",
    }
}

fn run_end_text(reason: RunEndReason) -> &'static str {
    match reason {
        RunEndReason::Completed => "completed",
        RunEndReason::LimitReached => "stopped at its iteration limit",
        RunEndReason::NoProgress => "stopped because it made no progress",
        RunEndReason::Cancelled => "cancelled",
        RunEndReason::Abandoned => "abandoned for newer input",
        RunEndReason::Error => "error",
        RunEndReason::Unknown => "ended",
    }
}

/// How a segment after the first came about, from its `segment_start`.
fn origin_text(origin: &Origin) -> String {
    match origin {
        Origin::New => "a new history".into(),
        Origin::ClearedFrom { .. } => "the pod cleared its history".into(),
        Origin::RecomposedFrom { .. } => {
            "the pod moved its history under the compact prompt for a small window".into()
        }
        Origin::CompactedFrom { .. } => "the pod compacted its history into a summary".into(),
        Origin::ForkedFrom { segment_id, .. } => format!("forked from segment {segment_id}"),
        Origin::RewoundFrom { .. } => "the pod rewound to an earlier point of its history".into(),
        Origin::Unknown => "the pod started a new history".into(),
    }
}

/// `text` cut to at most `max` characters (never inside one), saying how many were cut.
fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match seedpod_protocol::char_prefix(text, max) {
        None => Cow::Borrowed(text),
        Some(kept) => {
            let dropped = text[kept.len()..].chars().count();
            Cow::Owned(format!("{kept}… [{dropped} more chars cut]"))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use seedpod_protocol::{
        CallId, ENTRY_VERSION, ModelConfig, ProviderKind, Segment, SegmentStart, Usage,
    };
    use seedpod_store::{PodConfig, SEGMENTS_DIR};

    use super::*;
    use seedpod_protocol::{EntrySeq, PodName, SegmentId};

    fn meta(segments: &[&str]) -> PodMeta {
        let config = PodConfig::new(ProviderKind::Scripted, "script");
        let active = SegmentId::new(*segments.last().unwrap());
        PodMeta {
            segments: segments.iter().map(|s| SegmentId::new(*s)).collect(),
            parent: Some("mum".parse().unwrap()),
            ..PodMeta::new(
                PodName::new("kid").unwrap(),
                PathBuf::from("/"),
                active,
                config,
                0,
            )
        }
    }

    fn start(segment: &str, origin: Origin) -> EntryKind {
        EntryKind::SegmentStart(SegmentStart {
            date: None,
            context_window: None,
            compaction: None,
            segment_id: SegmentId::new(segment),
            system_prompt: "be good".into(),
            model: ModelConfig::new(ProviderKind::Scripted, "script"),
            tools: Vec::new(),
            seed: Vec::new(),
            standing_approvals: Vec::new(),
            origin,
            tasks: Vec::new(),
            totals: None,
        })
    }

    fn input(text: &str) -> EntryKind {
        EntryKind::UserInput {
            segments: vec![Segment::text(text)],
            text: text.into(),
            queue_id: None,
        }
    }

    fn said(text: &str) -> EntryKind {
        EntryKind::AssistantItem {
            item: ModelItem::AssistantText { text: text.into() },
        }
    }

    /// A pod directory whose segment files are written line by line, as the child's writer would.
    struct Log {
        dir: tempfile::TempDir,
        /// Next `seq` per segment.
        seqs: Vec<(String, u64)>,
    }

    impl Log {
        fn new() -> Log {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join(SEGMENTS_DIR)).unwrap();
            Log {
                dir,
                seqs: Vec::new(),
            }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }

        fn line(&mut self, segment: &str, kind: EntryKind) -> String {
            let seq = match self.seqs.iter_mut().find(|(s, _)| s == segment) {
                Some((_, seq)) => seq,
                None => {
                    self.seqs.push((segment.into(), 0));
                    &mut self.seqs.last_mut().unwrap().1
                }
            };
            let entry = Entry {
                v: ENTRY_VERSION,
                seq: EntrySeq::new(*seq),
                ts: 1_700_000_000_000 + *seq,
                kind,
            };
            *seq += 1;
            serde_json::to_string(&entry).unwrap() + "\n"
        }

        fn append_raw(&self, segment: &str, bytes: &[u8]) {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(segment_path(self.path(), &SegmentId::new(segment)))
                .unwrap();
            file.write_all(bytes).unwrap();
        }

        fn append(&mut self, segment: &str, kinds: Vec<EntryKind>) {
            let text: String = kinds.into_iter().map(|k| self.line(segment, k)).collect();
            self.append_raw(segment, text.as_bytes());
        }
    }

    fn cursor(segment: &str, index: u64) -> OutputCursor {
        OutputCursor {
            segment: SegmentId::new(segment),
            index,
        }
    }

    #[test]
    fn reads_a_whole_turn_compactly() {
        let mut log = Log::new();
        log.append(
            "s1",
            vec![
                start("s1", Origin::New),
                EntryKind::RunStart {
                    trigger: RunTrigger::Parent,
                },
                input("fix the build"),
                EntryKind::AssistantItem {
                    item: ModelItem::Reasoning {
                        text: "hmm, let me see".into(),
                        signature: None,
                        responses: None,
                    },
                },
                EntryKind::AssistantItem {
                    item: ModelItem::ToolCall {
                        call_id: CallId::new("c1"),
                        name: "shell".into(),
                        arguments: format!(r#"{{"command":"{}"}}"#, "x".repeat(500)),
                    },
                },
                EntryKind::ToolResult {
                    call_id: CallId::new("c1"),
                    name: "shell".into(),
                    content: "exit 1".into(),
                    is_error: true,
                    meta: Default::default(),
                },
                EntryKind::Usage(Usage::default()),
                said("Fixed it.\nAll tests pass."),
                EntryKind::RunEnd {
                    reason: RunEndReason::Completed,
                    message: None,
                },
            ],
        );
        let page = read_output(log.path(), &meta(&["s1"]), None, DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!(page.entries, 9);
        assert_eq!(page.next, cursor("s1", 9));
        assert!(!page.more);
        let lines: Vec<&str> = page.text.lines().collect();
        assert_eq!(lines[0], "pod kid: entries 0–8 of segment s1");
        assert_eq!(lines[1], "— turn started: input from you, its parent");
        assert_eq!(lines[2], "input: fix the build");
        assert_eq!(lines[3], "(thought for 15 chars)");
        assert!(
            lines[4].starts_with(r#"called shell({"command":"xxx"#),
            "{}",
            lines[4]
        );
        assert!(
            lines[4].ends_with("… [314 more chars cut])"),
            "{}",
            lines[4]
        );
        assert_eq!(lines[5], "shell → error: exit 1");
        assert_eq!(lines[6], "said: Fixed it.");
        assert_eq!(lines[7], "  All tests pass.");
        assert_eq!(lines[8], "— turn ended: completed");
        assert_eq!(lines.len(), 9);
    }

    #[test]
    fn resuming_from_next_reads_only_new_entries() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New), input("first")]);
        let meta = meta(&["s1"]);
        let page = read_output(log.path(), &meta, None, DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!(page.next, cursor("s1", 2));

        let again = read_output(log.path(), &meta, Some(&page.next), DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!(again.text, "pod kid: nothing new since s1:2");
        assert_eq!((again.entries, again.more), (0, false));
        assert_eq!(again.next, page.next);

        log.append("s1", vec![said("second")]);
        let later = read_output(log.path(), &meta, Some(&page.next), DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!(later.text, "pod kid: entry 2 of segment s1\nsaid: second");
        assert_eq!(later.entries, 1);
        assert_eq!(later.next, cursor("s1", 3));
    }

    #[test]
    fn a_cursor_past_the_end_is_nothing_new() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New)]);
        let page = read_output(log.path(), &meta(&["s1"]), Some(&cursor("s1", 40)), 1_000).unwrap();
        assert_eq!(page.text, "pod kid: nothing new since s1:40");
        assert_eq!(page.next, cursor("s1", 40));
    }

    #[test]
    fn paging_by_budget_reaches_the_end_without_losing_or_repeating() {
        let mut log = Log::new();
        let mut kinds = vec![start("s1", Origin::New)];
        kinds.extend((0..60).map(|i| said(&format!("message number {i}"))));
        log.append("s1", kinds);
        let meta = meta(&["s1"]);
        let budget = 150;
        let (mut since, mut seen, mut consumed) = (None, Vec::new(), 0);
        loop {
            let page = read_output(log.path(), &meta, since.as_ref(), budget).unwrap();
            assert!(page.text.chars().count() <= budget, "{}", page.text);
            assert!(page.entries > 0);
            consumed += page.entries;
            seen.extend(
                page.text
                    .lines()
                    .filter_map(|l| l.strip_prefix("said: message number "))
                    .map(|n| n.parse::<u32>().unwrap()),
            );
            since = Some(page.next.clone());
            if !page.more {
                break;
            }
        }
        assert_eq!(seen, (0..60).collect::<Vec<_>>());
        assert_eq!(consumed, 61);
        assert_eq!(since, Some(cursor("s1", 61)));
    }

    #[test]
    fn a_partial_last_line_is_left_alone_until_complete() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New), input("go")]);
        let pending = log.line("s1", said("half written"));
        let (head, tail) = pending.split_at(pending.len() / 2);
        log.append_raw("s1", head.as_bytes());
        let path = segment_path(log.path(), &SegmentId::new("s1"));
        let before = std::fs::read(&path).unwrap();
        let listing = || std::fs::read_dir(path.parent().unwrap()).unwrap().count();

        let meta = meta(&["s1"]);
        let page = read_output(log.path(), &meta, None, DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!(page.entries, 2);
        assert_eq!(page.next, cursor("s1", 2));
        assert!(!page.more);
        assert!(!page.text.contains("half written"));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(listing(), 1, "no side file may appear");

        log.append_raw("s1", tail.as_bytes());
        let rest = read_output(log.path(), &meta, Some(&page.next), DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!(
            rest.text,
            "pod kid: entry 2 of segment s1\nsaid: half written"
        );
    }

    #[test]
    fn a_complete_bad_line_in_the_active_segment_holds_the_cursor() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New), input("go")]);
        log.append_raw("s1", b"{\"v\":1,\"seq\n");
        let page = read_output(log.path(), &meta(&["s1"]), None, DEFAULT_BUDGET_CHARS).unwrap();
        assert_eq!((page.entries, page.more), (2, false));
        assert_eq!(page.next, cursor("s1", 2));
        let again = read_output(log.path(), &meta(&["s1"]), Some(&page.next), 1_000).unwrap();
        assert!(
            again.text.starts_with(
                "pod kid: nothing new since s1:2\n(entry 2 of segment s1 is not readable yet"
            ),
            "{}",
            again.text
        );
    }

    #[test]
    fn reading_crosses_into_the_next_segment() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New), input("old work")]);
        log.append(
            "s2",
            vec![
                start(
                    "s2",
                    Origin::ClearedFrom {
                        segment_id: SegmentId::new("s1"),
                    },
                ),
                input("new work"),
            ],
        );
        let meta = meta(&["s1", "s2"]);
        let page = read_output(
            log.path(),
            &meta,
            Some(&cursor("s1", 1)),
            DEFAULT_BUDGET_CHARS,
        )
        .unwrap();
        assert_eq!(
            page.text,
            "pod kid: entry 1 of segment s1\n\
             input: old work\n\
             ── new segment s2 (the pod cleared its history): entries 0–1 ──\n\
             input: new work"
        );
        assert_eq!((page.entries, page.more), (3, false));
        assert_eq!(page.next, cursor("s2", 2));

        let from_end = read_output(log.path(), &meta, Some(&cursor("s1", 2)), 1_000).unwrap();
        assert_eq!(
            from_end.text,
            "pod kid: entries 0–1 of segment s2, a new segment (the pod cleared its history)\n\
             input: new work"
        );
    }

    #[test]
    fn a_bad_line_in_a_finished_segment_is_skipped_with_a_note() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New)]);
        log.append_raw("s1", b"not json\n");
        log.append("s1", vec![input("kept")]);
        log.append_raw("s1", b"{\"torn");
        log.append("s2", vec![start("s2", Origin::New), said("on")]);
        let page = read_output(log.path(), &meta(&["s1", "s2"]), None, 1_000).unwrap();
        let lines: Vec<&str> = page.text.lines().collect();
        assert_eq!(lines[0], "pod kid: entries 0–2 of segment s1");
        assert!(
            lines[1].starts_with("(entry 1 could not be read, skipped: "),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[2..],
            [
                "input: kept",
                "── new segment s2 (a new history): entries 0–1 ──",
                "said: on"
            ]
        );
        assert_eq!(page.next, cursor("s2", 2));
    }

    #[test]
    fn an_unknown_segment_says_to_omit_since() {
        let mut log = Log::new();
        log.append("s1", vec![start("s1", Origin::New)]);
        let err =
            read_output(log.path(), &meta(&["s1"]), Some(&cursor("nope", 0)), 1_000).unwrap_err();
        assert!(matches!(err, OutputError::UnknownSegment { .. }));
        assert!(err.to_string().contains("omit `since`"), "{err}");
    }

    #[test]
    fn a_missing_segment_file_names_its_path() {
        let log = Log::new();
        let err = read_output(log.path(), &meta(&["s1"]), None, 1_000).unwrap_err();
        assert!(matches!(err, OutputError::Unreadable { .. }));
        let path = segment_path(log.path(), &SegmentId::new("s1"));
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn an_oversized_entry_is_cut_and_still_makes_progress() {
        let mut log = Log::new();
        log.append(
            "s1",
            vec![
                start("s1", Origin::New),
                said(&"🦀é".repeat(20_000)),
                said("after"),
            ],
        );
        let meta = meta(&["s1"]);
        let budget = 500;
        let page = read_output(log.path(), &meta, Some(&cursor("s1", 1)), budget).unwrap();
        assert_eq!(page.entries, 1);
        assert!(page.more);
        assert_eq!(page.next, cursor("s1", 2));
        assert!(page.text.chars().count() <= budget);
        assert!(page.text.contains("more chars cut]"), "{}", page.text);

        let next = read_output(log.path(), &meta, Some(&page.next), budget).unwrap();
        assert_eq!(next.text, "pod kid: entry 2 of segment s1\nsaid: after");
    }

    #[test]
    fn cuts_never_split_a_character() {
        assert_eq!(cut("héllo", 2), "hé… [3 more chars cut]");
        assert_eq!(cut("héllo", 5), "héllo");
    }
}
