//! Managing MCP servers from the command line (`seedpod mcp add`, `get`, `remove`, `import`),
//! `${VAR}` in a server's settings and `required = true`, with the real binary and the
//! repository's MCP test server (`src/bin/mcp-test-server.rs`).

use std::path::Path;

use seedpod_e2e::TestHome;
use serde_json::{Value, json};

use crate::mcp::{SERVER, mcp_ls_json, toml_str, wait_for_journal};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

fn server_names(listing: &Value) -> Vec<String> {
    listing
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn add_get_remove_round_trip_keeps_the_persons_file_and_masks_env_values() {
    let sb = TestHome::new();
    let original = "# my own notes\nmodel = \"m\"  # the one I like\n";
    let path = sb.user_config(original);
    sb.ok(&[
        "mcp",
        "add",
        "fs",
        "--env",
        "TOKEN=hunter2-value",
        "--",
        "/opt/fs-server",
        "--root",
        "/srv",
    ]);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.starts_with(original), "{written}");
    assert!(written.contains("[mcp.servers.fs]"), "{written}");
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let shown = sb.ok(&["mcp", "get", "fs"]);
    assert!(shown.contains("command = \"/opt/fs-server\""), "{shown}");
    assert!(shown.contains("args = [\"--root\", \"/srv\"]"), "{shown}");
    assert!(shown.contains("env.TOKEN = ****"), "{shown}");
    assert!(shown.contains(&path.display().to_string()), "{shown}");
    assert!(shown.contains("required = false  (default)"), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");

    let again = sb.run(&["mcp", "add", "fs", "--", "/other"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("mcp remove fs"),
        "{}",
        stderr(&again)
    );
    let bad_name = sb.run(&["mcp", "add", "a__b", "--", "/x"]);
    assert!(!bad_name.status.success());
    assert!(stderr(&bad_name).contains("`__`"), "{}", stderr(&bad_name));
    let both = sb.run(&[
        "mcp",
        "add",
        "w",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--",
        "/x",
    ]);
    assert!(!both.status.success());
    assert!(stderr(&both).contains("not both"), "{}", stderr(&both));
    // A refused add leaves the file alone.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);

    sb.ok(&["mcp", "add", "fs", "--force", "--", "/opt/other"]);
    assert!(sb.ok(&["mcp", "get", "fs"]).contains("\"/opt/other\""));
    sb.ok(&["mcp", "remove", "fs"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    let gone = sb.run(&["mcp", "get", "fs"]);
    assert!(!gone.status.success());
    let twice = sb.run(&["mcp", "remove", "fs"]);
    assert!(
        stderr(&twice).contains("no MCP server named"),
        "{}",
        stderr(&twice)
    );
}

#[test]
fn import_adds_new_servers_skips_present_ones_and_refuses_written_secrets() {
    let sb = TestHome::new();
    let path = sb.user_config("[mcp.servers.t]\ncommand = \"/already/here\"\n");
    let mcp_json = sb.path().join(".mcp.json");
    std::fs::write(
        &mcp_json,
        json!({"mcpServers": {
            "t": {"command": "/would/replace"},
            "local": {"command": "npx", "args": ["-y", "pkg"], "env": {"ROOT": "${HOME}"}},
            "web": {"type": "http", "url": "https://mcp.example/mcp",
                    "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}},
            "leaky": {"type": "sse", "url": "https://x.example/sse",
                      "headers": {"Authorization": "Bearer sk-live-123"}}
        }})
        .to_string(),
    )
    .unwrap();
    let out = sb.ok(&["mcp", "import", mcp_json.to_str().unwrap()]);
    assert!(
        out.contains("added to") && out.contains("local, web"),
        "{out}"
    );
    assert!(out.contains("skipped t: already in"), "{out}");
    assert!(out.contains("skipped leaky"), "{out}");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("/already/here") && !written.contains("/would/replace"));
    assert!(written.contains("Bearer ${WEB_TOKEN}"), "{written}");
    assert!(!written.contains("sk-live-123"), "{written}");
    let again = sb.ok(&["mcp", "import", mcp_json.to_str().unwrap()]);
    assert!(again.contains("added nothing"), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_import_is_not_started_until_the_project_is_trusted() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let mcp_json = sb.path().join("app-config.json");
    std::fs::write(
        &mcp_json,
        json!({"mcpServers": {"proj": {
            "command": SERVER,
            "env": {"MCP_TEST_JOURNAL": journal.display().to_string()}
        }}})
        .to_string(),
    )
    .unwrap();
    let out = sb.ok(&[
        "mcp",
        "import",
        mcp_json.to_str().unwrap(),
        "--scope",
        "project",
    ]);
    assert!(out.contains("seedpod trust"), "{out}");
    assert!(sb.path().join(".seedpod/config.toml").exists());
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    // A new pod says ready after its servers' first start: had it started, it would have
    // journaled by now.
    assert!(!server_names(&mcp_ls_json(&sb, "p")).contains(&"proj".to_owned()));
    assert!(!journal.exists(), "an untrusted project's server ran");
    sb.ok(&["stop", "p"]);

    sb.ok(&["trust"]);
    sb.start_scripted("q", &script);
    assert!(server_names(&mcp_ls_json(&sb, "q")).contains(&"proj".to_owned()));
    wait_for_journal(&journal, &format!("started {}", server_pid(&sb, "q")));
    sb.ok(&["stop", "q"]);
}

fn server_pid(sb: &TestHome, pod: &str) -> u64 {
    mcp_ls_json(sb, pod)[0]["pid"].as_u64().expect("a pid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expanded_values_reach_the_server_and_are_written_nowhere() {
    let sb = TestHome::new();
    // The secret is the journal's file name: the server writes there only if it got the
    // expanded value. It lives outside the test home, which is searched for it afterwards.
    let outside = tempfile::tempdir().unwrap();
    let secret = format!("sekrit-{}-value", std::process::id());
    let journal = outside.path().join(&secret);
    sb.user_config("# servers below\n");
    sb.ok(&[
        "mcp",
        "add",
        "t",
        "--env",
        "MCP_TEST_JOURNAL=${SP_E2E_JOURNAL}",
        "--",
        SERVER,
    ]);
    sb.ok(&[
        "mcp",
        "add",
        "unset",
        "--env",
        "X=${SP_E2E_NEVER_SET}",
        "--",
        SERVER,
    ]);
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    let out = sb
        .cmd()
        .env("SP_E2E_JOURNAL", &journal)
        .env_remove("SP_E2E_NEVER_SET")
        .args(["start", "p", "--provider", "scripted", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // `start` says which server failed, in one line, naming the variable.
    let warned = stderr(&out);
    let line = warned
        .lines()
        .find(|l| l.starts_with("warning: MCP server unset failed to start"))
        .unwrap_or_else(|| panic!("{warned}"));
    assert!(line.contains("$SP_E2E_NEVER_SET"), "{line}");
    assert!(!warned.contains("MCP server t failed"), "{warned}");

    let listing = mcp_ls_json(&sb, "p");
    let t = listing
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "t")
        .unwrap();
    assert_eq!(t["state"], "ready", "{listing}");
    wait_for_journal(&journal, &format!("started {}", t["pid"]));
    sb.ok(&["send", "p", "hello"]);
    sb.ok(&["stop", "p"]);
    let leaks = files_containing(sb.path(), secret.as_bytes());
    assert!(
        leaks.is_empty(),
        "the expanded value was written to {leaks:?}"
    );
    // The check itself works: the config names the variable.
    assert!(!files_containing(sb.path(), b"${SP_E2E_JOURNAL}").is_empty());
}

#[test]
fn a_required_server_that_cannot_start_makes_start_fail_with_its_reason() {
    let sb = TestHome::new();
    let missing = sb.path().join("no-such-mcp-server");
    sb.user_config(&format!(
        "[mcp.servers.need]\ncommand = {}\nrequired = true\n",
        toml_str(&missing.display().to_string())
    ));
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    let out = sb
        .cmd()
        .args(["start", "p", "--provider", "scripted", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("required MCP server need could not start"),
        "{err}"
    );
    assert!(err.contains("cannot start"), "{err}");
    // The pod is not running.
    assert!(!sb.run(&["mcp", "ls", "p"]).status.success());
}
