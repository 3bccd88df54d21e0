//! The exec lease: a throwaway pod lives only as long as the `seedpod exec` that made it
//! (docs/exec.md §When exec itself dies).
//!
//! exec makes a pipe and keeps its write end, close-on-exec so that nothing else exec starts
//! holds it; the pod inherits only the read end, as `pod serve --exec-lease FD`. The kernel
//! closes the write end when exec exits, however it exits — `kill -9` included — and the pod's
//! read of the pipe returns end-of-file: no polling, no pid that could be reused. An exec that
//! ends normally with `--keep` first writes one byte, which releases the pod to live on.

use std::io::Write as _;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

use seedpod_client::{Connection, Home};
use seedpod_protocol::{ClientMode, Method, PodName};
use tokio::io::AsyncReadExt as _;

use crate::pods::CLIENT_NAME;

/// What exec writes to let its pod go on after exec exits (`--keep`).
const RELEASE: u8 = b'k';

/// exec's side: the pipe whose write end it holds until it exits.
pub struct Lease {
    writer: std::io::PipeWriter,
    /// The read end, until the pod has inherited it.
    reader: Option<std::io::PipeReader>,
}

impl Lease {
    pub fn new() -> std::io::Result<Lease> {
        let (reader, writer) = std::io::pipe()?;
        Ok(Lease {
            writer,
            reader: Some(reader),
        })
    }

    /// The read end's descriptor, for the pod to inherit (`Launch::inherit_fd`).
    pub fn pod_fd(&self) -> Option<RawFd> {
        self.reader.as_ref().map(|r| r.as_raw_fd())
    }

    /// The pod has its copy of the read end (or never will): exec's own is closed, so the
    /// pod's is the only one.
    pub fn launched(&mut self) {
        self.reader = None;
    }

    /// Let the pod live on after exec exits.
    pub fn release(mut self) -> std::io::Result<()> {
        self.writer.write_all(&[RELEASE])
    }
}

/// Why a descriptor cannot be a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseError {
    Standard(RawFd),
    NotOpen(RawFd),
    NotPipe(RawFd),
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (fd, what) = match self {
            LeaseError::Standard(fd) => (
                fd,
                "descriptors 0 to 2 are the pod's standard streams, not a lease",
            ),
            LeaseError::NotOpen(fd) => (fd, "no such open descriptor"),
            LeaseError::NotPipe(fd) => (fd, "not a pipe"),
        };
        write!(
            f,
            "--exec-lease {fd}: {what}; `seedpod exec` passes the lease itself"
        )
    }
}

/// The pod's side: take the inherited read end, refusing a descriptor that is not an open
/// pipe (only then is it ours to own and close), and keep it from the pod's own children.
pub fn adopt(fd: RawFd) -> Result<OwnedFd, LeaseError> {
    if (0..=2).contains(&fd) {
        return Err(LeaseError::Standard(fd));
    }
    // SAFETY: fstat writes only into the zeroed struct we own; an fd that is not open fails.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return Err(LeaseError::NotOpen(fd));
    }
    if stat.st_mode & libc::S_IFMT != libc::S_IFIFO {
        return Err(LeaseError::NotPipe(fd));
    }
    // SAFETY: F_SETFD on an open fd only sets its flags: a shell command or a child pod the
    // pod starts must not hold the lease.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(LeaseError::NotOpen(fd));
    }
    // SAFETY: the fd is open, a pipe, and nothing else in this process knows its number: it
    // came from our parent through argv, and `serve` adopts it once, before anything opens.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// How the lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// exec released the pod (`--keep`): it lives on.
    Released,
    /// exec is gone without a word: killed, or crashed.
    Lost,
}

/// Wait until the lease ends.
pub async fn watch(fd: OwnedFd) -> Ended {
    let Ok(mut pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) else {
        return Ended::Lost;
    };
    let mut byte = [0u8; 1];
    match pipe.read(&mut byte).await {
        Ok(1) if byte[0] == RELEASE => Ended::Released,
        Ok(_) | Err(_) => Ended::Lost,
    }
}

/// What a pod does when its exec is gone: stop (and then it removes itself), or with `--keep`
/// only cancel the run nobody follows, staying for inspection. It asks through its own socket,
/// so both take the path a person's `seedpod stop` or `cancel` takes.
pub async fn end_orphan(home: &Home, name: &PodName, keep: bool) {
    tracing::warn!(
        event = "exec_gone",
        keep,
        "the seedpod exec that started this pod is gone"
    );
    let Ok(mut conn) = Connection::connect(home, name, CLIENT_NAME, ClientMode::Control).await
    else {
        return;
    };
    let method = if keep {
        Method::Cancel
    } else {
        Method::Shutdown
    };
    let _ = conn.call(method).await;
}

#[cfg(test)]
mod tests {
    use std::os::fd::IntoRawFd as _;

    use super::*;

    #[test]
    fn only_an_open_pipe_beyond_the_standard_streams_is_adopted() {
        for fd in 0..=2 {
            assert!(matches!(adopt(fd), Err(LeaseError::Standard(_))));
        }
        let file = tempfile::tempfile().unwrap().into_raw_fd();
        let err = adopt(file).unwrap_err();
        assert!(matches!(err, LeaseError::NotPipe(_)), "{err}");
        // SAFETY: the fd came from into_raw_fd above and is closed once.
        drop(unsafe { OwnedFd::from_raw_fd(file) });
        // Not the number just closed: tests run on parallel threads, and another test's pipe
        // may take it at once (adopting that one would close it under its owner). No process
        // can hold a descriptor this high (the kernel's ceiling, `fs.nr_open`, is below 2^30).
        let err = adopt(RawFd::MAX).unwrap_err();
        assert!(matches!(err, LeaseError::NotOpen(_)), "{err}");
        assert!(err.to_string().contains("no such open descriptor"), "{err}");
    }

    /// A copy of the lease's read end, adopted as the pod adopts the one it inherits.
    fn adopt_reader(lease: &Lease) -> OwnedFd {
        let reader = lease.reader.as_ref().unwrap().try_clone().unwrap();
        adopt(reader.into_raw_fd()).unwrap()
    }

    #[tokio::test]
    async fn a_dropped_writer_is_lost_and_a_release_is_not() {
        let lease = Lease::new().unwrap();
        let fd = adopt_reader(&lease);
        drop(lease);
        assert_eq!(watch(fd).await, Ended::Lost);

        let lease = Lease::new().unwrap();
        let fd = adopt_reader(&lease);
        lease.release().unwrap();
        assert_eq!(watch(fd).await, Ended::Released);
    }

    #[tokio::test]
    async fn another_byte_is_not_a_release() {
        let mut lease = Lease::new().unwrap();
        let fd = adopt_reader(&lease);
        lease.writer.write_all(b"x").unwrap();
        assert_eq!(watch(fd).await, Ended::Lost);
    }
}
