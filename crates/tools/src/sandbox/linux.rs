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

/// Between fork and exec: no new privileges, then enter the ruleset. Only two syscalls run in
/// the child, both async-signal-safe; the descriptor is close-on-exec, so the command does not
/// inherit it.
pub(super) fn confine_on_exec(command: &mut tokio::process::Command, fd: OwnedFd) {
    let raw = fd.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only calls prctl(2) and
    // landlock_restrict_self(2), which are async-signal-safe and touch no memory shared with
    // other threads. `fd` stays open in the parent until the command is spawned because the
    // closure owns it.
    unsafe {
        command.pre_exec(move || {
            let _keep = &fd;
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, raw, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
