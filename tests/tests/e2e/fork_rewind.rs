//! `seedpod fork` and `seedpod rewind` against a loopback OpenAI-wire model server, with the
//! real binary: a fork's next request is byte for byte what its source sent at that turn, and
//! both pods go on alone; a rewind puts back the files the file tools changed, names the shell
//! command it cannot undo, keeps the old turns in the log, and replays exactly.

use std::path::{Path, PathBuf};
use std::process::Output;

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{LimitConfig, LimitServer, Wire};

/// Far above anything these conversations send.
const LIMIT: u64 = 1_000_000;

/// A `seedpod` command against `server`'s wire with nothing from the environment choosing
/// another provider.
pub(crate) fn seedpod(sb: &TestHome, args: &[&str]) -> Output {
    let mut cmd = sb.cmd();
    cmd.args(args);
    for var in ["OPENAI_BASE_URL", "SEEDPOD_PROVIDER", "SEEDPOD_MODEL"] {
        cmd.env_remove(var);
    }
    cmd.env("OPENAI_API_KEY", "test");
    cmd.output().expect("run seedpod")
}

pub(crate) fn ok(sb: &TestHome, args: &[&str]) -> String {
    let out = seedpod(sb, args);
    assert!(
        out.status.success(),
        "seedpod {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A project directory outside the seedpod home.
pub(crate) fn project(sb: &TestHome, name: &str) -> PathBuf {
    let dir = sb.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

pub(crate) fn start(sb: &TestHome, server: &LimitServer, name: &str, cwd: &Path) {
    let mut args = vec![
        "start".to_string(),
        name.to_string(),
        "--cwd".into(),
        cwd.to_string_lossy().into_owned(),
    ];
    args.extend(server.start_args(Wire::OpenAi));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(sb, &args);
}

/// Kill the pod with `kill -9`, start it again from its log, and require the same next request.
fn kill_and_restore_exactly(sb: &TestHome, name: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let before = ok(sb, &["context", name]);
    runtime.block_on(sb.kill9(name));
    ok(sb, &["start", name]);
    assert_eq!(
        ok(sb, &["context", name]),
        before,
        "{name}'s next request changed across kill -9"
    );
}

fn segment_bytes(sb: &TestHome, name: &str) -> Vec<Vec<u8>> {
    sb.segment_files(name)
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect()
}

#[test]
fn a_fork_sends_what_its_source_sent_at_that_turn_and_both_go_on_alone() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    let work = project(&sb, "work");
    start(&sb, &server, "src", &work);

    ok(&sb, &["send", "src", "first question"]);
    let context_after_one = ok(&sb, &["context", "src"]);
    let asked_before_two = server.exchanges().len();
    ok(&sb, &["send", "src", "second question"]);
    let source_turn_two = server.exchanges()[asked_before_two].body.clone();
    assert!(source_turn_two.contains("second question"));
    let source_log = segment_bytes(&sb, "src");

    let out = ok(&sb, &["fork", "src", "f", "--at", "1"]);
    assert_eq!(out.trim(), "f");
    assert_eq!(
        segment_bytes(&sb, "src"),
        source_log,
        "the source is only read"
    );
    assert_eq!(
        ok(&sb, &["context", "f"]),
        context_after_one,
        "the fork's next request is the source's after turn 1"
    );
    let asked_before_fork = server.exchanges().len();
    ok(&sb, &["send", "f", "second question"]);
    assert_eq!(
        server.exchanges()[asked_before_fork].body,
        source_turn_two,
        "the fork's request for the same message is the source's, byte for byte"
    );

    ok(&sb, &["send", "src", "only the source hears this"]);
    ok(&sb, &["send", "f", "only the fork hears this"]);
    let src = ok(&sb, &["context", "src"]);
    let fork = ok(&sb, &["context", "f"]);
    assert!(src.contains("only the source") && !src.contains("only the fork"));
    assert!(fork.contains("only the fork") && !fork.contains("only the source"));
    let history = ok(&sb, &["history", "f", "--all"]);
    assert!(history.contains("forked from pod src"), "{history}");

    kill_and_restore_exactly(&sb, "src");
    kill_and_restore_exactly(&sb, "f");
}

#[test]
fn fork_refuses_a_taken_or_bad_name_a_missing_pod_and_a_turn_out_of_range() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    let work = project(&sb, "work");
    start(&sb, &server, "src", &work);
    start(&sb, &server, "other", &work);
    ok(&sb, &["send", "src", "one"]);
    let cases: [(&[&str], &str); 6] = [
        (&["fork", "src", "other"], "already exists"),
        (&["fork", "src", "src"], "needs a new name"),
        (&["fork", "nope", "f"], "no pod named \"nope\""),
        (&["fork", "src", "f", "--at", "5"], "turn 5 does not exist"),
        (&["fork", "src", "../evil"], "../evil"),
        (&["fork", "src", "a/b"], "a/b"),
    ];
    for (args, says) in cases {
        let out = seedpod(&sb, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let pods = std::fs::read_dir(sb.home.pods_dir()).unwrap().count();
    assert_eq!(pods, 2, "no refused fork left a pod behind");
    assert!(!sb.path().join("evil").exists());
}

/// The person's message for a turn that makes these calls, one after another.
pub(crate) fn calls(calls: &[(&str, serde_json::Value)]) -> String {
    calls
        .iter()
        .map(|(name, args)| format!("call {name} {args}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn rewind_restores_the_files_names_the_shell_change_and_replays_exactly() {
    use serde_json::json;
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    sb.user_config("[approvals]\nshell = \"allow\"\n");
    let work = project(&sb, "work");
    std::fs::write(work.join("b.txt"), "b original\n").unwrap();
    start(&sb, &server, "p", &work);

    let turn = |calls_text: String| ok(&sb, &["send", "p", &calls_text]);
    turn(calls(&[
        ("write_file", json!({"path": "a.txt", "content": "a one\n"})),
        (
            "edit_file",
            json!({"path": "b.txt", "old": "original", "new": "one"}),
        ),
    ]));
    let after_one = (
        std::fs::read(work.join("a.txt")).unwrap(),
        std::fs::read(work.join("b.txt")).unwrap(),
    );
    assert_eq!(after_one.1, b"b one\n");
    let context_after_one = ok(&sb, &["context", "p"]);
    let turn_two = calls(&[
        ("write_file", json!({"path": "a.txt", "content": "a two\n"})),
        (
            "edit_file",
            json!({"path": "b.txt", "old": "one", "new": "two"}),
        ),
    ]);
    turn(turn_two.clone());
    turn(calls(&[
        ("shell", json!({"command": "printf three > c.txt"})),
        (
            "edit_file",
            json!({"path": "b.txt", "old": "two", "new": "three"}),
        ),
    ]));
    assert_eq!(std::fs::read(work.join("c.txt")).unwrap(), b"three");
    assert_eq!(std::fs::read(work.join("b.txt")).unwrap(), b"b three\n");

    // Without --yes and without a terminal nothing happens.
    let out = seedpod(&sb, &["rewind", "p", "--to", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert_eq!(std::fs::read(work.join("b.txt")).unwrap(), b"b three\n");

    let dry = ok(&sb, &["rewind", "p", "--to", "1", "--dry-run"]);
    assert!(dry.contains("restore"), "{dry}");
    assert_eq!(std::fs::read(work.join("b.txt")).unwrap(), b"b three\n");

    let shown = ok(&sb, &["rewind", "p", "--to", "1", "--yes"]);
    assert!(
        shown.starts_with(&dry),
        "the rewind does what the dry run showed"
    );
    let a = work.join("a.txt").display().to_string();
    let b = work.join("b.txt").display().to_string();
    assert!(shown.contains(&format!("restore    {a}")), "{shown}");
    assert!(shown.contains(&format!("restore    {b}")), "{shown}");
    assert!(shown.contains("$ printf three > c.txt"), "{shown}");
    assert!(
        shown.contains(&work.join("c.txt").display().to_string()),
        "the file the shell changed is named: {shown}"
    );
    assert_eq!(std::fs::read(work.join("a.txt")).unwrap(), after_one.0);
    assert_eq!(std::fs::read(work.join("b.txt")).unwrap(), after_one.1);
    assert_eq!(
        std::fs::read(work.join("c.txt")).unwrap(),
        b"three",
        "a shell change is not undone"
    );

    assert_eq!(
        ok(&sb, &["context", "p"]),
        context_after_one,
        "the conversation is back at the end of turn 1"
    );
    let all = ok(&sb, &["history", "p", "--all"]);
    assert!(all.contains("rewound to"), "{all}");
    assert!(
        all.contains("printf three > c.txt"),
        "the old turns stay browsable"
    );
    kill_and_restore_exactly(&sb, "p");

    // Turn 2 again: the same request as the first time.
    let asked = server.exchanges();
    let first_time = asked
        .iter()
        .find(|e| e.body.contains("a two"))
        .expect("turn 2's first request")
        .body
        .clone();
    let before = asked.len();
    turn(turn_two);
    assert_eq!(server.exchanges()[before].body, first_time);
}

#[test]
fn rewind_refuses_a_turn_that_does_not_exist_and_changes_nothing() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    let work = project(&sb, "work");
    start(&sb, &server, "p", &work);
    ok(&sb, &["send", "p", "hello"]);
    let log = segment_bytes(&sb, "p");
    let out = seedpod(&sb, &["rewind", "p", "--to", "3", "--yes"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("turn 3 does not exist"), "{stderr}");
    assert_eq!(segment_bytes(&sb, "p"), log);
}

/// A pod whose turn waits for a person (a `shell` call to approve): a rewind is refused and
/// changes nothing; a fork without `--at` starts from the last finished turn.
#[test]
fn mid_turn_a_rewind_is_refused_and_a_fork_takes_the_last_finished_turn() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    let work = project(&sb, "work");
    start(&sb, &server, "p", &work);
    ok(&sb, &["send", "p", "hello"]);
    let context_after_one = ok(&sb, &["context", "p"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut pod = sb.drive("p").await;
        pod.run(r#"call shell {"command": "printf x > d.txt"}"#)
            .await;
        pod.wait_for(seedpod_e2e::is_approval_request).await;
    });
    let log = segment_bytes(&sb, "p");

    let out = seedpod(&sb, &["rewind", "p", "--to", "0", "--yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a rewind mid-turn went ahead");
    assert!(stderr.contains("in the middle of a turn"), "{stderr}");
    assert_eq!(segment_bytes(&sb, "p"), log, "nothing was changed");

    ok(&sb, &["fork", "p", "f"]);
    assert_eq!(ok(&sb, &["context", "f"]), context_after_one);
    assert!(!work.join("d.txt").exists(), "the waiting call never ran");
}
