//! A server's window is asked once per server and model, not once per pod: the second pod on
//! the same server takes the first one's answer from the state directory's memo
//! (pod/src/context/window_memo.rs), and the memo names no server (the
//! unit tests there try a credential in the URL).

use seedpod_e2e::TestHome;
use seedpod_engine::testing::{MockServer, Reply};
use serde_json::Value;

/// llama.cpp's answer to `GET /props`.
const PROPS: &str = r#"{"default_generation_settings":{"n_ctx":6144}}"#;

fn start(sb: &TestHome, name: &str, base_url: &str) {
    let mut cmd = sb.cmd();
    cmd.args([
        "start",
        name,
        "--provider",
        "openai",
        "--base-url",
        base_url,
    ])
    .args(["--model", "local-model"]);
    for var in ["OPENAI_BASE_URL", "SEEDPOD_PROVIDER", "SEEDPOD_MODEL"] {
        cmd.env_remove(var);
    }
    let out = cmd.env("OPENAI_API_KEY", "test").output().expect("start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn window_in_ls(sb: &TestHome, name: &str) -> (Option<u64>, Option<String>) {
    let out = sb.run(&["ls", "--json"]);
    // One JSON object per pod, a line each.
    let pod: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("ls --json lines are JSON"))
        .find(|pod| pod["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in ls --json"));
    (
        pod["context_window"].as_u64(),
        pod["context_window_source"].as_str().map(str::to_owned),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_pod_on_the_same_server_takes_the_window_without_asking() {
    let props = Reply::Status {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: PROPS.into(),
    };
    let server = MockServer::routes(vec![("GET", "/props", props)]).await;
    let base_url = format!("{}/v1", server.base_url());
    let sb = TestHome::new();

    start(&sb, "first", &base_url);
    let asked = server.requests().len();
    assert!(
        server.requests().iter().any(|r| r.path == "/props"),
        "the first pod asked: {:?}",
        server.requests()
    );
    assert_eq!(
        window_in_ls(&sb, "first"),
        (Some(6_144), Some("server".to_owned()))
    );

    start(&sb, "second", &base_url);
    assert_eq!(
        server.requests().len(),
        asked,
        "the second pod asked again: {:?}",
        &server.requests()[asked..]
    );
    assert_eq!(
        window_in_ls(&sb, "second"),
        (Some(6_144), Some("server".to_owned()))
    );

    // Another model on the same server is another question.
    let mut cmd = sb.cmd();
    cmd.args([
        "start",
        "third",
        "--provider",
        "openai",
        "--base-url",
        &base_url,
    ])
    .args(["--model", "other-model"])
    .env_remove("OPENAI_BASE_URL")
    .env("OPENAI_API_KEY", "test");
    assert!(cmd.output().expect("start").status.success());
    assert!(server.requests().len() > asked, "the other model was asked");

    let memo = std::fs::read_to_string(sb.path().join("state/windows.json")).expect("the memo");
    for secret in ["127.0.0.1", "local-model"] {
        assert!(!memo.contains(secret), "{secret} in {memo}");
    }
    for name in ["first", "second", "third"] {
        sb.run(&["stop", name]);
    }
}
