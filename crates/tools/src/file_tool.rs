//! The shape every filesystem tool shares: typed arguments, a scope check per path, blocking work
//! on tokio's blocking pool, and errors worded for the model.

use std::io;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use seedpod_engine::{Tool, ToolOutput};
use seedpod_protocol::{ToolDecl, ToolSpec};
use serde::de::DeserializeOwned;

use crate::args;
use crate::checkpoint::CheckpointStore;
use crate::scope::{Access, BlockedKind, Scope};

/// A tool whose work is synchronous filesystem I/O.
pub(crate) trait FileTool: Send + Sync + 'static {
    /// Its declaration: a file tool without one does not compile.
    const DECL: ToolDecl;
    const NAME: &'static str = Self::DECL.name;
    const DESCRIPTION: &'static str;
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// Runs on a blocking thread. A tool that changes a file first keeps its content in
    /// `checkpoints` when the pod has a store (`keep_before`).
    fn run(scope: &Scope, args: Self::Args, checkpoints: Option<&CheckpointStore>) -> ToolOutput;
}

/// Adapts a [`FileTool`] to the engine's [`Tool`].
pub(crate) struct Blocking<T> {
    scope: Arc<Scope>,
    checkpoints: Option<Arc<CheckpointStore>>,
    tool: PhantomData<fn() -> T>,
}

impl<T: FileTool> Blocking<T> {
    pub(crate) fn new(scope: Arc<Scope>, checkpoints: Option<Arc<CheckpointStore>>) -> Self {
        Blocking {
            scope,
            checkpoints,
            tool: PhantomData,
        }
    }
}

impl<T: FileTool> Tool for Blocking<T> {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_owned(),
            description: T::DESCRIPTION.to_owned(),
            parameters: args::schema::<T::Args>(),
        }
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let scope = self.scope.clone();
        let checkpoints = self.checkpoints.clone();
        async move {
            let args = match args::parse::<T::Args>(T::NAME, &arguments) {
                Ok(args) => args,
                Err(output) => return output,
            };
            match tokio::task::spawn_blocking(move || T::run(&scope, args, checkpoints.as_deref()))
                .await
            {
                Ok(output) => output,
                Err(err) => {
                    tracing::error!(tool = T::NAME, error = %err, "tool task failed");
                    ToolOutput::error(format!("{} failed unexpectedly ({err})", T::NAME))
                }
            }
        }
        .boxed()
    }
}

/// Check `path` against the scope; a refusal is logged and becomes the tool's error result.
pub(crate) fn check(
    scope: &Scope,
    tool: &str,
    path: &str,
    access: Access,
) -> Result<PathBuf, ToolOutput> {
    scope.check(path, access).map_err(|blocked| {
        tracing::warn!(
            event = "tool_blocked",
            tool,
            path = %blocked.path,
            reason = %blocked.reason,
        );
        match blocked.kind {
            BlockedKind::Scope => ToolOutput::error(format!(
                "{blocked}. Use a path inside the scope; ask the user if you need access elsewhere."
            )),
            BlockedKind::Protected => ToolOutput::error(format!("{blocked}.")),
        }
    })
}

/// Keep `path`'s content before a tool changes it (docs/storage.md §Checkpoints). When it cannot
/// be kept, the error result says nothing was changed, and the tool must not change it.
pub(crate) fn keep_before(
    checkpoints: Option<&CheckpointStore>,
    path: &std::path::Path,
    shown: &str,
) -> Result<Option<seedpod_protocol::FileCheckpoint>, ToolOutput> {
    let Some(store) = checkpoints else {
        return Ok(None);
    };
    store.keep(path).map(Some).map_err(|err| {
        tracing::warn!(event = "checkpoint_failed", path = %path.display(), error = %err);
        ToolOutput::error(format!(
            "\"{shown}\" was not changed: the pod could not keep a copy of it first, for \
             rewinding ({err}). Tell the person."
        ))
    })
}

/// Records what `keep_before` kept in a successful result's metadata.
pub(crate) trait WithCheckpoint {
    fn with_checkpoint(self, kept: Option<seedpod_protocol::FileCheckpoint>) -> Self;
}

impl WithCheckpoint for ToolOutput {
    fn with_checkpoint(mut self, kept: Option<seedpod_protocol::FileCheckpoint>) -> Self {
        self.meta.checkpoints.extend(kept);
        self
    }
}

/// An I/O failure on `path`, with the usual next step for the common kinds.
/// An error result for a race-free open (`beneath.rs`) that failed.
pub(crate) fn open_error(action: &str, path: &str, err: &crate::beneath::OpenError) -> ToolOutput {
    match err {
        crate::beneath::OpenError::Io(err) => io_error(action, path, err),
        other => {
            tracing::warn!(event = "tool_blocked", path = %path, reason = %other);
            ToolOutput::error(other.describe(path))
        }
    }
}

pub(crate) fn io_error(action: &str, path: &str, err: &io::Error) -> ToolOutput {
    let hint = match err.kind() {
        io::ErrorKind::NotFound => {
            " because it does not exist; check the path (list_dir or glob can find it)"
        }
        io::ErrorKind::IsADirectory => " because it is a directory; use list_dir for directories",
        io::ErrorKind::NotADirectory => {
            " because a part of the path is a file, not a directory; check the path"
        }
        io::ErrorKind::PermissionDenied => " because permission was denied",
        _ => "",
    };
    if hint.is_empty() {
        ToolOutput::error(format!("could not {action} \"{path}\": {err}"))
    } else {
        ToolOutput::error(format!("could not {action} \"{path}\"{hint}"))
    }
}

pub(crate) use seedpod_protocol::thousands;

/// Cut `text` to at most `max` characters (not bytes: never splits a character).
pub(crate) fn cut_chars(text: &str, max: usize) -> (&str, bool) {
    match seedpod_protocol::char_prefix(text, max) {
        Some(kept) => (kept, true),
        None => (text, false),
    }
}

/// Whether the start of a file looks binary: a NUL byte in it, as git and grep decide.
pub fn looks_binary(head: &[u8]) -> bool {
    head.contains(&0)
}

/// How much of a file's start [`looks_binary`] inspects.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_path_is_logged_as_tool_blocked() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::for_cwd(dir.path()).unwrap();
        let (output, entry) = blocked_and_logged(&scope, "read_file", "/etc/passwd", Access::Read);
        assert!(output.is_error);
        assert!(
            output
                .content
                .starts_with("access blocked: \"/etc/passwd\" is outside")
        );
        assert_eq!(entry["level"], "WARN");
        assert_eq!(entry["fields"]["event"], "tool_blocked");
        assert_eq!(entry["fields"]["tool"], "read_file");
        assert_eq!(entry["fields"]["path"], "/etc/passwd");
        let reason = entry["fields"]["reason"].as_str().unwrap();
        assert!(reason.contains("outside this pod's scope"), "{reason}");
    }

    #[test]
    fn a_protected_write_is_logged_as_tool_blocked_and_says_who_may_change_it() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::for_cwd(dir.path()).unwrap();
        let (output, entry) =
            blocked_and_logged(&scope, "write_file", ".git/config", Access::Write);
        assert!(
            output
                .content
                .starts_with("access blocked: writes to \".git/config\" are refused: "),
            "{}",
            output.content
        );
        assert!(
            !output.content.contains("Use a path inside the scope"),
            "another path is not the answer: {}",
            output.content
        );
        assert_eq!(entry["fields"]["event"], "tool_blocked");
        assert_eq!(entry["fields"]["path"], ".git/config");
        assert!(check(&scope, "read_file", ".git/config", Access::Read).is_ok());
    }

    /// `check` refusing `path`, and the one log line it wrote.
    fn blocked_and_logged(
        scope: &Scope,
        tool: &str,
        path: &str,
        access: Access,
    ) -> (ToolOutput, serde_json::Value) {
        let logged = SharedBuf::default();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_writer(logged.clone())
            .finish();
        let output = tracing::subscriber::with_default(subscriber, || {
            check(scope, tool, path, access).unwrap_err()
        });
        let line = String::from_utf8(logged.0.lock().unwrap().clone()).unwrap();
        let entry = serde_json::from_str(line.trim()).unwrap();
        (output, entry)
    }

    #[derive(Clone, Default)]
    struct SharedBuf(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for SharedBuf {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for SharedBuf {
        type Writer = SharedBuf;

        fn make_writer(&'a self) -> SharedBuf {
            self.clone()
        }
    }

    #[test]
    fn cut_chars_never_splits_a_character() {
        assert_eq!(cut_chars("héllo", 2), ("hé", true));
        assert_eq!(cut_chars("hé", 2), ("hé", false));
    }
}
