//! Reading a segment file back: parse every line, validate the sequence, recover a torn tail.
//!
//! The rules (DESIGN §6): a crash mid-append can leave only the *last* line damaged, so a last
//! line that is incomplete or unreadable is a torn tail — it is moved aside (`torn.rs`) and the
//! entries before it are restored. Damage anywhere else cannot come from a crash, so it stops the
//! restore with the file, the line and a way out, and the file is left exactly as it was. A line
//! from a newer seedpod is never guessed at: it stops the restore and asks for an upgrade.
//!
//! Scanning is pure (bytes in, entries or an error out) and all checks run before the one repair,
//! so an error never follows a modification.

use std::path::{Path, PathBuf};

use seedpod_protocol::{Entry, EntrySeq};

use crate::error::StoreError;
use crate::torn::set_aside_torn_tail;
use crate::validate::{Misplaced, check_position};

/// A segment's entries as read from disk.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadSegment {
    /// Every valid entry, seq 0 first, without gaps.
    pub entries: Vec<Entry>,
    /// Set when a torn last line was moved aside during this read; the pod turns it into an alert.
    pub torn: Option<TornTail>,
}

/// A torn last line that `read_segment` moved out of the segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// Where the torn bytes now are: the segment's path with `.torn` appended.
    pub side_file: PathBuf,
    /// How many bytes were cut from the segment.
    pub bytes: u64,
    /// The 1-based line number the torn bytes started on.
    pub line: usize,
}

/// Read and validate a segment file, moving a torn last line aside if there is one.
pub fn read_segment(path: &Path) -> Result<ReadSegment, StoreError> {
    let data = std::fs::read(path).map_err(|e| StoreError::io(path, "read", e))?;
    let scan = scan(&data, path)?;
    let torn = match scan.torn_line {
        Some(line) => Some(set_aside_torn_tail(
            path,
            &data[scan.valid_len..],
            scan.valid_len,
            line,
        )?),
        None => None,
    };
    Ok(ReadSegment {
        entries: scan.entries,
        torn,
    })
}

/// Read a segment's valid entries without repairing anything: a torn last line is left where
/// it is (and not returned). For readers that are not the segment's owner — paging back
/// through old segments, `history --all`, a stopped pod — which must never modify a log.
/// `path` is the segment's plain name; once it is archived, its `.gz` is read instead
/// (`archive.rs`), so readers need not know.
pub fn read_segment_entries(path: &Path) -> Result<Vec<Entry>, StoreError> {
    let (data, read_from) = crate::archive::read_segment_bytes(path)?;
    Ok(scan(&data, &read_from)?.entries)
}

/// The last `max` entries of a segment before `before` (before its end, for a `before` past
/// it), oldest first, for paging back through an old segment (`earlier`), parsing only those
/// lines. A valid segment numbers its entries by line (`scan` checks that every entry's `seq`
/// is its line's), so the lines are found by counting newlines. Lines outside the page are not
/// checked — restore and `history --all` read everything — and when a line of the page is not
/// the entry its place says (a torn last line among them, say), this falls back to the full
/// read, so a damaged page reads and fails exactly as `read_segment_entries` would.
pub fn read_segment_tail(
    path: &Path,
    before: EntrySeq,
    max: usize,
) -> Result<Vec<Entry>, StoreError> {
    let (data, read_from) = crate::archive::read_segment_bytes(path)?;
    let lines = memchr::memchr_iter(b'\n', &data).count() as u64;
    let end = EntrySeq::new(before.get().min(lines));
    let from = EntrySeq::new(end.get().saturating_sub(max as u64));
    if let Some(entries) = lines_in_range(&data, from, end) {
        return Ok(entries);
    }
    let entries = scan(&data, &read_from)?.entries;
    let end = before.min(EntrySeq::new(entries.len() as u64));
    let from = EntrySeq::new(end.get().saturating_sub(max as u64));
    Ok(entries
        .into_iter()
        .filter(|e| e.seq >= from && e.seq < end)
        .collect())
}

/// The entries of the complete lines numbered `from..before` of `data`, when each parses and
/// stands where its number says; `None` otherwise (the caller reads everything instead).
fn lines_in_range(data: &[u8], from: EntrySeq, before: EntrySeq) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut start = 0;
    for (number, newline) in memchr::memchr_iter(b'\n', data).enumerate() {
        let seq = EntrySeq::new(number as u64);
        if seq >= before {
            break;
        }
        let line = &data[start..newline];
        start = newline + 1;
        if seq < from {
            continue;
        }
        let entry = parse_line(line).ok()?;
        check_entry(&entry, seq, line).ok()?;
        entries.push(entry);
    }
    // A segment without a whole first line is the full read's error to give.
    (!entries.is_empty() || from > EntrySeq::FIRST).then_some(entries)
}

/// Whether `data` reads as a segment (a torn last line allowed), without keeping its entries.
pub(crate) fn check_bytes(data: &[u8], file: &Path) -> Result<(), StoreError> {
    scan(data, file).map(drop)
}

/// What a segment's bytes contain, before any repair.
struct Scan {
    entries: Vec<Entry>,
    /// Length of the prefix made of complete, valid lines.
    valid_len: usize,
    /// The line number of a torn last line, if the file ends in one.
    torn_line: Option<usize>,
}

fn scan(data: &[u8], file: &Path) -> Result<Scan, StoreError> {
    let corrupt = |line: usize, reason: String| StoreError::Corrupt {
        file: file.to_path_buf(),
        line,
        reason,
    };
    let mut entries = Vec::new();
    let mut offset = 0;
    let mut line_no = 0;
    let mut torn_line = None;
    while offset < data.len() {
        line_no += 1;
        let rest = &data[offset..];
        let Some(newline) = rest.iter().position(|&b| b == b'\n') else {
            // No newline: the append that wrote this line never finished.
            torn_line = Some(line_no);
            break;
        };
        let is_last = offset + newline + 1 == data.len();
        match parse_line(&rest[..newline]) {
            Ok(entry) => {
                check_entry(
                    &entry,
                    EntrySeq::new(entries.len() as u64),
                    &rest[..newline],
                )
                .map_err(|bad| corrupt(line_no, bad.to_string()))?;
                entries.push(entry);
            }
            Err(_) if is_last => {
                torn_line = Some(line_no);
                break;
            }
            Err(bad) => return Err(corrupt(line_no, bad.to_string())),
        }
        offset += newline + 1;
    }
    if entries.is_empty() {
        let reason = if data.is_empty() {
            "the segment is empty; it has no segment_start entry (the pod was probably stopped \
             while creating it)"
        } else {
            "the segment's first line is incomplete; it has no segment_start entry (the pod was \
             probably stopped while creating it)"
        };
        return Err(corrupt(1, reason.to_owned()));
    }
    Ok(Scan {
        entries,
        valid_len: offset,
        torn_line,
    })
}

/// Why one line of a segment is not an entry that may stand where it is.
#[derive(Debug)]
enum BadLine {
    Empty,
    /// Not JSON, or not an entry; `message` is serde_json's without its "at line 1" suffix.
    NotAnEntry {
        message: String,
        column: usize,
    },
    /// A valid entry in the wrong place (a seq gap, a second start) or of a kind this binary
    /// does not know; `tag` names that kind, when the line says.
    Misplaced {
        misplaced: Misplaced,
        tag: Option<String>,
    },
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadLine::Empty => f.write_str("empty line"),
            BadLine::NotAnEntry { message, column } => {
                write!(f, "not a valid log entry ({message}, at column {column})")
            }
            BadLine::Misplaced { misplaced, tag } => {
                f.write_str(&misplaced.describe(tag.as_deref()))
            }
        }
    }
}

fn parse_line(line: &[u8]) -> Result<Entry, BadLine> {
    if line.is_empty() {
        return Err(BadLine::Empty);
    }
    serde_json::from_slice(line).map_err(|err| {
        // serde_json reports "… at line 1 column N"; the line is ours to report, the column is
        // still useful.
        let message = err.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |i| &message[..i]);
        BadLine::NotAnEntry {
            message: message.to_owned(),
            column: err.column(),
        }
    })
}

/// Whether a parsed entry may stand at position `expected_seq`; `raw` is its line, parsed again
/// only to name a kind this binary does not know.
fn check_entry(entry: &Entry, expected_seq: EntrySeq, raw: &[u8]) -> Result<(), BadLine> {
    check_position(entry, expected_seq).map_err(|misplaced| {
        let tag = match misplaced {
            Misplaced::UnknownKind => tag_at(raw, "/kind"),
            Misplaced::UnknownSystemItem => tag_at(raw, "/item/kind"),
            Misplaced::NewerFormat { .. }
            | Misplaced::Seq { .. }
            | Misplaced::NotAStart { .. }
            | Misplaced::SecondStart => None,
        };
        BadLine::Misplaced { misplaced, tag }
    })
}

/// The string at JSON `pointer` in `raw` (error path only).
fn tag_at(raw: &[u8], pointer: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(raw).ok()?;
    value.pointer(pointer)?.as_str().map(str::to_owned)
}
