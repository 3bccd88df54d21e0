//! The rule "always" offers for three-level CLIs names the leaf, and no rule that stops short
//! of a leaf covers one: approving `gh pr list` never approves `gh pr merge 1 --admin`.

use seedpod_protocol::{CommandRule, StandingApproval};

use super::rule::{Groups, NESTED};
use super::tests::{judged, scope};
use super::*;

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_string).collect()
}

fn shell(rule: CommandRule) -> StandingApproval {
    StandingApproval {
        tool: "shell".into(),
        rule: Some(rule),
    }
}

/// (granted on, must not cover)
const OTHER_LEAVES: &[(&str, &str)] = &[
    ("gh pr list", "gh pr merge 1 --admin"),
    ("git remote show", "git remote set-url origin x"),
    ("uv tool list", "uv tool run x"),
    ("gh issue list", "gh issue delete 1 --yes"),
    ("gh repo view", "gh repo delete o/r --yes"),
    ("git stash list", "git stash drop"),
    ("git worktree list", "git worktree remove x"),
    ("uv pip list", "uv pip install x"),
    ("uv run pytest", "uv run rm -rf x"),
    ("docker container ls", "docker container rm x"),
    ("docker image ls", "docker image prune -a"),
    ("kubectl get pods", "kubectl get secrets -o yaml"),
    ("kubectl config view", "kubectl config set-context x"),
    ("npm run build", "npm run deploy"),
    ("cargo config get", "cargo config set x"),
];

#[test]
fn a_rule_granted_on_one_leaf_covers_only_that_leaf() {
    let (_dir, scope) = scope();
    for (granted, other) in OTHER_LEAVES {
        let granted_words = judged(granted, &scope);
        let granted_words = granted_words.words().expect("granted on a plain command");
        let rule = narrowest_rule(granted_words);
        assert_eq!(
            rule,
            CommandRule::Prefix(granted_words[..3].to_vec()),
            "{granted:?}"
        );
        let standing = shell(rule);
        assert!(
            standing_covers(&standing, "shell", Some(granted_words)),
            "{granted:?} must cover itself"
        );
        let mut with_option = granted_words.to_vec();
        with_option.push("--json".into());
        assert!(standing_covers(&standing, "shell", Some(&with_option)));
        let judgement = judged(other, &scope);
        assert!(
            !standing_covers(&standing, "shell", judgement.words()),
            "the rule for {granted:?} covers {other:?}"
        );
    }
}

#[test]
fn two_word_and_first_word_rules_cover_no_leaf_of_a_group() {
    let (_dir, scope) = scope();
    for (granted, other) in OTHER_LEAVES {
        let first_two = shell(CommandRule::Prefix(words(granted)[..2].to_vec()));
        let first_word = shell(CommandRule::Prefix(words(granted)[..1].to_vec()));
        for line in [granted, other] {
            let judgement = judged(line, &scope);
            assert!(
                !standing_covers(&first_two, "shell", judgement.words()),
                "{} covers {line:?}",
                first_two.display()
            );
            assert!(
                !standing_covers(&first_word, "shell", judgement.words()),
                "{} covers {line:?}",
                first_word.display()
            );
        }
    }
    // A first-word rule older pods wrote still covers a plain subcommand, but not one hidden
    // behind a global option.
    let gh = shell(CommandRule::Prefix(words("gh")));
    assert!(standing_covers(&gh, "shell", Some(&words("gh status"))));
    assert!(!standing_covers(
        &gh,
        "shell",
        Some(&words("gh -R o/r pr merge 1"))
    ));
    let git = shell(CommandRule::Prefix(words("git")));
    assert!(standing_covers(
        &git,
        "shell",
        Some(&words("git status --short"))
    ));
    assert!(!standing_covers(
        &git,
        "shell",
        Some(&words("git remote add x y"))
    ));
}

#[test]
fn every_group_in_the_table_needs_its_leaf() {
    for (program, groups) in NESTED {
        let listed: &[&str] = match groups {
            Groups::Only(groups) => groups,
            // Any word not in the exceptions is a group.
            Groups::AllExcept(_) => &["pr", "get", "any-subcommand"],
        };
        for group in listed {
            let list = words(&format!("{program} {group} list"));
            let other = words(&format!("{program} {group} delete x"));
            let rule = narrowest_rule(&list);
            assert_eq!(rule, CommandRule::Prefix(list.clone()), "{list:?}");
            assert!(rule_covers(&rule, &list));
            assert!(!rule_covers(&rule, &other), "{list:?} covers {other:?}");
            let two = CommandRule::Prefix(list[..2].to_vec());
            assert!(!rule_covers(&two, &list), "{two:?} covers {list:?}");
            assert!(!rule_covers(&two, &other), "{two:?} covers {other:?}");
        }
        if let Groups::AllExcept(plain) = groups {
            for subcommand in *plain {
                let line = words(&format!("{program} {subcommand} x"));
                assert_eq!(
                    narrowest_rule(&line),
                    CommandRule::Prefix(line[..2].to_vec())
                );
            }
        }
    }
}

#[test]
fn a_group_without_a_plain_leaf_gets_the_exact_command() {
    for line in [
        "git remote",
        "git remote -v",
        "git stash",
        "gh pr",
        "gh pr --help",
        "uv tool --help",
        "npm run",
        "kubectl version",
    ] {
        assert_eq!(
            narrowest_rule(&words(line)),
            CommandRule::Exact(words(line)),
            "{line:?}"
        );
    }
    // Two-level programs and subcommands keep program-and-subcommand rules.
    for (line, rule) in [
        (
            "git status --short",
            CommandRule::Prefix(words("git status")),
        ),
        ("git fetch origin", CommandRule::Prefix(words("git fetch"))),
        ("cargo test -p x", CommandRule::Prefix(words("cargo test"))),
        ("npm test", CommandRule::Prefix(words("npm test"))),
        ("gh status", CommandRule::Prefix(words("gh status"))),
        ("docker ps -a", CommandRule::Prefix(words("docker ps"))),
        ("make -j4 test", CommandRule::Exact(words("make -j4 test"))),
    ] {
        assert_eq!(narrowest_rule(&words(line)), rule, "{line:?}");
    }
}

#[test]
fn positive_cases_are_still_covered_by_the_rule_offered_for_them() {
    let (_dir, scope) = scope();
    for line in [
        "git fetch origin",
        "git fetch --prune",
        "make -j4 test",
        "npm test",
        "gh pr list --state open",
        "git remote show origin",
        "uv tool list",
    ] {
        let judgement = judged(line, &scope);
        let words = judgement.words().expect("a plain command");
        let standing = shell(narrowest_rule(words));
        assert!(
            standing_covers(&standing, "shell", Some(words)),
            "{line:?} is not covered by {}",
            standing.display()
        );
    }
}
