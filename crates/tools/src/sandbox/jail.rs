//! The namespaces a sandboxed command runs in: what Landlock cannot do, a private view of the
//! filesystem and a process tree of its own can.
//!
//! - **A user namespace** (uid and gid mapped to themselves) so an unprivileged pod may make
//!   the others; it also leaves a command run by root with no capability outside it.
//! - **A mount namespace** in which the protected files of each write root that exist
//!   (`.git/config`, `.git/hooks`, `.seedpod`, … — `protect.rs`) are bind-mounted read-only, so
//!   a write to them fails inside the command instead of being noticed after it, and seedpod's
//!   own directories (config, data, state, sockets) are covered by an empty tmpfs.
//! - **A PID namespace** whose first process is the command's shell: when it exits, or the
//!   pod kills it, the kernel kills everything else in the namespace — double forks, `setsid`
//!   and `nohup` included. Nothing the command starts outlives the call.
//! - **A network namespace** when the network is off: no interface but a loopback that is down,
//!   so no socket family and no send path (UDP, TCP Fast Open, MPTCP, raw) reaches anything.
//!
//! Between fork and exec the child may only make system calls (no allocation, no locks): every
//! path, map and flag is prepared here first. The child enters the namespaces and makes the
//! mounts, then forks once more: that process is PID 1 of the new namespace and goes on to
//! confine itself (Landlock, seccomp) and exec the command, while the one in between only waits
//! for it and exits with its status, so the pod sees the command's own exit code.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::SandboxError;

/// Mount flags a bind mount must keep when remounted read-only from a user namespace: the
/// kernel refuses to drop flags the original mount was locked with.
const LOCKED_FLAGS: libc::c_ulong = libc::MS_NOSUID
    | libc::MS_NODEV
    | libc::MS_NOEXEC
    | libc::MS_NOATIME
    | libc::MS_NODIRATIME
    | libc::MS_RELATIME;

/// Everything the child needs, prepared before the fork.
pub(crate) struct Jail {
    uid_map: CString,
    gid_map: CString,
    /// Existing protected paths, with the flags their mount must keep.
    read_only: Vec<(CString, libc::c_ulong)>,
    /// seedpod's own directories, covered by an empty tmpfs.
    hidden: Vec<CString>,
    /// A network namespace of its own (the network is off).
    isolate_network: bool,
}

fn c_path(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Setup(format!("{} has a NUL byte", path.display())))
}

/// The flags of the mount `path` is on, as `mount(2)` spells them.
fn mount_flags(path: &Path) -> Result<libc::c_ulong, SandboxError> {
    let c = c_path(path)?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a valid C string and `stat` has room for the result.
    let rc = unsafe { libc::statvfs(c.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return Err(SandboxError::Setup(format!(
            "cannot read the mount flags of {}: {}",
            path.display(),
            io::Error::last_os_error()
        )));
    }
    // SAFETY: statvfs succeeded, so the struct is filled in.
    let stat = unsafe { stat.assume_init() };
    // The ST_* flags have the MS_* values.
    Ok(stat.f_flag as libc::c_ulong & LOCKED_FLAGS)
}

impl Jail {
    pub(crate) fn new(
        read_only: &[PathBuf],
        hidden: &[PathBuf],
        isolate_network: bool,
    ) -> Result<Jail, SandboxError> {
        // SAFETY: getuid/getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let map = |id: u32| CString::new(format!("{id} {id} 1\n")).unwrap_or_default();
        let mut protected = Vec::new();
        for path in read_only {
            // A protected path that does not exist cannot be mounted over; the watch sees it
            // appear (`watch.rs`) and the call removes it.
            if std::fs::symlink_metadata(path).is_err() {
                continue;
            }
            protected.push((c_path(path)?, mount_flags(path)?));
        }
        let hidden = hidden
            .iter()
            .filter(|p| p.is_dir())
            .map(|p| c_path(p))
            .collect::<Result<_, _>>()?;
        Ok(Jail {
            uid_map: map(uid),
            gid_map: map(gid),
            read_only: protected,
            hidden,
            isolate_network,
        })
    }

    fn namespaces(&self) -> libc::c_int {
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
        if self.isolate_network {
            flags |= libc::CLONE_NEWNET;
        }
        flags
    }

    /// Between fork and exec: enter the namespaces and make the mounts. Only system calls.
    pub(crate) fn enter(&self) -> io::Result<()> {
        // SAFETY (all calls below): plain system calls on C strings prepared before the fork;
        // nothing is allocated and no lock is taken.
        unsafe {
            check(libc::unshare(self.namespaces()))?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", self.uid_map.as_bytes())?;
            write_file(c"/proc/self/gid_map", self.gid_map.as_bytes())?;
            // Our mounts stay ours: nothing propagates back to the person's namespace.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for (path, flags) in &self.read_only {
                check(libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                check(libc::mount(
                    std::ptr::null(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | flags,
                    std::ptr::null(),
                ))?;
            }
            for path in &self.hidden {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                    c"size=4k,mode=0500".as_ptr().cast(),
                ))?;
            }
        }
        Ok(())
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `open` + `write` + `close`, for the `/proc/self` maps (one write each, as the kernel wants).
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is a C string; `bytes` is valid for its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if written < 0 || written as usize != bytes.len() {
            return Err(err);
        }
    }
    Ok(())
}

/// Fork once more. The caller returns in the new child (PID 1 of the namespace, which goes on
/// to exec the command); the process in between never returns: it waits for that child and
/// exits with its status. Call after [`Jail::enter`].
pub(crate) fn fork_and_supervise() -> io::Result<()> {
    // SAFETY: fork in a single-threaded child (we are between fork and exec already).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // The command. If the process in between dies (the pod killed the group, or the
        // call's timeout did), so does this one, and with it the whole namespace.
        // SAFETY: prctl with integer arguments.
        unsafe {
            check(libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ))?;
        }
        return Ok(());
    }
    supervise(pid)
}

/// The process between the pod and the command: it holds nothing (every descriptor closed, so
/// the command's output pipes end when the command's processes do), waits, and passes on how
/// the command ended.
fn supervise(child: libc::pid_t) -> ! {
    // SAFETY: system calls only; `status` and `action` are ours.
    unsafe {
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        // SIGTERM (the pod's timeout) interrupts the wait below: the command's first process is
        // killed, which makes the kernel kill the rest of its namespace, and the wait returns
        // only once all of them are gone.
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = interrupted as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut());
        let mut status: libc::c_int = 0;
        loop {
            let r = libc::waitpid(child, &mut status, 0);
            if r == child {
                break;
            }
            if r < 0 && *libc::__errno_location() == libc::EINTR {
                libc::kill(child, libc::SIGKILL);
                continue;
            }
            if r < 0 {
                libc::_exit(125);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            // End the same way, so the pod reports the signal the command died of.
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal);
        }
        libc::_exit(125)
    }
}

/// The supervisor's SIGTERM handler: nothing to do but interrupt `waitpid`.
extern "C" fn interrupted(_: libc::c_int) {}

/// Whether this machine lets a process make the namespaces above: tried once in a throwaway
/// child (user namespaces can be disabled or restricted, as Ubuntu's AppArmor policy does).
pub(crate) fn probe() -> Result<(), String> {
    const STEPS: [&str; 5] = [
        "create a user, mount and PID namespace",
        "map the user id into it",
        "make its mounts private",
        "mount a read-only bind in it",
        "fork into the PID namespace",
    ];
    // SAFETY: the child makes system calls only and leaves with _exit; the parent waits for it.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "cannot fork to test namespaces: {}",
            io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        // SAFETY: system calls only, then _exit.
        unsafe { libc::_exit(probe_child()) }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    if r != pid || !libc::WIFEXITED(status) {
        return Err("the namespace test process did not finish".into());
    }
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        code => {
            let step = usize::try_from(code >> 4)
                .ok()
                .and_then(|i| STEPS.get(i))
                .copied()
                .unwrap_or("set up namespaces");
            Err(format!(
                "this machine does not let seedpod {step} (unprivileged user namespaces are \
                 disabled or restricted; see docs/sandbox.md)"
            ))
        }
    }
}

/// The probe's child: each step's failure exits with `step << 4 | 1`.
unsafe fn probe_child() -> libc::c_int {
    let fail = |step: libc::c_int| (step << 4) | 1;
    // SAFETY: system calls on static C strings and stack buffers.
    unsafe {
        let uid = libc::getuid();
        let gid = libc::getgid();
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) != 0 {
            return fail(0);
        }
        let mut buf = [0u8; 32];
        let _ = write_file(c"/proc/self/setgroups", b"deny");
        let n = format_map(&mut buf, uid);
        if write_file(c"/proc/self/uid_map", &buf[..n]).is_err() {
            return fail(1);
        }
        let n = format_map(&mut buf, gid);
        if write_file(c"/proc/self/gid_map", &buf[..n]).is_err() {
            return fail(1);
        }
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return fail(2);
        }
        if libc::mount(
            c"/".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) != 0
        {
            return fail(3);
        }
        let pid = libc::fork();
        if pid < 0 {
            return fail(4);
        }
        if pid == 0 {
            libc::_exit(0);
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        0
    }
}

/// `"ID ID 1\n"` into `buf` without allocating; returns its length.
fn format_map(buf: &mut [u8; 32], id: u32) -> usize {
    let mut digits = [0u8; 10];
    let mut n = 0;
    let mut rest = id;
    loop {
        digits[n] = b'0' + (rest % 10) as u8;
        n += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut len = 0;
    for _ in 0..2 {
        for i in (0..n).rev() {
            buf[len] = digits[i];
            len += 1;
        }
        buf[len] = b' ';
        len += 1;
    }
    buf[len] = b'1';
    buf[len + 1] = b'\n';
    len + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_formatted_without_allocating() {
        let mut buf = [0u8; 32];
        let n = format_map(&mut buf, 0);
        assert_eq!(&buf[..n], b"0 0 1\n");
        let n = format_map(&mut buf, 4_294_967_295);
        assert_eq!(&buf[..n], b"4294967295 4294967295 1\n");
    }
}
