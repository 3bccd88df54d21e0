//! Which filesystem a path is on, for the one error where that is what the person needs to
//! know: "no space left on device" says nothing about *which* device to free space on, and a
//! pod's files, logs and the directory someone is looking at can all be on different ones.

use std::path::Path;

/// ENOSPC: no space left on the device.
const NO_SPACE: i32 = 28;

/// Whether `err` says the filesystem is full.
pub fn is_out_of_space(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(NO_SPACE) || err.kind() == std::io::ErrorKind::StorageFull
}

/// "tmpfs mounted at /tmp/x", "/dev/sda1 mounted at /": the mount that holds `path`, from
/// `/proc/self/mountinfo`; a plain description when that cannot be read.
pub fn describe(path: &Path) -> String {
    std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|table| mount_of(&table, path))
        .map(|(source, at)| format!("{source} mounted at {at}"))
        .unwrap_or_else(|| format!("the device holding {}", path.display()))
}

/// The (source, mount point) of the longest mount point that is an ancestor of `path`.
fn mount_of(table: &str, path: &Path) -> Option<(String, String)> {
    table
        .lines()
        .filter_map(parse_line)
        .filter(|(_, at)| path.starts_with(at))
        .max_by_key(|(_, at)| at.len())
}

/// One mountinfo line: `id parent major:minor root MOUNT_POINT options… - fstype SOURCE …`.
fn parse_line(line: &str) -> Option<(String, String)> {
    let fields: Vec<&str> = line.split(' ').collect();
    let at = unescape(fields.get(4)?);
    let dash = fields.iter().position(|f| *f == "-")?;
    let fstype = fields.get(dash + 1)?;
    let source = fields.get(dash + 2).copied().unwrap_or(fstype);
    let source = if source == "none" { fstype } else { source };
    Some((unescape(source), at))
}

/// mountinfo writes space, tab, newline and backslash as octal escapes (`\040`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 0:21 / / rw,relatime - overlay overlay rw
30 22 0:25 / /tmp rw - tmpfs tmpfs rw
31 30 0:26 / /tmp/my\\040disk rw - ext4 /dev/sdb1 rw
32 22 0:27 / /proc rw - proc none rw";

    #[test]
    fn the_longest_mount_point_above_the_path_wins() {
        let found = |p: &str| mount_of(TABLE, Path::new(p));
        assert_eq!(found("/home/x"), Some(("overlay".into(), "/".into())));
        assert_eq!(found("/tmp/a/b"), Some(("tmpfs".into(), "/tmp".into())));
        assert_eq!(
            found("/tmp/my disk/pods/p"),
            Some(("/dev/sdb1".into(), "/tmp/my disk".into()))
        );
        // A prefix of a component is not an ancestor.
        assert_eq!(found("/tmpx"), Some(("overlay".into(), "/".into())));
        assert_eq!(found("/proc/1"), Some(("proc".into(), "/proc".into())));
    }

    #[test]
    fn garbage_lines_are_skipped_not_trusted() {
        assert_eq!(mount_of("nonsense\n\\\\\\ - -", Path::new("/a")), None);
        assert_eq!(unescape("a\\0"), "a\\0");
    }

    #[test]
    fn full_means_enospc() {
        assert!(is_out_of_space(&std::io::Error::from_raw_os_error(28)));
        assert!(!is_out_of_space(&std::io::Error::from_raw_os_error(27)));
    }
}
