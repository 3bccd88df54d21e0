//! The default pod name for a directory. What a pod name may be is `seedpod_protocol::PodName`.

use std::path::Path;

use seedpod_protocol::{MAX_NAME_CHARS, PodName};

/// The base name for a directory's pod: its basename with anything outside the allowed set
/// replaced by `-`, or `pod` when nothing usable is left.
pub fn sanitise_dir_name(dir: &Path) -> PodName {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    while out.starts_with('.') || out.starts_with('-') {
        out.remove(0);
    }
    out.truncate(MAX_NAME_CHARS - 4);
    // Only allowed characters are left and the first is neither '.' nor '-', so this holds a
    // name unless nothing was left.
    PodName::new(out).unwrap_or_else(|_| PodName::default_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_basenames() {
        assert_eq!(
            sanitise_dir_name(Path::new("/home/a/my project")),
            PodName::new("my-project").unwrap()
        );
        assert_eq!(
            sanitise_dir_name(Path::new("/home/a/.hidden")),
            PodName::new("hidden").unwrap()
        );
        assert_eq!(
            sanitise_dir_name(Path::new("/")),
            PodName::new("pod").unwrap()
        );
        assert_eq!(
            sanitise_dir_name(Path::new("/x/日本")),
            PodName::new("pod").unwrap()
        );
        assert_eq!(
            sanitise_dir_name(Path::new("/x/-.-")),
            PodName::new("pod").unwrap()
        );
    }
}
