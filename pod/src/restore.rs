//! Opening a pod: create a new one (first segment, pod.json) or restore an existing one from its
//! log. Restore is read → fold → reopen for append; nothing model-visible is re-rendered.

use std::path::PathBuf;

use seedpod_engine::ToolRegistry;
use seedpod_protocol::{EntryKind, Origin, PodName, QueueId, QueuedItem, Segment, SegmentStart};
use seedpod_store::{
    Durability, PodConfig, PodMeta, SegmentState, SegmentWriter, load_meta, new_segment_id,
    read_segment, save_meta, segment_path, stage_meta,
};

use crate::context::window;
use crate::context::window_memo::WindowMemo;
use crate::controller::ControllerParts;
use crate::error::PodError;
use crate::prompt::{PromptMode, tools_for_mode};
use crate::providers::{ProviderSettings, build_provider};
use crate::segment_plan;
use crate::session::SessionSettings;

/// What `serve` needs to open a pod.
pub struct OpenOptions {
    pub name: PodName,
    pub pod_dir: PathBuf,
    /// Working directory for a new pod (ignored on restore: the pod keeps its own).
    pub cwd: PathBuf,
    /// Configuration for a new pod; on restore only a new script path is taken from it.
    pub config: Option<PodConfig>,
    pub tools: ToolRegistry,
    pub limits: seedpod_engine::RunLimits,
    /// Operational provider settings from the current configuration (key variable, timeouts,
    /// retry); never recorded, because they do not change what the model sees.
    pub settings: ProviderSettings,
    /// Approval policies, scope, input guard and prompt sources (operational, like `settings`).
    pub session: SessionSettings,
    /// Session instructions for a new pod (`start --instructions`); ignored on restore.
    pub instructions: Option<String>,
    /// For a new child pod: lineage, task and delegated scope; ignored on restore.
    pub child: Option<crate::children::ChildStart>,
    pub home: seedpod_client::Home,
    /// The pod's MCP servers (started already).
    pub mcp: crate::mcp::McpHub,
}

pub async fn open_pod(opts: OpenOptions) -> Result<ControllerParts, PodError> {
    seedpod_client::private::create_dir_all(&opts.pod_dir.join("segments"))
        .map_err(|e| PodError::io(&opts.pod_dir, "create the pod directory", e))?;
    match load_meta(&opts.pod_dir)? {
        Some(meta) => restore(opts, meta).await,
        None => create(opts).await,
    }
}

async fn create(opts: OpenOptions) -> Result<ControllerParts, PodError> {
    let Some(config) = opts.config.clone() else {
        return Err(PodError::Config(format!(
            "pod \"{}\" does not exist and no provider was given; start it with --provider scripted --script FILE",
            opts.name
        )));
    };
    let provider = build_provider(&opts.name, &config, &opts.pod_dir, &opts.settings)?;
    let segment_id = new_segment_id();
    let context_window = window::resolve(
        &opts.session.context,
        config.provider,
        config.base_url.as_deref(),
        &config.model,
        Some(&WindowMemo::in_state_dir(&opts.home.state)),
    )
    .await;
    // The first segment offers what the MCP servers offer once each has started (or failed,
    // or run out of its startup time).
    opts.mcp.settle().await;
    let mut specs = opts.tools.specs();
    specs.retain(|s| !crate::mcp::resources::is_resource_tool(&s.name));
    specs.extend(opts.mcp.offer());
    let planned = segment_plan::plan(&segment_plan::Plan {
        prompt: &opts.session.prompt,
        pod_name: &opts.name,
        cwd: &opts.cwd,
        model: &config.model,
        session_instructions: opts.instructions.as_deref(),
        window: context_window.map(|w| w.tokens),
        specs: &specs,
        child_tools_in_compact: opts.session.context.child_tools_in_compact,
        tool_search: opts.session.tool_search,
        previous: &[],
    });
    let prompt = planned
        .render()
        .map_err(|e| PodError::Config(format!("the system prompt could not be rendered: {e}")))?;
    let tools = planned.tools;
    let date = planned.date;
    // A project file refused from the prompt is said to every client that attaches.
    let mut alerts = opts.session.startup_alerts.clone();
    alerts.extend(prompt.alerts());
    let start = SegmentStart {
        segment_id: segment_id.clone(),
        system_prompt: prompt.text,
        date: Some(date),
        model: seedpod_protocol::ModelConfig {
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            responses: config.responses,
            ..seedpod_protocol::ModelConfig::new(config.provider, config.model.clone())
        },
        tools,
        seed: Vec::new(),
        standing_approvals: Vec::new(),
        origin: Origin::New,
        context_window,
        compaction: None,
        tasks: Vec::new(),
        totals: None,
    };
    // Everything a new pod writes is written first and synced last, the segment and
    // `pod.json` side by side: four fsyncs in a row were most of a cold start on a busy disk
    // (docs/storage.md, creating a pod). `pod.json` is put in place only once the segment it
    // names is durable, so a crash can leave a segment without a pod, never a pod without its
    // segment.
    let mut carried = Vec::new();
    if let Some(child) = &opts.child {
        // The task is queued in the log before the pod reports ready: a crash right after the
        // start cannot lose it, and the controller starts it like any queued input.
        carried.push(EntryKind::Queued {
            queue_id: QueueId::FIRST,
            item: QueuedItem::Delegated {
                segments: vec![Segment::text(child.task.clone())],
            },
        });
    }
    let (writer, entries, unsynced) =
        SegmentWriter::create_unsynced(segment_path(&opts.pod_dir, &segment_id), start, carried)
            .await?;
    let mut state = SegmentState::start(&entries[0]).map_err(seedpod_store::StoreError::from)?;
    for entry in &entries[1..] {
        state
            .apply(entry)
            .map_err(seedpod_store::StoreError::from)?;
    }
    let meta = PodMeta {
        parent: opts.child.as_ref().map(|c| c.parent.clone()),
        delegated: opts.child.as_ref().map(|c| c.grant.clone()),
        instructions: opts.instructions.clone(),
        mcp_servers: opts.child.as_ref().and_then(|c| c.mcp_servers.clone()),
        ..PodMeta::new(
            opts.name.clone(),
            opts.cwd.clone(),
            segment_id,
            config,
            entries[0].ts,
        )
    };
    let staging = {
        let (dir, meta) = (opts.pod_dir.clone(), meta.clone());
        tokio::task::spawn_blocking(move || stage_meta(&dir, &meta))
    };
    let (synced, staged) = tokio::join!(unsynced.sync(), staging);
    synced?;
    let staged = staged.map_err(|_| seedpod_store::StoreError::Closed)??;
    tokio::task::spawn_blocking(move || staged.install())
        .await
        .map_err(|_| seedpod_store::StoreError::Closed)??;
    tracing::info!(event = "session_created", pod = %opts.name, segment = %meta.active_segment);
    // Every MCP tool is callable, also one left for `tool_search`: a run may load it and call
    // it before it ends, and a run calls through the registry it started with.
    let mut callable = state.tools.clone();
    callable.extend(planned.deferred.iter().cloned());
    let tools = with_mcp_tools(opts.tools, &opts.mcp, &callable);
    Ok(ControllerParts {
        name: opts.name,
        pod_dir: opts.pod_dir,
        meta,
        writer,
        state,
        entries,
        provider,
        tools,
        limits: opts.limits,
        retry: opts.settings.retry,
        alerts,
        session: opts.session,
        home: opts.home,
        mcp: opts.mcp,
    })
}

async fn restore(opts: OpenOptions, mut meta: PodMeta) -> Result<ControllerParts, PodError> {
    // The request-shaping settings stay as recorded (they are in the log); a new endpoint or
    // script (the server moved, the script was rewritten) is taken and remembered.
    if let Some(config) = &opts.config
        && (meta.config.script != config.script || meta.config.base_url != config.base_url)
    {
        meta.config.script = config.script.clone();
        meta.config.base_url = config.base_url.clone();
        save_meta(&opts.pod_dir, &meta)?;
    }
    let provider = build_provider(&opts.name, &meta.config, &opts.pod_dir, &opts.settings)?;
    let path = segment_path(&opts.pod_dir, &meta.active_segment);
    let read = read_segment(&path)?;
    let mut alerts = opts.session.startup_alerts.clone();
    if let Some(torn) = &read.torn {
        alerts.push(format!(
            "the log ended in a torn entry (line {}, {} bytes, from a crash mid-write); it was moved to {} and the pod restored from the entries before it",
            torn.line,
            torn.bytes,
            torn.side_file.display()
        ));
    }
    let mut state = SegmentState::replay(&read.entries).map_err(seedpod_store::StoreError::from)?;
    let mut entries = read.entries;
    // Said where it happened and kept in the log, so whoever attaches later (or reads
    // `seedpod history`) still sees why the turn waits (docs/storage.md, `notice`).
    let stopped_mid_turn = if let Some(request) = state.pending_approval() {
        Some(format!(
            "the pod stopped while waiting for approval of {}; it still waits — approve or deny it (in the TUI, or `seedpod approve {}`), or send new input to abandon that turn",
            request.summary, opts.name
        ))
    } else if state.open_run.is_some() {
        Some(format!(
            "the pod stopped in the middle of a turn (a restart, a stop or a crash); what had streamed is kept and the turn is paused — resume to continue (/resume in the TUI, or `seedpod resume {}`), or send new input to abandon that turn",
            opts.name
        ))
    } else {
        None
    };
    // MCP tools are compared when their servers have listed them (the controller does it).
    let built_in: Vec<seedpod_protocol::ToolSpec> = state
        .tools
        .iter()
        .filter(|t| crate::mcp::names::server_of(&t.name).is_none())
        .cloned()
        .collect();
    let offered: Vec<&str> = built_in.iter().map(|t| t.name.as_str()).collect();
    let registered = opts.tools.specs();
    let keep_child = opts.session.context.child_tools_in_compact;
    let matches_a_mode = [PromptMode::Full, PromptMode::Small]
        .into_iter()
        .any(|mode| tools_for_mode(&registered, mode, keep_child) == built_in);
    if !matches_a_mode {
        let now: Vec<&str> = registered.iter().map(|t| t.name.as_str()).collect();
        alerts.push(format!(
            "the tool set changed since this segment started (offered: {}; configured now: {}); this segment keeps offering what it started with, so its history replays exactly — /clear starts a segment with the new set",
            list_or_none(&offered),
            list_or_none(&now)
        ));
    }
    let mut gone: Vec<&str> = state
        .tools
        .iter()
        .filter_map(|t| crate::mcp::names::server_of(&t.name))
        .filter(|server| !opts.mcp.has_server(server))
        .collect();
    gone.dedup();
    if !gone.is_empty() {
        alerts.push(format!(
            "this segment offers the tools of MCP servers no longer configured ({}); calling \
             them answers that they cannot run — /clear starts a segment without them",
            gone.join(", ")
        ));
    }
    let writer = SegmentWriter::open_append(path, state.next_seq)?;
    // A second restart before the turn goes on says nothing new.
    let said = |message: &str| {
        matches!(entries.last().map(|e| &e.kind),
            Some(EntryKind::Notice { message: last, .. }) if last == message)
    };
    if let Some(message) = stopped_mid_turn.filter(|m| !said(m)) {
        let kind = EntryKind::Notice {
            level: seedpod_protocol::AlertLevel::Warn,
            message,
        };
        let entry = writer.append(kind, Durability::Sync).await?;
        state
            .apply(&entry)
            .map_err(seedpod_store::StoreError::from)?;
        entries.push(entry);
    }
    let now = window::on_restore(
        &opts.session.context,
        state.window,
        state.model.provider,
        meta.config.base_url.as_deref(),
        &state.model.model,
        Some(&WindowMemo::in_state_dir(&opts.home.state)),
    )
    .await;
    if let Some(window) = window::update(state.window, now) {
        let entry = writer
            .append(EntryKind::ContextWindow(window), Durability::Sync)
            .await?;
        state
            .apply(&entry)
            .map_err(seedpod_store::StoreError::from)?;
        entries.push(entry);
    }
    tracing::info!(
        event = "session_restored",
        pod = %opts.name,
        segment = %meta.active_segment,
        entries = entries.len(),
        torn = read.torn.is_some(),
    );
    for alert in &alerts {
        tracing::warn!(event = "restore_alert", message = %alert);
    }
    let tools = with_mcp_tools(opts.tools, &opts.mcp, &state.tools);
    Ok(ControllerParts {
        name: opts.name,
        pod_dir: opts.pod_dir,
        meta,
        writer,
        state,
        entries,
        provider,
        tools,
        limits: opts.limits,
        retry: opts.settings.retry,
        alerts,
        session: opts.session,
        home: opts.home,
        mcp: opts.mcp,
    })
}

/// `tools` with a callable tool for each MCP tool `offered` names.
pub fn with_mcp_tools(
    mut tools: ToolRegistry,
    mcp: &crate::mcp::McpHub,
    offered: &[seedpod_protocol::ToolSpec],
) -> ToolRegistry {
    mcp.register(&mut tools, offered);
    tools
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}
