//! `seedpod export NAME`: a pod's transcript for sharing, as Markdown, one self-contained HTML
//! file, or the log's own JSON lines. It reads the segment files (as `history --all` does), so
//! it works the same on a running pod and a stopped one and never disturbs either.
//! `docs/export.md` is the user's reference.
//!
//! `transcript.rs` turns entries into what a reader sees; `markdown.rs` and `html.rs` render
//! it; this file picks the segments and writes the result.

mod html;
mod markdown;
mod transcript;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};
use seedpod_client::{Home, Target};
use seedpod_protocol::{Entry, EntryKind, ModelItem, PodName};
use seedpod_store::{read_segment_entries, segment_path};

use self::transcript::{Include, Part};
use crate::exit::Exit;
use crate::{history, settings};

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The pod (default: this directory's); running or stopped.
    pub name: Option<Target>,
    /// `md` (Markdown), `html` (one self-contained file) or `jsonl` (the log's entries).
    #[arg(long, value_enum, default_value_t = Format::Md)]
    pub format: Format,
    /// Every segment, oldest first (default: the active segment, as `history` shows it).
    #[arg(long)]
    pub all: bool,
    /// Include the model's reasoning (left out by default).
    #[arg(long)]
    pub thinking: bool,
    /// Write to FILE (created private to you; replaced whole) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Md,
    Html,
    Jsonl,
}

/// What the top of a transcript says.
pub struct Header {
    pub pod: String,
    /// Segments exported, and how many the pod has.
    pub exported: usize,
    pub total: usize,
}

impl Header {
    pub fn description(&self) -> String {
        if self.exported == self.total {
            format!(
                "Exported by seedpod: all {} segment(s) of the conversation, oldest first.",
                self.total
            )
        } else {
            format!(
                "Exported by seedpod: the active segment of {} (`seedpod export --all` exports \
                 every segment).",
                self.total
            )
        }
    }
}

pub fn export(home: &Home, name: &PodName, args: &ExportArgs) -> Result<()> {
    let Some(meta) = settings::existing_meta(home, name)? else {
        return Err(Exit::usage(format!("no pod named \"{name}\"")));
    };
    let all_ids = history::segment_ids(&meta);
    let ids: Vec<_> = if args.all {
        all_ids.clone()
    } else {
        vec![meta.active_segment]
    };
    let dir = home.pod_dir(name);
    let mut segments = Vec::with_capacity(ids.len());
    for id in ids {
        let path = segment_path(&dir, &id);
        let entries = read_segment_entries(&path).map_err(|err| {
            Exit::failure(format!(
                "segment {id} of pod \"{name}\" cannot be read ({}): {err}; nothing was exported",
                path.display()
            ))
        })?;
        segments.push((id, entries));
    }
    let header = Header {
        pod: name.to_string(),
        exported: segments.len(),
        total: all_ids.len(),
    };
    let text = match args.format {
        Format::Jsonl => jsonl(&segments, args.thinking),
        Format::Md | Format::Html => {
            let parts: Vec<Part> = segments
                .into_iter()
                .enumerate()
                .map(|(i, (id, entries))| {
                    let include = Include {
                        thinking: args.thinking,
                        seed: i == 0,
                    };
                    transcript::part(id, &entries, include)
                })
                .collect();
            match args.format {
                Format::Html => html::render(&header, &parts),
                Format::Md | Format::Jsonl => markdown::render(&header, &parts),
            }
        }
    };
    match &args.output {
        Some(file) => write_private(file, &text),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("cannot write the transcript to standard output")
        }
    }
}

/// The entries as the log holds them, one per line; reasoning (and the raw answers that may
/// contain it, and reasoning a compaction carried into a segment's seed) only when asked for.
fn jsonl(segments: &[(seedpod_protocol::SegmentId, Vec<Entry>)], thinking: bool) -> String {
    let mut out = String::new();
    for entry in segments.iter().flat_map(|(_, entries)| entries) {
        let line = match &entry.kind {
            EntryKind::AssistantItem {
                item: ModelItem::Reasoning { .. },
            }
            | EntryKind::AssistantRaw { .. }
                if !thinking =>
            {
                continue;
            }
            EntryKind::SegmentStart(start) if !thinking => {
                let mut start = start.clone();
                start
                    .seed
                    .retain(|item| !matches!(item, ModelItem::Reasoning { .. }));
                seedpod_protocol::encode(&Entry {
                    kind: EntryKind::SegmentStart(start),
                    ..entry.clone()
                })
            }
            _ => seedpod_protocol::encode(entry),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Write `text` to `file` whole or not at all: a private temporary file beside it, renamed over
/// it. Private (0600) because a transcript holds what the pod read and ran (DESIGN invariant
/// 6: files are private to their user); the person shares it on purpose.
fn write_private(file: &Path, text: &str) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let Some(file_name) = file.file_name() else {
        return Err(Exit::usage(format!(
            "-o {}: name a file, not a directory",
            file.display()
        )));
    };
    let temp = dir.join(format!(
        ".{}.seedpod-export-{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut out| {
            out.write_all(text.as_bytes())?;
            out.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, file));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(Exit::failure(format!(
            "cannot write {}: {err}",
            file.display()
        )));
    }
    Ok(())
}
