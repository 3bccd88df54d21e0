//! Where seedpod keeps things (DESIGN §3). `SEEDPOD_HOME=DIR` relocates everything under one
//! directory (tests and demos); otherwise the platform's conventional directories.

use std::path::{Path, PathBuf};

use seedpod_protocol::PodName;

use crate::error::ClientError;
use crate::private::{self, Reach};

/// Environment variable that relocates config, data, state and runtime under one directory.
pub const HOME_ENV: &str = "SEEDPOD_HOME";

/// Longest socket path we hand to `bind`/`connect`. `sun_path` holds 108 bytes on Linux
/// (104 on macOS) including the terminating NUL; stay below both.
pub const MAX_SOCKET_PATH_BYTES: usize = 100;

/// All of seedpod's directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    pub config: PathBuf,
    pub data: PathBuf,
    pub state: PathBuf,
    pub run: PathBuf,
}

impl Home {
    /// Resolve from `SEEDPOD_HOME`, else the platform directories.
    pub fn from_env() -> Result<Home, ClientError> {
        if let Some(dir) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Home::under(Path::new(&dir)));
        }
        let dirs = directories::ProjectDirs::from("", "", "seedpod").ok_or_else(|| {
            ClientError::Setup(format!(
                "cannot find a home directory for seedpod's files; set {HOME_ENV}=DIR"
            ))
        })?;
        let state = dirs
            .state_dir()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dirs.data_local_dir().join("state"));
        let run = dirs
            .runtime_dir()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| std::env::temp_dir().join(format!("seedpod-{}", current_uid())));
        Ok(Home {
            config: dirs.config_dir().to_path_buf(),
            data: dirs.data_dir().to_path_buf(),
            state,
            run,
        })
    }

    /// Everything under one directory, as `SEEDPOD_HOME` lays it out.
    pub fn under(dir: &Path) -> Home {
        Home {
            config: dir.join("config"),
            data: dir.join("data"),
            state: dir.join("state"),
            run: dir.join("run"),
        }
    }

    pub fn pods_dir(&self) -> PathBuf {
        self.data.join("pods")
    }

    pub fn pod_dir(&self, name: &PodName) -> PathBuf {
        self.pods_dir().join(name)
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.state.join("logs")
    }

    pub fn log_path(&self, name: &PodName) -> PathBuf {
        self.logs_dir().join(format!("{name}.log"))
    }

    /// The pod's socket. Long names are hashed so the path fits `sun_path`; the hash is FNV-1a,
    /// fixed here forever because a new binary must find a pod started by an old one.
    pub fn socket_path(&self, name: &PodName) -> PathBuf {
        let plain = self.run.join(format!("{name}.sock"));
        if plain.as_os_str().len() <= MAX_SOCKET_PATH_BYTES {
            return plain;
        }
        let hashed = self
            .run
            .join(format!("{:016x}.sock", fnv1a64(name.as_str().as_bytes())));
        if hashed.as_os_str().len() <= MAX_SOCKET_PATH_BYTES {
            return hashed;
        }
        // The runtime dir itself is too deep; fall back to a short per-user dir in /tmp.
        std::env::temp_dir()
            .join(format!("seedpod-{}", current_uid()))
            .join(format!(
                "{:016x}.sock",
                fnv1a64(self.run.join(name).as_os_str().as_encoded_bytes())
            ))
    }

    /// What was typed into the TUI's composer for this pod, one JSON object per line. A
    /// convenience for Up/Down and Ctrl-R, not pod state: losing it loses nothing the pod knows.
    pub fn input_history_path(&self, name: &PodName) -> PathBuf {
        self.pod_dir(name).join("input-history.jsonl")
    }

    /// What a person folded and expanded in the TUI for this pod (`tui/src/view_memory.rs`).
    /// A convenience like the input history: losing it loses nothing the pod knows.
    pub fn view_memory_path(&self, name: &PodName) -> PathBuf {
        self.pod_dir(name).join("tui-view.json")
    }

    /// Held (flock) by the one process serving this pod.
    pub fn lock_path(&self, name: &PodName) -> PathBuf {
        self.pod_dir(name).join("pod.lock")
    }

    /// Create the runtime directory `0700`, or refuse one that is a link, not ours or
    /// reachable by others: anyone who can reach a pod's socket can drive it.
    pub fn ensure_runtime_dir(&self) -> Result<(), ClientError> {
        for dir in self.runtime_dirs() {
            private::ensure_dir(&dir, "runtime directory", Reach::OwnerOnly)?;
        }
        Ok(())
    }

    /// Everything a pod writes — data, state (logs) and runtime — created private, or refused
    /// (with what to do) when it is a link, someone else's, or writable by others.
    pub fn ensure_private(&self) -> Result<(), ClientError> {
        private::ensure_dir(&self.data, "data directory", Reach::NotWritableByOthers)?;
        private::ensure_dir(&self.state, "state directory", Reach::NotWritableByOthers)?;
        self.ensure_runtime_dir()
    }

    /// What a client checks before it connects, so a planted or repointed runtime directory
    /// never receives what the person sends. A missing one is left to the connect, which then
    /// says the pod is not running.
    pub fn check_runtime_dir(&self) -> Result<(), ClientError> {
        for dir in self.runtime_dirs() {
            match std::fs::symlink_metadata(&dir) {
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                _ => private::check_dir(&dir, "runtime directory", Reach::OwnerOnly)?,
            }
        }
        Ok(())
    }

    /// The runtime directory, and the short per-user one under `/tmp` when socket paths fall
    /// back to it.
    fn runtime_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.run.clone()];
        if let Some(parent) = self.socket_path(&PodName::default_name()).parent()
            && parent != self.run
        {
            dirs.push(parent.to_path_buf());
        }
        dirs
    }
}

/// The effective user id of this process.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_under_one_dir() {
        let home = Home::under(Path::new("/x"));
        assert_eq!(
            home.log_path(&PodName::new("a").unwrap()),
            PathBuf::from("/x/state/logs/a.log")
        );
        assert_eq!(
            home.pod_dir(&PodName::new("a").unwrap()),
            PathBuf::from("/x/data/pods/a")
        );
        assert_eq!(
            home.socket_path(&PodName::new("a").unwrap()),
            PathBuf::from("/x/run/a.sock")
        );
    }

    #[test]
    fn long_names_are_hashed_to_fit_sun_path() {
        // The longest name a pod may have, under a deep home, overflows `sun_path` unhashed.
        let home = Home::under(&Path::new("/tmp").join("d".repeat(60)));
        let name = "n".repeat(seedpod_protocol::MAX_NAME_CHARS);
        let path = home.socket_path(&PodName::new(name.to_string()).unwrap());
        assert!(path.as_os_str().len() <= MAX_SOCKET_PATH_BYTES, "{path:?}");
        assert_eq!(
            path,
            home.socket_path(&PodName::new(name).unwrap()),
            "stable"
        );
        assert_ne!(
            path,
            home.socket_path(&PodName::new("m".repeat(seedpod_protocol::MAX_NAME_CHARS)).unwrap())
        );
    }

    #[test]
    fn fnv_is_the_reference_function() {
        // Published FNV-1a 64 test vectors; if these change, old pods become unreachable.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn runtime_dir_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::under(tmp.path());
        home.ensure_runtime_dir().unwrap();
        let mode = std::fs::metadata(&home.run).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::set_permissions(&home.run, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = home.ensure_runtime_dir().unwrap_err().to_string();
        assert!(err.contains("chmod 700"), "{err}");
    }
}
