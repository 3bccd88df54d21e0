//! Every spelling of every refused option, generated from the tables in `escapes.rs` and
//! `git.rs` the way each program would read it: abbreviated long options (`--upload-pa`), the
//! value glued on or in the next word, short options alone, with their value attached and inside
//! a cluster. Then the attack round's cases word for word, `--` and `--end-of-options`, and
//! commands that must still be plain.

use seedpod_protocol::quote_words;

use super::escapes::PROGRAM_OPTIONS;
use super::git::{ANY_SUBCOMMAND, BY_SUBCOMMAND};
use super::options::{OptionRules, Syntax};
use super::tests::{judged, scope};
use super::*;

/// A value that would run something if the option took it.
const VALUE: &str = "touch PWNED";

/// Every table: the words before the options (program, and git's subcommand) and its rules.
fn tables() -> Vec<(Vec<String>, &'static OptionRules)> {
    let mut tables = Vec::new();
    for (names, rules) in PROGRAM_OPTIONS {
        for name in *names {
            tables.push((vec![name.to_string()], rules));
        }
    }
    for subcommand in ["status", "log", "diff", "fetch", "clone", "push", "archive"] {
        tables.push((vec!["git".into(), subcommand.into()], &ANY_SUBCOMMAND));
    }
    for (subcommands, rules) in BY_SUBCOMMAND {
        for subcommand in *subcommands {
            tables.push((vec!["git".into(), subcommand.to_string()], rules));
        }
    }
    tables
}

/// Every way `rules.syntax` lets a caller spell long option `long`.
fn long_spellings(rules: &OptionRules, long: &str) -> Vec<Vec<String>> {
    let name = long.trim_start_matches('-');
    let mut options: Vec<String> = Vec::new();
    match rules.syntax {
        Syntax::SingleDash => {
            options.push(format!("-{name}"));
            options.push(format!("--{name}"));
        }
        Syntax::Gnu { .. } | Syntax::Nopt => {
            for end in 1..=name.len() {
                let prefix = &name[..end];
                if rules.harmless.contains(&format!("--{prefix}").as_str()) {
                    continue;
                }
                options.push(format!("--{prefix}"));
                options.push(format!("--{}", prefix.to_ascii_uppercase()));
                if rules.syntax == Syntax::Nopt && end > 1 {
                    options.push(format!("-{prefix}"));
                }
            }
        }
    }
    let mut spellings = Vec::new();
    for option in options {
        spellings.push(vec![format!("{option}={VALUE}")]);
        spellings.push(vec![option.clone(), VALUE.into()]);
        spellings.push(vec!["plain".into(), option, VALUE.into()]);
    }
    spellings
}

/// Every way a getopt-style program lets a caller spell short option `letter`.
fn short_spellings(rules: &OptionRules, letter: char) -> Vec<Vec<String>> {
    let mut spellings = vec![
        vec![format!("-{letter}"), VALUE.into()],
        vec![format!("-{letter}{VALUE}")],
        vec![format!("-q{letter}"), VALUE.into()],
        vec![format!("-q{letter}{VALUE}")],
        vec!["plain".into(), format!("-{letter}"), VALUE.into()],
    ];
    if rules.syntax
        == (Syntax::Gnu {
            old_style_first: true,
        })
    {
        spellings.push(vec![format!("q{letter}"), VALUE.into()]);
    }
    spellings
}

#[test]
fn every_spelling_of_every_refused_option_is_refused() {
    let (_dir, scope) = scope();
    let mut tried = 0;
    let mut covered = Vec::new();
    for (head, rules) in tables() {
        for escape in rules.escapes {
            let mut spellings = Vec::new();
            for long in escape.long {
                spellings.extend(long_spellings(rules, long));
            }
            for letter in escape.short {
                spellings.extend(short_spellings(rules, *letter));
            }
            for tail in spellings {
                let words: Vec<String> = head.iter().cloned().chain(tail).collect();
                let line = quote_words(&words);
                tried += 1;
                if let Judgement::Simple(words) = judged(&line, &scope) {
                    covered.push(format!("{line:?} → {words:?}"));
                }
            }
        }
    }
    assert!(tried > 1_000, "only {tried} spellings were generated");
    assert!(covered.is_empty(), "judged plain: {covered:#?}");
}

/// The attack round: each ran a command after "always" on the command in the comment.
const ATTACK_ROUND: &[&str] = &[
    // After `git fetch .`, `git clone . x`, `git pull .`, `git ls-remote .`:
    "git fetch --upload-pa='touch PWNED;' .",
    "git clone --upload-pa='touch PWNED;' . x",
    "git pull --upload-pa='touch PWNED;' .",
    "git ls-remote --upload-pa='touch PWNED;' .",
    "git clone -u'touch PWNED;' . x",
    // After `git push .`:
    "git push --receive-pa='touch PWNED;' . HEAD",
    "git push --exe='touch PWNED;' . HEAD",
    "git push --e='touch PWNED;' . HEAD",
    // After `git grep x`:
    "git grep --open='touch PWNED;' x",
    "git grep -iOtouch x",
    // After `git clone . x`:
    "git clone -c protocol.ext.allow=always 'ext::sh -c touch% PWNED' x",
    "git clone --conf protocol.ext.allow=always 'ext::sh -c touch% PWNED' x",
    "git clone --template=evil . x",
    "git clone 'ext::sh -c touch% PWNED' x",
    "git clone -- 'ext::sh -c touch% PWNED' x",
    "git fetch 'EXT::sh -c touch% PWNED'",
    "git fetch fd::3",
    "git remote add x ext::sh",
    "git -c protocol.ext.allow=always fetch 'ext::sh -c touch% PWNED'",
    "git --config-env=core.fsmonitor=EVIL status",
    "git --config-e=core.fsmonitor=EVIL status",
    // After `make x`:
    "make --ev='x:;touch PWNED' x",
    "make -E'x:;touch PWNED' x",
    "make -kE 'x:;touch PWNED' x",
    "make 'X!=touch PWNED' x",
    "make -- SHELL=/tmp/evil x",
    // After `npm test`:
    "npm --script-shel=./evil test",
    "npm test --script-sh ./evil",
    "npm -script-shell=./evil test",
    // Others in the table.
    "rsync -avze 'touch PWNED' a b",
    "tar --to-com='touch PWNED' -xf a.tar",
    "tar xIf touch a.tar",
    "cargo build --conf 'target.x.runner=\"touch PWNED\"'",
    "cargo build -vZunstable-options",
];

#[test]
fn the_attack_rounds_commands_are_refused() {
    let (_dir, scope) = scope();
    for attack in ATTACK_ROUND {
        match judged(attack, &scope) {
            Judgement::NotSimple(why) => assert!(!why.is_empty(), "{attack:?}"),
            Judgement::Simple(words) => panic!("{attack:?} judged plain: {words:?}"),
        }
    }
}

#[test]
fn a_refusal_says_which_option_an_abbreviation_is() {
    let (_dir, scope) = scope();
    let Judgement::NotSimple(why) = judged("git fetch --upload-pa='touch PWNED;' .", &scope) else {
        panic!("judged plain");
    };
    assert!(why.contains("`--upload-pack`"), "{why}");
    assert!(why.contains("git fetch --upload-pa="), "{why}");
}

#[test]
fn after_the_end_of_options_a_word_is_not_an_option() {
    let (_dir, scope) = scope();
    for plain in [
        "git log -- --output=x",
        "git log main -- --output=x",
        "git log --end-of-options --output=x",
        "git fetch --end-of-options --upload-pack=x",
        "cargo run -- -Zfoo --config x",
        "cargo test -- --nocapture",
        "npm run build -- --script-shell=x",
        "tar -cf a.tar -- -Ix",
    ] {
        assert!(
            matches!(judged(plain, &scope), Judgement::Simple(_)),
            "{plain:?} was refused"
        );
    }
    // `--` that may be the value of the option before it ends nothing.
    for refused in [
        "git log --grep -- --output=x",
        "git log -p -- --output=x",
        "make -C -- --eval=x",
        // make takes `NAME=value` after `--` too.
        "make -- X=y",
        // A URL after `--` is still a URL.
        "git fetch -- ext::sh",
    ] {
        assert!(
            matches!(judged(refused, &scope), Judgement::NotSimple(_)),
            "{refused:?} was judged plain"
        );
    }
}

#[test]
fn everyday_commands_stay_plain() {
    let (_dir, scope) = scope();
    for plain in [
        "git fetch origin",
        "git fetch --prune",
        "git fetch --prune --tags origin main",
        "git pull --rebase origin main",
        "git push -u origin main",
        "git push --force-with-lease origin HEAD",
        "git clone --depth 1 https://example.com/r.git",
        "git log --oneline -20",
        "git diff --stat HEAD~1",
        "git grep -n foo",
        "git rebase -i main",
        "git log --grep=next::thing",
        "make -j4 test",
        "make test",
        "npm test",
        "npm run build -s",
        "npm install --save-dev x",
        "cargo test -p x --features y",
        "cargo build --color always",
        "go test -v ./...",
        "find . -name '*.rs' -type f",
        "tar -xzf a.tar.gz",
        "tar xzf a.tar.gz",
        "tar --checkpoint -xf a.tar",
        "rsync -avz a b",
    ] {
        assert!(
            matches!(judged(plain, &scope), Judgement::Simple(_)),
            "{plain:?} was refused: {:?}",
            judged(plain, &scope)
        );
    }
}

/// The README's table is the person's account of the tables: every refused option is in it.
#[test]
fn the_readme_names_every_refused_option() {
    let readme = include_str!("../../README.md");
    let section = readme
        .split_once("## Standing approvals")
        .map(|(_, section)| section)
        .expect("the README has the standing approvals section");
    let mut missing = Vec::new();
    for (head, rules) in tables() {
        for escape in rules.escapes {
            for long in escape.long {
                if !section.contains(&format!("`{long}")) {
                    missing.push(format!("{} {long}", head.join(" ")));
                }
            }
            for letter in escape.short {
                if !section.contains(&format!("`-{letter}")) {
                    missing.push(format!("{} -{letter}", head.join(" ")));
                }
            }
        }
    }
    assert!(missing.is_empty(), "not in the README: {missing:?}");
}
