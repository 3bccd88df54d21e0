//! Landlock on Linux: probing the ABI, building a ruleset, and restricting the child.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope as LandlockScope, path_beneath_rules,
};

use super::{SandboxError, Support};

/// The newest ABI this code asks for; older kernels get what they support (best effort), and
/// `probe` says which.
const TARGET: ABI = ABI::V6;

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the kernel's ABI.
pub(super) fn probe() -> Support {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the syscall only
    // returns a number (or fails); it reads and writes no memory of ours.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi >= 1 {
        return Support::Landlock {
            abi: u32::try_from(abi).unwrap_or(u32::MAX),
        };
    }
    let err = std::io::Error::last_os_error();
    Support::Unsupported(match err.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no Landlock (Linux 5.13 or later is needed)".into(),
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built in but disabled (add `landlock` to the kernel's `lsm=` boot \
             parameter)"
                .into()
        }
        _ => format!("the kernel refused the Landlock probe: {err}"),
    })
}

/// A ruleset granting read/execute under `read`, everything under `write`, and (unless
/// `network`) no TCP connect or bind; signals and abstract sockets scoped to the sandbox.
pub(super) fn ruleset(
    read: &[PathBuf],
    write: &[PathBuf],
    network: bool,
) -> Result<OwnedFd, SandboxError> {
    let setup = |e: landlock::RulesetError| SandboxError::Setup(e.to_string());
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET))
        .map_err(setup)?
        .scope(LandlockScope::Signal | LandlockScope::AbstractUnixSocket)
        .map_err(setup)?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET))
            .map_err(setup)?;
    }
    let created = ruleset
        .create()
        .map_err(setup)?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(TARGET)))
        .map_err(setup)?
        .add_rules(path_beneath_rules(write, AccessFs::from_all(TARGET)))
        .map_err(setup)?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| SandboxError::Setup("this kernel does not support Landlock".into()))
}

/// Between fork and exec: enter the namespaces and make the mounts (`jail.rs`), fork into the
/// new PID namespace, then in the command's process: no new privileges, the Landlock ruleset,
/// the system-call filter, and every inherited descriptor above stderr closed at exec. Only
/// system calls run in the child; everything they use was prepared before the fork. The
/// ruleset descriptor is close-on-exec, so the command does not inherit it.
pub(super) fn confine_on_exec(
    command: &mut tokio::process::Command,
    fd: OwnedFd,
    filter: super::seccomp::Program,
    jail: Option<super::jail::Jail>,
) {
    let raw = fd.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only makes system calls
    // (unshare, mount, fork, waitpid, prctl, landlock_restrict_self, close_range) on data the
    // closure owns; it touches no memory shared with other threads and allocates nothing. `fd`
    // stays open until the command is spawned because the closure owns it.
    unsafe {
        command.pre_exec(move || {
            let _keep = &fd;
            if let Some(jail) = &jail {
                jail.enter()?;
                super::jail::fork_and_supervise()?;
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, raw, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            filter.install()?;
            // A descriptor the pod opened without close-on-exec (or a library did) would hand
            // the command whatever is behind it.
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            Ok(())
        });
    }
}
