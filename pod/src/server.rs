//! `serve`: the whole life of a pod process — lock, open or restore, listen, accept, and a
//! designed shutdown (on `shutdown`, SIGINT or SIGTERM: stop accepting, stop the run, flush and
//! close the log, say goodbye to clients, remove the socket).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use interprocess::local_socket::tokio::prelude::*;
use interprocess::local_socket::{GenericFilePath, ListenerOptions, ToFsName};
use seedpod_client::Home;
use seedpod_engine::ToolRegistry;
use seedpod_protocol::PodName;
use seedpod_store::PodConfig;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::accept::AcceptBackoff;
use crate::assemble::{PodTools, offer_pod_tools};
use crate::connection::{ConnectionInfo, serve_connection};
use crate::controller::Controller;
use crate::error::PodError;
use crate::lock;
use crate::providers::ProviderSettings;
use crate::restore::{OpenOptions, open_pod};

/// How long connections get to flush their goodbye after the controller stopped.
pub const CONNECTION_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Connections one pod serves at once. Far above any real use (a TUI or two, scripts, parents,
/// children); a flood beyond it is refused with a reason instead of eating descriptors the log
/// and the model connection need.
pub const MAX_CONNECTIONS: usize = 256;

pub struct ServeOptions {
    pub name: PodName,
    pub home: Home,
    /// Working directory for a new pod.
    pub cwd: PathBuf,
    /// Provider configuration for a new pod (see `restore::OpenOptions::config`).
    pub config: Option<PodConfig>,
    /// The built-in tools (`assemble::assemble`); the pod adds its own.
    pub tools: ToolRegistry,
    /// The iteration cap and the loop brakes (`[loop]`).
    pub limits: seedpod_engine::RunLimits,
    pub settings: ProviderSettings,
    pub session: crate::session::SessionSettings,
    /// Session instructions for a new pod.
    pub instructions: Option<String>,
    /// For a new child pod: its parent, its task and its delegated scope (`pod serve --parent`).
    /// Ignored on restore: a pod's lineage is in its `pod.json`.
    pub child: Option<crate::children::ChildStart>,
    /// When the pod archives its earlier segments itself (`[storage]`).
    pub archive: seedpod_store::ArchiveRule,
}

/// Serve the pod until it is told to stop. `ready` is called once the socket accepts
/// connections (the CLI uses it to tell `seedpod start` the pod is up).
pub async fn serve(opts: ServeOptions, ready: impl FnOnce(&Path)) -> Result<(), PodError> {
    let home = opts.home.clone();
    home.ensure_private()?;
    let pod_dir = home.pod_dir(&opts.name);
    seedpod_client::private::create_dir_all(&pod_dir)
        .map_err(|e| PodError::io(&pod_dir, "create the pod directory", e))?;
    let _lock = lock::acquire(&home.lock_path(&opts.name), &opts.name)?;

    // The pod's own tools hold senders of the controller's queues, so the queues come first;
    // the tools are registered before the pod opens so a new segment offers them. A tool
    // without a declaration stops the pod here: it would have no policy.
    let channels = crate::controller::channels();
    let mut tools = opts.tools.clone();
    let pod_tools = PodTools {
        home: &home,
        name: &opts.name,
        cwd: &opts.cwd,
        pastes: channels.0.pastes.clone(),
        children: channels.0.children.clone(),
    };
    offer_pod_tools(&mut tools, pod_tools, &opts.session.policies)?;
    // MCP servers start now, beside the pod's opening: a new pod waits for them before its
    // first segment, a restored one does not (its segment's tools are in its log).
    let mcp = crate::mcp::McpHub::start(
        &opts.session.mcp,
        &opts.cwd,
        opts.session.policies.clone(),
        channels.0.mcp.clone(),
    );
    // `tool_search` finds the servers' tools through the hub; a segment offers it only when
    // its tools are over the `[tool_search]` budget (`segment_plan`).
    crate::tool_search::ToolSearch::register(&mut tools, &mcp, &opts.session.policies);
    // The resource tools are callable in any pod with MCP servers; a segment offers them only
    // when a server has resources (`McpHub::offer`), so they are left out of the registry's
    // own list of what to offer (`resources::is_resource_tool`).
    if !mcp.is_empty() {
        for tool in crate::mcp::resources::tools(&mcp) {
            tools.register(tool);
        }
    }
    // A server the pod must not run without stops it here, before it opens or says ready.
    if let Some(reason) = mcp.required_failure().await {
        mcp.stop().await;
        return Err(PodError::Config(reason));
    }
    let opened = open_pod(OpenOptions {
        name: opts.name.clone(),
        pod_dir,
        cwd: opts.cwd.clone(),
        config: opts.config.clone(),
        tools,
        limits: opts.limits,
        settings: opts.settings.clone(),
        session: opts.session.clone(),
        instructions: opts.instructions.clone(),
        child: opts.child.clone(),
        home: home.clone(),
        mcp: mcp.clone(),
    })
    .await;
    let parts = match opened {
        Ok(parts) => parts,
        Err(err) => {
            mcp.stop().await;
            return Err(err);
        }
    };

    let socket = home.socket_path(&opts.name);
    let listener = listen(&socket)?;
    let shutdown = CancellationToken::new();
    spawn_signal_handlers(shutdown.clone());

    let (controller, handle, rx) = Controller::with_channels(parts, shutdown.clone(), channels);
    let info = Arc::new(ConnectionInfo {
        pod: opts.name.clone(),
        instance: controller.instance().clone(),
    });
    tracing::info!(
        event = "server_start",
        pod = %opts.name,
        pid = std::process::id(),
        socket = %socket.display(),
        version = env!("CARGO_PKG_VERSION"),
    );
    let controller_task = tokio::spawn(controller.run(rx));
    ready(&socket);
    crate::archiver::spawn(home.pod_dir(&opts.name), opts.archive, shutdown.clone());

    let tracker = TaskTracker::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = AcceptBackoff::default();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    if let Some(failures) = backoff.succeeded() {
                        tracing::info!(event = "accept_recovered", failures);
                    }
                    match slots.clone().try_acquire_owned() {
                        Ok(slot) => {
                            let (handle, info, shutdown) =
                                (handle.clone(), info.clone(), shutdown.clone());
                            let peer = crate::connection::Peer {
                                pid: stream.peer_creds().ok().and_then(|c| c.pid()),
                            };
                            tracker.spawn(async move {
                                serve_connection(stream, peer, handle, info, shutdown).await;
                                drop(slot);
                            });
                        }
                        Err(_) => {
                            tracing::warn!(event = "connection_refused", limit = MAX_CONNECTIONS);
                            tracker.spawn(refuse_connection(stream));
                        }
                    }
                }
                Err(err) => {
                    let (wait, log) = backoff.failed();
                    if log {
                        tracing::warn!(
                            event = "accept_failed",
                            error = %err,
                            retry_ms = wait.as_millis() as u64
                        );
                    }
                    tokio::select! {
                        () = shutdown.cancelled() => break,
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            },
        }
    }
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    tracker.close();
    if let Err(err) = controller_task.await {
        tracing::error!(event = "controller_panicked", error = %err);
    }
    mcp.stop().await;
    drop(handle);
    if tokio::time::timeout(CONNECTION_DRAIN_TIMEOUT, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!(event = "connections_not_drained");
    }
    tracing::info!(event = "server_exit", pod = %opts.name);
    Ok(())
}

/// Tell a connection over the limit why, then close it; bounded so a client that does not
/// read cannot hold the task.
async fn refuse_connection(stream: interprocess::local_socket::tokio::Stream) {
    use tokio::io::AsyncWriteExt;
    let refusal = seedpod_protocol::encode(&seedpod_protocol::ServerMsg::Error {
        id: None,
        code: seedpod_protocol::ErrorCode::Busy,
        message: format!(
            "the pod already serves {MAX_CONNECTIONS} connections; close some and try again"
        ),
    });
    let mut stream = stream;
    let write = async {
        stream.write_all(refusal.as_bytes()).await?;
        stream.write_all(b"\n").await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
}

/// Bind the socket. We hold the pod lock, so any socket file already there is stale (a crashed
/// pod's) and is removed first.
fn listen(socket: &Path) -> Result<interprocess::local_socket::tokio::Listener, PodError> {
    if socket.exists() {
        tracing::info!(event = "stale_socket_removed", socket = %socket.display());
        std::fs::remove_file(socket)
            .map_err(|e| PodError::io(socket, "remove the stale socket", e))?;
    }
    let name = socket
        .to_fs_name::<GenericFilePath>()
        .map_err(|e| PodError::io(socket, "name the socket", e))?;
    let listener = ListenerOptions::new()
        .name(name)
        .create_tokio()
        .map_err(|e| PodError::io(socket, "listen on", e))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| PodError::io(socket, "restrict", e))?;
    }
    Ok(listener)
}

/// SIGINT and SIGTERM take the designed shutdown path; SIGHUP (terminal closed) is ignored,
/// because a pod outlives every terminal.
fn spawn_signal_handlers(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ];
    for kind in kinds {
        let Ok(mut stream) = signal(kind) else {
            tracing::warn!(event = "signal_handler_failed", signal = ?kind);
            continue;
        };
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                if kind == SignalKind::hangup() {
                    tracing::info!(event = "sighup_ignored");
                    continue;
                }
                tracing::info!(event = "signal_shutdown", signal = ?kind);
                shutdown.cancel();
                break;
            }
        });
    }
}
