//! One request to a pod on this machine over a blocking socket, for commands that ask one thing
//! and exit (`seedpod notify`, `pause`, `resume`, `cancel`).
//!
//! Such a command's whole life is a few milliseconds, so what it sets up counts: no async
//! runtime is built, and the handshake and the request leave in one write. The protocol is the
//! one `Connection` speaks (`hello`, then the request, then frames until the reply with its id;
//! framed by the same `FrameCodec`), with the same deadlines and the same errors: the
//! handshake's first frame and the reply are judged by the functions `Connection` uses. Why a
//! second client at all: `docs/decisions.md`, "One-shot commands skip the async runtime".

use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use seedpod_protocol::{
    ClientMode, FrameCodec, MAX_FRAME_BYTES, Method, PROTOCOL_VERSION, PodName, Request, RequestId,
    ServerMsg, encode,
};
use tokio_util::bytes::BytesMut;
use tokio_util::codec::Decoder;

use crate::connection::{answer_to, frames_error, too_large, welcome_from};
use crate::deadline;
use crate::error::ClientError;
use crate::paths::Home;

/// Bytes read from the socket at a time: replies to one-shot requests are a few hundred bytes.
const READ_BUFFER_BYTES: usize = 4096;

/// Send `method` to pod `name` on a new control connection and return its reply (an `error`
/// reply is `ClientError::Refused`).
pub fn call_once(
    home: &Home,
    name: &PodName,
    client: &str,
    method: Method,
) -> Result<ServerMsg, ClientError> {
    home.check_runtime_dir()?;
    let pid = std::fs::read_to_string(home.lock_path(name))
        .ok()
        .and_then(|text| text.trim().parse().ok());
    let socket = home.socket_path(name);
    call_at(
        &socket,
        name,
        pid,
        deadline::reply_timeout(),
        client,
        method,
    )
}

/// `call_once` on the socket at `socket`, with `quick` as the deadline for quick answers.
fn call_at(
    socket: &Path,
    name: &PodName,
    pid: Option<u32>,
    quick: Duration,
    client: &str,
    method: Method,
) -> Result<ServerMsg, ClientError> {
    let not_answering = |waited: Duration, doing: String| ClientError::NotAnswering {
        name: name.to_string(),
        pid,
        waited,
        doing,
    };
    let stream = match connect(socket, quick) {
        Ok(stream) => stream,
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(ClientError::NotRunning {
                name: name.to_string(),
            });
        }
        // A full listen backlog (a wedged pod) makes connect wait until its send timeout.
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
            return Err(not_answering(quick, "when connecting".into()));
        }
        Err(err) => return Err(ClientError::io(socket, "connect to", err)),
    };

    // Ids as `Connection` gives them: 1 for hello, 2 for the request.
    let hello = Request {
        id: Some(RequestId::new(1)),
        method: Method::Hello {
            protocol: PROTOCOL_VERSION,
            client: client.to_string(),
            mode: ClientMode::Control,
        },
    };
    let id = RequestId::new(2);
    let wait = deadline::for_method(&method, quick);
    let doing = format!("to {}", method.name());
    let request = encode(&Request {
        id: Some(id),
        method,
    });
    // The pod reads frames in order, so the request can follow hello without waiting for the
    // welcome. One over the frame limit is not sent at all; the handshake still runs, so a
    // stopped or incompatible pod is reported as `Connection` reports it.
    let oversized = request.len() > MAX_FRAME_BYTES;
    let mut out = encode(&hello);
    out.push('\n');
    if !oversized {
        out.push_str(&request);
        out.push('\n');
    }
    let mut link = Link::new(stream);
    let handshake_ends = Instant::now() + quick;
    link.write(out.as_bytes(), quick)
        .map_err(|err| timed_out(err, || not_answering(quick, "to the handshake".into())))?;
    let first = link
        .message(handshake_ends)
        .map_err(|err| timed_out(err, || not_answering(quick, "to the handshake".into())))?;
    welcome_from(first, name)?;
    if oversized {
        return Err(ClientError::Setup(too_large(request.len())));
    }
    let reply_ends = Instant::now() + wait;
    loop {
        let msg = link
            .message(reply_ends)
            .map_err(|err| timed_out(err, || not_answering(wait, doing.clone())))?;
        if let Some(answer) = answer_to(id, msg, name) {
            return answer;
        }
    }
}

/// Why reading or writing stopped: the deadline passed, or the error to report.
enum Stop {
    Deadline,
    Failed(ClientError),
}

impl From<ClientError> for Stop {
    fn from(err: ClientError) -> Self {
        Stop::Failed(err)
    }
}

fn timed_out(stop: Stop, not_answering: impl FnOnce() -> ClientError) -> ClientError {
    match stop {
        Stop::Deadline => not_answering(),
        Stop::Failed(err) => err,
    }
}

/// The connection: the socket, bytes read and not yet framed, and the codec every client
/// frames with (line limit, UTF-8, parts joined).
struct Link {
    stream: UnixStream,
    buffer: BytesMut,
    codec: FrameCodec,
}

impl Link {
    fn new(stream: UnixStream) -> Link {
        Link {
            stream,
            buffer: BytesMut::with_capacity(READ_BUFFER_BYTES),
            codec: FrameCodec::for_client(),
        }
    }

    fn write(&mut self, bytes: &[u8], wait: Duration) -> Result<(), Stop> {
        self.stream
            .set_write_timeout(Some(wait))
            .map_err(ClientError::Transport)?;
        match self.stream.write_all(bytes) {
            Ok(()) => Ok(()),
            Err(err) if is_timeout(&err) => Err(Stop::Deadline),
            Err(err) => Err(Stop::Failed(ClientError::Transport(err))),
        }
    }

    /// The next whole message, or `None` when the pod closed the connection.
    fn message(&mut self, deadline: Instant) -> Result<Option<ServerMsg>, Stop> {
        let mut chunk = [0u8; READ_BUFFER_BYTES];
        loop {
            if let Some(text) = self.codec.decode(&mut self.buffer).map_err(frames_error)? {
                return decoded(&text).map(Some);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Stop::Deadline);
            }
            self.stream
                .set_read_timeout(Some(left))
                .map_err(ClientError::Transport)?;
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return match self.codec.decode_eof(&mut self.buffer) {
                        Ok(Some(text)) => decoded(&text).map(Some),
                        Ok(None) => Ok(None),
                        Err(err) => Err(Stop::Failed(frames_error(err))),
                    };
                }
                Ok(n) => self.buffer.extend_from_slice(&chunk[..n]),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) if is_timeout(&err) => return Err(Stop::Deadline),
                Err(err) => return Err(Stop::Failed(ClientError::Transport(err))),
            }
        }
    }
}

fn decoded(text: &str) -> Result<ServerMsg, Stop> {
    serde_json::from_str(text).map_err(|e| {
        Stop::Failed(ClientError::Protocol(format!(
            "undecodable frame from pod: {e}"
        )))
    })
}

/// A read or write timeout, as the socket reports it.
fn is_timeout(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Connect to the Unix socket at `path`, waiting at most `wait` when its listen backlog is full
/// (then the error is `WouldBlock`). The standard library's connect has no timeout, so the
/// socket is made by hand with a send timeout, which Linux applies to that wait.
fn connect(path: &Path, wait: Duration) -> io::Result<UnixStream> {
    // SAFETY: an empty `sockaddr_un` is all zero bytes, a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    let bytes = path.as_os_str().as_bytes();
    // One byte stays zero: the path is NUL-terminated.
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket path is too long",
        ));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (slot, byte) in addr.sun_path.iter_mut().zip(bytes) {
        *slot = *byte as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    // SAFETY: socket(2) has no memory preconditions; the descriptor it returns is ours alone,
    // so `OwnedFd` may own (and close) it.
    let fd = unsafe {
        let raw = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(raw)
    };
    let stream = UnixStream::from(fd);
    // Never zero: a zero send timeout means "wait forever".
    stream.set_write_timeout(Some(wait.max(Duration::from_millis(1))))?;
    loop {
        // SAFETY: `addr` is a valid `sockaddr_un` of which `len` bytes are meaningful, and the
        // descriptor is open for as long as `stream` lives.
        let done = unsafe {
            libc::connect(
                std::os::fd::AsRawFd::as_raw_fd(&stream),
                (&raw const addr).cast::<libc::sockaddr>(),
                len as libc::socklen_t,
            )
        };
        if done == 0 {
            return Ok(stream);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

#[cfg(test)]
mod tests;
