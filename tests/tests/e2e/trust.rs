//! Workspace trust end to end (DESIGN invariant 6): a `.seedpod/config.toml` the model
//! could have written never loosens policy until a person runs `seedpod trust`, for exactly the
//! bytes they trusted; tightening always applies. Driven through the real binary.

use std::path::{Path, PathBuf};

use seedpod_e2e::TestHome;
use seedpod_protocol::PodName;
use serde_json::json;

fn project_config(sb: &TestHome, text: &str) -> PathBuf {
    let dir = sb.path().join(".seedpod");
    std::fs::create_dir_all(&dir).expect("project dir");
    let path = dir.join("config.toml");
    std::fs::write(&path, text).expect("project config");
    path
}

/// The line of `config show` that sets `key` (the first: `[approvals] shell` comes before
/// nothing else called `shell`).
fn setting<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
}

fn show(sb: &TestHome) -> String {
    sb.ok(&["config", "show"])
}

fn dir_of(sb: &TestHome) -> PathBuf {
    sb.path().canonicalize().expect("canonical sandbox")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_untrusted_allow_is_ignored_until_trusted_and_one_changed_byte_untrusts_it() {
    let sb = TestHome::new();
    let path = project_config(&sb, "[approvals]\nshell = \"allow\"\n");
    let text = show(&sb);
    let shell = setting(&text, "shell");
    assert!(
        shell.starts_with("shell = \"ask\"") && shell.ends_with("# default"),
        "{text}"
    );
    let hint = format!(
        "# approvals.shell = \"allow\" ignored: untrusted project config — `seedpod trust {}` to apply",
        dir_of(&sb).display()
    );
    assert!(text.contains(&hint), "{text}");

    let out = sb.ok(&["trust"]);
    assert!(
        out.contains("trusted ") && out.contains("approvals.shell"),
        "{out}"
    );
    let text = show(&sb);
    let shell = setting(&text, "shell");
    assert!(shell.starts_with("shell = \"allow\""), "{text}");
    assert!(shell.contains(".seedpod/config.toml"), "{text}");
    assert!(!text.contains("ignored"), "{text}");

    // One byte more (a trailing space) is a different file.
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.insert(bytes.len() - 1, b' ');
    std::fs::write(&path, bytes).expect("edit");
    let text = show(&sb);
    assert!(
        setting(&text, "shell").starts_with("shell = \"ask\""),
        "{text}"
    );
    assert!(text.contains(&hint), "{text}");

    // Trusted again, then revoked.
    sb.ok(&["trust", sb.path().to_str().expect("utf-8")]);
    assert!(setting(&show(&sb), "shell").starts_with("shell = \"allow\""));
    let out = sb.ok(&["trust", "--revoke"]);
    assert!(out.contains("no longer trusted"), "{out}");
    assert!(setting(&show(&sb), "shell").starts_with("shell = \"ask\""));
    let out = sb.ok(&["trust", "--revoke"]);
    assert!(out.contains("was not trusted"), "{out}");
}

#[test]
fn tightening_applies_without_trust_and_a_mixed_file_keeps_only_its_tightening() {
    let sb = TestHome::new();
    project_config(
        &sb,
        "[approvals]\nwrite_file = \"deny\"\nshell = \"allow\"\n[scope]\nwrite = [\"/\"]\ndeny = [\".env\"]\n",
    );
    let text = show(&sb);
    assert!(
        setting(&text, "write_file").starts_with("write_file = \"deny\""),
        "{text}"
    );
    assert!(
        setting(&text, "shell").starts_with("shell = \"ask\""),
        "{text}"
    );
    assert!(setting(&text, "write").starts_with("write = []"), "{text}");
    assert!(
        setting(&text, "deny").starts_with("deny = [\".env\"]"),
        "{text}"
    );
    assert!(text.contains("# scope.write = [\"/\"] ignored"), "{text}");
    assert!(!text.contains("# approvals.write_file"), "{text}");
}

#[cfg(unix)]
#[test]
fn the_trust_store_is_private_and_records_the_canonical_path_and_hash() {
    use std::os::unix::fs::PermissionsExt as _;
    let sb = TestHome::new();
    project_config(&sb, "[approvals]\nshell = \"allow\"\n");
    sb.ok(&["trust"]);
    let store = sb.path().join("config/trusted.json");
    let mode = std::fs::metadata(&store)
        .expect("store")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&store).expect("read")).expect("json");
    let key = dir_of(&sb).join(".seedpod/config.toml");
    let hash = json["trusted"][key.to_str().expect("utf-8")]
        .as_str()
        .unwrap_or_else(|| panic!("{json}"));
    assert!(
        hash.starts_with("sha256:") && hash.len() == 7 + 64,
        "{hash}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_project_file_is_trusted_by_the_bytes_it_leads_to() {
    let sb = TestHome::new();
    let elsewhere = sb.path().join("elsewhere.toml");
    std::fs::write(&elsewhere, "[approvals]\nshell = \"allow\"\n").expect("target");
    std::fs::create_dir_all(sb.path().join(".seedpod")).expect("dir");
    std::os::unix::fs::symlink(&elsewhere, sb.path().join(".seedpod/config.toml")).expect("link");
    assert!(setting(&show(&sb), "shell").starts_with("shell = \"ask\""));
    sb.ok(&["trust"]);
    assert!(setting(&show(&sb), "shell").starts_with("shell = \"allow\""));
    std::fs::write(&elsewhere, "[approvals]\nshell = \"allow\"\n\n").expect("retarget");
    assert!(setting(&show(&sb), "shell").starts_with("shell = \"ask\""));
}

#[test]
fn trust_without_a_project_file_says_so() {
    let sb = TestHome::new();
    let out = sb.run(&["trust"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no ") && stderr(&out).contains("to trust"),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new(&sb.path().join("config/trusted.json")).exists());
}

#[test]
fn start_warns_naming_the_keys_and_the_command_and_the_pod_logs_it() {
    let sb = TestHome::new();
    project_config(
        &sb,
        "[approvals]\nshell = \"allow\"\n[shell]\nmax_timeout_secs = 86400\n",
    );
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    let out = sb.run(&[
        "start",
        "p",
        "--provider",
        "scripted",
        "--script",
        script.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("approvals.shell, shell.max_timeout_secs"),
        "{err}"
    );
    assert!(
        err.contains(&format!("seedpod trust {}", dir_of(&sb).display())),
        "{err}"
    );
    let log =
        std::fs::read_to_string(sb.home.log_path(&PodName::new("p").unwrap())).unwrap_or_default();
    assert!(log.contains("untrusted_project_config"), "{log}");
    sb.ok(&["stop", "p"]);
}

#[tokio::test]
async fn an_attached_client_is_told_which_keys_were_ignored() {
    let sb = TestHome::new();
    project_config(&sb, "[approvals]\nshell = \"allow\"\n");
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", seedpod_protocol::ClientMode::Attach).await;
    let mut seen = Vec::new();
    let alert = seedpod_e2e::wait_for(&mut events, &mut seen, |m| match m {
        seedpod_protocol::ServerMsg::Alert { message, .. } if message.contains("trust") => {
            Some(message.clone())
        }
        _ => None,
    })
    .await;
    assert!(alert.contains("approvals.shell"), "{alert}");
}
