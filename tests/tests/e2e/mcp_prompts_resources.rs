//! MCP prompts and resources, against the repository's MCP test server with its prompts and
//! resources on (`MCP_TEST_RESOURCES`): in the TUI, `@t:` completes the server's resources (a
//! hostile name shown escaped) and one attached reaches the model's request; `/mcp__t__` completes
//! the prompts with their arguments and one run reaches the request as the person's input; the
//! same through `seedpod send`, and what is refused (unknown prompt or server, a missing
//! argument, an unlisted resource) sends nothing; huge and binary resources are contained; the
//! model's resource tools are offered only with a server that has resources, ask by default,
//! run under `trust_read_only`, and the request replays byte for byte after a restart.

use std::path::Path;

use seedpod_e2e::pty::{Tui, keys};
use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::ClientMode;
use serde_json::{Value, json};

use super::mcp::{
    HttpServer, SERVER, approval_tool, call, toml_str, tool_results, wait_for_journal,
};

/// A user config with server `t` (stdio, prompts and resources on) journaling to `journal`.
fn config(sb: &TestHome, journal: &Path, extra: &str) {
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\nenv = {{ MCP_TEST_RESOURCES = \"1\", MCP_TEST_JOURNAL = \
         {} }}\n{extra}",
        toml_str(SERVER),
        toml_str(&journal.display().to_string()),
    ));
}

/// The text of every user message of a scripted request body.
fn user_texts(request: &str) -> Vec<String> {
    let request: Value = serde_json::from_str(request).unwrap();
    request["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|item| item["type"] == "user_message")
        .filter_map(|item| item["text"].as_str().map(str::to_owned))
        .collect()
}

fn restart_keeps_the_request(sb: &TestHome, pod: &str, before: &str) {
    sb.ok(&["restart", pod]);
    assert_eq!(
        sb.ok(&["context", pod]),
        before,
        "byte-identical after restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_attached_with_at_in_the_tui_reaches_the_request_and_replays() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "");
    let script = sb.script("s.jsonl", &[json!({"text": "Read it."})]);
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    // `@t:` lists the server's resources; a name with terminal escapes is shown escaped and
    // never reaches the terminal as a sequence.
    tui.send("@t:test://");
    tui.wait_for("t:test://readme");
    tui.wait_for("t:test://red");
    tui.wait_for("\\u{1b}[31mred");
    assert!(
        !tui.wrote(b"\x1b]52;c;c2VjcmV0"),
        "an OSC 52 reached the terminal"
    );
    // Narrow to the readme, accept it, and send.
    tui.send("rea");
    tui.wait_for("What the test server is.");
    tui.send(keys::TAB);
    tui.send("summarise this");
    tui.send(keys::ENTER);
    wait_for(&mut events, &mut seen, is_run_end).await;
    wait_for_journal(&journal, "read test://readme");

    let requests = sb.requests("p");
    let last = requests.last().expect("a request");
    let texts = user_texts(last).join("\n");
    assert!(texts.contains("@t:test://readme summarise this"), "{texts}");
    assert!(
        last.contains("[Resource: t:test://readme]\\nThe readme of the test server: resources reach the model."),
        "{last}"
    );
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    let context = sb.ok(&["context", "p"]);
    assert!(context.contains("resources reach the model"), "{context}");
    restart_keeps_the_request(&sb, "p", &context);
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_run_as_a_slash_command_in_the_tui_reaches_the_request_as_the_persons_input() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "");
    let script = sb.script("s.jsonl", &[json!({"text": "Hello, Ann!"})]);
    sb.start_scripted("p", &script);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();

    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    // `/mcp__t__` lists the prompts with their arguments, required ones in <>; a description
    // with terminal escapes is shown escaped and never reaches the terminal as a sequence.
    tui.send("/mcp__t__");
    tui.wait_for("<name> [style]");
    tui.wait_for("Cleared your screen.");
    assert!(
        !tui.wrote(b"\x1b]0;owned"),
        "a title sequence reached the terminal"
    );
    tui.send("g");
    // A required argument missing: refused, nothing sent, the text back in the composer.
    tui.send("reet");
    tui.send(keys::ENTER);
    tui.wait_for("needs name");
    assert!(sb.requests("p").is_empty(), "nothing reached the model");
    let journaled = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!journaled.contains("got prompt"), "{journaled}");
    // With it (positional, then named), the prompt's text is the input.
    tui.send(" \"Ann Lee\" style=warm");
    tui.send(keys::ENTER);
    wait_for(&mut events, &mut seen, is_run_end).await;
    let requests = sb.requests("p");
    assert_eq!(requests.len(), 1);
    assert_eq!(
        user_texts(&requests[0]),
        ["Please greet Ann Lee in a warm way."]
    );
    tui.wait_for("Please greet Ann Lee in a warm way.");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());
    let context = sb.ok(&["context", "p"]);
    restart_keeps_the_request(&sb, "p", &context);
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_runs_prompts_and_attaches_resources_and_refuses_what_does_not_exist() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "[approvals]\n\"mcp__t__*\" = \"allow\"\n");
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "one"}),
            json!({"text": "two"}),
            call("mcp__t__more_prompts", json!({})),
            json!({"text": "three"}),
            json!({"text": "four"}),
        ],
    );
    sb.start_scripted("p", &script);

    // Refusals say what is wrong and send nothing.
    let refusals = [
        ("/mcp__t__nope", "has no such prompt"),
        ("/mcp__u__greet Ann", "no MCP server named u"),
        ("/mcp__t__greet", "needs name"),
        ("/mcp__t__greet Ann warm extra", "one too many"),
        ("/mcp__t__greet \"Ann", "not closed"),
        ("look at @t:test://nope", "lists no resource test://nope"),
    ];
    for (input, expected) in refusals {
        let out = sb.run(&["send", "p", input]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{input} was sent");
        assert!(stderr.contains(expected), "{input}: {stderr}");
        assert!(
            !stderr.contains("rmcp") && !stderr.contains("Error {"),
            "{stderr}"
        );
    }
    assert!(sb.requests("p").is_empty(), "nothing reached the model");

    // A prompt with every kind of part: text, an embedded resource, an assistant line (kept,
    // marked) and an image (a placeholder line).
    sb.ok(&["send", "p", "/mcp__t__review"]);
    let review = user_texts(&sb.requests("p")[0]).join("\n");
    for part in [
        "Review the readme below.",
        "[Resource: test://readme]\nThe readme of the test server",
        "[The prompt review of MCP server t has the assistant say:]\nI will look for",
        "[image: image/png, not included]",
    ] {
        assert!(review.contains(part), "{part:?} not in {review}");
    }

    // A huge resource is cut with a note; a binary one is described, not inlined.
    sb.ok(&["send", "p", "@t:test://big and @t:test://blob"]);
    let body = sb.requests("p")[1].clone();
    assert!(
        body.contains("cut here: the resource has 300,004 bytes"),
        "{}",
        &body[..400]
    );
    assert!(body.len() < 150_000, "{} bytes", body.len());
    assert!(
        body.contains("[binary contents: application/octet-stream, 10 bytes; not attached]"),
        "{body}"
    );
    assert!(!body.contains("AAECAwQF"));

    // The server's prompts change while it runs: the new one can be run.
    sb.ok(&["send", "p", "add a prompt"]);
    // The pod lists them again on the server's notice.
    wait_for_journal(&journal, "listed prompts with later");
    // The listing is answered a moment before the pod holds it: a refusal until then is the
    // pod's honest "no such prompt", and nothing is sent.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let out = sb.run(&["send", "p", "/mcp__t__later"]);
        if out.status.success() {
            break;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("has no such prompt"), "{stderr}");
        assert!(std::time::Instant::now() < deadline, "{stderr}");
    }
    assert!(user_texts(sb.requests("p").last().unwrap()).contains(&"Nothing to see.".into()));

    let context = sb.ok(&["context", "p"]);
    restart_keeps_the_request(&sb, "p", &context);
    sb.ok(&["stop", "p"]);
}

/// Hosted servers speak Streamable HTTP: the same prompt and resource, and the same refusal,
/// through a server on HTTP instead of a child process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_streamable_http_prompts_run_and_resources_attach_as_over_stdio() {
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    let server = HttpServer::start_with_env(&journal, "", &[], &[("MCP_TEST_RESOURCES", "1")]);
    sb.user_config(&format!(
        "[mcp.servers.t]\nurl = {}\n",
        toml_str(&server.url)
    ));
    let script = sb.script("s.jsonl", &[json!({"text": "one"}), json!({"text": "two"})]);
    sb.start_scripted("p", &script);

    let out = sb.run(&["send", "p", "look at @t:test://nope"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "an unlisted resource was sent");
    assert!(stderr.contains("lists no resource test://nope"), "{stderr}");
    assert!(sb.requests("p").is_empty(), "nothing reached the model");

    sb.ok(&["send", "p", "/mcp__t__review"]);
    let review = user_texts(&sb.requests("p")[0]).join("\n");
    for part in [
        "Review the readme below.",
        "[Resource: test://readme]\nThe readme of the test server",
    ] {
        assert!(review.contains(part), "{part:?} not in {review}");
    }
    sb.ok(&["send", "p", "look at @t:test://readme"]);
    let body = sb.requests("p")[1].clone();
    assert!(body.contains("The readme of the test server"), "{body}");
    assert!(body.contains("t:test://readme"), "{body}");

    let context = sb.ok(&["context", "p"]);
    restart_keeps_the_request(&sb, "p", &context);
    sb.ok(&["stop", "p"]);
    drop(server);
}

fn tool_names(context: &str) -> Vec<String> {
    let request: Value = serde_json::from_str(context).unwrap();
    request["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["name"].as_str().or(t["function"]["name"].as_str()))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_resource_tools_ask_by_default_and_run_under_trust_read_only() {
    let steps = [
        call("mcp_list_resources", json!({})),
        call(
            "mcp_read_resource",
            json!({"server": "t", "uri": "test://readme"}),
        ),
        call(
            "mcp_read_resource",
            json!({"server": "t", "uri": "test://picture"}),
        ),
        json!({"text": "Read."}),
    ];
    // Asked by default: nothing is read before a person says yes.
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "");
    let script = sb.script("s.jsonl", &steps);
    sb.start_scripted("p", &script);
    let names = tool_names(&sb.context("p").await);
    assert!(
        names.contains(&"mcp_list_resources".into()) && names.contains(&"mcp_read_resource".into()),
        "{names:?}"
    );
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "p", "what is there?", "--no-wait"]);
    let asked = wait_for(&mut events, &mut seen, approval_tool).await;
    assert_eq!(asked, "mcp_list_resources");
    sb.ok(&["approve", "p"]);
    let asked = wait_for(&mut events, &mut seen, approval_tool).await;
    assert_eq!(asked, "mcp_read_resource");
    let journaled = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(!journaled.contains("read test://readme"), "{journaled}");
    sb.ok(&["approve", "p", "--deny", "not now"]);
    // The third call asks only once the denial is recorded: approve it when it asks.
    let asked = wait_for(&mut events, &mut seen, approval_tool).await;
    assert_eq!(asked, "mcp_read_resource");
    sb.ok(&["approve", "p"]);
    wait_for(&mut events, &mut seen, is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0]
            .0
            .contains("t test://readme readme (text/plain) — What the test server is.")
            && results[0].0.contains("t test://red \\u{1b}[31mred"),
        "{}",
        results[0].0
    );
    assert!(
        results[1].1,
        "the denied read is an error result: {:?}",
        results[1]
    );
    assert!(
        results[2].0.contains("[image: image/png"),
        "{}",
        results[2].0
    );
    sb.ok(&["stop", "p"]);

    // `trust_read_only`: a read changes nothing, so it runs without asking.
    let sb = TestHome::new();
    let journal = sb.path().join("journal.txt");
    config(&sb, &journal, "trust_read_only = true\n");
    let script = sb.script("s.jsonl", &steps);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "what is there?"]);
    let results = tool_results(&sb.history("p").await);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(
        results[1],
        (
            "The readme of the test server: resources reach the model.".to_string(),
            false
        )
    );
    let context = sb.ok(&["context", "p"]);
    restart_keeps_the_request(&sb, "p", &context);
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_server_that_has_resources_the_resource_tools_are_not_offered() {
    let sb = TestHome::new();
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\n",
        toml_str(SERVER)
    ));
    let script = sb.script("s.jsonl", &[json!({"text": "ok"})]);
    sb.start_scripted("p", &script);
    let names = tool_names(&sb.context("p").await);
    assert!(names.contains(&"mcp__t__echo".into()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("resource")), "{names:?}");
    // And `@t:` is a path again (the server has no resources): refused as a resource.
    let out = sb.run(&["send", "p", "@t:test://readme"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("offers no resources"),
        "{stderr}"
    );
    sb.ok(&["stop", "p"]);
}
