//! The system calls a sandboxed command may not make, as a seccomp filter (classic BPF) built in
//! the pod before the command is spawned and installed between fork and exec.
//!
//! Landlock governs files and TCP; it does not see these, and each is a way out:
//!
//! - **Unix sockets** (`socket(AF_UNIX)`): a pathname socket can be connected to without any
//!   file access Landlock checks, and behind them are the person's channels — every pod's
//!   control socket (a sandboxed script could answer its own approval), tmux and screen servers,
//!   the session bus and the systemd user manager (both start programs outside the sandbox), the
//!   Docker daemon. `socketpair` stays allowed (it reaches nothing but its other end), except for
//!   datagram pairs, whose `sendto` can still name a socket on disk.
//! - **Other socket families**: with the network off only netlink (the kernel's own interface
//!   and routing tables) is left; with it on, IPv4 and IPv6 as well. Raw and packet sockets,
//!   and every family the kernel adds later, are refused either way.
//! - **io_uring**: its operations (connect, open, sendmsg …) run without passing this filter.
//! - **`TIOCSTI` and `TIOCLINUX`**: they push keystrokes into a terminal's input.
//! - **Any other architecture's calls** (32-bit and x32 calls on x86-64): their numbers mean
//!   other calls, so they would slip past the rules above.
//!
//! Refusals return an error (EACCES for sockets, as Landlock's are; ENOSYS for io_uring, which
//! makes libraries fall back to ordinary calls), never kill: glibc opens a Unix socket to look
//! for nscd on every user lookup, and `ls -l` must keep working.

/// `struct seccomp_data`: where the call number, the architecture and the arguments are.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// The low 32 bits of argument `n` (little-endian, which every architecture we build for is).
const fn offset_arg(n: u32) -> u32 {
    16 + 8 * n
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// The x32 ABI's calls on x86-64 carry this bit in their number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Whether this architecture has a filter here; elsewhere the sandbox is not offered.
pub(super) const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// A filter program, ready to install.
pub(crate) struct Program(Vec<libc::sock_filter>);

const fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LOAD: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JEQ: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const JGE: u32 = libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K;
const AND: u32 = libc::BPF_ALU | libc::BPF_AND | libc::BPF_K;
const RET: u32 = libc::BPF_RET | libc::BPF_K;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const fn errno(code: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (code as u32 & libc::SECCOMP_RET_DATA)
}

/// Socket type bits (`SOCK_NONBLOCK`, `SOCK_CLOEXEC` are above them).
const SOCK_TYPE_MASK: u32 = 0xf;

/// Builds the program as a list of blocks, each ending in a return, so jumps stay local.
struct Builder(Vec<libc::sock_filter>);

impl Builder {
    fn push(&mut self, op: libc::sock_filter) {
        self.0.push(op);
    }

    /// If the call is `nr`, run `block` (which must return); otherwise skip it.
    fn on_call(&mut self, nr: libc::c_long, block: Vec<libc::sock_filter>) {
        let skip = u8::try_from(block.len()).unwrap_or(u8::MAX);
        self.push(stmt(LOAD, OFFSET_NR));
        self.push(jump(JEQ, nr as u32, 0, skip));
        self.0.extend(block);
    }
}

/// Return `allow` when the loaded value is one of `values`, `deny` otherwise.
fn one_of(values: &[u32], allow: u32, deny: u32) -> Vec<libc::sock_filter> {
    let mut block = Vec::new();
    let n = values.len();
    for (i, value) in values.iter().enumerate() {
        // On a match jump to the `allow` return, which follows the `deny` return.
        let to_allow = u8::try_from(n - i).unwrap_or(u8::MAX);
        block.push(jump(JEQ, *value, to_allow, 0));
    }
    block.push(stmt(RET, deny));
    block.push(stmt(RET, allow));
    block
}

impl Program {
    /// The filter for one sandbox: `network` decides which socket families remain.
    pub(crate) fn new(network: bool) -> Program {
        let mut b = Builder(Vec::new());
        // Only this architecture's calls.
        b.push(stmt(LOAD, OFFSET_ARCH));
        b.push(jump(JEQ, AUDIT_ARCH, 1, 0));
        b.push(stmt(RET, errno(libc::ENOSYS)));
        #[cfg(target_arch = "x86_64")]
        {
            b.push(stmt(LOAD, OFFSET_NR));
            b.push(jump(JGE, X32_SYSCALL_BIT, 0, 1));
            b.push(stmt(RET, errno(libc::ENOSYS)));
        }

        let mut families = vec![libc::AF_NETLINK as u32];
        if network {
            families.extend([libc::AF_INET as u32, libc::AF_INET6 as u32]);
        }
        let mut socket = vec![stmt(LOAD, offset_arg(0))];
        socket.extend(one_of(&families, ALLOW, errno(libc::EACCES)));
        b.on_call(libc::SYS_socket, socket);

        // socketpair(AF_UNIX, SOCK_DGRAM | flags, …) is refused; every other pair is allowed.
        let socketpair = vec![
            stmt(LOAD, offset_arg(0)),
            jump(JEQ, libc::AF_UNIX as u32, 0, 3),
            stmt(LOAD, offset_arg(1)),
            stmt(AND, SOCK_TYPE_MASK),
            jump(JEQ, libc::SOCK_DGRAM as u32, 1, 0),
            stmt(RET, ALLOW),
            stmt(RET, errno(libc::EACCES)),
        ];
        b.on_call(libc::SYS_socketpair, socketpair);

        for nr in [
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            b.on_call(nr, vec![stmt(RET, errno(libc::ENOSYS))]);
        }

        let mut ioctl = vec![stmt(LOAD, offset_arg(1))];
        ioctl.extend(one_of(
            &[libc::TIOCSTI as u32, libc::TIOCLINUX as u32],
            errno(libc::EPERM),
            ALLOW,
        ));
        b.on_call(libc::SYS_ioctl, ioctl);

        b.push(stmt(RET, ALLOW));
        Program(b.0)
    }

    /// Install the filter on the calling thread (and what it starts). Between fork and exec:
    /// one `prctl`, no allocation. `PR_SET_NO_NEW_PRIVS` must already be set.
    pub(crate) fn install(&self) -> std::io::Result<()> {
        let prog = libc::sock_fprog {
            len: u16::try_from(self.0.len()).unwrap_or(u16::MAX),
            filter: self.0.as_ptr().cast_mut(),
        };
        // SAFETY: `prog` points at our filter, which outlives the call; the kernel copies it.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                &prog as *const libc::sock_fprog,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The program is small (the kernel's limit is 4,096 instructions) and every jump lands
    /// inside it.
    #[test]
    fn every_jump_lands_inside_the_program() {
        for network in [true, false] {
            let program = Program::new(network);
            assert!(program.len() < 100, "{}", program.len());
            for (i, op) in program.0.iter().enumerate() {
                if u32::from(op.code) & 0x07 == libc::BPF_JMP {
                    let end = program.0.len();
                    assert!(i + 1 + usize::from(op.jt) < end, "jt of {i}");
                    assert!(i + 1 + usize::from(op.jf) < end, "jf of {i}");
                }
            }
            let last = program.0.last().expect("a program");
            assert_eq!(u32::from(last.code), RET);
        }
    }
}
