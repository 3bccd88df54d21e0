use std::process::Command;

use super::*;

/// A repository in a temp dir with an identity of its own and one commit.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .status()
            .expect("this test needs git installed");
        assert!(status.success(), "git {args:?}");
    };
    run(&["init", "-q"]);
    run(&["config", "user.name", "Seed Tester"]);
    run(&["config", "user.email", "tester@example.invalid"]);
    run(&["config", "commit.gpgsign", "false"]);
    std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
    run(&["add", "a.txt"]);
    run(&["commit", "-q", "-m", "first"]);
    dir
}

fn last_message(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["log", "-1", "--format=%B"])
        .current_dir(dir)
        .output()
        .expect("git log");
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

fn stage(dir: &Path, file: &str) {
    let status = Command::new("git")
        .args(["add", file])
        .current_dir(dir)
        .status()
        .expect("git add");
    assert!(status.success());
}

#[tokio::test]
async fn outside_a_repository_commit_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let err = prepare(dir.path(), "").await.expect_err("no repository");
    assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("is not in one (git init creates one)"),
        "{err}"
    );
    let tool = make_git_commit(dir.path(), r#"{"message":"x"}"#)
        .await
        .expect_err("no repo");
    assert!(tool.text().contains("needs a git repository"), "{tool}");
}

#[tokio::test]
async fn a_clean_tree_has_nothing_to_commit() {
    let dir = repo();
    let err = prepare(dir.path(), "").await.expect_err("clean");
    assert!(matches!(err, GitError::NothingToCommit { .. }), "{err:?}");
    assert!(err.to_string().starts_with("nothing to commit"), "{err}");
}

#[tokio::test]
async fn staged_changes_are_what_the_input_is_about() {
    let dir = repo();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").expect("write");
    stage(dir.path(), "a.txt");
    std::fs::write(dir.path().join("b.txt"), "unstaged\n").expect("write");
    let input = prepare(dir.path(), "mention the parser")
        .await
        .expect("input");
    assert!(input.starts_with("/commit mention the parser\n"), "{input}");
    assert!(input.contains("for the staged changes"), "{input}");
    assert!(input.contains("\"all\": false"), "{input}");
    assert!(input.contains("+two"), "the diff is quoted: {input}");
    assert!(
        !input.contains("b.txt"),
        "unstaged files are not part of it: {input}"
    );
}

#[tokio::test]
async fn with_nothing_staged_every_change_is_offered_new_files_too() {
    let dir = repo();
    std::fs::write(dir.path().join("a.txt"), "changed\n").expect("write");
    std::fs::write(dir.path().join("new.txt"), "new\n").expect("write");
    let input = prepare(dir.path(), "").await.expect("input");
    assert!(
        input.contains("every change in the working tree"),
        "{input}"
    );
    assert!(input.contains("\"all\": true"), "{input}");
    assert!(input.contains("?? new.txt"), "{input}");

    let out = make_git_commit(
        dir.path(),
        r#"{"message":"Change a and add new\n\nBecause.","all":true}"#,
    )
    .await
    .expect("committed");
    assert!(out.starts_with("committed "), "{out}");
    assert!(out.contains("new.txt"), "{out}");
    assert_eq!(last_message(dir.path()), "Change a and add new\n\nBecause.");
}

#[tokio::test]
async fn a_message_cannot_become_an_option_or_a_command() {
    let dir = repo();
    std::fs::write(dir.path().join("a.txt"), "two\n").expect("write");
    stage(dir.path(), "a.txt");
    let hostile = "--amend\n\n$(touch PWNED) `touch PWNED2`; touch PWNED3";
    let arguments = serde_json::json!({ "message": hostile }).to_string();
    make_git_commit(dir.path(), &arguments)
        .await
        .expect("committed");
    assert_eq!(last_message(dir.path()), hostile);
    for file in ["PWNED", "PWNED2", "PWNED3"] {
        assert!(!dir.path().join(file).exists(), "{file} was created");
    }
    // The first commit is still there: --amend was a subject, not an option.
    let count = Command::new("git")
        .args(["rev-list", "--count", "HEAD"])
        .current_dir(dir.path())
        .output()
        .expect("rev-list");
    assert_eq!(String::from_utf8_lossy(&count.stdout).trim(), "2");
}

#[tokio::test]
async fn bad_calls_fail_and_commit_nothing() {
    let dir = repo();
    for (arguments, expected) in [
        (r#"{"message":"   "}"#, "the message is empty"),
        (r#"{"msg":"x"}"#, "git_commit takes"),
        (r#"{"message":"x"}"#, "nothing is staged"),
        (r#"{"message":"x","all":true}"#, "the working tree is clean"),
    ] {
        let err = make_git_commit(dir.path(), arguments)
            .await
            .expect_err(arguments);
        assert!(err.text().contains(expected), "{arguments}: {err}");
    }
    let long = serde_json::json!({ "message": "x".repeat(MAX_MESSAGE_CHARS + 1) }).to_string();
    assert!(
        make_git_commit(dir.path(), &long)
            .await
            .expect_err("long")
            .text()
            .contains("over")
    );
    assert_eq!(last_message(dir.path()), "first");
}
