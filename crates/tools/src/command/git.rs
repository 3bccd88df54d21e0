//! git's escapes: global options that load config or a repository from elsewhere, subcommands
//! that configure git or run programs, options that run a program or write a file the caller
//! names, and remote transports that run a command.
//!
//! git reads a subcommand's options with its parse-options, which takes any unambiguous prefix
//! of a long option and glued short options (`-Otouch`); `options.rs` reads them the same way.
//! Its global options (before the subcommand) are matched whole by git, and are refused unless
//! they are on a short list of harmless ones.

use super::escapes::refuse_found;
use super::options::{Escape, OptionRules, Syntax, find_escape};
use super::parse::Refusal;
use crate::scope::{Access, Scope};

/// Global options that change nothing about which config, repository or programs git uses.
const HARMLESS_GLOBALS: &[&str] = &[
    "--no-pager",
    "-P",
    "-p",
    "--paginate",
    "--no-replace-objects",
    "--bare",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--version",
    "-v",
    "--help",
    "-h",
    "--no-advice",
];

/// Subcommands that change git's configuration or exist to run other programs.
pub const RUNS_OR_CONFIGURES: &[&str] = &[
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
    "fetch-pack",
    "send-pack",
    "shell",
    "send-email",
    "imap-send",
    "remote-ext",
    "remote-fd",
    "hook",
    "sh-setup",
    "run-command",
    "var",
    "maintenance",
];

/// Remote helpers git has built in that run a command (`ext::sh -c …`) or talk over a
/// descriptor the caller picks (`fd::3`). Refused in any argument: a URL can hide in an option's
/// value, after `--`, or in `git remote add`.
const COMMAND_TRANSPORTS: &[&str] = &["ext::", "fd::"];

/// `--` ends a subcommand's options; so does `--end-of-options`, which git added so scripts
/// can pass words that begin with a dash.
const END_MARKERS: &[&str] = &["--", "--end-of-options"];

const fn rules(escapes: &'static [Escape]) -> OptionRules {
    OptionRules {
        syntax: Syntax::Gnu {
            old_style_first: false,
        },
        end_markers: END_MARKERS,
        harmless: &[],
        escapes,
    }
}

/// Options refused whatever the subcommand.
pub const ANY_SUBCOMMAND: OptionRules = rules(&[
    Escape {
        long: &["--output"],
        short: &[],
        why: "it writes the output to a file the caller names",
    },
    Escape {
        long: &["--ext-diff", "--extcmd"],
        short: &[],
        why: "it runs an external diff program",
    },
]);

/// Options refused for some subcommands, by subcommand.
pub const BY_SUBCOMMAND: &[(&[&str], OptionRules)] = &[
    (
        &["fetch", "pull", "clone", "ls-remote"],
        rules(&[Escape {
            long: &["--upload-pack"],
            short: &['u'],
            why: "it names the program git runs, through a shell, to serve the other side \
                  (`-u` is its short form for clone and ls-remote; fetch's own `-u` is refused \
                  too rather than told apart)",
        }]),
    ),
    (
        &["clone"],
        rules(&[
            Escape {
                long: &["--config"],
                short: &['c'],
                why: "it sets config in the new repository before it is fetched, which can \
                      allow a transport that runs commands or name hooks to run",
            },
            Escape {
                long: &["--template"],
                short: &[],
                why: "it copies hooks from a directory the caller names into the new repository",
            },
        ]),
    ),
    (
        &["init"],
        rules(&[Escape {
            long: &["--template"],
            short: &[],
            why: "it copies hooks from a directory the caller names into the new repository",
        }]),
    ),
    (
        &["push"],
        rules(&[Escape {
            long: &["--receive-pack", "--exec"],
            short: &[],
            why: "it names the program git runs, through a shell, to receive on the other side",
        }]),
    ),
    (
        &["grep"],
        rules(&[Escape {
            long: &["--open-files-in-pager"],
            short: &['O'],
            why: "it opens the matching files in a program the caller names",
        }]),
    ),
    (
        &["rebase"],
        rules(&[Escape {
            long: &["--exec"],
            short: &['x'],
            why: "it runs a command after each commit it replays",
        }]),
    ),
    (
        &["archive"],
        rules(&[
            Escape {
                long: &["--remote", "--exec"],
                short: &[],
                why: "it fetches the archive through a remote program the caller names",
            },
            Escape {
                long: &["--output"],
                short: &['o'],
                why: "it writes the archive to a file the caller names",
            },
        ]),
    ),
    (
        &["format-patch"],
        rules(&[Escape {
            long: &["--output-directory"],
            short: &['o'],
            why: "it writes the patches into a directory the caller names",
        }]),
    ),
];

/// Refuse a git command whose global options, subcommand, options or URLs escape.
pub fn check(args: &[String], scope: Option<&Scope>) -> Result<(), Refusal> {
    if let Some(arg) = args.iter().find(|arg| names_command_transport(arg)) {
        return Err(format!(
            "`git … {arg}` uses a transport that runs a command or reads a descriptor"
        ));
    }
    let Some((subcommand, rest)) = subcommand(args, scope)? else {
        return Ok(());
    };
    if RUNS_OR_CONFIGURES.contains(&subcommand) {
        return Err(format!(
            "`git {subcommand}` can change git's configuration or run other programs"
        ));
    }
    let program = format!("git {subcommand}");
    refuse_found(&program, find_escape(&ANY_SUBCOMMAND, rest))?;
    for (subcommands, rules) in BY_SUBCOMMAND {
        if subcommands.contains(&subcommand) {
            refuse_found(&program, find_escape(rules, rest))?;
        }
    }
    Ok(())
}

/// The subcommand and the words after it, once the global options before it are vouched for;
/// `None` when there is no subcommand (`git --version`).
fn subcommand<'a>(
    args: &'a [String],
    scope: Option<&Scope>,
) -> Result<Option<(&'a str, &'a [String])>, Refusal> {
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        match arg.as_str() {
            "-C" => {
                let Some(dir) = args.get(index + 1) else {
                    return Err("git -C names no directory".into());
                };
                inside_scope(dir, scope)?;
                index += 2;
            }
            option if HARMLESS_GLOBALS.contains(&option) => index += 1,
            option if option.starts_with('-') => {
                let name = option.split_once('=').map_or(option, |(name, _)| name);
                return Err(format!(
                    "git's global option `{name}` changes which config, repository or programs \
                     git uses"
                ));
            }
            subcommand => return Ok(Some((subcommand, &args[index + 1..]))),
        }
    }
    Ok(None)
}

/// `ext::…` or `fd::…` at the start of a word or after a non-alphanumeric character (`=`, a
/// space), in any case: wherever git could take it as a URL.
fn names_command_transport(arg: &str) -> bool {
    let lower = arg.to_ascii_lowercase();
    COMMAND_TRANSPORTS.iter().any(|transport| {
        lower.match_indices(transport).any(|(at, _)| {
            lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric())
        })
    })
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
