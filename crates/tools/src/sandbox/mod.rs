//! The `shell` sandbox: each command runs confined by Landlock to what the pod's scope allows.
//!
//! - **Writes** only under the scope's write roots and a private temporary directory made for
//!   the pod (its commands get it as `TMPDIR`), plus the terminal-ish device files
//!   (`/dev/null`, `/dev/tty`, `/dev/pts`). Not `/tmp` itself: other users' and other projects'
//!   files live there, and a project checked out under `/tmp` would be writable whole.
//! - **Reads and execution** under the scope's read and write roots, the system directories
//!   (`/usr`, `/bin`, `/lib*`, `/etc`, `/opt`, `/proc`, `/sys`, `/dev`, `/run`, `/nix`, `/snap`) and the toolchain directories of the person's home (`~/.cargo`, `~/.rustup`, …);
//!   the rest of the home directory (keys, other projects) is not readable.
//! - **Network**: with `network = false`, TCP `connect` and `bind` are refused (Landlock ABI 4+).
//! - **Signals and abstract Unix sockets** are scoped to the command's own processes (ABI 6+),
//!   so a command cannot signal the pod or other programs of the person.
//!
//! Not enforced (see `docs/sandbox.md`): `deny` roots inside a readable root (Landlock only
//! grants, it cannot carve out), roots lent to a child pod (still writable by the parent's
//! shell), UDP and Unix-domain sockets on the filesystem, and anything on a kernel without
//! Landlock (the pod says so at start).
//!
//! How: the ruleset is built in the pod (which allocates and opens the paths) before the command
//! is spawned; between fork and exec the child only calls `prctl(PR_SET_NO_NEW_PRIVS)` and
//! `landlock_restrict_self` on the prepared descriptor, both async-signal-safe.

#[cfg(all(test, target_os = "linux"))]
mod attacks;
#[cfg(target_os = "linux")]
mod jail;
#[cfg(target_os = "linux")]
mod linux;
pub(crate) mod protect;
pub(crate) mod reach;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(test)]
mod tests;
pub(crate) mod watch;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::scope::Scope;

/// Whether this kernel can confine `shell`, and how far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock with this ABI version, the filter and the namespaces: everything.
    Landlock { abi: u32 },
    /// Landlock and the filter, but no namespaces (unprivileged user namespaces off or
    /// restricted), and why: commands are confined in what they read and write and cannot
    /// reach a Unix socket, but protected files are not read-only, seedpod's directories are not
    /// covered, and what a command starts can outlive it. Never enough for `shell =
    /// "sandboxed"`, which asks instead; better than nothing for a command a person approved.
    Partial { abi: u32, why: String },
    /// No Landlock, and why (old kernel, disabled at boot, another OS).
    Unsupported(String),
}

impl Support {
    /// Ask the kernel, once per process: Landlock's ABI, a seccomp filter for this
    /// architecture, and whether the namespaces can be made (`jail.rs`). Each is needed;
    /// without one the sandbox is not offered rather than offered weaker.
    pub fn probe() -> Support {
        #[cfg(target_os = "linux")]
        {
            static PROBED: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
            PROBED
                .get_or_init(|| {
                    let landlock = linux::probe();
                    if !matches!(landlock, Support::Landlock { .. }) {
                        return landlock;
                    }
                    if !seccomp::SUPPORTED {
                        return Support::Unsupported(
                            "seedpod has no system-call filter for this processor".into(),
                        );
                    }
                    match (jail::probe(), &landlock) {
                        (Ok(()), _) => landlock,
                        (Err(why), Support::Landlock { abi }) => {
                            Support::Partial { abi: *abi, why }
                        }
                        (Err(why), _) => Support::Unsupported(why),
                    }
                })
                .clone()
        }
        #[cfg(not(target_os = "linux"))]
        {
            Support::Unsupported("Landlock is a Linux feature".into())
        }
    }

    /// For `config show` and the start-up alert: what is enforced.
    pub fn describe(&self, network: bool) -> String {
        match self {
            Support::Landlock { abi } => {
                let net = if network {
                    "network allowed"
                } else {
                    "no network (a network namespace of its own)"
                };
                let scoped = if *abi >= 6 {
                    "; signals and abstract sockets scoped"
                } else {
                    ""
                };
                format!(
                    "enforced (Landlock ABI {abi}: writes only under the write roots and temp dirs; \
                     protected files read-only; {net}{scoped}; no Unix sockets; everything a \
                     command starts ends with it)"
                )
            }
            Support::Partial { abi, why } => format!(
                "partial (Landlock ABI {abi} and the system-call filter: writes only under the \
                 write roots, no Unix sockets{}; but {why}, so protected files are not \
                 read-only and what a command starts can outlive it; [approvals] shell = \
                 \"sandboxed\" asks before every command)",
                if network { "" } else { ", no network" }
            ),
            Support::Unsupported(why) => format!("not enforced ({why})"),
        }
    }
}

/// A sandbox for one pod's shell: its scope and whether the network is allowed.
#[derive(Debug, Clone)]
pub struct Sandbox {
    scope: Arc<Scope>,
    network: bool,
    /// The person's home, for the toolchain directories (read-only).
    home: Option<PathBuf>,
    /// The pod's private temporary directory (`TMPDIR` of its commands), removed with the pod.
    temp: Arc<tempfile::TempDir>,
    /// seedpod's own directories (config, data, state, sockets): covered for every command.
    hidden: Vec<PathBuf>,
}

/// Why a command could not be confined; the call fails rather than run unconfined.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the shell sandbox could not be set up: {0}")]
    Setup(String),
}

/// A prepared confinement for one command: applied in the child before `exec`.
pub(crate) struct Prepared {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    #[cfg(target_os = "linux")]
    filter: seccomp::Program,
    /// `None` on a machine without the namespaces (`Support::Partial`).
    #[cfg(target_os = "linux")]
    jail: Option<jail::Jail>,
}

impl Sandbox {
    /// A sandbox for `scope`; makes the pod's private temporary directory (mode 0700).
    pub fn new(
        scope: Arc<Scope>,
        network: bool,
        home: Option<PathBuf>,
    ) -> Result<Sandbox, SandboxError> {
        // A pod killed outright leaves its directory behind; the next pod to start removes
        // those whose pod is gone (the pid is in the name, which no command can change).
        sweep_stale(&std::env::temp_dir());
        let temp = tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{}-", std::process::id()))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(|e| {
                SandboxError::Setup(format!("cannot make a temporary directory for it: {e}"))
            })?;
        Ok(Sandbox {
            scope,
            network,
            home,
            temp: Arc::new(temp),
            hidden: Vec::new(),
        })
    }

    /// Cover these directories (seedpod's own) for every command: what the pods hold and the
    /// sockets through which a person answers are out of a command's reach even where a
    /// readable root contains them. A directory that holds a scope root stays (covering it
    /// would hide the project).
    pub fn hiding(mut self, dirs: Vec<PathBuf>) -> Sandbox {
        self.hidden = dirs;
        self
    }

    /// The private temporary directory, given to commands as `TMPDIR`.
    pub fn temp_dir(&self) -> &std::path::Path {
        self.temp.path()
    }

    pub fn network(&self) -> bool {
        self.network
    }

    /// Whether everything the sandbox promises holds here, namespaces included.
    pub fn complete(&self) -> bool {
        matches!(Support::probe(), Support::Landlock { .. })
    }

    /// The roots whose protected files are watched around each command (`watch.rs`).
    pub(crate) fn watched_roots(&self) -> Vec<PathBuf> {
        self.scope.write_roots().to_vec()
    }

    /// Directories the command may write under.
    pub fn write_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.scope.write_roots().to_vec();
        paths.push(self.temp.path().to_path_buf());
        // Not `/dev/tty` or `/dev/pts`: the person's terminals.
        for device in ["/dev/null", "/dev/zero", "/dev/full", "/dev/shm"] {
            paths.push(PathBuf::from(device));
        }
        paths
    }

    /// Directories the command may read and execute from.
    pub fn read_paths(&self) -> Vec<PathBuf> {
        // Not the working directory as such: a child pod may have been delegated less than it
        // (its write roots are readable already, see `write_paths`; Landlock does not stop
        // `chdir`, so the command still starts there).
        let mut paths: Vec<PathBuf> = self.scope.read_roots().to_vec();
        for system in SYSTEM_DIRS.iter().chain(DEVICES) {
            paths.push(PathBuf::from(system));
        }
        if let Some(home) = &self.home {
            for dir in HOME_TOOLCHAINS {
                paths.push(home.join(dir));
            }
        }
        paths
    }

    /// seedpod's directories, for [`reach::note`].
    pub(crate) fn hidden(&self) -> &[PathBuf] {
        &self.hidden
    }

    /// Directories to cover for a command: those of [`Sandbox::hiding`] that hold no root.
    fn hidden_for_command(&self) -> Vec<PathBuf> {
        let roots: Vec<&PathBuf> = self
            .scope
            .write_roots()
            .iter()
            .chain(self.scope.read_roots())
            .collect();
        self.hidden
            .iter()
            .filter(|dir| !roots.iter().any(|root| root.starts_with(dir)))
            .cloned()
            .collect()
    }

    /// Build the confinement for one command (before the process is spawned): the Landlock
    /// ruleset, the system-call filter and the namespaces with their mounts.
    pub(crate) fn prepare(&self) -> Result<Prepared, SandboxError> {
        #[cfg(target_os = "linux")]
        {
            let jail = match Support::probe() {
                Support::Unsupported(why) => return Err(SandboxError::Setup(why)),
                Support::Partial { .. } => None,
                Support::Landlock { .. } => {
                    let protected = protect::all(self.scope.write_roots());
                    Some(jail::Jail::new(
                        &protected,
                        &self.hidden_for_command(),
                        !self.network,
                    )?)
                }
            };
            let fd = linux::ruleset(&self.read_paths(), &self.write_paths(), self.network)?;
            Ok(Prepared {
                fd,
                filter: seccomp::Program::new(self.network),
                jail,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(SandboxError::Setup(
                "Landlock is a Linux feature; set [shell] sandbox = \"off\"".into(),
            ))
        }
    }
}

impl Prepared {
    /// Arrange for the child to confine itself between fork and exec.
    pub(crate) fn apply(self, command: &mut tokio::process::Command) {
        // `tempfile`'s temp dir, `mktemp` and most tools honour TMPDIR.
        #[cfg(target_os = "linux")]
        linux::confine_on_exec(command, self.fd, self.filter, self.jail);
        #[cfg(not(target_os = "linux"))]
        let _ = command;
    }
}

/// The private temporary directories' names: this, the pod's pid, a dash, random letters.
const TEMP_PREFIX: &str = "seedpod-shell-";

/// Remove the private temporary directories under `base` whose pod is no longer running.
/// Only ours (same owner), and only when the pid in the name names no process at all.
fn sweep_stale(base: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: getuid cannot fail and touches no memory.
    let me = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let ours = entry
            .metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == me && !m.file_type().is_symlink());
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if ours && gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Read-only system directories a shell needs to run programs.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc",
    "/sys", "/run", "/nix", "/snap",
];

/// Devices a command may read: not `/dev` whole, whose `pts/` are the person's terminals.
/// (`/dev/fd` and `/dev/std*` are links into `/proc`, which is readable; a rule cannot name
/// them, since they lead to whatever the pod's own descriptors are.)
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/shm",
];

/// Toolchains installed in the home directory, read-only: the tools people run through
/// `shell` live there (cargo, rustup, nvm, pyenv …), and so do the login files `bash -l` reads.
const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".nvm",
    ".pyenv",
    ".volta",
    ".bun",
    ".deno",
    "go",
    ".sdkman",
    ".profile",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".gitconfig",
    ".config/git",
];
