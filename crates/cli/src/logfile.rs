//! The pod log file with rotation: a new file at UTC midnight (`rotation = "daily"`) and
//! whenever the next line would pass the size limit; rotated files older than `keep_days` are
//! deleted. The active file keeps its name (`state/logs/<name>.log`), so `tail -F` and
//! `seedpod start`'s failure report always read the same path.
//!
//! It sits behind `tracing_appender::non_blocking`, whose single worker thread is the only
//! writer, and each `write` is one whole log line, so a line is never split across files.
//!
//! Rotation never costs a line: if the new file cannot be opened (out of descriptors, a full
//! disk), lines go on to the file just rotated and opening is retried on every write, so the
//! log resumes under its own name as soon as the process can open files again.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SECS_PER_DAY: u64 = 86_400;

/// When to start a new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotationPolicy {
    pub daily: bool,
    pub max_bytes: u64,
    pub keep_days: u32,
}

/// The clock, injectable so tests can cross midnight without waiting for it.
pub type Clock = Box<dyn Fn() -> SystemTime + Send>;

/// How files are opened for appending, injectable so tests can make it fail.
pub type Opener = Box<dyn Fn(&Path) -> io::Result<File> + Send>;

pub struct RotatingFile {
    dir: PathBuf,
    /// `p` for `p.log`; rotated files are `p.2026-11-23.1.log`.
    stem: String,
    extension: String,
    file: File,
    size: u64,
    /// The UTC day (days since the epoch) the active file's lines belong to.
    day: u64,
    policy: RotationPolicy,
    clock: Clock,
    opener: Opener,
    /// The active file was renamed away but its successor could not be opened yet: `file`
    /// is still the renamed one, and the next write tries to open the active name again.
    reopen_pending: bool,
}

impl RotatingFile {
    pub fn open(path: &Path, policy: RotationPolicy) -> io::Result<RotatingFile> {
        RotatingFile::open_with_clock(path, policy, Box::new(SystemTime::now))
    }

    pub fn open_with_clock(
        path: &Path,
        policy: RotationPolicy,
        clock: Clock,
    ) -> io::Result<RotatingFile> {
        RotatingFile::open_with(path, policy, clock, Box::new(|p: &Path| open_append(p)))
    }

    pub fn open_with(
        path: &Path,
        policy: RotationPolicy,
        clock: Clock,
        opener: Opener,
    ) -> io::Result<RotatingFile> {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        seedpod_client::private::create_dir_all(&dir)?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "seedpod".into());
        let extension = path
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "log".into());
        let file = opener(path)?;
        let meta = file.metadata()?;
        // A file left by an earlier run belongs to the day it was last written, so a pod
        // restarted the next morning rotates yesterday's lines away on its first write.
        // An empty file (just created) has nothing to rotate: it belongs to the clock's day.
        let day = match meta.modified() {
            Ok(modified) if meta.len() > 0 => day_of(modified),
            Ok(_) | Err(_) => day_of(clock()),
        };
        Ok(RotatingFile {
            dir,
            stem,
            extension,
            file,
            size: meta.len(),
            day,
            policy,
            clock,
            opener,
            reopen_pending: false,
        })
    }

    fn active_path(&self) -> PathBuf {
        self.dir.join(format!("{}.{}", self.stem, self.extension))
    }

    /// Start a new file when the day or the size says so. Failing to is not an error for the
    /// line being written: it goes to the current file, and the next write tries again.
    fn rotate_if_needed(&mut self, incoming: usize) {
        let today = day_of((self.clock)());
        if self.reopen_pending {
            self.reopen();
            self.day = today;
            return;
        }
        let new_day = self.policy.daily && today != self.day;
        let too_big = self.size > 0 && self.size + incoming as u64 > self.policy.max_bytes;
        if (new_day || too_big) && self.rotate().is_ok() {
            self.prune(today);
        }
        self.day = today;
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        let date = seedpod_pod::calendar::civil_date(self.day);
        let rotated = (1u32..)
            .map(|n| {
                self.dir
                    .join(format!("{}.{date}.{n}.{}", self.stem, self.extension))
            })
            .find(|p| !p.exists())
            .unwrap_or_else(|| self.dir.join(format!("{}.{date}.overflow", self.stem)));
        std::fs::rename(self.active_path(), &rotated)?;
        self.reopen_pending = true;
        self.reopen();
        Ok(())
    }

    /// Open the active name again after a rotation; on failure keep the current file.
    fn reopen(&mut self) {
        if let Ok(file) = (self.opener)(&self.active_path()) {
            self.file = file;
            self.size = 0;
            self.reopen_pending = false;
        }
    }

    /// Delete rotated files last written more than `keep_days` ago. Failures are ignored: a
    /// file we cannot delete costs disk, not correctness, and logging must not fail over it.
    fn prune(&self, today: u64) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let oldest_kept = today.saturating_sub(u64::from(self.policy.keep_days));
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !self.is_rotated_name(&name) {
                continue;
            }
            let Ok(modified) = entry.metadata().and_then(|m| m.modified()) else {
                continue;
            };
            if day_of(modified) < oldest_kept {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// `<stem>.YYYY-MM-DD.<n>.<ext>` and nothing else (never another pod's log).
    fn is_rotated_name(&self, name: &str) -> bool {
        let Some(middle) = name
            .strip_prefix(&format!("{}.", self.stem))
            .and_then(|rest| rest.strip_suffix(&format!(".{}", self.extension)))
        else {
            return false;
        };
        let Some((date, n)) = middle.split_once('.') else {
            return false;
        };
        let date_shape = date.len() == 10
            && date.chars().enumerate().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            });
        date_shape && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.rotate_if_needed(buf.len());
        let written = self.file.write(buf)?;
        self.size += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    seedpod_client::private::open_append(path)
}

fn day_of(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
        / SECS_PER_DAY
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// 2026-11-23 12:00 UTC.
    const NOON: u64 = 20_780 * SECS_PER_DAY + 12 * 3_600;

    struct Fixture {
        dir: tempfile::TempDir,
        now: Arc<AtomicU64>,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture {
                dir: tempfile::tempdir().unwrap(),
                now: Arc::new(AtomicU64::new(NOON)),
            }
        }

        fn open(&self, policy: RotationPolicy) -> RotatingFile {
            let now = self.now.clone();
            RotatingFile::open_with_clock(
                &self.dir.path().join("p.log"),
                policy,
                Box::new(move || UNIX_EPOCH + Duration::from_secs(now.load(Ordering::SeqCst))),
            )
            .unwrap()
        }

        fn names(&self) -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }

        fn read(&self, name: &str) -> String {
            std::fs::read_to_string(self.dir.path().join(name)).unwrap()
        }
    }

    const POLICY: RotationPolicy = RotationPolicy {
        daily: true,
        max_bytes: 1_000_000,
        keep_days: 2,
    };

    #[test]
    fn a_rotation_that_cannot_open_its_new_file_loses_no_line_and_recovers() {
        let f = Fixture::new();
        let now = f.now.clone();
        let broken = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fail = broken.clone();
        let mut log = RotatingFile::open_with(
            &f.dir.path().join("p.log"),
            RotationPolicy {
                daily: false,
                max_bytes: 10,
                keep_days: 2,
            },
            Box::new(move || UNIX_EPOCH + Duration::from_secs(now.load(Ordering::SeqCst))),
            Box::new(move |p: &Path| {
                if fail.load(Ordering::SeqCst) {
                    return Err(io::Error::from_raw_os_error(24)); // EMFILE
                }
                open_append(p)
            }),
        )
        .unwrap();
        log.write_all(b"one 56789\n").unwrap();
        // Out of descriptors: the rotation renames the full file away and cannot open a new
        // one. Lines keep coming and none fails or is lost.
        broken.store(true, Ordering::SeqCst);
        log.write_all(b"two 56789\n").unwrap();
        log.write_all(b"three 789\n").unwrap();
        assert_eq!(f.names(), ["p.2026-11-23.1.log"]);
        assert_eq!(
            f.read("p.2026-11-23.1.log"),
            "one 56789\ntwo 56789\nthree 789\n"
        );
        // Descriptors again: the next line reopens the log under its own name.
        broken.store(false, Ordering::SeqCst);
        log.write_all(b"four 6789\n").unwrap();
        log.write_all(b"five 6789\n").unwrap();
        assert_eq!(f.read("p.2026-11-23.2.log"), "four 6789\n");
        assert_eq!(f.read("p.log"), "five 6789\n");
        let all: String = f
            .names()
            .iter()
            .map(|n| f.read(n))
            .collect::<Vec<_>>()
            .concat();
        for line in ["one", "two", "three", "four", "five"] {
            assert_eq!(all.matches(line).count(), 1, "{line} in {all}");
        }
    }

    #[test]
    fn a_line_that_would_pass_the_size_limit_starts_a_new_file() {
        let fx = Fixture::new();
        let mut log = fx.open(RotationPolicy {
            max_bytes: 10,
            ..POLICY
        });
        log.write_all(b"12345678\n").unwrap();
        log.write_all(b"abc\n").unwrap();
        log.write_all(b"def\n").unwrap();
        log.flush().unwrap();
        assert_eq!(fx.names(), ["p.2026-11-23.1.log", "p.log"]);
        assert_eq!(fx.read("p.2026-11-23.1.log"), "12345678\n");
        assert_eq!(fx.read("p.log"), "abc\ndef\n", "lines are never split");
    }

    #[test]
    fn midnight_starts_a_new_file_named_for_the_old_day() {
        let fx = Fixture::new();
        let mut log = fx.open(POLICY);
        log.write_all(b"monday\n").unwrap();
        fx.now.fetch_add(SECS_PER_DAY, Ordering::SeqCst);
        log.write_all(b"tuesday\n").unwrap();
        log.flush().unwrap();
        assert_eq!(fx.read("p.2026-11-23.1.log"), "monday\n");
        assert_eq!(fx.read("p.log"), "tuesday\n");
    }

    #[test]
    fn size_rotation_only_does_not_rotate_at_midnight() {
        let fx = Fixture::new();
        let mut log = fx.open(RotationPolicy {
            daily: false,
            ..POLICY
        });
        log.write_all(b"a\n").unwrap();
        fx.now.fetch_add(SECS_PER_DAY, Ordering::SeqCst);
        log.write_all(b"b\n").unwrap();
        log.flush().unwrap();
        assert_eq!(fx.names(), ["p.log"]);
    }

    #[test]
    fn old_rotated_files_are_deleted_and_other_files_kept() {
        let fx = Fixture::new();
        let dir = fx.dir.path();
        let old_time = UNIX_EPOCH + Duration::from_secs(NOON - 5 * SECS_PER_DAY);
        for name in ["p.2026-11-18.1.log", "q.2026-11-18.1.log", "p.notes.log"] {
            let file = File::create(dir.join(name)).unwrap();
            file.set_modified(old_time).unwrap();
        }
        let recent = File::create(dir.join("p.2026-11-22.1.log")).unwrap();
        recent
            .set_modified(UNIX_EPOCH + Duration::from_secs(NOON - SECS_PER_DAY))
            .unwrap();
        let mut log = fx.open(RotationPolicy {
            max_bytes: 4,
            ..POLICY
        });
        log.write_all(b"one\n").unwrap();
        log.write_all(b"two\n").unwrap();
        log.flush().unwrap();
        assert_eq!(
            fx.names(),
            [
                "p.2026-11-22.1.log",
                "p.2026-11-23.1.log",
                "p.log",
                "p.notes.log",
                "q.2026-11-18.1.log"
            ]
        );
    }

    #[test]
    fn a_file_from_yesterday_is_rotated_on_the_first_write_today() {
        let fx = Fixture::new();
        let path = fx.dir.path().join("p.log");
        std::fs::write(&path, "yesterday\n").unwrap();
        File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(UNIX_EPOCH + Duration::from_secs(NOON - SECS_PER_DAY))
            .unwrap();
        let mut log = fx.open(POLICY);
        log.write_all(b"today\n").unwrap();
        log.flush().unwrap();
        assert_eq!(fx.read("p.2026-11-22.1.log"), "yesterday\n");
        assert_eq!(fx.read("p.log"), "today\n");
    }
}
