//! Finding a refused option however the program would read it.
//!
//! A program does not compare its arguments with option names letter for letter: git, GNU make,
//! GNU tar and npm take any unambiguous prefix of a long option (`--upload-pa` is
//! `--upload-pack`), getopt-style programs read a value glued to a short option (`-Efoo`) and
//! letters run together (`-kE foo`), and `--` ends the options. `find_escape` walks the words
//! the way such a parser would and reports the first refused option it meets. When in doubt it
//! errs towards finding one: a false find costs the person a question, a missed one lets a
//! standing rule cover something the person never saw.
//!
//! Abbreviations: every prefix of a refused long option with at least one letter after `--` is
//! refused. Git accepts whatever prefix is unambiguous among *that subcommand's* options, in
//! the installed version (`git push --e` is `--exec` today), so "the shortest unambiguous
//! prefix" cannot be known here; refusing every prefix loses nothing anyone types.

/// How a program spells its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// getopt_long and its kin (git's parse-options, GNU make and tar, clap, popt): `--name`,
    /// `--name=value`, `--name value`, abbreviated long names; `-x`, `-xVALUE`, clusters `-abx`.
    /// `old_style_first`: the first argument may be a cluster without a dash (`tar xIf …`).
    Gnu { old_style_first: bool },
    /// npm's parser (nopt): as `Gnu`, and a single dash may also start a long name
    /// (`-script-shell=…`), abbreviated too.
    Nopt,
    /// Go's flag package and find's expressions: `-name` or `--name`, matched whole, the value
    /// after `=` or in the next word; no clusters, no abbreviations.
    SingleDash,
}

/// One escape: options that make a program run something or write where the caller says.
#[derive(Debug)]
pub struct Escape {
    /// Long names with their dashes (`--upload-pack`, or `-exec` for `SingleDash` programs).
    pub long: &'static [&'static str],
    /// Short option letters (`E` for `-E`).
    pub short: &'static [char],
    /// What the option does that a rule must not cover, for the person and the README.
    pub why: &'static str,
}

/// How one program's options are read and which are refused.
#[derive(Debug)]
pub struct OptionRules {
    pub syntax: Syntax,
    /// Words after which nothing is an option (`--`; git also has `--end-of-options`).
    pub end_markers: &'static [&'static str],
    /// Full names of harmless options that are prefixes of a refused one (tar's
    /// `--checkpoint` before `--checkpoint-action`): an exact name is that option, not an
    /// abbreviation.
    pub harmless: &'static [&'static str],
    pub escapes: &'static [Escape],
}

/// A refused option as it was spelled, and which one it is.
#[derive(Debug)]
pub struct Found<'a> {
    pub spelled: &'a str,
    pub option: String,
    pub escape: &'static Escape,
}

/// The first refused option in `args` (the words after the program, or after git's
/// subcommand), reading them as `rules.syntax` does.
pub fn find_escape<'a>(rules: &OptionRules, args: &'a [String]) -> Option<Found<'a>> {
    let mut previous: Option<&str> = None;
    for (index, arg) in args.iter().enumerate() {
        if rules.end_markers.contains(&arg.as_str()) && ends_options(previous) {
            return None;
        }
        if let Some((option, escape)) = escape_in(rules, arg, index == 0) {
            return Some(Found {
                spelled: arg,
                option,
                escape,
            });
        }
        previous = Some(arg);
    }
    None
}

/// `--` ends the options unless it is the value of the option before it (`--grep --`): only
/// an option word that carries no value of its own could take the next word as its value.
fn ends_options(previous: Option<&str>) -> bool {
    match previous {
        None => true,
        Some(word) => !word.starts_with('-') || (word.starts_with("--") && word.contains('=')),
    }
}

fn escape_in(rules: &OptionRules, arg: &str, first: bool) -> Option<(String, &'static Escape)> {
    match rules.syntax {
        Syntax::SingleDash => {
            let name = arg.strip_prefix('-')?;
            let name = name.strip_prefix('-').unwrap_or(name);
            let name = name.split_once('=').map_or(name, |(name, _)| name);
            rules.escapes.iter().find_map(|escape| {
                escape
                    .long
                    .iter()
                    .find(|long| long.trim_start_matches('-') == name)
                    .map(|long| (long.to_string(), escape))
            })
        }
        Syntax::Gnu { old_style_first } => {
            if let Some(long) = arg.strip_prefix("--") {
                abbreviated_long(rules, long)
            } else if let Some(cluster) = arg.strip_prefix('-') {
                in_cluster(rules, cluster)
            } else if first && old_style_first {
                in_cluster(rules, arg)
            } else {
                None
            }
        }
        Syntax::Nopt => {
            let long = arg.strip_prefix('-')?;
            match long.strip_prefix('-') {
                Some(long) => abbreviated_long(rules, long),
                // One letter is a short option (`-s` is `--silent`, not `--shell`).
                None if long.chars().count() == 1 => in_cluster(rules, long),
                None => abbreviated_long(rules, long).or_else(|| in_cluster(rules, long)),
            }
        }
    }
}

/// `name` is what follows `--`, perhaps with `=value`: refused when it is a prefix of a
/// refused long option. Compared lower-cased with `_` read as `-`, which some parsers accept
/// and which only ever finds more.
fn abbreviated_long(rules: &OptionRules, name: &str) -> Option<(String, &'static Escape)> {
    let name = name.split_once('=').map_or(name, |(name, _)| name);
    if name.is_empty() {
        return None;
    }
    let name = name.to_ascii_lowercase().replace('_', "-");
    if rules
        .harmless
        .iter()
        .any(|harmless| harmless.trim_start_matches('-') == name)
    {
        return None;
    }
    rules.escapes.iter().find_map(|escape| {
        escape
            .long
            .iter()
            .find(|long| long.trim_start_matches('-').starts_with(&name))
            .map(|long| (long.to_string(), escape))
    })
}

/// Short options run together, a value possibly glued on: a refused letter anywhere in the
/// word is refused, since which earlier letter takes the rest as its value is not known here.
fn in_cluster(rules: &OptionRules, cluster: &str) -> Option<(String, &'static Escape)> {
    cluster.chars().find_map(|letter| {
        rules
            .escapes
            .iter()
            .find(|escape| escape.short.contains(&letter))
            .map(|escape| (format!("-{letter}"), escape))
    })
}
