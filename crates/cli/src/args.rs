//! The command line, exactly as the README documents it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use seedpod_client::Target;
use seedpod_protocol::{EventSeq, PodName};

#[derive(Debug, Parser)]
#[command(
    name = "seedpod",
    // Also when `seedpod-core` is run by its own name: usage lines name the command people type.
    bin_name = "seedpod",
    version,
    about = "Long-lived LLM agent pods you attach to, detach from and notify, like tmux for agents.",
    after_help = "Set SEEDPOD_HOME=DIR to keep every file under DIR (config, data, state, run)."
)]
pub struct Cli {
    /// Without a command: attach the TUI to this directory's pod, starting it if needed.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the full-screen TUI on pod NAME (default: this directory's pod), starting or
    /// restoring it if needed. Detaching (Ctrl-D, /detach) leaves the pod running.
    Attach { name: Option<Target> },
    /// The TUI on a throwaway pod played by a built-in scripted model: no API key needed. The
    /// demo pod is stopped and deleted when you leave.
    Demo,
    /// Start a pod (or restore a stopped one from its log), detached; prints NAME when ready.
    Start(StartArgs),
    /// List pods: name, state, pid, provider/model, tokens, context fill (`62% of 16k`; a
    /// trailing `*` marks a window learned from the server), cwd; `--tree` shows child pods
    /// under their parents.
    Ls {
        /// `HOST:` lists the pods of another machine (over ssh; see `[remote]`).
        #[arg(value_name = "HOST:")]
        host: Option<Target>,
        /// One JSON object per line (with `parent`, so scripts can build the tree, and
        /// `context_tokens`, `context_window`, `context_window_source`).
        #[arg(long, conflicts_with = "tree")]
        json: bool,
        /// This machine's pods, then each `[remote.hosts]` machine's, asked in parallel.
        #[arg(long, conflicts_with_all = ["tree", "json", "host"])]
        all: bool,
        /// Each child pod under its parent, with state, model and last activity. Children
        /// whose pod is gone (no pod.json left) are shown as `gone`.
        #[arg(long)]
        tree: bool,
    },
    /// Submit input and print the reply as the pod keeps it (cleaned, as each message commits);
    /// exit 0 when the run finishes, 1 on error.
    Send {
        name: Option<Target>,
        /// The text to send; `-` or nothing reads standard input.
        text: Option<String>,
        /// Print every event of the run as NDJSON instead of the reply text.
        #[arg(long)]
        json: bool,
        /// Exit as soon as the pod acknowledged the input.
        #[arg(long)]
        no_wait: bool,
    },
    /// Tell a running pod something; exits 0 only after the pod durably acknowledged it.
    Notify {
        name: Option<Target>,
        /// The message; `-` or nothing reads standard input.
        text: Option<String>,
        /// Record the notification without starting a turn.
        #[arg(long)]
        no_wake: bool,
    },
    /// Follow a pod's event stream (Ctrl-C to stop).
    Events {
        name: Option<Target>,
        /// Raw NDJSON frames.
        #[arg(long)]
        json: bool,
        /// Continue after this event seq (of the same pod process) instead of a snapshot.
        #[arg(long)]
        since: Option<EventSeq>,
    },
    /// Committed entries of the pod's active segment; `--all` for every segment, oldest first.
    History {
        name: Option<Target>,
        /// One JSON entry per line (with `--all`, each segment begins with its `segment_start`).
        #[arg(long)]
        json: bool,
        /// Every segment of the pod in order (the list in its pod.json), each introduced by a
        /// line naming it and where it came from (compacted, cleared, new); read from the log
        /// files, whether the pod runs or not.
        #[arg(long)]
        all: bool,
    },
    /// Compress the pod's earlier segments (`<id>.jsonl` → `<id>.jsonl.gz`); `history --all`,
    /// paging in the TUI and search still read them. Never the active segment; safe while the
    /// pod runs (see docs/storage.md).
    Archive {
        name: Option<PodName>,
        /// Only segments last written at least this many days ago.
        #[arg(long, value_name = "DAYS")]
        older_than: Option<u64>,
    },
    /// The task list the pod's model keeps: `[x]` done, `[~]` in progress, `[ ]` pending.
    Tasks {
        name: Option<PodName>,
        /// The list as JSON: `[{"content": …, "status": "pending" | "in_progress" | "done"}]`.
        #[arg(long)]
        json: bool,
    },
    /// The exact JSON body of the pod's next provider request.
    Context { name: Option<Target> },
    /// Make pod NEW whose history is NAME's up to a turn (default: its last finished one):
    /// NEW's next request is the one NAME would have sent there. NAME is only read.
    Fork(ForkArgs),
    /// Take pod NAME back to the end of turn TURN: its conversation (a new segment; the old
    /// one stays, `history --all`), the files its file tools changed since, or both (default).
    /// Shows what will change and asks first.
    Rewind(RewindArgs),
    /// Plumbing for pods on other machines: the pod protocol on stdin and stdout, relayed to
    /// pod NAME's socket here (what `ssh HOST seedpod bridge NAME` runs; see docs/protocol.md).
    Bridge {
        name: PodName,
        /// Start (restore) the pod first when it is stopped.
        #[arg(long)]
        start: bool,
    },
    /// The pod's MCP servers.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Pause the running turn, keeping what it committed.
    Pause { name: Option<Target> },
    /// Resume a paused turn.
    Resume { name: Option<Target> },
    /// Cancel the running or paused turn.
    Cancel { name: Option<Target> },
    /// Stop a pod gracefully; `seedpod start NAME` restores it. Its child pods keep running
    /// unless --with-children.
    Stop {
        name: Option<Target>,
        /// Stop its child pods first (and theirs, deepest first), then NAME.
        #[arg(long)]
        with_children: bool,
    },
    /// Have pod PARENT start a child pod CHILD working on TASK; prints CHILD when it runs. The
    /// child reports back to PARENT when it finishes a turn, fails or stops.
    Spawn(SpawnArgs),
    /// Stop and start a pod (it restores exactly from its log).
    Restart { name: Option<Target> },
    /// Answer the tool call waiting for approval (approve it by default).
    Approve {
        name: Option<Target>,
        /// Deny it instead; the model reads REASON in the call's error result.
        #[arg(long, value_name = "REASON", conflicts_with = "always")]
        deny: Option<String>,
        /// Approve it and stop asking for the calls its rule covers (for shell: program and
        /// subcommand, or the exact command; `seedpod approvals NAME` lists and revokes rules).
        #[arg(long)]
        always: bool,
        /// The call to answer (default: the oldest one waiting).
        #[arg(long, value_name = "CALL_ID")]
        call: Option<String>,
    },
    /// The standing approvals ("always" answers) of pod NAME, numbered; revoke one or all.
    Approvals {
        name: Option<PodName>,
        /// Print them as a JSON array.
        #[arg(long)]
        json: bool,
        /// Withdraw standing approval N (as numbered by the list); that call asks again.
        #[arg(long, value_name = "N", conflicts_with = "revoke_all")]
        revoke: Option<usize>,
        /// Withdraw every standing approval.
        #[arg(long)]
        revoke_all: bool,
    },
    /// The system prompt: `prompt show [NAME]` renders it layer by layer with each source.
    Prompt {
        #[command(subcommand)]
        command: PromptCommand,
    },
    /// Configuration: `config show [NAME]` prints the effective settings and where each came from.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Let DIR's `.seedpod/config.toml` (default: this directory's) loosen policy — allow a
    /// tool, add scope roots, point at another endpoint — exactly as the file reads now.
    /// Without trust such keys are ignored; any change to the file makes it untrusted again.
    Trust {
        dir: Option<PathBuf>,
        /// Withdraw trust: its loosening keys are ignored from the next start.
        #[arg(long)]
        revoke: bool,
    },
    /// Run TASK on a new throwaway pod and exit with its outcome (for scripts and CI): the
    /// answer on stdout, progress on stderr; exit 0 done, 1 failed, 3 a call needed approval,
    /// 130 interrupted. The pod is deleted afterwards unless --keep. See docs/exec.md.
    Exec(crate::exec::ExecArgs),
    /// Write pod NAME's transcript for sharing: Markdown, one self-contained HTML file, or the
    /// log's JSON lines; the active segment, or every one with --all. See docs/export.md.
    Export(crate::export::ExportArgs),
    /// Pod process commands.
    Pod {
        #[command(subcommand)]
        command: PodCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective configuration (secrets redacted) of pod NAME, or without NAME of a new pod
    /// started in this directory, each value with the file, variable or flag that set it.
    Show { name: Option<PodName> },
}

#[derive(Debug, Subcommand)]
pub enum PromptCommand {
    /// The layered system prompt of pod NAME (or of a new pod in this directory), each layer
    /// with its source, and whether the pod's current segment uses it.
    Show { name: Option<PodName> },
}

#[derive(Debug, Subcommand)]
pub enum PodCommand {
    /// Run a pod in the foreground (what `seedpod start` spawns).
    Serve(ServeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// Deterministic test and demo double that plays a JSON-lines script (--script FILE).
    Scripted,
    Anthropic,
    Openai,
    /// OpenAI's Responses API (reasoning kept across turns; `[responses]` in the config).
    OpenaiResponses,
}

/// Flags that configure a pod: the highest layer above `config.toml`, `.seedpod/config.toml`
/// and the environment (`SEEDPOD_PROVIDER`, `SEEDPOD_MODEL`, `OPENAI_BASE_URL`), which
/// `seedpod-config` reads so it can say which layer set what.
#[derive(Debug, Args)]
pub struct ForkArgs {
    pub name: PodName,
    pub new: PodName,
    /// The turn to fork after (the person's messages, from 1; 0: before the first).
    #[arg(long, value_name = "TURN", conflicts_with = "seq")]
    pub at: Option<usize>,
    /// The entry of NAME's active segment to fork after (a `run_end`; `history --json`).
    #[arg(long, value_name = "SEQ")]
    pub seq: Option<u64>,
    /// NEW's working directory (default: NAME's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RewindArgs {
    pub name: Option<PodName>,
    /// Go back to the end of this turn (the person's messages, from 1; 0: the very start).
    #[arg(long, value_name = "TURN")]
    pub to: usize,
    /// Only restore the files, keeping the conversation.
    #[arg(long, conflicts_with_all = ["conversation", "both"])]
    pub files: bool,
    /// Only rewind the conversation, leaving the files as they are.
    #[arg(long, conflicts_with = "both")]
    pub conversation: bool,
    /// The conversation and the files (the default).
    #[arg(long)]
    pub both: bool,
    /// Do it without asking (what will change is still printed).
    #[arg(long, conflicts_with = "dry_run")]
    pub yes: bool,
    /// Only show what would change.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct PodConfigArgs {
    /// Working directory of a new pod (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,
    #[arg(long)]
    pub model: Option<String>,
    /// Provider endpoint, e.g. http://127.0.0.1:11434/v1 for a local OpenAI-compatible server.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Sampling temperature (not sent unless set). Recorded in the log with the model, so a
    /// restored pod sends exactly the same requests.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Output token limit per model request (the provider's default unless set).
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Script for the scripted provider (JSON lines, one response per line).
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Session instructions for a new pod: TEXT, or @FILE to read them from a file. A layer of
    /// every segment's system prompt.
    #[arg(long, value_name = "TEXT|@FILE")]
    pub instructions: Option<String>,
}

#[derive(Debug, Args)]
pub struct StartArgs {
    pub name: Option<PodName>,
    #[command(flatten)]
    pub config: PodConfigArgs,
}

#[derive(Debug, Args)]
pub struct SpawnArgs {
    /// The running pod that starts the child and receives its reports.
    pub parent: PodName,
    /// The new pod's name.
    pub child: PodName,
    /// The child's first input; `-` reads standard input.
    pub task: String,
    /// A path the child may read (relative to this directory); repeatable. Without any, the
    /// parent's working directory. Each must be readable by the parent.
    #[arg(long, value_name = "PATH")]
    pub read: Vec<PathBuf>,
    /// A path the child may write; repeatable. Without any, the child writes nothing. Each
    /// must be writable by the parent, which cannot write it until the child stops.
    #[arg(long, value_name = "PATH")]
    pub write: Vec<PathBuf>,
    /// The child's model (default: the parent's).
    #[arg(long)]
    pub model: Option<String>,
    /// Session instructions for the child: TEXT, or @FILE to read them from a file.
    #[arg(long, value_name = "TEXT|@FILE")]
    pub instructions: Option<String>,
    /// Which of the parent's MCP servers the child starts, comma-separated; "" for none.
    /// Without it, all of the parent's.
    #[arg(long, value_name = "NAMES")]
    pub mcp_servers: Option<String>,
}

/// `a,b` as a list of names; an empty string is the empty list.
pub fn name_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    pub name: PodName,
    #[command(flatten)]
    pub config: PodConfigArgs,
    /// Model requests allowed per run before it ends with `limit_reached` (overrides
    /// `[loop] max_iterations`).
    #[arg(long)]
    pub max_iterations: Option<u32>,
    /// Print `ready` on standard output once the socket accepts connections.
    #[arg(long)]
    pub ready_line: bool,
    #[command(flatten)]
    pub child: ChildArgs,
    /// Set by `seedpod exec`: the read end of a pipe that closes when exec is gone
    /// (`lease.rs`).
    #[arg(long, value_name = "FD", hide = true)]
    pub exec_lease: Option<i32>,
    /// Set by `seedpod exec --keep`: when exec is gone, only cancel the run.
    #[arg(long, hide = true, requires = "exec_lease")]
    pub exec_keep: bool,
}

/// How a parent pod starts a child (`seedpod pod serve CHILD --parent P --task T ...`). Only a
/// new pod uses them; an existing pod's lineage and scope are in its `pod.json`.
#[derive(Debug, Clone, Default, Args)]
pub struct ChildArgs {
    /// The parent pod's name: this pod reports to it.
    #[arg(long, value_name = "NAME", requires = "task")]
    pub parent: Option<PodName>,
    /// The child's first input.
    #[arg(long, value_name = "TEXT", requires = "parent")]
    pub task: Option<String>,
    /// An absolute path the child may read; repeatable. Replaces the configured read roots.
    #[arg(long, value_name = "PATH", requires = "parent")]
    pub scope_read: Vec<PathBuf>,
    /// An absolute path the child may write; repeatable. Replaces the configured write roots
    /// (the working directory is not one unless listed).
    #[arg(long, value_name = "PATH", requires = "parent")]
    pub scope_write: Vec<PathBuf>,
    /// The parent's MCP servers this child starts, comma-separated (empty: none). Without
    /// it, every configured server.
    #[arg(long, value_name = "NAMES", requires = "parent")]
    pub mcp_servers: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Each MCP server of pod NAME: its state, its tools and their approvals, and why it is not
    /// running when it is not.
    Ls {
        name: Option<PodName>,
        /// Only this server.
        #[arg(long, value_name = "SERVER")]
        server: Option<String>,
        /// As JSON: `[{"name", "transport", "state", "tools", "last_error", "restarts", "pid"}]`.
        #[arg(long)]
        json: bool,
    },
    /// Add MCP server NAME to the user's config (or this project's, --scope project): a
    /// command after `--`, or --url. Values may take `${VAR}` / `${VAR:-default}` from the
    /// pod's environment when it starts the server.
    Add {
        name: String,
        #[arg(long, value_enum, default_value_t = ConfigScope::User)]
        scope: ConfigScope,
        /// A variable set for a command server (repeatable).
        #[arg(long = "env", value_name = "K=V", value_parser = key_value)]
        env: Vec<(String, String)>,
        /// A header of a url server: K=VAR (the variable holding its value) or K='… ${VAR}'
        /// (repeatable).
        #[arg(long = "header", value_name = "K=V", value_parser = key_value)]
        header: Vec<(String, String)>,
        /// A Streamable HTTP endpoint instead of a command.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// Replace a server of that name.
        #[arg(long)]
        force: bool,
        /// The program and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Remove MCP server NAME from the user's config (or this project's).
    Remove {
        name: String,
        #[arg(long, value_enum, default_value_t = ConfigScope::User)]
        scope: ConfigScope,
    },
    /// MCP server NAME as a pod started here would see it, and which file set each key
    /// (env values and header templates are masked).
    Get { name: String },
    /// Add the servers of a `.mcp.json` or a desktop app's config (`mcpServers`); servers
    /// already configured are skipped.
    Import {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = ConfigScope::User)]
        scope: ConfigScope,
    },
    /// Log in to url MCP server SERVER with OAuth: prints the address to open, then waits for
    /// the browser to come back to this machine, or for that address pasted on stdin.
    Login {
        server: String,
        /// The loopback port the browser comes back to (any free one by default).
        #[arg(long)]
        port: Option<u16>,
    },
    /// Forget the OAuth login to MCP server SERVER.
    Logout { server: String },
    /// Connect to SERVER as a pod would, list its tools and call the first (for the MCP
    /// conformance suite's wrapper).
    #[command(hide = true)]
    Probe {
        server: String,
        /// The first tool's arguments, as JSON.
        #[arg(long)]
        arguments: Option<String>,
    },
    /// Serve pod NAME as an MCP server on stdio (for another agent or an editor): send it
    /// messages, read its history and status, list its waiting approvals, and answer them
    /// only when your config sets `[mcp_serve] answer_approvals = true`. See docs/mcp-serve.md.
    Serve { name: PodName },
}

/// Which config file `mcp add`, `remove` and `import` edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfigScope {
    /// `config.toml` in the config directory.
    User,
    /// `.seedpod/config.toml` here; a person's `seedpod trust` decides whether it applies.
    Project,
}

/// `K=V` as a pair.
fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("{text:?}: write KEY=VALUE")),
    }
}
