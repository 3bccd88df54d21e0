//! No secret is written: a model server whose error echoes the request's
//! `Authorization` header leaves the key in no file under `SEEDPOD_HOME` — not the segment log,
//! `pod.json`, the pod's log or its stderr — and not in what `send` and `history` print.

use std::path::Path;

use seedpod_e2e::TestHome;
use seedpod_engine::testing::{MockServer, Reply};

const KEY: &str = "plain-looking-key-0042";

fn files_containing(dir: &Path, needle: &str, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            files_containing(&path, needle, found);
        } else if meta.is_file()
            && String::from_utf8_lossy(&std::fs::read(&path).unwrap()).contains(needle)
        {
            found.push(path.display().to_string());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_key_reaches_no_file_and_no_output() {
    let echo =
        format!(r#"{{"error":{{"message":"unauthorized: got Authorization: Bearer {KEY}"}}}}"#);
    let server = MockServer::start(vec![Reply::status(401, &echo)]).await;
    let sb = TestHome::new();
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n").unwrap();
    let base_url = server.base_url();
    let out = sb
        .cmd()
        .args([
            "start",
            "p",
            "--provider",
            "openai",
            "--base-url",
            &base_url,
        ])
        .args(["--model", "m"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = sb.run(&["send", "p", "hello"]);
    assert!(!sent.status.success(), "the server refused the key");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&sent.stdout),
        String::from_utf8_lossy(&sent.stderr)
    );
    assert!(printed.contains("unauthorized"), "{printed}");
    assert!(!printed.contains(KEY), "{printed}");
    let history = sb.ok(&["history", "p"]);
    assert!(!history.contains(KEY), "{history}");
    sb.ok(&["stop", "p"]);
    let mut found = Vec::new();
    files_containing(sb.path(), KEY, &mut found);
    assert!(found.is_empty(), "the key was written to {found:?}");
}

/// Credentials written into a base URL reach the server but no file and no argv: `pod.json`
/// records the URL without them, the pod's command line (what `ps` shows) does not carry them,
/// and they travel by environment, as keys do — also into a restart that is given them again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_url_credentials_reach_the_server_and_nothing_else() {
    const PASSWORD: &str = "pw-in-the-url-9917";
    let server = MockServer::start(vec![Reply::status(401, "{}"), Reply::status(401, "{}")]).await;
    let sb = TestHome::new();
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n").unwrap();
    let base_url = server
        .base_url()
        .replace("http://", &format!("http://alice:{PASSWORD}@"));
    let out = sb
        .cmd()
        .args(["start", "p", "--provider", "openai", "--model", "m"])
        .args(["--base-url", &base_url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid = sb.pid("p").await;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(
        !String::from_utf8_lossy(&cmdline).contains(PASSWORD),
        "argv: {}",
        String::from_utf8_lossy(&cmdline)
    );
    assert!(!sb.run(&["send", "p", "hello"]).status.success());
    let sent_auth = |index: usize| {
        server.requests()[index]
            .headers
            .iter()
            .find(|(name, _)| name == "authorization")
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    };
    // alice:pw-in-the-url-9917, as HTTP basic auth.
    let basic = "Basic YWxpY2U6cHctaW4tdGhlLXVybC05OTE3";
    assert_eq!(sent_auth(0), basic);

    // A restart is given the credentials the way a key is: by environment.
    let out = sb
        .cmd()
        .args(["restart", "p"])
        .env("SEEDPOD_BASE_URL_CREDENTIALS", format!("alice:{PASSWORD}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!sb.run(&["send", "p", "again"]).status.success());
    assert_eq!(sent_auth(1), basic);
    sb.ok(&["stop", "p"]);

    let mut found = Vec::new();
    files_containing(sb.path(), PASSWORD, &mut found);
    assert!(found.is_empty(), "the password was written to {found:?}");
}
