//! Pod names: what is allowed, and the default name for a directory.

use std::path::Path;

/// Longest pod name; keeps file names and log lines readable.
pub const MAX_NAME_CHARS: usize = 64;

/// Check a pod name: letters, digits, `.`, `_`, `-`; not starting with `.` or `-`.
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a pod name cannot be empty".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "pod name \"{name}\" is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    if name.starts_with('.') || name.starts_with('-') {
        return Err(format!("pod name \"{name}\" cannot start with '.' or '-'"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "pod name \"{name}\" contains {bad:?}; use letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(())
}

/// The base name for a directory's pod: its basename with anything outside the allowed set
/// replaced by `-`, or `pod` when nothing usable is left.
pub fn sanitise_dir_name(dir: &Path) -> String {
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
    if out.is_empty() { "pod".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_basenames() {
        assert_eq!(
            sanitise_dir_name(Path::new("/home/a/my project")),
            "my-project"
        );
        assert_eq!(sanitise_dir_name(Path::new("/home/a/.hidden")), "hidden");
        assert_eq!(sanitise_dir_name(Path::new("/")), "pod");
        assert!(validate_name(&sanitise_dir_name(Path::new("/x/日本"))).is_ok());
    }

    #[test]
    fn rejects_bad_names() {
        assert!(validate_name("ok-name_1.2").is_ok());
        assert!(validate_name("").is_err());
        assert!(validate_name("-x").is_err());
        assert!(validate_name("a/b").unwrap_err().contains("'/'"));
        assert!(validate_name(&"a".repeat(65)).is_err());
    }
}
