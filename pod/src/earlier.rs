//! Paging back through the log for display (`earlier`): a client that scrolls to the top of
//! what it has asks for the entries before it, across segment boundaries (a compaction or a
//! `/clear` leaves the earlier conversation in the segment before), one bounded page at a time.
//!
//! Pure paging over entries plus a read-only file read for segments that are not active; the
//! controller answers from a blocking thread so a large old segment never holds it.

use std::path::Path;
use std::sync::Arc;

use seedpod_protocol::{Entry, EntrySeq, RequestId, SegmentId, ServerMsg};
use seedpod_store::{PodMeta, read_segment_tail, segment_path};

/// Serialised bytes one `earlier` answer carries at most (well under the frame limit), so a
/// page of big tool results stays one sendable frame.
pub const PAGE_BYTES: usize = 1024 * 1024;
/// Entries one answer carries at most.
pub const PAGE_ENTRIES: usize = 400;

/// The entries before `before_seq`, newest last, as many as fit the budget (at least one,
/// unless that one alone is over the frame budget: see `oversized`). Returns the page and
/// whether anything earlier remains in this segment.
pub fn page(entries: &[Arc<Entry>], before_seq: EntrySeq) -> (Vec<Entry>, bool) {
    let end = entries
        .iter()
        .position(|e| e.seq >= before_seq)
        .unwrap_or(entries.len());
    let mut bytes = 0;
    let mut start = end;
    while start > 0 && end - start < PAGE_ENTRIES {
        let size = entry_size(&entries[start - 1]);
        if start < end && bytes + size > PAGE_BYTES {
            break;
        }
        bytes += size;
        start -= 1;
    }
    let page = entries[start..end]
        .iter()
        .map(|e| oversized(e.as_ref()))
        .collect();
    (page, start > 0)
}

fn entry_size(entry: &Entry) -> usize {
    serde_json::to_vec(entry).map_or(0, |v| v.len())
}

/// An entry too large for one page is sent with its long text cut: this is for display only
/// (`history` and `context` read the log itself), and a frame over the limit would break the
/// client.
fn oversized(entry: &Entry) -> Entry {
    if entry_size(entry) <= PAGE_BYTES {
        return entry.clone();
    }
    let mut entry = entry.clone();
    let cut = |text: &mut String| {
        // Characters, not bytes: a quarter of the budget in characters is at most the budget.
        if let Some(kept) = seedpod_protocol::char_prefix(text, PAGE_BYTES / 4) {
            let left = text.len() - kept.len();
            *text =
                format!("{kept}\n[… {left} more bytes in the log; `seedpod history` shows all]");
        }
    };
    match &mut entry.kind {
        seedpod_protocol::EntryKind::ToolResult { content, .. } => cut(content),
        seedpod_protocol::EntryKind::UserInput { text, segments, .. } => {
            cut(text);
            segments.clear();
            segments.push(seedpod_protocol::Segment::text(text.clone()));
        }
        seedpod_protocol::EntryKind::AssistantItem { item } => match item {
            seedpod_protocol::ModelItem::AssistantText { text }
            | seedpod_protocol::ModelItem::Reasoning { text, .. } => cut(text),
            seedpod_protocol::ModelItem::ToolCall { arguments, .. } => cut(arguments),
            seedpod_protocol::ModelItem::UserMessage { .. }
            | seedpod_protocol::ModelItem::ToolResult { .. }
            | seedpod_protocol::ModelItem::SystemMessage { .. } => {}
        },
        _ => {}
    }
    entry
}

/// The segment before `segment_id` in the pod's list, if any.
pub fn previous_segment<'a>(meta: &'a PodMeta, segment_id: &SegmentId) -> Option<&'a SegmentId> {
    let at = meta.segments.iter().position(|s| s == segment_id)?;
    at.checked_sub(1).map(|i| &meta.segments[i])
}

/// Answer `earlier` for a segment that is not the active one (or for the end of the one
/// before the active segment): reads the file read-only.
pub fn answer_from_files(
    id: RequestId,
    pod_dir: &Path,
    meta: &PodMeta,
    segment_id: &SegmentId,
    before_seq: EntrySeq,
) -> ServerMsg {
    // Only this pod's own segments, by the names its `pod.json` lists: a client's string never
    // becomes a path of its choosing.
    if !meta.segments.iter().any(|s| s == segment_id) {
        return ServerMsg::Error {
            id: Some(id),
            code: seedpod_protocol::ErrorCode::InvalidRequest,
            message: format!(
                "this pod has no segment {segment_id:?}; `seedpod history NAME --all` lists them"
            ),
        };
    }
    let mut segment = segment_id.to_owned();
    let mut before = before_seq;
    loop {
        if before == EntrySeq::FIRST {
            match previous_segment(meta, &segment) {
                Some(prev) => {
                    segment = prev.to_owned();
                    before = EntrySeq::new(u64::MAX);
                }
                None => return earlier(id, segment, Vec::new(), false),
            }
        }
        // Only the page's lines are parsed: a page costs the same at the top of a segment of
        // 2,000 entries as of 100,000.
        let path = segment_path(pod_dir, &segment);
        let entries = match read_segment_tail(&path, before, PAGE_ENTRIES) {
            Ok(entries) => entries.into_iter().map(Arc::new).collect::<Vec<_>>(),
            Err(err) => {
                return ServerMsg::Error {
                    id: Some(id),
                    code: seedpod_protocol::ErrorCode::Internal,
                    message: format!("segment {segment} could not be read: {err}"),
                };
            }
        };
        let (page, more_in_tail) = page(&entries, before);
        let more_here = more_in_tail || entries.first().is_some_and(|e| e.seq > EntrySeq::FIRST);
        if page.is_empty() && !more_here {
            // An empty segment (cannot happen: every segment has its start) — go further back.
            before = EntrySeq::FIRST;
            continue;
        }
        let more = more_here || previous_segment(meta, &segment).is_some();
        return earlier(id, segment, page, more);
    }
}

pub fn earlier(id: RequestId, segment_id: SegmentId, entries: Vec<Entry>, more: bool) -> ServerMsg {
    ServerMsg::Earlier {
        id,
        segment_id,
        entries,
        more,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedpod_protocol::{CallId, EntryKind, PodName, RunTrigger, SegmentId};

    fn entry(seq: u64, content_len: usize) -> Arc<Entry> {
        let kind = if content_len == 0 {
            EntryKind::RunStart {
                trigger: RunTrigger::User,
            }
        } else {
            EntryKind::ToolResult {
                call_id: CallId::new("c"),
                name: "read_file".into(),
                content: "x".repeat(content_len),
                is_error: false,
                meta: Default::default(),
            }
        };
        Arc::new(Entry {
            v: 1,
            seq: EntrySeq::new(seq),
            ts: 0,
            kind,
        })
    }

    #[test]
    fn only_the_pods_own_segments_can_be_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("secret.jsonl");
        std::fs::write(&outside, "{}\n").unwrap();
        let meta = PodMeta::new(
            PodName::new("p").unwrap(),
            dir.path().to_path_buf(),
            SegmentId::new("s1"),
            seedpod_store::PodConfig::new(seedpod_protocol::ProviderKind::Scripted, "x"),
            0,
        );
        for name in ["../secret", "../../etc/passwd", "s2", ""] {
            let answer = answer_from_files(
                RequestId::new(1),
                dir.path(),
                &meta,
                &SegmentId::new(name),
                EntrySeq::new(5),
            );
            let ServerMsg::Error { message, .. } = &answer else {
                panic!("{name}: {answer:?}")
            };
            assert!(message.contains("no segment"), "{message}");
        }
    }

    #[test]
    fn pages_end_before_the_asked_seq_and_say_whether_more_remains() {
        let entries: Vec<_> = (0..10).map(|s| entry(s, 0)).collect();
        let (page, more) = page(&entries, EntrySeq::new(5));
        assert_eq!(
            page.iter().map(|e| e.seq).collect::<Vec<_>>(),
            (0..5).map(EntrySeq::new).collect::<Vec<_>>()
        );
        assert!(!more);
        let (page, more) = super::page(&entries, EntrySeq::new(0));
        assert!(page.is_empty());
        assert!(!more);
    }

    #[test]
    fn a_page_stays_under_the_byte_budget() {
        let entries: Vec<_> = (0..10).map(|s| entry(s, PAGE_BYTES / 3)).collect();
        let (page, more) = page(&entries, EntrySeq::new(10));
        assert!(!page.is_empty() && page.len() < 10, "{}", page.len());
        assert!(more);
        let bytes: usize = page.iter().map(entry_size).sum();
        assert!(bytes <= PAGE_BYTES, "{bytes}");
    }

    #[test]
    fn an_entry_over_the_budget_is_cut_for_display_not_dropped() {
        let entries = vec![entry(0, 0), entry(1, PAGE_BYTES * 3)];
        let (page, more) = page(&entries, EntrySeq::new(2));
        assert_eq!(page.len(), 1);
        assert!(more);
        assert!(entry_size(&page[0]) < PAGE_BYTES);
        let EntryKind::ToolResult { content, .. } = &page[0].kind else {
            panic!("{page:?}")
        };
        assert!(
            content.contains("more bytes in the log"),
            "{}",
            &content[content.len() - 80..]
        );
    }
}
