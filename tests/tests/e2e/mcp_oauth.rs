//! OAuth for a url MCP server (docs/configuration.md §MCP OAuth), against the test server's
//! `--oauth` mode: an authorization server on its own port and a protected MCP endpoint
//! (`src/oauth_fake.rs`). The test plays the browser: it opens the address `seedpod mcp
//! login` prints, and follows the authorization server's redirect to the login's loopback
//! callback — or pastes it on the login's stdin, as a person over ssh does.
//!
//! A pod whose server wants a login says so in `mcp ls` and connects by itself once the
//! login is done; calls carry the bearer token; an expired token is refreshed, and a refused
//! refresh asks for a login again; the token is written nowhere but the login file (0600) —
//! not the log, the config, `pod.json`, the segments, or a process's arguments — and never
//! sent to the authorization server. Attacks: a redirect with another login's `state`, a
//! server whose metadata names another resource, an authorization server without PKCE S256.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::time::{Duration, Instant};

use seedpod_e2e::TestHome;
use seedpod_protocol::{ClientMode, Method, PodCommand};
use serde_json::{Value, json};

use crate::mcp::{HttpServer, call, mcp_ls_json, toml_str, tool_results};

/// How long the pod gets to pick up a login (it looks at the login file every second).
const DEADLINE: Duration = Duration::from_secs(30);

fn config_with_oauth_server(sb: &TestHome, url: &str) {
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\n[approvals]\n\"mcp__web__*\" = \"allow\"\n",
        toml_str(url)
    ));
}

fn login_file(sb: &TestHome) -> PathBuf {
    sb.home.data.join("mcp-auth").join("web.json")
}

/// Whether the login file holds tokens (a pod that was refused writes the challenge there
/// before anyone logs in).
fn has_login(sb: &TestHome) -> bool {
    std::fs::read_to_string(login_file(sb))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|file| !file["credentials"]["token_response"].is_null())
}

/// One GET, as a browser that does not follow redirects: the status, the `Location`, the body.
pub(crate) fn browse(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"
    )
    .expect("send");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read the answer");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    (status, location, body.to_owned())
}

/// A running `seedpod mcp login web`, its address read from its stdout.
struct Login {
    child: Child,
    stdin: Option<ChildStdin>,
    authorize_url: String,
    cmdline: String,
}

impl Login {
    fn start(sb: &TestHome) -> Login {
        let mut child = sb
            .cmd()
            .args(["mcp", "login", "web"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the login");
        let stdout = child.stdout.take().expect("its stdout");
        let mut lines = BufReader::new(stdout).lines();
        let authorize_url = loop {
            let line = lines
                .next()
                .expect("the login printed no address")
                .expect("read its stdout");
            if line.starts_with("http") {
                break line;
            }
        };
        // Its arguments while it waits: what `ps` would show anyone.
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id()))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        // The rest of stdout is read at the end.
        std::thread::spawn(move || lines.for_each(drop));
        Login {
            stdin: child.stdin.take(),
            child,
            authorize_url,
            cmdline,
        }
    }

    /// The authorization server's redirect for this login (the person said yes).
    fn redirect(&self) -> String {
        let (status, location, body) = browse(&self.authorize_url);
        assert_eq!(status, 302, "the authorization server refused: {body}");
        location.expect("a redirect")
    }

    fn paste(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("paste");
        stdin.flush().expect("flush");
    }

    /// Wait for it to end; its status and stderr.
    fn wait(mut self) -> (bool, String) {
        drop(self.stdin.take());
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        let status = self.child.wait().expect("wait for the login");
        (status.success(), stderr)
    }
}

/// Wait until `mcp ls` shows server `web` of pod `pod` in `state`.
fn wait_for_state(sb: &TestHome, pod: &str, state: &str) -> Value {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let status = mcp_ls_json(sb, pod);
        if status[0]["state"] == state {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "server web never became {state:?}: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The login file's access and refresh tokens.
fn tokens(sb: &TestHome) -> Vec<String> {
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(login_file(sb)).expect("the login file"))
            .expect("JSON");
    let response = &file["credentials"]["token_response"];
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|key| response[key].as_str().map(str::to_owned))
        .collect()
}

/// Log in by pasting the redirect (no browser comes back to this machine).
fn log_in_by_pasting(sb: &TestHome) {
    let mut login = Login::start(sb);
    let redirect = login.redirect();
    login.paste(&redirect);
    let (ok, stderr) = login.wait();
    assert!(ok, "the login failed: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_through_the_browser_lets_a_waiting_pod_call_the_server_and_no_token_leaks() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    config_with_oauth_server(&sb, &server.url);
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__web__echo", json!({"text": "with a token"})),
            json!({"text": "Echoed."}),
        ],
    );
    sb.start_scripted("p", &script);
    let status = wait_for_state(&sb, "p", "needs_login");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("seedpod mcp login web"), "{why}");

    let login = Login::start(&sb);
    assert!(
        login.authorize_url.contains("code_challenge_method=S256")
            && login.authorize_url.contains("resource="),
        "{}",
        login.authorize_url
    );
    let redirect = login.redirect();
    assert!(
        redirect.starts_with("http://127.0.0.1:"),
        "the callback must be on loopback: {redirect}"
    );
    // A redirect with another state (a forged or stale one) is refused, and the login waits on.
    let forged = redirect.replace("state=", "state=forged");
    let (status, _, body) = browse(&forged);
    assert_eq!(status, 400, "{body}");
    assert!(!has_login(&sb), "a forged redirect saved a login");
    let (status, _, body) = browse(&redirect);
    assert_eq!(status, 200, "{body}");
    let cmdline = login.cmdline.clone();
    let (ok, stderr) = login.wait();
    assert!(ok, "the login failed: {stderr}");
    assert!(stderr.contains("does not match"), "{stderr}");

    let mode = std::fs::metadata(login_file(&sb))
        .expect("the login file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let secrets = tokens(&sb);
    assert_eq!(secrets.len(), 2, "an access and a refresh token");

    // The pod sees the login by itself; its tools are offered from the next segment, as for
    // any server that starts late (docs/configuration.md §MCP servers), and carry the token.
    wait_for_state(&sb, "p", "ready");
    let mut control = sb.connect("p", ClientMode::Control).await;
    control
        .call(Method::Command {
            name: PodCommand::Clear,
            args: String::new(),
        })
        .await
        .expect("/clear");
    let answer = sb.ok(&["send", "p", "echo it"]);
    assert!(answer.contains("Echoed."), "{answer}");
    assert_eq!(
        tool_results(&sb.history("p").await),
        [("echo: with a token".to_string(), false)]
    );
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        seen.contains(&format!("bearer ok {}", secrets[0])),
        "{seen}"
    );
    assert!(
        !seen.contains("authorization server saw a bearer token"),
        "{seen}"
    );

    // Nowhere else: not the log, the config, pod.json, the segments, the input history, or
    // the arguments of the pod and the login.
    let pod_cmdline = std::fs::read(format!("/proc/{}/cmdline", sb.pid("p").await))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .expect("the pod's arguments");
    for secret in &secrets {
        for file in files_under(sb.path()) {
            if file == login_file(&sb) || file == journal {
                continue;
            }
            let bytes = std::fs::read(&file).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(secret.as_str()),
                "a token is in {}",
                file.display()
            );
        }
        assert!(!pod_cmdline.contains(secret.as_str()));
        assert!(!cmdline.contains(secret.as_str()));
    }

    let out = sb.ok(&["mcp", "logout", "web"]);
    assert!(out.contains("Logged out"), "{out}");
    assert!(!login_file(&sb).exists());
    let out = sb.ok(&["mcp", "logout", "web"]);
    assert!(out.contains("no login"), "{out}");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_redirect_completes_a_login_without_a_browser_here() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    config_with_oauth_server(&sb, &server.url);
    let mut login = Login::start(&sb);
    let redirect = login.redirect();
    // What a person might paste by mistake is refused with a reason, and the login waits on.
    login.paste("not an address");
    login.paste(&redirect.replace("state=", "state=stale"));
    login.paste(&redirect);
    let (ok, stderr) = login.wait();
    assert!(ok, "the login failed: {stderr}");
    assert!(stderr.contains("whole address"), "{stderr}");
    assert!(stderr.contains("state does not match"), "{stderr}");
    // `mcp get` says there is a login and until when, and shows none of it.
    let shown = sb.ok(&["mcp", "get", "web"]);
    assert!(
        shown.contains("login: yes, the access token expires"),
        "{shown}"
    );
    assert!(shown.contains("a refresh token renews it"), "{shown}");
    for secret in tokens(&sb) {
        assert!(!shown.contains(&secret), "{shown}");
    }
    // The probe connects as a pod does: with the login's token.
    let out = sb.ok(&["mcp", "probe", "web", "--arguments", r#"{"text":"hi"}"#]);
    assert!(out.contains("called echo: ok"), "{out}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("bearer ok at-"), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_before_the_call() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    // Tokens that expire at once: every use needs a refresh first.
    let server = HttpServer::start_with(&journal, "", &["--oauth", "--token-lifetime", "0"]);
    config_with_oauth_server(&sb, &server.url);
    log_in_by_pasting(&sb);
    let issued = tokens(&sb);
    let out = sb.ok(&["mcp", "probe", "web", "--arguments", r#"{"text":"hi"}"#]);
    assert!(out.contains("called echo: ok"), "{out}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("refreshed at-"), "{seen}");
    // The token the login got was never used: the refreshed one was, and it is saved.
    assert!(
        !seen.contains(&format!("bearer ok {}", issued[0])),
        "{seen}"
    );
    let refreshed = tokens(&sb);
    assert_ne!(refreshed[0], issued[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_refresh_asks_for_a_login_again() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let flags = ["--oauth", "--token-lifetime", "0", "--refuse-refresh"];
    let server = HttpServer::start_with(&journal, "", &flags);
    config_with_oauth_server(&sb, &server.url);
    log_in_by_pasting(&sb);
    let script = sb.script("s.jsonl", &[json!({"text": "Here."})]);
    sb.start_scripted("p", &script);
    let status = wait_for_state(&sb, "p", "needs_login");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("seedpod mcp login web"), "{why}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("refresh refused"), "{seen}");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_metadata_names_another_resource_gets_no_login() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let flags = ["--oauth", "--prm-resource", "http://127.0.0.1:1/elsewhere"];
    // Before any login, `mcp get` says there is none and how to make one.
    let server = HttpServer::start_with(&journal, "", &flags);
    config_with_oauth_server(&sb, &server.url);
    let shown = sb.ok(&["mcp", "get", "web"]);
    assert!(
        shown.contains("login: none (`seedpod mcp login web`)"),
        "{shown}"
    );
    let out = sb.run(&["mcp", "login", "web"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("resource"), "{stderr}");
    assert!(!has_login(&sb));
    // Nothing was registered with, or asked of, its authorization server.
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!seen.contains("registered"), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_server_without_pkce_s256_is_refused() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth", "--no-s256"]);
    config_with_oauth_server(&sb, &server.url);
    let out = sb.run(&["mcp", "login", "web"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("PKCE"), "{stderr}");
    assert!(!has_login(&sb));
}

/// A pod whose server `web` (started with `--refuse-when FILE`) is logged in and ready, with
/// a model that calls `echo` once.
fn ready_pod_with_refusals(sb: &TestHome, refuse_when: &Path) -> (HttpServer, PathBuf) {
    let journal = sb.path().join("journal.txt");
    let flag = refuse_when.to_str().expect("a UTF-8 path");
    let server = HttpServer::start_with(&journal, "", &["--oauth", "--refuse-when", flag]);
    config_with_oauth_server(sb, &server.url);
    log_in_by_pasting(sb);
    let turn = [
        call("mcp__web__echo", json!({"text": "refused?"})),
        json!({"text": "Tried."}),
    ];
    let script = sb.script("s.jsonl", &[turn.clone(), turn].concat());
    sb.start_scripted("p", &script);
    wait_for_state(sb, "p", "ready");
    (server, journal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_makes_the_server_need_a_login_at_once_and_a_new_login_mends_it() {
    let sb = TestHome::new();
    let refuse = sb.path().join("refuse");
    let (_server, journal) = ready_pod_with_refusals(&sb, &refuse);
    // The authorization server revoked the token: the server answers 401 to it, and to the
    // refreshed one.
    std::fs::write(&refuse, "401\nBearer error=\"invalid_token\"").unwrap();
    let answer = sb.ok(&["send", "p", "echo it"]);
    assert!(answer.contains("Tried."), "{answer}");
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].1,
        "the refused call is an error result: {results:?}"
    );
    // Not `ready` until some later reconnect: `needs login` now, saying why and what to do.
    let status = wait_for_state(&sb, "p", "needs_login");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("stopped taking its login"), "{why}");
    assert!(why.contains("seedpod mcp login web"), "{why}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        seen.contains("refreshed at-"),
        "one refresh was tried first: {seen}"
    );
    // A new login (the server takes tokens again) and the pod is back by itself.
    std::fs::remove_file(&refuse).unwrap();
    log_in_by_pasting(&sb);
    wait_for_state(&sb, "p", "ready");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_whose_challenge_is_not_ascii_needs_a_login_and_takes_nothing_from_it() {
    let sb = TestHome::new();
    let refuse = sb.path().join("refuse");
    let (_server, _journal) = ready_pod_with_refusals(&sb, &refuse);
    // A challenge that is not ASCII (a right-to-left override) cannot be read as a header at
    // all: the call fails, nothing is taken from the challenge, and the server is not left
    // `ready` behind a login it no longer takes.
    std::fs::write(
        &refuse,
        "403\nBearer error=\"insufficient_scope\", scope=\"\u{202e}txt.exe\"",
    )
    .unwrap();
    sb.ok(&["send", "p", "echo it"]);
    let results = tool_results(&sb.history("p").await);
    assert!(results[0].1, "{results:?}");
    assert!(!results[0].0.contains('\u{202e}'), "{results:?}");
    let status = wait_for_state(&sb, "p", "needs_login");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("could not be read"), "{why}");
    assert!(why.contains("seedpod mcp login web"), "{why}");
    assert!(
        !why.contains('\u{202e}') && !why.contains("txt.exe"),
        "{why}"
    );
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_for_more_scope_names_only_real_scopes_and_the_next_login_asks_for_them() {
    let sb = TestHome::new();
    let refuse = sb.path().join("refuse");
    let (_server, _journal) = ready_pod_with_refusals(&sb, &refuse);
    // A hostile ASCII challenge: a scope "token" with a backslash, one of 500 characters,
    // forty more scopes than anyone needs, and a 32 KiB parameter besides.
    let padding = "A".repeat(32 * 1024);
    let long = "x".repeat(500);
    let many: Vec<String> = (0..40).map(|i| format!("extra{i}")).collect();
    std::fs::write(
        &refuse,
        format!(
            "403\nBearer error=\"insufficient_scope\", scope=\"mcp:admin a\\\\b {long} {}\", \
             pad=\"{padding}\"",
            many.join(" ")
        ),
    )
    .unwrap();
    sb.ok(&["send", "p", "echo it again"]);
    let status = wait_for_state(&sb, "p", "needs_login");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("scope mcp:admin"), "{why}");
    assert!(!why.contains(&long) && !why.contains("extra39"), "{why}");
    assert!(!why.contains("a\\b"), "{why}");
    assert!(why.len() < 1_000, "{} bytes: the padding leaked", why.len());
    let file = std::fs::read_to_string(login_file(&sb)).unwrap_or_default();
    assert!(
        !file.contains(&padding),
        "a huge challenge was kept in the login file"
    );
    // The next login asks for what it had and for the new scope; nothing else.
    std::fs::remove_file(&refuse).unwrap();
    let login = Login::start(&sb);
    let url = &login.authorize_url;
    assert!(
        url.contains("mcp%3Aadmin") || url.contains("mcp:admin"),
        "{url}"
    );
    assert!(
        !url.contains("txt.exe") && !url.contains("%E2%80%AE"),
        "{url}"
    );
    let redirect = login.redirect();
    let (status, _, body) = browse(&redirect);
    assert_eq!(status, 200, "{body}");
    let (ok, stderr) = login.wait();
    assert!(ok, "{stderr}");
    wait_for_state(&sb, "p", "ready");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_refusal_still_asks_for_a_login_in_words() {
    let sb = TestHome::new();
    let refuse = sb.path().join("refuse");
    let (_server, _journal) = ready_pod_with_refusals(&sb, &refuse);
    std::fs::write(&refuse, "403\nBearer scope=\"unterminated, error=").unwrap();
    sb.ok(&["send", "p", "echo it"]);
    let status = wait_for_state(&sb, "p", "needs_login");
    let why = status[0]["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("more permission"), "{why}");
    assert!(why.contains("seedpod mcp login web"), "{why}");
    assert!(!why.contains("unterminated"), "{why}");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_client_gets_its_own_token_and_its_secret_is_written_nowhere() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with(&journal, "", &["--oauth"]);
    sb.user_config(&format!(
        "[mcp.servers.web]\nurl = {}\ngrant = \"client_credentials\"\nclient_id = \"robot\"\n\
         client_secret_env = \"ROBOT_SECRET\"\n",
        toml_str(&server.url)
    ));
    // A wrong secret: refused in words, and no token is kept.
    let out = sb
        .cmd()
        .env("ROBOT_SECRET", "guessed")
        .args(["mcp", "probe", "web"])
        .output()
        .expect("run the probe");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no token"), "{stderr}");
    assert!(!has_login(&sb));
    // Nobody logs in for a machine client.
    let out = sb.run(&["mcp", "login", "web"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no login is needed"), "{stderr}");
    // Without the variable: it says which one is missing.
    let out = sb.run(&["mcp", "probe", "web"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("$ROBOT_SECRET"), "{stderr}");
    // The right one: no person, no browser, and the call carries the token.
    let out = sb
        .cmd()
        .env("ROBOT_SECRET", "robot-secret")
        .args(["mcp", "probe", "web", "--arguments", r#"{"text":"hi"}"#])
        .output()
        .expect("run the probe");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("called echo: ok"), "{stdout}");
    let seen = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(seen.contains("client credentials for robot"), "{seen}");
    assert!(seen.contains("bearer ok at-"), "{seen}");
    assert!(
        !seen.contains("registered"),
        "a machine client registers nothing: {seen}"
    );
    for file in files_under(sb.path()) {
        if file == journal {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
        assert!(
            !text.contains("robot-secret"),
            "the secret is in {}",
            file.display()
        );
    }
}
