//! The tool contract and the registry the turn loop calls tools through.
//!
//! Every way a tool call can go wrong (a tool the model invented, arguments that are not JSON, a
//! tool that panics) becomes an error *result* the model reads and can correct, never a failed
//! run: the model's mistakes are part of the conversation, not faults of the pod.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_protocol::{CallId, ToolMeta, ToolSpec};

/// What a tool call produced, as the model will read it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    /// The call failed; providers mark the result as an error to the model.
    pub is_error: bool,
    /// Facts about the outcome for clients and the log (the text says them to the model).
    /// Boxed: most results carry none, and a result travels through many `Result`s.
    pub meta: Box<ToolMeta>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            meta: Box::default(),
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            meta: Box::default(),
        }
    }

    pub fn with_meta(mut self, meta: ToolMeta) -> Self {
        self.meta = Box::new(meta);
        self
    }
}

impl From<ToolFailure> for ToolOutput {
    fn from(failure: ToolFailure) -> ToolOutput {
        ToolOutput::error(failure.0)
    }
}

/// Why a tool call failed, as the text the model reads in the call's error result: worded for
/// the model (what went wrong, what to do instead), not for a log. The steps of a tool return
/// it so their signatures say that the text is the product; the tool's `call` turns it into
/// its `ToolOutput` (`ToolOutput::from`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure(String);

impl ToolFailure {
    pub fn new(text: impl Into<String>) -> ToolFailure {
        ToolFailure(text.into())
    }

    pub fn text(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub trait Tool: Send + Sync {
    /// The name, description and argument schema offered to the model.
    fn spec(&self) -> ToolSpec;

    /// Run the tool. `arguments` is the model's raw argument text, already checked to be JSON.
    /// The future is `'static` so calls can run concurrently and be dropped on cancel.
    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput>;

    /// Run the tool for the model's call `call_id`: a tool that reports while it works (an MCP
    /// server's progress) says whose call a report is about. Most tools have nothing to report
    /// and run as `call`.
    fn call_for(&self, call_id: &CallId, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let _ = call_id;
        self.call(arguments)
    }
}

/// The tools a pod offers, in registration order (which is the order the model sees them).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Registered>,
}

#[derive(Clone)]
struct Registered {
    /// Taken from the spec once, so lookups do not rebuild specs.
    name: String,
    tool: Arc<dyn Tool>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Add `tool`. A tool with the same name is replaced in place, keeping its position, so the
    /// model never sees two tools with one name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.spec().name;
        match self.tools.iter_mut().find(|r| r.name == name) {
            Some(existing) => {
                tracing::warn!(tool = %name, "a tool with this name was already registered; replacing it");
                existing.tool = tool;
            }
            None => self.tools.push(Registered { name, tool }),
        }
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|r| r.tool.spec()).collect()
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.tool.clone())
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Call tool `name` with the model's raw `arguments`. Never fails: problems come back as an
    /// error result addressed to the model.
    pub async fn call(&self, name: &str, arguments: &str) -> ToolOutput {
        self.call_logged(None, name, arguments).await
    }

    /// `call`, for the model's call `call_id` (`Tool::call_for`): what the turn loop runs.
    pub async fn call_for(&self, call_id: &CallId, name: &str, arguments: &str) -> ToolOutput {
        self.call_logged(Some(call_id), name, arguments).await
    }

    async fn call_logged(
        &self,
        call_id: Option<&CallId>,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let started = std::time::Instant::now();
        let mut output = self.call_unlogged(call_id, name, arguments).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        output.meta.duration_ms = Some(duration_ms);
        tracing::info!(
            event = "tool_call",
            tool = %name,
            duration_ms,
            is_error = output.is_error,
            exit_code = output.meta.exit_code,
        );
        output
    }

    async fn call_unlogged(
        &self,
        call_id: Option<&CallId>,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let Some(tool) = self.get(name) else {
            return ToolOutput::error(self.unknown_tool(name));
        };
        if let Err(err) = serde_json::from_str::<serde::de::IgnoredAny>(arguments) {
            return ToolOutput::error(format!(
                "the arguments for tool \"{name}\" are not valid JSON ({err}); the tool was not \
                 called. Send the arguments as one JSON object matching its schema."
            ));
        }
        // A panicking tool must not take the run (or the pod) down with it.
        let running = match call_id {
            Some(call_id) => tool.call_for(call_id, arguments.to_owned()),
            None => tool.call(arguments.to_owned()),
        };
        match AssertUnwindSafe(running).catch_unwind().await {
            Ok(output) => output,
            Err(_) => {
                tracing::error!(tool = %name, "tool panicked");
                ToolOutput::error(format!("tool \"{name}\" failed unexpectedly (it panicked)"))
            }
        }
    }

    fn unknown_tool(&self, name: &str) -> String {
        if self.tools.is_empty() {
            return format!("unknown tool \"{name}\"; no tools are enabled");
        }
        let names: Vec<&str> = self.tools.iter().map(|r| r.name.as_str()).collect();
        format!("unknown tool \"{name}\"; available: {}", names.join(", "))
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|r| &r.name))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{EchoTool, tool_spec};

    struct PanicTool;

    impl Tool for PanicTool {
        fn spec(&self) -> ToolSpec {
            tool_spec("panic")
        }

        fn call(&self, _arguments: String) -> BoxFuture<'static, ToolOutput> {
            async { panic!("boom") }.boxed()
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(EchoTool::named("echo")));
        registry.register(Arc::new(EchoTool::named("read")));
        registry
    }

    #[tokio::test]
    async fn calls_a_registered_tool_with_raw_arguments() {
        let raw = r#"{ "b": 1,  "a": 2 }"#;
        let output = registry().call("read", raw).await;
        assert!(
            output.meta.duration_ms.is_some(),
            "the registry times every call"
        );
        assert_eq!((output.content.as_str(), output.is_error), (raw, false));
    }

    #[tokio::test]
    async fn unknown_tool_lists_what_is_available() {
        let output = registry().call("write", "{}").await;
        assert_eq!(
            (output.content.as_str(), output.is_error),
            ("unknown tool \"write\"; available: echo, read", true)
        );
        let output = ToolRegistry::new().call("write", "{}").await;
        assert_eq!(
            (output.content.as_str(), output.is_error),
            ("unknown tool \"write\"; no tools are enabled", true)
        );
    }

    #[tokio::test]
    async fn invalid_json_is_an_error_and_the_tool_is_not_called() {
        let output = registry().call("echo", "{\"path\": ").await;
        assert!(output.is_error);
        assert!(
            output.content.contains("not valid JSON"),
            "{}",
            output.content
        );
        assert!(output.content.contains("not called"), "{}", output.content);
    }

    #[tokio::test]
    async fn a_panicking_tool_becomes_an_error_result() {
        let mut registry = registry();
        registry.register(Arc::new(PanicTool));
        let output = registry.call("panic", "{}").await;
        assert!(output.is_error);
        assert!(output.content.contains("panicked"), "{}", output.content);
    }

    #[test]
    fn same_name_replaces_in_place() {
        let mut registry = registry();
        registry.register(Arc::new(EchoTool::named("echo")));
        let names: Vec<String> = registry.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["echo", "read"]);
        assert_eq!(format!("{registry:?}"), r#"["echo", "read"]"#);
        assert!(registry.get("read").is_some());
        assert!(registry.get("nope").is_none());
    }
}
