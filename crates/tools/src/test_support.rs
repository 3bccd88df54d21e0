//! Shared test fixture: a pod working directory in a temp dir and every built-in tool over it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seedpod_engine::{ToolOutput, ToolRegistry};

use crate::protected::ProtectedDirs;
use crate::scope::{Scope, ScopeRules};
use crate::{BUILTIN_TOOLS, ShellLimits, ToolContext, builtin_tools};

pub(crate) struct Fixture {
    /// Holds the temp dir; the pod's cwd is `proj/` inside it, with `outside/` as a sibling.
    _tmp: tempfile::TempDir,
    pub(crate) cwd: PathBuf,
    pub(crate) outside: PathBuf,
    registry: ToolRegistry,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture::build(None, ShellLimits::default(), |_| ProtectedDirs::default())
    }

    pub(crate) fn with_rules(rules: ScopeRules) -> Fixture {
        Fixture::build(Some(rules), ShellLimits::default(), |_| {
            ProtectedDirs::default()
        })
    }

    pub(crate) fn with_shell(shell: ShellLimits) -> Fixture {
        Fixture::build(None, shell, |_| ProtectedDirs::default())
    }

    /// The default scope, protecting the directories `dirs` names given the (canonical) cwd.
    pub(crate) fn with_protected(dirs: impl FnOnce(&Path) -> ProtectedDirs) -> Fixture {
        Fixture::build(None, ShellLimits::default(), dirs)
    }

    fn build(
        rules: Option<ScopeRules>,
        shell: ShellLimits,
        protected: impl FnOnce(&Path) -> ProtectedDirs,
    ) -> Fixture {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let cwd = root.join("proj");
        let outside = root.join("outside");
        std::fs::create_dir_all(&cwd).expect("create proj");
        std::fs::create_dir_all(&outside).expect("create outside");
        let scope = match rules {
            Some(rules) => Scope::new(&cwd, &rules),
            None => Scope::for_cwd(&cwd),
        }
        .expect("scope")
        .with_protected(&protected(&cwd));
        let ctx = ToolContext {
            scope: Arc::new(scope),
            shell,
            sandbox: None,
            checkpoints: None,
        };
        let names: Vec<&str> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
        let mut registry = ToolRegistry::new();
        for tool in builtin_tools(&ctx, &names) {
            registry.register(tool);
        }
        Fixture {
            _tmp: tmp,
            cwd,
            outside,
            registry,
        }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.cwd.join(rel)
    }

    pub(crate) fn write(&self, rel: &str, text: &str) {
        self.write_bytes(rel, text.as_bytes());
    }

    pub(crate) fn write_bytes(&self, rel: &str, bytes: &[u8]) {
        write_with_parents(&self.path(rel), bytes);
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read fixture file")
    }

    /// Call through the engine's registry, as the turn loop does.
    pub(crate) async fn call(&self, tool: &str, arguments: &str) -> ToolOutput {
        self.registry.call(tool, arguments).await
    }

    /// The content of a call that must succeed.
    pub(crate) async fn ok(&self, tool: &str, arguments: &str) -> String {
        let output = self.call(tool, arguments).await;
        assert!(
            !output.is_error,
            "{tool} {arguments} failed: {}",
            output.content
        );
        output.content
    }

    /// The content of a call that must fail.
    pub(crate) async fn err(&self, tool: &str, arguments: &str) -> String {
        let output = self.call(tool, arguments).await;
        assert!(
            output.is_error,
            "{tool} {arguments} succeeded: {}",
            output.content
        );
        output.content
    }
}

pub(crate) fn write_with_parents(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parents");
    }
    std::fs::write(path, bytes).expect("write fixture file");
}

/// JSON arguments with a path or text properly escaped.
pub(crate) fn json(value: serde_json::Value) -> String {
    value.to_string()
}
