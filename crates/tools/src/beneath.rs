//! Opening a checked path without a window for a swap: the file tools check the *canonical*
//! path against the scope (no symlinks left in it), then open exactly that path refusing every
//! symlink on the way. A directory swapped for a symlink between the check and the open makes
//! the open fail (ELOOP/ENOTDIR) instead of leading outside the scope.
//!
//! On Linux one `openat2(…, RESOLVE_NO_SYMLINKS)` does it; elsewhere (or where openat2 is
//! unavailable) each component is opened with `openat(…, O_NOFOLLOW)` from the one before.
//! Writes go through a handle on the parent directory: the temporary file is created, and then
//! renamed over the target, relative to that handle, so the directory cannot be exchanged in
//! between either.
//!
//! Hard links: a regular file with more than one name is refused for reading (another of its
//! names may be outside the scope, and nothing cheap tells where). Writing replaces the name
//! (rename), so a link elsewhere keeps the old content and is never written through.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path};

/// Why an open of a checked path failed.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// A symlink appeared in the path after it was checked (or something else changed it).
    Changed,
    /// A regular file with this many names: refused for reading.
    HardLinked(u64),
    Io(io::Error),
}

impl OpenError {
    fn from_io(err: io::Error) -> OpenError {
        match err.raw_os_error() {
            Some(libc::ELOOP) => OpenError::Changed,
            _ => OpenError::Io(err),
        }
    }

    /// Addressed to the model: what happened and what to do.
    pub(crate) fn describe(&self, path: &str) -> String {
        match self {
            OpenError::Changed => format!(
                "\"{path}\" changed while it was being opened (a symbolic link appeared in the \
                 path); nothing was read or written. Try again"
            ),
            OpenError::HardLinked(links) => format!(
                "\"{path}\" has {links} hard links; another of its names may be outside this \
                 pod's scope, so the file tools do not read it. Ask the person, or work on a copy \
                 they make"
            ),
            OpenError::Io(err) => crate::scope::describe_io(err),
        }
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Changed => f.write_str("a symbolic link appeared in the path"),
            OpenError::HardLinked(links) => write!(f, "the file has {links} hard links"),
            OpenError::Io(err) => err.fmt(f),
        }
    }
}

impl From<io::Error> for OpenError {
    fn from(err: io::Error) -> OpenError {
        OpenError::from_io(err)
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL"))
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the name contains a NUL"))
}

fn check_fd(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Open the absolute, canonical `path` with `flags`, following no symlink anywhere in it.
fn open_no_symlinks(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an absolute path",
        ));
    }
    #[cfg(target_os = "linux")]
    match openat2_no_symlinks(path, flags) {
        Err(err) if matches!(err.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) => {}
        other => return other,
    }
    walk_no_symlinks(path, flags)
}

#[cfg(target_os = "linux")]
fn openat2_no_symlinks(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c = c_path(path)?;
    // SAFETY: zeroed is a valid `open_how` (all fields are plain integers).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `c` is a NUL-terminated path and `how` a properly sized open_how that both live
    // across the call; the kernel reads them only.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    check_fd(fd as libc::c_int)
}

/// Each directory from `/` opened with O_NOFOLLOW relative to the one before.
fn walk_no_symlinks(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) => names.push(name),
            Component::CurDir | Component::ParentDir | Component::Prefix(_) => {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
        }
    }
    let root = c_path(Path::new("/"))?;
    // SAFETY: a NUL-terminated path; the result is checked.
    let mut dir =
        check_fd(unsafe { libc::open(root.as_ptr(), libc::O_DIRECTORY | libc::O_CLOEXEC) })?;
    let Some((last, middle)) = names.split_last() else {
        // The root itself.
        return open_at(&dir, OsStr::new("."), flags);
    };
    for name in middle {
        dir = match open_at(
            &dir,
            name,
            libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_RDONLY,
        ) {
            Ok(next) => next,
            // O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR: name it for what it is.
            Err(err) if err.raw_os_error() == Some(libc::ENOTDIR) => {
                let is_link = stat_at(&dir, name)?
                    .is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK);
                return Err(if is_link {
                    io::Error::from_raw_os_error(libc::ELOOP)
                } else {
                    err
                });
            }
            Err(err) => return Err(err),
        };
    }
    open_at(&dir, last, flags | libc::O_NOFOLLOW)
}

fn open_at(dir: &OwnedFd, name: &OsStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c = c_name(name)?;
    // SAFETY: `dir` is an open directory and `c` a NUL-terminated name; the result is checked.
    check_fd(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            0o666 as libc::c_uint,
        )
    })
}

/// Open the canonical, checked `path` for reading: a regular file with one name, or a
/// directory.
pub(crate) fn open_read(path: &Path) -> Result<File, OpenError> {
    let fd = open_no_symlinks(path, libc::O_RDONLY | libc::O_NONBLOCK)?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(OpenError::Io)?;
    if meta.is_file() && meta.nlink() > 1 {
        return Err(OpenError::HardLinked(meta.nlink()));
    }
    // O_NONBLOCK only kept a FIFO from hanging the open; reads of a regular file ignore it.
    Ok(file)
}

/// Open the canonical, checked directory `path` (for listing or as a parent), no symlinks.
pub(crate) fn open_dir(path: &Path) -> Result<OwnedFd, OpenError> {
    Ok(open_no_symlinks(path, libc::O_RDONLY | libc::O_DIRECTORY)?)
}

/// The path to list an opened directory by: its `/proc/self/fd` entry on Linux, which names the
/// very directory the handle holds; elsewhere the checked path.
pub(crate) fn listing_path(dir: &OwnedFd, checked: &Path) -> std::path::PathBuf {
    let by_fd = std::path::PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    if cfg!(target_os = "linux") && by_fd.exists() {
        by_fd
    } else {
        checked.to_path_buf()
    }
}

/// Open the canonical directory `dir`, creating the missing components below its deepest
/// existing ancestor one at a time (`mkdirat` then an O_NOFOLLOW open of what was made).
pub(crate) fn create_dirs(dir: &Path) -> Result<OwnedFd, OpenError> {
    match open_dir(dir) {
        Ok(fd) => return Ok(fd),
        Err(OpenError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {}
        Err(other) => return Err(other),
    }
    let parent = dir
        .parent()
        .ok_or_else(|| OpenError::Io(io::Error::other("the root directory is missing")))?;
    let name = dir
        .file_name()
        .ok_or_else(|| OpenError::Io(io::Error::other("a directory has no name")))?;
    let parent_fd = create_dirs(parent)?;
    let c = c_name(name).map_err(OpenError::Io)?;
    // SAFETY: an open directory and a NUL-terminated name; the result is checked.
    let made = unsafe { libc::mkdirat(parent_fd.as_raw_fd(), c.as_ptr(), 0o777) };
    if made != 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::AlreadyExists {
            return Err(OpenError::from_io(err));
        }
    }
    Ok(open_at(
        &parent_fd,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY,
    )?)
}

/// What is at `name` in `dir`, without following a symlink there.
pub(crate) fn stat_at(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<libc::stat>> {
    let c = c_name(name)?;
    // SAFETY: zeroed is a valid `stat` to be filled in.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open directory, a NUL-terminated name and a `stat` to fill; checked below.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc == 0 {
        return Ok(Some(st));
    }
    let err = io::Error::last_os_error();
    if err.kind() == io::ErrorKind::NotFound {
        Ok(None)
    } else {
        Err(err)
    }
}

/// Create `name` in `dir` exclusively (never an existing file or a symlink), mode 0666 less
/// umask.
pub(crate) fn create_new_at(dir: &OwnedFd, name: &OsStr, mode: u32) -> io::Result<File> {
    let c = c_name(name)?;
    // SAFETY: an open directory and a NUL-terminated name; the result is checked.
    let fd = check_fd(unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })?;
    Ok(File::from(fd))
}

/// Rename `from` to `to`, both in `dir`.
pub(crate) fn rename_at(dir: &OwnedFd, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (c_name(from)?, c_name(to)?);
    // SAFETY: an open directory and two NUL-terminated names; the result is checked.
    let rc =
        unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Remove `name` from `dir` (a leftover temporary file).
pub(crate) fn unlink_at(dir: &OwnedFd, name: &OsStr) {
    if let Ok(c) = c_name(name) {
        // SAFETY: an open directory and a NUL-terminated name; failure leaves a stray temp file,
        // which is named so nobody takes it for anything else.
        unsafe {
            libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0);
        }
    }
}

/// Open a file the scope has checked (its canonical path) for reading, race-free and refusing
/// hard-linked files, for readers outside this crate (`@file` attachments); the error's text is
/// a reason addressed to the person, naming the path as `shown`.
pub fn open_checked(path: &Path, shown: &str) -> Result<File, Unopenable> {
    open_read(path).map_err(|error| Unopenable {
        shown: shown.to_owned(),
        error,
    })
}

/// Open a checked, canonical regular file to read and append to, race-free like `open_checked`;
/// a file with more than one name is refused (appending through one name writes them all).
pub fn open_checked_append(path: &Path, shown: &str) -> Result<File, Unopenable> {
    let open = || -> Result<File, OpenError> {
        let fd = open_no_symlinks(path, libc::O_RDWR | libc::O_APPEND | libc::O_NONBLOCK)?;
        let file = File::from(fd);
        let meta = file.metadata().map_err(OpenError::Io)?;
        if meta.nlink() > 1 {
            return Err(OpenError::HardLinked(meta.nlink()));
        }
        Ok(file)
    };
    open().map_err(|error| Unopenable {
        shown: shown.to_owned(),
        error,
    })
}

/// Why `open_checked` did not open a file.
#[derive(Debug)]
pub struct Unopenable {
    shown: String,
    error: OpenError,
}

impl Unopenable {
    /// Whether the path changed under the check (a symlink appeared): an attack or a race, not
    /// a missing file.
    pub fn changed(&self) -> bool {
        matches!(self.error, OpenError::Changed)
    }
}

impl std::fmt::Display for Unopenable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.error.describe(&self.shown))
    }
}

impl std::error::Error for Unopenable {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The public open says why in the person's terms, naming the path as they typed it.
    #[test]
    fn open_checked_names_the_path_as_shown_and_knows_a_swapped_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("f.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("f.txt"), root.join("link")).unwrap();
        let err = open_checked(&root.join("link"), "@link").unwrap_err();
        assert!(err.changed(), "{err}");
        assert!(err.to_string().contains("\"@link\""), "{err}");
        let missing = open_checked(&root.join("gone"), "@gone").unwrap_err();
        assert!(!missing.changed());
        assert!(missing.to_string().contains("does not exist"), "{missing}");
        assert!(open_checked(&root.join("f.txt"), "@f.txt").is_ok());
    }

    #[test]
    fn a_symlink_anywhere_in_the_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/f.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("real/f.txt"), root.join("flink")).unwrap();
        assert!(open_read(&root.join("real/f.txt")).is_ok());
        for path in [root.join("link/f.txt"), root.join("flink")] {
            assert!(
                matches!(open_read(&path), Err(OpenError::Changed)),
                "{}",
                path.display()
            );
            assert!(matches!(
                walk_no_symlinks(&path, libc::O_RDONLY).map_err(OpenError::from_io),
                Err(OpenError::Changed)
            ));
        }
    }

    #[test]
    fn a_hard_linked_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "secret").unwrap();
        std::fs::hard_link(root.join("a.txt"), root.join("b.txt")).unwrap();
        assert!(matches!(
            open_read(&root.join("b.txt")),
            Err(OpenError::HardLinked(2))
        ));
    }

    #[test]
    fn missing_directories_are_made_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert!(create_dirs(&root.join("x/y/z")).is_ok());
        assert!(root.join("x/y/z").is_dir());
        std::os::unix::fs::symlink(root.join("x"), root.join("s")).unwrap();
        assert!(matches!(
            create_dirs(&root.join("s/new")),
            Err(OpenError::Changed)
        ));
        assert!(!root.join("x/new").exists());
    }
}
