//! The command line as a person meets it: names, exit codes, messages, start/stop/restart.

use seedpod_e2e::TestHome;
use serde_json::{Value, json};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn unknown_pod_is_exit_2_and_lists_known_pods() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("alpha", &script);
    sb.start_scripted("beta", &script);
    for args in [
        vec!["send", "nope", "x"],
        vec!["notify", "nope", "x"],
        vec!["history", "nope"],
        vec!["context", "nope"],
        vec!["stop", "nope"],
    ] {
        let out = sb.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains(r#"no pod named "nope" (known: alpha, beta)"#),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn send_streams_the_reply_and_exits_by_outcome() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "Hello there, friend.", "chunk_chars": 3}),
            json!({"error": {"kind": "permanent", "message": "model not found"}}),
            json!({"text": "back again"}),
        ],
    );
    sb.start_scripted("p", &script);
    assert_eq!(sb.ok(&["send", "p", "hi"]), "Hello there, friend.\n");

    let out = sb.run(&["send", "p", "again"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("model not found"), "{}", stderr(&out));

    // The pod stays usable after a failed run; --json prints NDJSON frames.
    let out = sb.ok(&["send", "p", "third", "--json"]);
    let frames: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(frames.first().unwrap()["entry"]["kind"], "user_input");
    assert_eq!(frames.last().unwrap()["entry"]["kind"], "run_end");
    assert!(frames.iter().any(|f| f["type"] == "text_delta"));
}

#[test]
fn send_reads_stdin_and_no_wait_returns_on_ack() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "got it"})]);
    sb.start_scripted("p", &script);
    let out = sb
        .cmd()
        .args(["send", "p", "--no-wait"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"from stdin\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "started");
    let history = sb.ok(&["history", "p"]);
    assert!(history.contains("user: from stdin"), "{history}");
}

#[test]
fn ls_shows_running_and_stopped_pods() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("up", &script);
    sb.start_scripted("down", &script);
    sb.ok(&["stop", "down"]);
    let out = sb.ok(&["ls", "--json"]);
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    let down = rows.iter().find(|r| r["name"] == "down").unwrap();
    let up = rows.iter().find(|r| r["name"] == "up").unwrap();
    assert_eq!(down["state"], "stopped");
    assert!(down["pid"].is_null());
    assert_eq!(up["state"], "idle");
    assert!(up["pid"].as_u64().unwrap() > 0);
    assert_eq!(up["provider"], "scripted");
    let table = sb.ok(&["ls"]);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("down") && l.contains("stopped")),
        "{table}"
    );
}

#[test]
fn start_is_idempotent_and_restart_restores_exactly() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "one"}), json!({"text": "two"})]);
    sb.start_scripted("p", &script);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "first"]);
    let context = sb.ok(&["context", "p"]);
    assert_eq!(sb.ok(&["restart", "p"]).trim(), "p");
    assert_eq!(sb.ok(&["context", "p"]), context);
    sb.ok(&["stop", "p"]);
    // A stopped pod's history and context come straight from its log.
    assert_eq!(sb.ok(&["context", "p"]), context);
    assert!(sb.ok(&["history", "p"]).contains("assistant: one"));
    let out = sb.run(&["notify", "p", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("seedpod start p"), "{}", stderr(&out));
}

#[test]
fn default_name_comes_from_the_directory_and_is_disambiguated() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    let a = sb.path().join("work").join("my project");
    let b = sb.path().join("other").join("my project");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let start_in = |dir: &std::path::Path| {
        let out = sb
            .cmd()
            .current_dir(dir)
            .args([
                "start",
                "--provider",
                "scripted",
                "--script",
                script.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(start_in(&a), "my-project");
    assert_eq!(start_in(&b), "my-project-2");
    assert_eq!(start_in(&a), "my-project", "the directory's pod is reused");
    // No NAME: the current directory's pod.
    let out = sb.cmd().current_dir(&b).args(["history"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn pause_when_idle_says_why() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let out = sb.run(&["pause", "p"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nothing is running"),
        "{}",
        stderr(&out)
    );
    let out = sb.run(&["resume", "p"]);
    assert!(stderr(&out).contains("not paused"), "{}", stderr(&out));
}

#[test]
fn a_bad_script_fails_start_with_the_reason() {
    let sb = TestHome::new();
    let script = sb.path().join("bad.jsonl");
    std::fs::write(&script, "{\"text\": \"ok\"}\n{\"txet\": 1}\n").unwrap();
    let out = sb.run(&[
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("pod \"p\" could not start: "), "{err}");
    assert!(
        err.contains("txet"),
        "the pod's own reason names the problem: {err}"
    );
}

#[test]
fn a_second_server_for_the_same_pod_is_refused() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let out = sb.run(&["pod", "serve", "p"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("already running"), "{}", stderr(&out));
}

#[test]
fn events_shows_each_runs_token_totals_at_its_end() {
    use std::io::{BufRead, BufReader};
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"tool_calls": [{"id": "c1", "name": "nope", "arguments": "{}"}],
                   "usage": {"input_tokens": 100, "output_tokens": 7}}),
            json!({"text": "done", "usage": {"input_tokens": 130, "output_tokens": 5}}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "go"]);

    let mut events = sb
        .cmd()
        .args(["events", "p"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn seedpod events");
    let stdout = events.stdout.take().expect("piped stdout");
    let mut run_end = None;
    // The snapshot ends with "== live"; the run is in it.
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read events");
        if line.contains("run ended") {
            run_end = Some(line.clone());
        }
        if line == "== live" {
            break;
        }
    }
    let _ = events.kill();
    let _ = events.wait();
    let run_end = run_end.expect("the snapshot holds the run's end");
    assert!(
        run_end.ends_with("· 2 requests · 230 in / 12 out tokens"),
        "{run_end}"
    );
}
