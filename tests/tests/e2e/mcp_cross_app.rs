//! Cross-app access (`grant = "cross_app_access"`, docs/configuration.md §MCP OAuth) against
//! the test server's `--oauth` mode, whose authorization server is also the person's identity
//! provider (`src/oauth_fake.rs`): the person's `id_token_command` prints an ID token, the
//! identity provider exchanges it for an ID-JAG, the authorization server that for a token.
//!
//! Attacks: an identity provider that answers with another kind of token, a command that fails
//! (its stderr is the reason shown), an untrusted project that sets the command, and neither
//! token nor secret written anywhere.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use seedpod_e2e::TestHome;

use crate::mcp::{HttpServer, toml_str};
use crate::mcp_oauth::{browse, files_under};

/// The ID token the fake identity provider knows (`oauth_fake::ID_TOKEN`).
const ID_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImF1ZCI6ImlkcC1hcHAifQ.c2lnbmVk";
const IDP_SECRET: &str = "idp-secret";
/// With characters HTTP Basic must form-encode (RFC 6749 §2.3.1).
const XAA_SECRET: &str = "xaa secret/with:odd&chars";

/// The authorization server's issuer, as the MCP server's metadata names it.
fn issuer(server: &HttpServer) -> String {
    let base = server.url.trim_end_matches("/mcp");
    let (status, _, body) = browse(&format!("{base}/.well-known/oauth-protected-resource/mcp"));
    assert_eq!(status, 200, "{body}");
    let metadata: serde_json::Value = serde_json::from_str(&body).expect("metadata JSON");
    metadata["authorization_servers"][0]
        .as_str()
        .expect("an authorization server")
        .to_owned()
}

/// An executable script in the sandbox; returns its path.
fn script(sb: &TestHome, name: &str, body: &str) -> PathBuf {
    let path = sb.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
    path
}

/// The `[mcp.servers.web]` keys of cross-app access, with `command` as the ID token command.
fn cross_app_keys(server: &HttpServer, command: &Path) -> String {
    format!(
        "grant = \"cross_app_access\"\nclient_id = \"xaa-app\"\n\
         client_secret_env = \"XAA_SECRET\"\nid_token_command = [{}]\n\
         idp_token_endpoint = {}\nidp_client_id = \"idp-app\"\n\
         idp_client_secret_env = \"IDP_SECRET\"\n",
        toml_str(&command.display().to_string()),
        toml_str(&format!("{}/idp/token", issuer(server))),
    )
}

fn probe(sb: &TestHome) -> (bool, String) {
    let out = sb
        .cmd()
        .env("IDP_SECRET", IDP_SECRET)
        .env("XAA_SECRET", XAA_SECRET)
        .args(["mcp", "probe", "web", "--arguments", r#"{"text":"hi"}"#])
        .output()
        .expect("run the probe");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_id_token_is_exchanged_for_a_token_and_no_token_or_secret_is_written_anywhere() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    // The person's credential helper: here it reads a file, as a CLI reads its own cache.
    let token_file = sb.path().join("idp-cache");
    std::fs::write(&token_file, ID_TOKEN).unwrap();
    let command = script(
        &sb,
        "print-id-token",
        &format!("cat '{}'", token_file.display()),
    );
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n{}",
        toml_str(&server.url),
        cross_app_keys(&server, &command)
    ));
    let (ok, said) = probe(&sb);
    assert!(ok, "{said}");
    assert!(said.contains("called echo: ok"), "{said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("id-jag issued for alice"), "{seen}");
    assert!(seen.contains("jwt bearer for xaa-app"), "{seen}");
    assert!(seen.contains("bearer ok at-"), "{seen}");
    assert!(!seen.contains("registered"), "nothing registers: {seen}");
    // Each connect exchanges afresh: a second probe asks the identity provider again.
    let (ok, said) = probe(&sb);
    assert!(ok, "{said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert_eq!(seen.matches("id-jag issued for alice").count(), 2, "{seen}");
    // `mcp get` and `config show` name the keys, the command and the variables, never a value.
    for shown in [sb.ok(&["mcp", "get", "web"]), sb.ok(&["config", "show"])] {
        for key in [
            "grant = \"cross_app_access\"",
            "id_token_command",
            "print-id-token",
            "idp_token_endpoint",
            "idp_client_id = \"idp-app\"",
            "idp_client_secret_env = \"IDP_SECRET\"",
        ] {
            assert!(shown.contains(key), "{key} missing from:\n{shown}");
        }
        assert!(
            !shown.contains(IDP_SECRET) && !shown.contains(ID_TOKEN),
            "{shown}"
        );
    }
    // Nobody logs in.
    let out = sb.run(&["mcp", "login", "web"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no login is needed"), "{stderr}");
    for file in files_under(sb.path()) {
        if file == journal || file == token_file {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
        for secret in [ID_TOKEN, "jag-", IDP_SECRET, XAA_SECRET] {
            assert!(!text.contains(secret), "{secret} is in {}", file.display());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_provider_that_answers_another_token_type_is_refused() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(
        &journal,
        "",
        &[
            "--oauth",
            "--idp-issues",
            "urn:ietf:params:oauth:token-type:access_token",
        ],
    );
    let command = script(&sb, "print-id-token", &format!("echo '{ID_TOKEN}'"));
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n{}",
        toml_str(&server.url),
        cross_app_keys(&server, &command)
    ));
    let (ok, said) = probe(&sb);
    assert!(!ok, "{said}");
    assert!(said.contains("another kind of token"), "{said}");
    assert!(said.contains("token-type:access_token"), "{said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("id-jag issued"), "{seen}");
    assert!(
        !seen.contains("jwt bearer"),
        "the mislabelled token went on to the authorization server: {seen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_shows_its_reason_and_nothing_is_sent() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    let command = script(
        &sb,
        "print-id-token",
        "echo 'your session expired; run: okta login' >&2\nexit 4",
    );
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n{}",
        toml_str(&server.url),
        cross_app_keys(&server, &command)
    ));
    let (ok, said) = probe(&sb);
    assert!(!ok, "{said}");
    assert!(said.contains("exited with 4"), "{said}");
    assert!(said.contains("run: okta login"), "{said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!seen.contains("id-jag"), "{seen}");
    assert!(!seen.contains("idp refused"), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_cannot_set_the_command() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    let ran = sb.path().join("the-project-command-ran");
    let command = script(
        &sb,
        "project-id-token",
        &format!("touch '{}'\necho '{ID_TOKEN}'", ran.display()),
    );
    // The person's own server; the project adds cross-app access to it.
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n",
        toml_str(&server.url)
    ));
    std::fs::create_dir_all(sb.path().join(".seedpod")).unwrap();
    std::fs::write(
        sb.path().join(".seedpod/config.toml"),
        format!("[mcp.servers.web]\n{}", cross_app_keys(&server, &command)),
    )
    .unwrap();
    let (ok, said) = probe(&sb);
    assert!(!ok, "{said}");
    assert!(!ran.exists(), "an untrusted project's command ran: {said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!seen.contains("id-jag"), "{seen}");
    // Trusted, the same file is the person's own: the command runs and the probe succeeds.
    sb.ok(&["trust"]);
    let (ok, said) = probe(&sb);
    assert!(ok, "{said}");
    assert!(ran.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_prints_nothing_megabytes_or_no_jwt_is_refused_and_nothing_is_sent() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    for (body, says) in [
        ("exit 0", "printed nothing"),
        ("yes eyJhbGciOiJub25lIn0", "more than 64 KiB"),
        ("echo 'Password: hunter2'", "not an ID token"),
    ] {
        let command = script(&sb, "print-id-token", body);
        sb.user_config(&format!(
            "[mcp.servers.web]\nurl = {}\n{}",
            toml_str(&server.url),
            cross_app_keys(&server, &command)
        ));
        let (ok, said) = probe(&sb);
        assert!(!ok, "{body}: {said}");
        assert!(said.contains(says), "{body}: {said}");
        assert!(said.contains("id_token_command"), "{body}: {said}");
        assert!(
            !said.contains("hunter2"),
            "what it printed is not shown: {said}"
        );
    }
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        !seen.contains("id-jag") && !seen.contains("idp refused"),
        "{seen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_provider_in_clear_on_another_machine_gets_no_id_token() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    let ran = sb.path().join("the-command-ran");
    let command = script(
        &sb,
        "print-id-token",
        &format!("touch '{}'\necho '{ID_TOKEN}'", ran.display()),
    );
    let keys = cross_app_keys(&server, &command).replace(
        &format!("{}/idp/token", issuer(&server)),
        "http://idp.example/token",
    );
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n{keys}",
        toml_str(&server.url)
    ));
    let (ok, said) = probe(&sb);
    assert!(!ok, "{said}");
    assert!(said.contains("only over https"), "{said}");
    assert!(
        !ran.exists(),
        "the ID token was fetched for a plain-http identity provider"
    );
}

/// `${VAR}` in the command and the identity provider's endpoint take their values at connect,
/// like a transport's; what is shown and written stays the template, and an unset variable is
/// refused naming the key and the variable before anything is run or sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_and_the_endpoint_expand_variables_at_connect_and_nowhere_else() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    let command = script(&sb, "print-id-token", &format!("echo '{ID_TOKEN}'"));
    let endpoint = format!("{}/idp/token", issuer(&server));
    // The identity provider's port (the authorization server's, not the MCP server's).
    let port = endpoint
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|host| host.rsplit(':').next())
        .expect("a port in the endpoint")
        .to_owned();
    let templated = endpoint.replace(&format!(":{port}/"), ":${IDP_PORT}/");
    assert_ne!(templated, endpoint, "the port is in the endpoint");
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\ngrant = \"cross_app_access\"\nclient_id = \"xaa-app\"\n\
         client_secret_env = \"XAA_SECRET\"\nid_token_command = [\"${{ID_HELPER}}\"]\n\
         idp_token_endpoint = {}\nidp_client_id = \"idp-app\"\n\
         idp_client_secret_env = \"IDP_SECRET\"\n",
        toml_str(&server.url),
        toml_str(&templated),
    ));
    let failing = script(&sb, "expired-helper", "echo 'log in again' >&2\nexit 3");
    let run = |helper: Option<&Path>| {
        let mut cmd = sb.cmd();
        cmd.env("IDP_SECRET", IDP_SECRET)
            .env("XAA_SECRET", XAA_SECRET)
            .env("IDP_PORT", &port)
            .args(["mcp", "probe", "web", "--arguments", r#"{"text":"hi"}"#]);
        match helper {
            Some(helper) => cmd.env("ID_HELPER", helper),
            None => cmd.env_remove("ID_HELPER"),
        };
        let out = cmd.output().expect("run the probe");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    };
    let (ok, said) = run(None);
    assert!(!ok, "{said}");
    assert!(said.contains("id_token_command"), "{said}");
    assert!(said.contains("$ID_HELPER is not set"), "{said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!seen.contains("id-jag"), "nothing was exchanged: {seen}");

    // A failure names the program as written, not the path it expanded to.
    let (ok, said) = run(Some(&failing));
    assert!(!ok, "{said}");
    assert!(
        said.contains("id_token_command (${ID_HELPER}) exited with 3"),
        "{said}"
    );
    assert!(said.contains("log in again"), "{said}");
    assert!(!said.contains("expired-helper"), "{said}");

    let (ok, said) = run(Some(&command));
    assert!(ok, "{said}");
    assert!(said.contains("called echo: ok"), "{said}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("id-jag issued for alice"), "{seen}");
    let shown = sb.ok(&["mcp", "get", "web"]);
    assert!(shown.contains("${ID_HELPER}"), "{shown}");
    assert!(!shown.contains("print-id-token"), "{shown}");
}
