//! Telling the person when a sandboxed command reached for their channels. The reach itself is
//! impossible (no Unix socket can be opened, seedpod's directories are covered: `seccomp.rs`,
//! `jail.rs`); what is left is to say that it was tried, because a model that writes a client
//! for a pod's socket is worth a person's attention. The kernel does not say which socket a
//! refused `socket(2)` was meant for (glibc opens one for nscd on every user lookup, so refusals
//! alone mean nothing), so the signs are read from what the command says: the path of one of
//! seedpod's directories in its command line or its errors, or the `seedpod` CLI's own refusal
//! ([`CLI_REFUSAL`]). A disguised attempt fails the same way, only without the alert.

use std::path::PathBuf;

/// What the `seedpod` CLI says, and exits with, when it finds itself in a sandboxed command.
pub const CLI_REFUSAL: &str = "this command runs inside a pod's shell sandbox, which cannot \
                               reach any pod or speak for the person";

/// Starts the note a result carries when the command reached for the person's channels; the
/// pod alerts the person.
pub const REACH_NOTE: &str = "[sandbox: the command tried to reach seedpod's sockets or state";

/// The whole note (see `watch::finding_note`).
pub(crate) const NOTE: &str = "[sandbox: the command tried to reach seedpod's sockets or state, \
                               through which a person answers approvals and sends input; \
                               commands cannot, and the person has been alerted]";

/// Whether a sandboxed command showed signs of reaching for seedpod.
pub(crate) fn reached(command: &str, stderr: &str, hidden: &[PathBuf]) -> bool {
    let names_a_dir = hidden.iter().any(|dir| {
        let dir = dir.to_string_lossy();
        !dir.is_empty() && (command.contains(dir.as_ref()) || stderr.contains(dir.as_ref()))
    });
    names_a_dir || stderr.contains(CLI_REFUSAL)
}

/// Whether this process is inside a sandboxed command: it may not open a Unix socket at all.
pub fn inside() -> bool {
    // SAFETY: socket(2) and close(2) on a descriptor we own.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd >= 0 {
            libc::close(fd);
            return false;
        }
        std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_socket_directory_or_the_clis_refusal_is_a_sign_and_an_nscd_lookup_is_not() {
        let hidden = vec![PathBuf::from("/run/user/1000/seedpod")];
        assert!(reached(
            "perl client.pl /run/user/1000/seedpod/p.sock",
            "",
            &hidden
        ));
        assert!(reached(
            "sh x.sh",
            &format!("seedpod: {CLI_REFUSAL}"),
            &hidden
        ));
        assert!(!reached("ls -l", "", &hidden));
        assert!(!reached("ls -l", "", &[PathBuf::new()]));
        assert!(NOTE.starts_with(REACH_NOTE));
        assert!(!inside(), "the test itself is not sandboxed");
    }
}
