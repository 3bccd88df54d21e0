//! Programs and options that make a plain-looking command run something else or write a file
//! of the caller's choosing. A command using one is never covered by a standing rule (nor
//! offered one): `git status` approved "always" must not approve `git -c core.fsmonitor=… status`.
//!
//! The tables here are the one declaration of those options; `options.rs` finds them however
//! they are spelled, `git.rs` holds git's, and the crate README ("Standing approvals: what a
//! rule covers") explains each.

use std::path::Path;

use super::git;
use super::options::{Escape, Found, OptionRules, Syntax, find_escape};
use super::parse::Refusal;
use crate::scope::Scope;

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
    if program.is_empty() {
        return Err("its program name is empty".into());
    }
    let name = base_name(program);
    if KEYWORDS.contains(&program.as_str()) {
        return Err(format!("`{program}` is a shell keyword or builtin"));
    }
    if WRAPPERS.contains(&name) {
        return Err(format!("`{name}` runs another command"));
    }
    let args = &words[1..];
    match name {
        "git" => return git::check(args, scope),
        "ssh" | "scp" | "sftp" => {
            return Err(format!(
                "`{name}` reaches another machine; its options and config can run local commands"
            ));
        }
        "cargo" => cargo_toolchain(args)?,
        "npm" | "pnpm" | "yarn" | "bun" => package_runner(name, args)?,
        "make" | "gmake" => make_assignments(name, args)?,
        _ => {}
    }
    match program_options(name) {
        Some(rules) => refuse_found(name, find_escape(rules, args)),
        None => Ok(()),
    }
}

/// `/usr/bin/git` is git.
pub fn base_name(program: &str) -> &str {
    Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program)
}

/// The refusal for an option `find_escape` found.
pub fn refuse_found(program: &str, found: Option<Found<'_>>) -> Result<(), Refusal> {
    match found {
        None => Ok(()),
        Some(found) if found.spelled.starts_with(&found.option) => Err(format!(
            "`{program} {}`: {}",
            found.spelled, found.escape.why
        )),
        Some(found) => Err(format!(
            "`{program} {}` is read as `{}`: {}",
            found.spelled, found.option, found.escape.why
        )),
    }
}

/// Every program with refused options, by the names it is run as, for the checks and the
/// tests that try every spelling of every option.
pub const PROGRAM_OPTIONS: &[(&[&str], OptionRules)] = &[
    (&["find"], FIND),
    (&["cargo"], CARGO),
    (&["npm", "pnpm", "yarn", "bun"], PACKAGE_MANAGER),
    (&["go"], GO),
    (&["make", "gmake"], MAKE),
    (&["tar"], TAR),
    (&["rsync"], RSYNC),
];

fn program_options(name: &str) -> Option<&'static OptionRules> {
    PROGRAM_OPTIONS
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, rules)| rules)
}

/// `--` ends the options of every getopt-style program here.
const DASH_DASH: &[&str] = &["--"];

const FIND: OptionRules = OptionRules {
    syntax: Syntax::SingleDash,
    // find reads `--` only before its paths; an expression after it is still an expression.
    end_markers: &[],
    harmless: &[],
    escapes: &[
        Escape {
            long: &["-exec", "-execdir", "-ok", "-okdir"],
            short: &[],
            why: "it runs a command on each file found",
        },
        Escape {
            long: &["-delete"],
            short: &[],
            why: "it deletes each file found",
        },
        Escape {
            long: &["-fprint", "-fprint0", "-fprintf", "-fls"],
            short: &[],
            why: "it writes to a file the caller names",
        },
    ],
};

const CARGO: OptionRules = OptionRules {
    syntax: Syntax::Gnu {
        old_style_first: false,
    },
    end_markers: DASH_DASH,
    harmless: &[],
    escapes: &[
        Escape {
            long: &["--config"],
            short: &[],
            why: "it changes cargo's configuration, which can name programs to run \
                  (a runner, a linker, rustc itself)",
        },
        Escape {
            long: &[],
            short: &['Z'],
            why: "it turns on unstable cargo features, some of which change what cargo runs",
        },
    ],
};

const PACKAGE_MANAGER: OptionRules = OptionRules {
    syntax: Syntax::Nopt,
    end_markers: DASH_DASH,
    harmless: &[],
    escapes: &[
        Escape {
            long: &["--script-shell", "--shell"],
            short: &[],
            why: "it names the shell that runs package scripts",
        },
        Escape {
            long: &["--call"],
            short: &['c'],
            why: "it gives a command line to run",
        },
        Escape {
            long: &["--node-options"],
            short: &[],
            why: "it passes options to node, which can load any script first (`--require`)",
        },
        Escape {
            long: &["--userconfig", "--globalconfig"],
            short: &[],
            why: "it reads settings from a file the caller names, and settings can name \
                  programs to run",
        },
    ],
};

const GO: OptionRules = OptionRules {
    syntax: Syntax::SingleDash,
    // `go test` hands flags after its packages to the test binary but still reads its own.
    end_markers: &[],
    harmless: &[],
    escapes: &[Escape {
        long: &["-toolexec", "-exec"],
        short: &[],
        why: "it names a program to run the compiler's tools or the built binary through",
    }],
};

const MAKE: OptionRules = OptionRules {
    syntax: Syntax::Gnu {
        old_style_first: false,
    },
    end_markers: DASH_DASH,
    harmless: &[],
    escapes: &[Escape {
        long: &["--eval"],
        short: &['E'],
        why: "it reads the text given as part of the makefile, so it can add any recipe",
    }],
};

const TAR: OptionRules = OptionRules {
    syntax: Syntax::Gnu {
        old_style_first: true,
    },
    end_markers: DASH_DASH,
    harmless: &["--checkpoint"],
    escapes: &[
        Escape {
            long: &["--to-command", "--checkpoint-action"],
            short: &[],
            why: "it runs a command for each file or at each checkpoint",
        },
        Escape {
            long: &["--use-compress-program"],
            short: &['I'],
            why: "it names the program that compresses or expands the archive",
        },
        Escape {
            long: &["--info-script", "--new-volume-script"],
            short: &['F'],
            why: "it runs a script at the end of each volume",
        },
        Escape {
            long: &["--rsh-command", "--rmt-command"],
            short: &[],
            why: "it names the program that reaches a remote archive",
        },
    ],
};

const RSYNC: OptionRules = OptionRules {
    syntax: Syntax::Gnu {
        old_style_first: false,
    },
    end_markers: DASH_DASH,
    harmless: &[],
    escapes: &[Escape {
        long: &["--rsh", "--rsync-path"],
        short: &['e'],
        why: "it names the program that reaches the other side, run through a shell",
    }],
};

/// `cargo +nightly …` picks another toolchain, which is another set of programs.
fn cargo_toolchain(args: &[String]) -> Result<(), Refusal> {
    match args.first() {
        Some(first) if first.starts_with('+') => {
            Err(format!("`cargo {first}` picks another toolchain"))
        }
        _ => Ok(()),
    }
}

/// Subcommands that fetch a package and run it: a rule for them approves any package.
fn package_runner(name: &str, args: &[String]) -> Result<(), Refusal> {
    match args.iter().find(|a| !a.starts_with('-')) {
        Some(sub) if matches!(sub.as_str(), "exec" | "x" | "dlx" | "create" | "init") => {
            Err(format!("`{name} {sub}` downloads and runs a package"))
        }
        _ => Ok(()),
    }
}

/// make reads every argument with `=` in it as a variable definition (`SHELL=…`, `CC=…`, and
/// `X!=cmd`, which runs `cmd` at once), before or after `--`; names may hold almost any
/// character, so any such word is refused rather than parsed.
fn make_assignments(name: &str, args: &[String]) -> Result<(), Refusal> {
    let mut options_ended = false;
    for arg in args {
        if arg == "--" {
            options_ended = true;
        } else if arg.contains('=') && (options_ended || !arg.starts_with('-')) {
            return Err(format!(
                "`{name} {arg}` sets a make variable, which can change the commands make runs"
            ));
        }
    }
    Ok(())
}
