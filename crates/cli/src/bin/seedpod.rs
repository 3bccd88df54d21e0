//! `seedpod`, the command people type. It runs the one-shot commands for a pod on this machine
//! itself (`seedpod_cli::quick`) and hands every other command line, unchanged, to
//! `seedpod-core` in the same directory, which replaces this process (`exec`, no child left
//! between the caller and the core: signals, exit codes, the terminal and standard input go
//! straight to it).
//!
//! Why a separate program: `seedpod notify` must cost no more than `tmux display-message`, and
//! most of that cost is the kernel and the dynamic loader preparing an executable, which grows
//! with the executable. This one links only what the one-shot path needs.
//! docs/decisions.md, "A small front binary for one-shot commands".

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use seedpod_cli::{exit, quick};
use seedpod_client::Home;

/// The core's file name, beside this one.
const CORE: &str = "seedpod-core";

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some(quick) = args.get(1..).and_then(quick::recognise)
        // Inside a pod's shell sandbox the core says why nothing can be reached from there.
        && !seedpod_tools::inside_sandbox()
        // A home that cannot be found is the core's to report, in the core's words.
        && let Ok(home) = Home::from_env()
    {
        match quick::run(&home, quick) {
            Ok(()) => std::process::exit(0),
            Err(err) => exit::fail(&err),
        }
    }
    exec_core(&args)
}

/// Replace this process with the core, given the same arguments (the program name included,
/// so `ps` shows what the person typed). Returns only to report that it could not.
fn exec_core(args: &[OsString]) -> ! {
    let core = match core_path(args.first()) {
        Ok(core) => core,
        Err(err) => exit::fail(&anyhow::anyhow!(
            "cannot find where this seedpod is installed ({err}), so cannot run {CORE} beside it"
        )),
    };
    let mut command = Command::new(&core);
    if let Some(program) = args.first() {
        command.arg0(program);
    }
    let err = command.args(args.iter().skip(1)).exec();
    exit::fail(&anyhow::anyhow!(
        "cannot run {}: {err}; seedpod is two programs, `seedpod` and `{CORE}`, installed side by \
         side (`cargo build --release -p seedpod` builds both into target/release/)",
        core.display()
    ))
}

/// `seedpod-core` in the directory of this executable, as the kernel names it (symbolic links
/// followed, so a link to `seedpod` from a directory on the PATH finds the real one's core).
/// Where the kernel cannot say (no `/proc` mounted), the directory of the path this was run
/// by, when it was run by a path: whoever chose that path could run any program anyway.
fn core_path(program: Option<&OsString>) -> std::io::Result<PathBuf> {
    match std::env::current_exe() {
        Ok(exe) => Ok(exe.with_file_name(CORE)),
        Err(err) => match program.map(Path::new) {
            Some(path) if path.components().count() > 1 => Ok(path.with_file_name(CORE)),
            _ => Err(err),
        },
    }
}
