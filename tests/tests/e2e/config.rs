//! Configuration end to end: `config.toml` in the config directory, `.seedpod/config.toml` in
//! the pod's directory, environment and flags reach a real pod (provider, retry, timeouts,
//! logging, key variable), and `seedpod config show` says where each value came from without
//! ever printing a secret.

use std::path::{Path, PathBuf};

use seedpod_e2e::{TestHome, missing_prerequisite};
use seedpod_engine::testing::{MockServer, Reply};
use seedpod_protocol::PodName;
use serde_json::json;

const OPENAI_TEXT: &str = include_str!("../../../crates/engine/tests/fixtures/openai_text.sse");
const ANTHROPIC_TEXT: &str =
    include_str!("../../../crates/engine/tests/fixtures/anthropic_text.sse");

/// The sandbox directory is where `seedpod` runs, so it is a new pod's working directory.
fn project_config(sb: &TestHome, text: &str) -> PathBuf {
    let dir = sb.path().join(".seedpod");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn clean(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for var in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "SEEDPOD_PROVIDER",
        "SEEDPOD_MODEL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn log_of(sb: &TestHome, name: &str) -> String {
    std::fs::read_to_string(sb.home.log_path(&PodName::new(name.to_string()).unwrap()))
        .unwrap_or_default()
}

/// Choosing the model needs trust (`docs/configuration.md`): once the person trusts the file,
/// a project config alone is enough to start a pod.
#[test]
fn a_trusted_project_config_alone_starts_a_pod() {
    let sb = TestHome::new();
    let dir = sb.path().join(".seedpod");
    std::fs::create_dir_all(&dir).unwrap();
    // The script path is relative to the config file.
    std::fs::write(
        dir.join("demo.jsonl"),
        json!({"text": "configured by the project"}).to_string() + "\n",
    )
    .unwrap();
    project_config(&sb, "provider = \"scripted\"\nscript = \"demo.jsonl\"\n");
    sb.ok(&["trust", sb.path().to_str().unwrap()]);

    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let reply = sb.ok(&["send", "p", "hi"]);
    assert!(reply.contains("configured by the project"), "{reply}");
}

#[test]
fn config_show_names_each_layer_and_hides_secrets() {
    let sb = TestHome::new();
    let user = sb.user_config(
        "provider = \"anthropic\"\nmodel = \"user-model\"\n[retry]\nmax_retries = 5\n",
    );
    let project = project_config(
        &sb,
        "model = \"project-model\"\n[logging]\nlevel = \"debug\"\n",
    );
    let out = clean(&mut sb.cmd())
        .args(["config", "show"])
        .env("ANTHROPIC_API_KEY", "sk-ant-very-secret-key-123")
        .env("SEEDPOD_MODEL", "env-model")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("very-secret"), "{text}");
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
            .to_owned()
    };
    assert!(line("provider").contains(&user.display().to_string()));
    assert!(line("model").contains("\"env-model\""));
    assert!(line("model").contains("env SEEDPOD_MODEL"));
    assert!(line("max_retries").contains("5"));
    assert!(line("level").contains(&project.display().to_string()));
    assert!(line("api_key_env").contains("set, value [REDACTED]"));
}

#[test]
fn config_show_for_a_pod_shows_what_it_was_created_with() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "x"})]);
    let out = clean(sb.cmd().args([
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().unwrap(),
        "--temperature",
        "0.5",
    ]))
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // A later change to the files does not change what the pod sends.
    project_config(&sb, "temperature = 1.5\n[retry]\nmax_retries = 1\n");
    let text = sb.ok(&["config", "show", "p"]);
    let temperature = text.lines().find(|l| l.starts_with("temperature")).unwrap();
    assert!(temperature.contains("0.5"), "{text}");
    assert!(temperature.contains("recorded"), "{text}");
    let retries = text.lines().find(|l| l.starts_with("max_retries")).unwrap();
    assert!(
        retries.contains("1") && retries.contains(".seedpod/config.toml"),
        "{text}"
    );

    let out = sb.run(&["config", "show", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no pod named \"nope\""));
}

#[test]
fn a_broken_config_file_fails_start_with_file_and_line() {
    let sb = TestHome::new();
    let path = project_config(&sb, "provider = \"scripted\"\nmodle = \"typo\"\n");
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("line 2") && err.contains("modle"), "{err}");
    assert!(
        !sb.home
            .pod_dir(&PodName::new("p").unwrap())
            .join("pod.json")
            .exists()
    );
}

#[test]
fn context_values_that_cannot_work_fail_start_naming_key_and_file() {
    let cases = [
        ("[context]\ncompact_at = 1.2\n", "context.compact_at = 1.2"),
        (
            "[context]\nsoft_trim_at = 0.6\nhard_clear_at = 0.4\n",
            "context.hard_clear_at = 0.4",
        ),
        (
            "[context.windows]\n\"qwen3\" = 0\n",
            "context.windows.\"qwen3\" = 0",
        ),
        (
            "context_window = 99999999999\n",
            "context_window = 99999999999",
        ),
    ];
    for (text, start) in cases {
        let sb = TestHome::new();
        let path = sb.user_config(&format!("provider = \"scripted\"\n{text}"));
        let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(start), "{text}: {err}");
        assert!(err.contains(&path.display().to_string()), "{text}: {err}");
        assert!(
            !sb.home
                .pod_dir(&PodName::new("p").unwrap())
                .join("pod.json")
                .exists()
        );
    }
}

#[test]
fn config_show_prints_the_context_section_with_sources() {
    let sb = TestHome::new();
    let user = sb.user_config("context_window = 16384\n[context]\ncompact_at = 0.8\n");
    let project = project_config(&sb, "[context.windows]\n\"qwen3\" = 40960\n");
    let text = sb.ok(&["config", "show"]);
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start} in:\n{text}"))
            .to_owned()
    };
    assert!(line("context_window = 16384").contains(&user.display().to_string()));
    assert!(line("compact_at = 0.8").contains(&user.display().to_string()));
    assert!(line("hard_clear_at = 0.5").contains("default"));
    assert!(line("\"qwen3\" = 40960").contains(&project.display().to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_setting_reaches_the_pod_and_the_pod_stays_usable() {
    let server = MockServer::start(vec![
        Reply::status(503, r#"{"error":{"message":"overloaded"}}"#),
        Reply::sse(OPENAI_TEXT.as_bytes().to_vec()),
    ])
    .await;
    let sb = TestHome::new();
    project_config(
        &sb,
        &format!(
            // No window probe: the mock server answers requests in order, and this test counts them.
            "provider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n[retry]\nmax_retries = 0\n[context]\nprobe = false\n",
            server.base_url()
        ),
    );
    // base_url in a project file applies only once the person trusts it (tests/tests/e2e/trust.rs).
    sb.ok(&["trust"]);
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let out = sb.run(&["send", "p", "first"]);
    assert_eq!(out.status.code(), Some(1), "no retry: the 503 ends the run");
    assert!(stderr(&out).contains("503"), "{}", stderr(&out));
    assert_eq!(
        server.requests().len(),
        1,
        "max_retries = 0 means one attempt"
    );

    let reply = sb.ok(&["send", "p", "second"]);
    assert!(reply.contains("Hello"), "{reply}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_read_timeout_turns_a_hung_stream_into_an_error() {
    let server = MockServer::start(vec![Reply::Hang {
        prefix: b"data: {\"choices\":[]}\n\n".to_vec(),
    }])
    .await;
    let sb = TestHome::new();
    project_config(
        &sb,
        &format!(
            // No window probe: the mock server's one reply is the hung stream.
            "provider = \"openai\"\nbase_url = \"{}/v1\"\n[timeouts]\nidle_read_ms = 200\n[retry]\nmax_retries = 0\n[context]\nprobe = false\n",
            server.base_url()
        ),
    );
    // base_url in a project file applies only once the person trusts it (tests/tests/e2e/trust.rs).
    sb.ok(&["trust"]);
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sb.run(&["send", "p", "hello?"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.to_lowercase().contains("timed out") || err.contains("timeout"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_key_env_names_the_variable_and_its_value_stays_secret() {
    let server = MockServer::start(vec![Reply::sse(ANTHROPIC_TEXT.as_bytes().to_vec())]).await;
    let sb = TestHome::new();
    let path = sb.user_config(&format!(
        "provider = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"TEAM_CLAUDE_KEY\"\n",
        server.base_url()
    ));
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("TEAM_CLAUDE_KEY"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");

    let secret = "sk-ant-team-secret-0123456789";
    let out = clean(sb.cmd().args(["start", "p"]))
        .env("TEAM_CLAUDE_KEY", secret)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    sb.ok(&["send", "p", "hi"]);
    let requests = server.requests();
    assert_eq!(requests[0].header("x-api-key"), Some(secret));
    assert!(!log_of(&sb, "p").contains(secret));
}

#[test]
fn logging_level_and_file_come_from_the_config() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "a"}), json!({"text": "b"})]);
    let script = script.to_str().unwrap();

    sb.start_scripted("quiet", Path::new(script));
    sb.ok(&["send", "quiet", "hi"]);
    sb.ok(&["stop", "quiet"]);
    let info_log = log_of(&sb, "quiet");
    assert!(info_log.contains("\"turn_end\""), "{info_log}");
    assert!(
        !info_log.contains("entry_committed"),
        "debug lines are not written at info"
    );

    sb.user_config("[logging]\nlevel = \"debug\"\nfile = \"custom-{name}.log\"\n");
    sb.start_scripted("loud", Path::new(script));
    sb.ok(&["send", "loud", "hi"]);
    sb.ok(&["stop", "loud"]);
    let custom = std::fs::read_to_string(sb.home.logs_dir().join("custom-loud.log")).unwrap();
    assert!(custom.contains("\"entry_committed\""), "{custom}");
    assert!(!sb.home.log_path(&PodName::new("loud").unwrap()).exists());
}

#[test]
fn model_flags_on_an_existing_pod_say_they_do_not_apply() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "x"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["stop", "p"]);
    let out = clean(sb.cmd().args(["start", "p", "--model", "other"]))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--model only apply to new pods"), "{err}");
    let shown = sb.ok(&["config", "show", "p"]);
    let model = shown.lines().find(|l| l.starts_with("model = ")).unwrap();
    assert!(
        model.contains("\"script\"") && model.contains("recorded"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retryable_statuses_reach_the_pod() {
    let server = MockServer::start(vec![
        Reply::status(503, r#"{"error":{"message":"overloaded"}}"#),
        Reply::sse(OPENAI_TEXT.as_bytes().to_vec()),
    ])
    .await;
    let sb = TestHome::new();
    sb.user_config(&format!(
            "provider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n[retry]\nmax_retries = 3\nretryable_statuses = [429]\n[context]\nprobe = false\n",
            server.base_url()
        ),
    );
    let shown = sb.ok(&["config", "show"]);
    assert!(shown.contains("retryable_statuses = [429]"), "{shown}");
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sb.run(&["send", "p", "first"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("503 is not in [retry] retryable_statuses"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 1, "a 503 is not retried");
}

/// `[logging] stdout`: a pod run in the foreground also writes its log lines to stdout; one
/// that `seedpod start` launched keeps its stdout for the ready line and starts as usual.
#[test]
fn logging_to_stdout_in_the_foreground_only() {
    use std::io::BufRead;
    let sb = TestHome::new();
    sb.user_config("[logging]\nstdout = true\n");
    let script = sb.script("s.jsonl", &[json!({"text": "a"})]);

    let mut serve = sb
        .cmd()
        .args(["pod", "serve", "fg", "--provider", "scripted", "--script"])
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    let stdout = serve.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let ready = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|line| line.contains("\"event\":\"ready\""))
        .expect("the ready event on stdout");
    let parsed: serde_json::Value = serde_json::from_str(&ready).expect("a JSON line");
    assert_eq!(parsed["level"], "INFO", "{ready}");
    sb.ok(&["stop", "fg"]);
    assert!(serve.wait().expect("serve exits").success());
    assert!(
        log_of(&sb, "fg").contains("\"event\":\"ready\""),
        "the file log too"
    );

    // Launched by `start`: stdout carries only the ready handshake.
    sb.start_scripted("bg", &script);
    sb.ok(&["send", "bg", "hi"]);
}

/// A new user with nothing configured is first told about `seedpod demo`
/// (which works with nothing at all), then the API key and the local server; never about a
/// file that only the source tree has.
#[test]
fn the_first_advice_leads_with_the_demo() {
    let sb = TestHome::new();
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    if out.status.success() {
        missing_prerequisite(
            "no local model server on the usual ports (one answered, so nothing was missing)",
        );
        return;
    }
    let err = stderr(&out);
    let demo = err.find("`seedpod demo`").expect("the demo is offered");
    let key = err.find("ANTHROPIC_API_KEY").expect("the API key way");
    let local = err.find("127.0.0.1:11434").expect("the local server way");
    assert!(demo < key && key < local, "{err}");
    assert!(!err.contains("examples/"), "{err}");
}

/// `/model` with no name says which model is in use and what the server offers to
/// switch to (asked with the pod's own endpoint and key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_without_a_name_lists_the_servers_models() {
    let server = MockServer::start(vec![Reply::status(
        200,
        r#"{"object":"list","data":[{"id":"qwen3:8b"},{"id":"llama3.2"}]}"#,
    )])
    .await;
    let sb = TestHome::new();
    sb.user_config(&format!(
            "provider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"qwen3:8b\"\n[context]\nprobe = false\n",
            server.base_url()
        ),
    );
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = sb.ok(&["send", "p", "/model"]);
    assert!(
        listed.contains("model: qwen3:8b (openai); the server offers 2: llama3.2, qwen3:8b"),
        "{listed}"
    );
    assert_eq!(server.requests()[0].path, "/v1/models");
}

/// `/model ` completes from the server's list, which the pod fetches once a minute at most
/// however fast a person types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_names_complete_from_the_server_asked_once() {
    use seedpod_protocol::{ClientMode, CompletionKind, Method, ServerMsg};
    let server = MockServer::start(vec![Reply::status(
        200,
        r#"{"object":"list","data":[{"id":"qwen3:8b"},{"id":"llama3.2"},{"id":"qwen3:32b"}]}"#,
    )])
    .await;
    let sb = TestHome::new();
    sb.user_config(&format!(
            "provider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"llama3.2\"\n[context]\nprobe = false\n",
            server.base_url()
        ),
    );
    let out = clean(sb.cmd().args(["start", "p"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut conn = sb.connect("p", ClientMode::Control).await;
    for (prefix, expected) in [
        ("qwen", vec!["qwen3:32b", "qwen3:8b"]),
        ("qwen3:8", vec!["qwen3:8b"]),
        ("", vec!["llama3.2", "qwen3:32b", "qwen3:8b"]),
    ] {
        let answer = conn
            .call(Method::ListCompletions {
                kind: CompletionKind::Model,
                prefix: prefix.into(),
            })
            .await
            .expect("completions");
        let ServerMsg::Completions { kind, items, .. } = answer else {
            panic!("{answer:?}");
        };
        assert_eq!(kind, CompletionKind::Model);
        let names: Vec<&str> = items.iter().map(|c| c.value.as_str()).collect();
        assert_eq!(names, expected, "{prefix:?}");
    }
    assert_eq!(server.requests().len(), 1, "the list is fetched once");
}

/// With OPENAI_API_KEY already set (and no provider chosen), the first advice says it is set
/// and how to use it, instead of asking to set it.
#[test]
fn the_first_advice_knows_a_key_is_set() {
    let sb = TestHome::new();
    let out = clean(sb.cmd().args(["start", "p"]))
        .env("OPENAI_API_KEY", "sk-test-not-a-real-key")
        .output()
        .unwrap();
    if out.status.success() {
        missing_prerequisite(
            "no local model server on the usual ports (one answered, so nothing was missing)",
        );
        return;
    }
    let err = stderr(&out);
    assert!(!err.contains("set OPENAI_API_KEY"), "{err}");
    assert!(
        err.contains("OPENAI_API_KEY is set: run `seedpod start p --provider openai`"),
        "{err}"
    );
}
