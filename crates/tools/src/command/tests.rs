use std::fs;

use seedpod_protocol::{CommandRule, StandingApproval};
use serde_json::json;

use super::*;
use crate::scope::{Scope, ScopeRules};

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_string).collect()
}

/// A scope rooted in a fresh directory with a `sub/` directory inside it.
pub(super) fn scope() -> (tempfile::TempDir, Scope) {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::create_dir(dir.path().join("sub")).expect("sub dir");
    let scope = Scope::new(
        dir.path(),
        &ScopeRules {
            write: vec![".".into()],
            ..ScopeRules::default()
        },
    )
    .expect("scope");
    (dir, scope)
}

pub(super) fn judged(command: &str, scope: &Scope) -> Judgement {
    judge(&json!({ "command": command }).to_string(), Some(scope))
}

/// Every way we know to smuggle more than `git status` past a standing rule for it. None may be
/// covered by `git status …` nor by the legacy first-word rule `git …` older pods wrote.
const GIT_ATTACKS: &[&str] = &[
    // The escapes this list started from: a comment, git's config from its command line or
    // the environment, a changed PATH, an output file.
    "git status #\ntouch PWNED",
    "git -c alias.x='!touch f' x",
    "git -c core.fsmonitor='touch f' status",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch f' git status",
    "PATH=/tmp/evil:$PATH git status",
    "git diff --output=PWNED",
    // Separators, lists, pipes, background.
    "git status; touch PWNED",
    "git status && touch PWNED",
    "git status || touch PWNED",
    "git status | sh",
    "git status & touch PWNED",
    "git status\ntouch PWNED",
    "git status\rtouch PWNED",
    "git status # && touch PWNED",
    // Substitutions and expansions.
    "git status $(touch PWNED)",
    "git status `touch PWNED`",
    "git status \"$(touch PWNED)\"",
    "git status <(touch PWNED)",
    "git status ${IFS}",
    "git status $HOME",
    "git status $'\\n'touch",
    // Redirections.
    "git status > PWNED",
    "git status >> ~/.bashrc",
    "git status 2> /etc/passwd",
    "git status < /etc/shadow",
    "git status <<< x",
    // Wrappers and assignments.
    "env git status",
    "command git status",
    "exec git status",
    "timeout 5 git status",
    "xargs git status",
    "sudo git status",
    "GIT_DIR=/tmp/evil git status",
    "GIT_EXTERNAL_DIFF='touch f' git status",
    // git's own escapes.
    "git -cx.y=z status",
    "git --config-env=core.fsmonitor=EVIL status",
    "git --exec-path=/tmp/evil status",
    "git --git-dir=/tmp/evil status",
    "git --work-tree=/ status",
    "git -C /etc status",
    "git --namespace=x status",
    "git diff --output PWNED",
    "git log --output=PWNED",
    "git diff --ext-diff",
    "git grep -Otouch x",
    "git grep --open-files-in-pager=touch x",
    "git fetch --upload-pack='touch f' origin",
    "git push --receive-pack='touch f' origin",
    "git rebase --exec 'touch f' main",
    "git config core.fsmonitor 'touch f'",
    "git submodule foreach 'touch f'",
    "git bisect run touch f",
    "git difftool -x 'touch f'",
    "git archive --remote=evil HEAD",
    // Shapes.
    "(git status)",
    "{ git status; }",
    "if git status; then touch PWNED; fi",
    "git status *",
    "git status ~/x",
    "git status {a,b}",
    "! git status",
];

#[test]
fn no_git_attack_is_covered_by_a_status_rule_or_a_legacy_first_word_rule() {
    let (_dir, scope) = scope();
    assert!(GIT_ATTACKS.len() >= 36, "{} variants", GIT_ATTACKS.len());
    let status = StandingApproval {
        tool: "shell".into(),
        rule: Some(CommandRule::Prefix(words("git status"))),
    };
    let legacy = StandingApproval {
        tool: "shell".into(),
        rule: Some(CommandRule::Prefix(words("git"))),
    };
    let mut covered = Vec::new();
    for attack in GIT_ATTACKS {
        let judgement = judged(attack, &scope);
        let words = judgement.words();
        if status.covers("shell", words) || legacy.covers("shell", words) {
            covered.push(format!("{attack:?} → {judgement:?}"));
        }
    }
    assert!(covered.is_empty(), "covered: {covered:#?}");
}

#[test]
fn every_git_attack_is_refused_outright_so_always_is_never_offered_for_it() {
    let (_dir, scope) = scope();
    // A few attacks are plain commands the status rule merely does not cover
    // (`git config …`, `git diff --output` are refused; `git status *` too): all must be
    // NotSimple, so "always" on them approves once and remembers nothing.
    for attack in GIT_ATTACKS {
        match judged(attack, &scope) {
            Judgement::NotSimple(why) => assert!(!why.is_empty(), "{attack:?}"),
            Judgement::Simple(words) => panic!("{attack:?} judged simple: {words:?}"),
        }
    }
}

#[test]
fn the_comment_newline_case_names_its_reason() {
    let (_dir, scope) = scope();
    assert_eq!(
        judged("git status #\ntouch PWNED", &scope),
        Judgement::NotSimple("it spans more than one line".into())
    );
    assert_eq!(
        judged("git status # note", &scope),
        Judgement::NotSimple("it has a comment".into())
    );
}

#[test]
fn plain_commands_give_the_words_bash_would_pass() {
    let (_dir, scope) = scope();
    let cases: &[(&str, &[&str])] = &[
        ("git status", &["git", "status"]),
        ("git status --short", &["git", "status", "--short"]),
        ("  git   status  ", &["git", "status"]),
        ("\"git\" status", &["git", "status"]),
        ("git st\\atus", &["git", "status"]),
        ("cargo test -p x 2>&1", &["cargo", "test", "-p", "x"]),
        ("ls -la 'my dir'", &["ls", "-la", "my dir"]),
        ("echo \"a \\\"b\\\" c\"", &["echo", "a \"b\" c"]),
        ("echo 'it'\\''s'", &["echo", "it's"]),
        (
            "grep -n 'a|b;c' src/x.rs",
            &["grep", "-n", "a|b;c", "src/x.rs"],
        ),
        ("git -C sub status", &["git", "-C", "sub", "status"]),
        ("git --no-pager log -3", &["git", "--no-pager", "log", "-3"]),
        ("./run.sh --fast", &["./run.sh", "--fast"]),
        ("echo a=b", &["echo", "a=b"]),
    ];
    for (command, expected) in cases {
        let expected: Vec<String> = expected.iter().map(|w| w.to_string()).collect();
        assert_eq!(
            judged(command, &scope),
            Judgement::Simple(expected),
            "{command:?}"
        );
    }
}

#[test]
fn other_programs_escapes_are_refused() {
    let (_dir, scope) = scope();
    for command in [
        "find . -exec rm {} ;",
        "find . -name x -delete",
        "find . -fprint /tmp/x",
        "cargo --config 'target.x.runner=\"touch f\"' run",
        "cargo +nightly build",
        "cargo -Zunstable-options build",
        "npm exec evil",
        "pnpm dlx evil",
        "npx evil",
        "make SHELL=/tmp/evil test",
        "make --eval='x:;touch f' x",
        "tar --to-command='touch f' -xf a.tar",
        "tar -Itouch -cf a.tar .",
        "go test -toolexec=evil ./...",
        "rsync -e 'touch f' a b",
        "ssh host ls",
        "bash -c 'touch f'",
        "sh script.sh",
        "eval ls",
        ". ./env.sh",
        "export X=1",
        "cd /",
        "",
        "   ",
        "echo 'unclosed",
        "X=1",
    ] {
        assert!(
            matches!(judged(command, &scope), Judgement::NotSimple(_)),
            "{command:?} was judged simple"
        );
    }
    assert!(matches!(
        judge("not json", Some(&scope)),
        Judgement::NotSimple(_)
    ));
    assert!(matches!(
        judge(r#"{"cmd":"ls"}"#, Some(&scope)),
        Judgement::NotSimple(_)
    ));
}

#[test]
fn git_dash_c_needs_a_known_scope_and_a_directory_inside_it() {
    let (_dir, scope) = scope();
    assert!(matches!(
        judged("git -C sub status", &scope),
        Judgement::Simple(_)
    ));
    assert!(matches!(
        judged("git -C ../.. status", &scope),
        Judgement::NotSimple(_)
    ));
    assert!(matches!(
        judge_command("git -C sub status", None),
        Judgement::NotSimple(_)
    ));
}

#[test]
fn the_narrowest_rule_is_program_and_subcommand_or_the_exact_command() {
    assert_eq!(
        narrowest_rule(&words("git status --short")),
        CommandRule::Prefix(words("git status"))
    );
    assert_eq!(
        narrowest_rule(&words("cargo test -p x")),
        CommandRule::Prefix(words("cargo test"))
    );
    assert_eq!(
        narrowest_rule(&words("rm -rf build")),
        CommandRule::Exact(words("rm -rf build"))
    );
    assert_eq!(
        narrowest_rule(&words("git --no-pager log")),
        CommandRule::Exact(words("git --no-pager log")),
        "an option before the subcommand makes the rule exact"
    );
    assert_eq!(
        narrowest_rule(&words("cargo")),
        CommandRule::Exact(words("cargo"))
    );
    assert_eq!(
        narrowest_rule(&["git".to_string(), "Status x".to_string()]),
        CommandRule::Exact(vec!["git".to_string(), "Status x".to_string()])
    );
}

#[test]
fn parsing_never_panics_on_odd_input() {
    let (_dir, scope) = scope();
    let odd = [
        "'",
        "\"",
        "\\",
        "$(",
        "`",
        "((",
        "))",
        "<<EOF",
        "}{",
        "${",
        "\u{0}",
        "😀 😀",
        "a\u{7}b",
        "git status \\",
        "[[ -f x ]]",
        "case x in y) ;; esac",
        "function f { :; }",
        ";;",
        "&",
        "|",
        "git 'a\nb'",
    ];
    for input in odd {
        let _ = judged(input, &scope);
    }
}

#[test]
fn a_call_that_leaves_the_sandbox_is_never_covered() {
    let (_dir, scope) = scope();
    let arguments = json!({"command": "git status", "sandbox": false}).to_string();
    assert_eq!(
        judge(&arguments, Some(&scope)),
        Judgement::NotSimple("it asks to run outside the sandbox".into())
    );
    let confined = json!({"command": "git status", "sandbox": true}).to_string();
    assert!(matches!(
        judge(&confined, Some(&scope)),
        Judgement::Simple(_)
    ));
}
