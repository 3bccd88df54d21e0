//! A model server that answers with a proxy's HTML error page: `/model` says the status and the
//! page's words on one line — on the CLI and in the TUI's popup — never the markup or escaped
//! line breaks.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::{Tui, keys};
use seedpod_engine::testing::{MockServer, Reply};

/// nginx's own 502 page, line breaks and all.
const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
    <center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n\
    </body>\r\n</html>\r\n";

/// What a person should read of it.
const REASON: &str = "HTTP 502 Bad Gateway: 502 Bad Gateway nginx/1.25.3";

fn start_behind(sb: &TestHome, server: &MockServer) {
    sb.user_config(&format!(
        "provider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"qwen3:8b\"\n[context]\nprobe = false\n",
        server.base_url()
    ));
    let out = sb
        .cmd()
        .args(["start", "p"])
        .env("OPENAI_API_KEY", "test")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("SEEDPOD_PROVIDER")
        .env_remove("SEEDPOD_MODEL")
        .output()
        .expect("run seedpod start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn looks_raw(text: &str) -> bool {
    text.contains('<') || text.contains("\\u{") || text.contains("\\r") || text.contains("\\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_error_page_from_the_server_reads_as_one_line_on_the_cli_and_in_the_tui() {
    let server = MockServer::start(vec![
        Reply::status(502, NGINX_502),
        Reply::status(502, NGINX_502),
    ])
    .await;
    let sb = TestHome::new();
    start_behind(&sb, &server);

    let said = sb.ok(&["send", "p", "/model"]);
    assert!(said.contains(REASON), "{said}");
    assert!(!looks_raw(&said), "no markup or escapes: {said}");
    assert_eq!(said.trim().lines().count(), 1, "one line: {said}");

    let mut tui = tokio::task::spawn_blocking(move || {
        let mut tui = Tui::spawn(&sb, &["attach", "p"]);
        tui.wait_for("connected");
        tui.send("/model");
        tui.wait_for("/model");
        tui.send(keys::ENTER);
        tui.wait_for("nginx/1.25.3");
        (tui, sb)
    })
    .await
    .expect("the TUI side");
    let screen = tui.0.screen();
    assert!(screen.contains("502 Bad Gateway"), "{screen}");
    assert!(!looks_raw(&screen), "no markup or escapes: {screen}");
    // Esc closes the popup; Ctrl-D only once it is gone (sent together they read as Alt-Ctrl-D).
    tui.0.send(keys::ESC);
    tui.0.wait_until("the popup to close", |screen| {
        !screen.contents().contains("nginx/1.25.3")
    });
    tui.0.send(keys::CTRL_D);
    assert!(tui.0.wait_exit());
    assert_eq!(server.requests().len(), 2, "each /model asked the server");
}
