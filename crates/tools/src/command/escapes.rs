//! Programs and options that make a plain-looking command run something else or write a file
//! of the caller's choosing. A command using one is never covered by a standing rule (nor
//! offered one): `git status` approved "always" must not approve `git -c core.fsmonitor=… status`.
//!
//! The table is documented in the crate README ("Standing approvals: what a rule covers").

use std::path::Path;

use super::parse::Refusal;
use crate::scope::{Access, Scope};

/// Programs whose job is to run another command, a script, or a shell: a rule for one of them
/// would approve anything.
const WRAPPERS: &[&str] = &[
    "env",
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "nohup",
    "nice",
    "ionice",
    "chrt",
    "taskset",
    "timeout",
    "stdbuf",
    "unbuffer",
    "setsid",
    "xargs",
    "parallel",
    "exec",
    "eval",
    "command",
    "builtin",
    "source",
    ".",
    "time",
    "watch",
    "flock",
    "chroot",
    "unshare",
    "nsenter",
    "systemd-run",
    "script",
    "expect",
    "busybox",
    "strace",
    "ltrace",
    "gdb",
    "valgrind",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "rbash",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
    "pipx",
];

/// Words that start compound commands or are shell builtins with side effects on the shell.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "!", "[[", "]]", "{", "}", "coproc", "alias", "unalias", "trap", "set",
    "shopt", "enable", "export", "declare", "typeset", "local", "readonly", "unset", "cd", "pushd",
    "popd", "ulimit", "umask", "hash", "kill",
];

/// Refuse `words` if its program or one of its options escapes what the words say.
pub fn check(words: &[String], scope: Option<&Scope>) -> Result<(), Refusal> {
    let Some(program) = words.first() else {
        return Err("it names no program".into());
    };
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    if program.is_empty() {
        return Err("its program name is empty".into());
    }
    if KEYWORDS.contains(&program.as_str()) {
        return Err(format!("`{program}` is a shell keyword or builtin"));
    }
    if WRAPPERS.contains(&name) {
        return Err(format!("`{name}` runs another command"));
    }
    let args = &words[1..];
    match name {
        "git" => git(args, scope),
        "find" => refuse_options(
            "find",
            args,
            &[
                "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                "-fls",
            ],
        ),
        "cargo" => cargo(args),
        "npm" | "pnpm" | "yarn" | "bun" => node_package_manager(name, args),
        "go" => refuse_prefixed("go", args, &["-toolexec", "-exec", "--toolexec", "--exec"]),
        "make" | "gmake" => make(args),
        "tar" => refuse_prefixed(
            "tar",
            args,
            &[
                "--to-command",
                "--checkpoint-action",
                "--use-compress-program",
                "-I",
                "--info-script",
                "--new-volume-script",
                "-F",
                "--rsh-command",
            ],
        ),
        "rsync" => refuse_prefixed("rsync", args, &["-e", "--rsh", "--rsync-path"]),
        "ssh" | "scp" | "sftp" => Err(format!(
            "`{name}` reaches another machine; its options and config can run local commands"
        )),
        _ => Ok(()),
    }
}

/// git's global options that read config or a repository from elsewhere, and subcommands and
/// options that run a command or write a file the caller names.
fn git(args: &[String], scope: Option<&Scope>) -> Result<(), Refusal> {
    let mut rest = args.iter();
    // Global options come before the subcommand.
    let subcommand = loop {
        let Some(arg) = rest.next() else {
            return Ok(());
        };
        match arg.as_str() {
            "--no-pager"
            | "-P"
            | "-p"
            | "--paginate"
            | "--no-replace-objects"
            | "--bare"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "--version"
            | "-v"
            | "--help"
            | "-h"
            | "--no-advice" => {}
            "-C" => {
                let Some(dir) = rest.next() else {
                    return Err("git -C names no directory".into());
                };
                inside_scope(dir, scope)?;
            }
            option if option.starts_with('-') => {
                return Err(format!(
                    "git's global option `{}` changes which config, repository or programs git \
                     uses",
                    option_name(option)
                ));
            }
            subcommand => break subcommand,
        }
    };
    const RUNS_OR_CONFIGURES: &[&str] = &[
        "config",
        "submodule",
        "bisect",
        "filter-branch",
        "difftool",
        "mergetool",
        "daemon",
        "instaweb",
        "web--browse",
        "credential",
        "credential-store",
        "credential-cache",
        "upload-pack",
        "receive-pack",
        "upload-archive",
        "shell",
        "send-email",
        "imap-send",
        "remote-ext",
        "remote-fd",
        "hook",
        "sh-setup",
        "run-command",
        "var",
    ];
    if RUNS_OR_CONFIGURES.contains(&subcommand) {
        return Err(format!(
            "`git {subcommand}` can change git's configuration or run other programs"
        ));
    }
    let options: Vec<&String> = rest.collect();
    let refused: &[&str] = match subcommand {
        "rebase" => &["-x", "--exec"],
        "grep" => &["-O", "--open-files-in-pager"],
        "fetch" | "pull" | "clone" | "ls-remote" => &["--upload-pack", "-u"],
        "push" => &["--receive-pack", "--exec"],
        "archive" => &["--remote", "--exec", "-o", "--output"],
        "format-patch" => &["-o", "--output-directory"],
        _ => &[],
    };
    for option in &options {
        let name = option_name(option);
        if name == "--output" || name == "--ext-diff" || name == "--extcmd" {
            return Err(format!(
                "`git {subcommand} {name}` writes a file or runs an external program"
            ));
        }
        if let Some(hit) = refused
            .iter()
            .find(|r| name == **r || (r.len() == 2 && option.starts_with(*r)))
        {
            return Err(format!(
                "`git {subcommand} {hit}` runs a program or writes where the caller says"
            ));
        }
    }
    Ok(())
}

/// `-C DIR` is harmless only when DIR is inside what the pod may read.
fn inside_scope(dir: &str, scope: Option<&Scope>) -> Result<(), Refusal> {
    let Some(scope) = scope else {
        return Err("git -C: the pod's scope is not known".into());
    };
    scope
        .check(dir, Access::Read)
        .map(|_| ())
        .map_err(|_| format!("git -C {dir}: the directory is outside the pod's scope"))
}

fn cargo(args: &[String]) -> Result<(), Refusal> {
    if let Some(first) = args.first()
        && first.starts_with('+')
    {
        return Err(format!("`cargo {first}` picks another toolchain"));
    }
    for arg in args {
        let name = option_name(arg);
        if name == "--config" || arg.starts_with("-Z") || name == "--config-env" {
            return Err(format!(
                "`cargo {name}` changes cargo's configuration (which can name programs to run)"
            ));
        }
    }
    Ok(())
}

fn node_package_manager(name: &str, args: &[String]) -> Result<(), Refusal> {
    if let Some(sub) = args.iter().find(|a| !a.starts_with('-'))
        && matches!(sub.as_str(), "exec" | "x" | "dlx" | "create" | "init")
    {
        return Err(format!("`{name} {sub}` downloads and runs a package"));
    }
    refuse_prefixed(
        name,
        args,
        &[
            "--script-shell",
            "--node-options",
            "--shell",
            "--call",
            "-c",
        ],
    )
}

fn make(args: &[String]) -> Result<(), Refusal> {
    for arg in args {
        if arg.starts_with("--eval") || arg == "-E" {
            return Err("`make --eval` runs text as a makefile".into());
        }
        if is_assignment(arg) {
            return Err(format!(
                "`make {arg}` overrides a variable, which can change the commands make runs"
            ));
        }
    }
    Ok(())
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `--output=x` → `--output`, `-toolexec=x` → `-toolexec`; `-c` stays.
fn option_name(option: &str) -> &str {
    if option.starts_with('-') {
        option.split_once('=').map_or(option, |(name, _)| name)
    } else {
        option
    }
}

fn refuse_options(program: &str, args: &[String], refused: &[&str]) -> Result<(), Refusal> {
    match args.iter().find(|a| refused.contains(&a.as_str())) {
        Some(hit) => Err(format!(
            "`{program} {hit}` runs a command or writes where the caller says"
        )),
        None => Ok(()),
    }
}

/// Refuse an option given alone, with `=value`, or (for short ones) with its value attached.
fn refuse_prefixed(program: &str, args: &[String], refused: &[&str]) -> Result<(), Refusal> {
    for arg in args {
        let name = option_name(arg);
        let hit = refused.iter().find(|r| {
            name == **r || (r.len() == 2 && arg.starts_with(**r) && !r.starts_with("--"))
        });
        if let Some(hit) = hit {
            return Err(format!(
                "`{program} {hit}` runs a command or writes where the caller says"
            ));
        }
    }
    Ok(())
}
