//! The `seedpod` command: parses flags, wires the crates, nothing else (DESIGN §2).

mod approvals;
mod approve;
mod archive;
mod args;
mod attach;
mod children;
mod control;
mod demo;
mod detect;
#[cfg(test)]
mod error_chains;
mod exec;
mod export;
mod fork;
mod format;
mod history;
mod lease;
mod lineage;
mod logfile;
mod ls;
mod mcp;
mod mcp_edit;
mod mcp_get;
mod mcp_login;
mod mcp_report;
mod mcp_serve;
mod one_shot;
mod pods;
mod prompt;
mod redact;
mod remote;
mod rewind;
mod send;
mod serve;
mod session;
mod settings;
mod show;
mod start;
mod tally;
mod tasks;
mod terminal;
#[cfg(test)]
mod test_support;
mod trust;

use anyhow::Result;
use clap::Parser;
use seedpod_cli::exit;
use seedpod_client::{Home, Target};
use seedpod_protocol::{Method, PodName};

use crate::args::{Cli, Command, ConfigCommand, McpCommand, PodCommand, PromptCommand};

fn main() {
    let cli = Cli::parse();
    if let Err(err) = run(cli) {
        exit::fail(&err);
    }
}

fn run(cli: Cli) -> Result<()> {
    let home = Home::from_env()?;
    if let Some(Command::Pod {
        command: PodCommand::Serve(args),
    }) = cli.command
    {
        // The pod builds its own multi-threaded runtime after logging is set up.
        ignore_file_size_signal();
        let ready_line = args.ready_line;
        let result = serve::run(home, args);
        if let Err(err) = &result
            && ready_line
        {
            serve::report_failure(err);
        }
        return result;
    }
    // A model's command that runs `seedpod approve` or `seedpod send` must not pass for the
    // person; the sandbox already stops it (no Unix socket, no seedpod directories), and this
    // says so plainly, in words the shell tool recognises and alerts the person to.
    if seedpod_tools::inside_sandbox() {
        anyhow::bail!("{}", seedpod_tools::CLI_REFUSAL);
    }
    restore_sigpipe();
    let command = match cli.command.map(|command| one_shot::run(&home, command)) {
        Some(Ok(done)) => return done,
        Some(Err(command)) => Some(*command),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match command {
        Some(command) => runtime.block_on(dispatch(home, command)),
        None => runtime.block_on(attach::attach(&home, None)),
    }
}

/// Client commands end quietly when their output pipe closes (`seedpod events p | head`), like
/// other Unix tools, instead of panicking in `println!`. Not for the pod process, which must
/// survive the reader of its `ready` line going away.
fn restore_sigpipe() {
    // SAFETY: resetting a signal disposition to its default touches no memory of ours; this
    // runs before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Under a file-size limit (`ulimit -f`) a write past it raises SIGXFSZ, which kills the
/// process by default. The pod would rather see the write fail (EFBIG) like any other storage
/// failure: refuse what it cannot write, say why, and keep serving.
fn ignore_file_size_signal() {
    // SAFETY: setting a signal disposition to ignore touches no memory of ours; this runs
    // before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

async fn dispatch(home: Home, command: Command) -> Result<()> {
    let existing = |name: Option<PodName>| pods::resolve_existing(&home, name.as_ref());
    // Commands that speak the protocol reach a pod here or `HOST:NAME` alike.
    let target = |target: Option<Target>| pods::resolve_target(&home, target.as_ref());
    // Commands that read this machine's files, for a name that must be local.
    let here = |target: Option<Target>, what: &str| match target {
        None => existing(None),
        Some(Target::Local(name)) => existing(Some(name)),
        Some(remote @ Target::Remote { .. }) => Err(exit::Exit::usage(format!(
            "{what} reads this machine's files; for {remote}, run it there (`ssh HOST seedpod …`)"
        ))),
    };
    match command {
        Command::Attach { name } => match name {
            Some(Target::Remote { .. }) => attach::attach_remote(&home, &target(name)?).await,
            Some(Target::Local(name)) => attach::attach(&home, Some(name)).await,
            None => attach::attach(&home, None).await,
        },
        Command::Demo => demo::demo(&home).await,
        Command::Start(args) => start::start(&home, args).await,
        Command::Bridge { name, start } => remote::bridge(&home, &name, start).await,
        Command::Ls { all: true, .. } => remote::ls_all(&home).await,
        Command::Ls {
            host: Some(Target::Remote { host, name }),
            json,
            ..
        } => {
            if let Some(name) = name {
                return Err(exit::Exit::usage(format!(
                    "ls lists machines' pods: write `seedpod ls {host}:` (without {name})"
                )));
            }
            let remote = remote::reach(&home, &host)?;
            let args: &[&str] = if json { &["ls", "--json"] } else { &["ls"] };
            remote::relay(&remote, args, remote::MANAGE_LIMIT).await
        }
        Command::Ls {
            host: Some(Target::Local(name)),
            ..
        } => Err(exit::Exit::usage(format!(
            "ls takes a machine as HOST: (a colon at the end), not a pod name like {name}"
        ))),
        Command::Ls {
            json: _,
            tree: true,
            ..
        } => children::tree(&home).await,
        Command::Ls { json, .. } => ls::ls(&home, json).await,
        Command::Spawn(args) => children::spawn(&home, args).await,
        Command::Send {
            name,
            text,
            json,
            no_wait,
        } => {
            let pod = target(name)?;
            let text = pods::text_or_stdin(text)?;
            send::send(&home, &pod, text, json, no_wait).await
        }
        Command::Notify {
            name,
            text,
            no_wake,
        } => {
            let pod = target(name)?;
            let text = pods::text_or_stdin(text)?;
            control::notify(&home, &pod, text, !no_wake).await
        }
        Command::Events { name, json, since } => {
            show::events(&home, &target(name)?, json, since).await
        }
        Command::History {
            name,
            json,
            all: false,
        } => show::history(&home, &target(name)?, json).await,
        Command::History {
            name,
            json,
            all: true,
        } => history::all_segments(&home, &here(name, "history --all")?, json),
        Command::Tasks { name, json } => tasks::show(&home, &existing(name)?, json),
        Command::Archive { name, older_than } => archive::run(&home, &existing(name)?, older_than),
        Command::Context { name } => show::context(&home, &target(name)?).await,
        Command::Fork(args) => fork::fork(&home, args).await,
        Command::Rewind(args) => {
            let name = existing(args.name.clone())?;
            rewind::rewind(&home, &name, args).await
        }
        Command::Mcp {
            command: McpCommand::Ls { name, server, json },
        } => mcp::ls(&home, &existing(name)?, server, json).await,
        Command::Mcp {
            command:
                McpCommand::Add {
                    name,
                    scope,
                    env,
                    header,
                    url,
                    force,
                    command,
                },
        } => mcp_edit::add(
            &home,
            &name,
            scope,
            mcp_edit::Given {
                env,
                header,
                url,
                command,
            },
            force,
        ),
        Command::Mcp {
            command: McpCommand::Remove { name, scope },
        } => mcp_edit::remove(&home, &name, scope),
        Command::Mcp {
            command: McpCommand::Get { name },
        } => mcp_get::get(&home, &name),
        Command::Mcp {
            command: McpCommand::Import { file, scope },
        } => mcp_edit::import(&home, &file, scope),
        Command::Mcp {
            command: McpCommand::Login { server, port },
        } => mcp_login::login(&home, &server, port).await,
        Command::Mcp {
            command: McpCommand::Logout { server },
        } => mcp_login::logout(&home, &server),
        Command::Mcp {
            command: McpCommand::Probe { server, arguments },
        } => mcp_login::probe(&home, &server, arguments).await,
        Command::Mcp {
            command: McpCommand::Serve { name },
        } => mcp_serve::serve(&home, &existing(Some(name))?).await,
        Command::Pause { name } => control::simple(&home, &target(name)?, Method::Pause).await,
        Command::Resume { name } => control::simple(&home, &target(name)?, Method::Resume).await,
        Command::Cancel { name } => control::simple(&home, &target(name)?, Method::Cancel).await,
        Command::Stop {
            name,
            with_children,
        } => match target(name)? {
            pods::Pod::Local(name) => children::stop(&home, &name, with_children).await,
            pods::Pod::Remote { remote, name } => {
                let mut args = vec!["stop", name.as_str()];
                if with_children {
                    args.push("--with-children");
                }
                remote::relay(&remote, &args, remote::MANAGE_LIMIT).await
            }
        },
        Command::Restart { name } => match target(name)? {
            pods::Pod::Local(name) => control::restart(&home, &name).await,
            pods::Pod::Remote { remote, name } => {
                remote::relay(&remote, &["restart", name.as_str()], remote::MANAGE_LIMIT).await
            }
        },
        Command::Approve {
            name,
            deny,
            always,
            call,
        } => approve::approve(&home, &target(name)?, deny, always, call).await,
        Command::Approvals {
            name,
            json,
            revoke,
            revoke_all,
        } => {
            let action = match (revoke, revoke_all) {
                (Some(n), _) => approvals::Action::Revoke(n),
                (None, true) => approvals::Action::RevokeAll,
                (None, false) => approvals::Action::List,
            };
            approvals::approvals(&home, &existing(name)?, action, json).await
        }
        Command::Prompt {
            command: PromptCommand::Show { name },
        } => prompt::show(&home, name.as_ref()).await,
        Command::Config {
            command: ConfigCommand::Show { name },
        } => settings::show_config(&home, name.as_ref()),
        Command::Trust { dir, revoke } => trust::trust(&home, dir.as_deref(), revoke),
        Command::Exec(args) => exec::exec(&home, args).await,
        Command::Export(args) => {
            let name = here(args.name.clone(), "export")?;
            export::export(&home, &name, &args)
        }
        Command::Pod {
            command: PodCommand::Serve(_),
        } => Ok(()),
    }
}
