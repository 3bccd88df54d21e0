//! Exit codes: 0 success, 1 failure, 2 the pod named does not exist or is not running.

use std::fmt;
use std::io::Write as _;

/// An error that carries the process exit code it should produce.
#[derive(Debug)]
pub struct Exit {
    pub code: i32,
    pub message: String,
}

impl Exit {
    pub fn usage(message: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(Exit {
            code: 2,
            message: message.into(),
        })
    }

    pub fn failure(message: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(Exit {
            code: 1,
            message: message.into(),
        })
    }

    /// Exit `code` with nothing more to say (what failed said it already: a command run on
    /// another machine).
    pub fn code(code: i32) -> anyhow::Error {
        anyhow::Error::new(Exit {
            code,
            message: String::new(),
        })
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// The exit code for an error: its own if it is an `Exit`, 2 for a pod that is not running,
/// 1 otherwise.
pub fn code_of(err: &anyhow::Error) -> i32 {
    if let Some(exit) = err.downcast_ref::<Exit>() {
        return exit.code;
    }
    if let Some(seedpod_client::ClientError::NotRunning { .. }) =
        err.downcast_ref::<seedpod_client::ClientError>()
    {
        return 2;
    }
    1
}

/// End the process as every seedpod command ends on an error: `seedpod: ` and the error's
/// chain on stderr, control characters escaped (what fails may quote a pod or a file), and the
/// error's exit code.
pub fn fail(err: &anyhow::Error) -> ! {
    let message = format!("{err:#}");
    // Not `eprintln!`: it panics when stderr cannot be written (a pod's stderr file on a full
    // disk), which would turn a clear failure into exit 101.
    if !message.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "seedpod: {}",
            seedpod_protocol::printable_text(&message)
        );
    }
    std::process::exit(code_of(err));
}
