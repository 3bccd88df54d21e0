//! `seedpod export` of a pod with a compaction and a child pod's reports: the Markdown and the
//! HTML contain every user and assistant message of every segment (read back from `history
//! --all --json`), the HTML is one inert file whatever the messages say, thinking appears only
//! when asked for, and a stopped pod exports exactly what the running one did.

use std::os::unix::fs::PermissionsExt as _;

use seedpod_e2e::{TestHome, is_run_end, wait_for};
use seedpod_protocol::ClientMode;
use serde_json::{Value, json};

/// A message trying every way out of its place in an HTML page.
const HOSTILE: &str = "see </script><script>alert(1)</script> and <img src=x onerror=\"alert(2)\"> \
     or [click me](javascript:alert(3)) & <a href='https://evil.example/x'>this</a>";

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": arguments.to_string()}]})
}

fn for_pod(pod: &str, mut step: Value) -> Value {
    step["pod"] = json!(pod);
    step
}

/// Every user input and assistant text of every segment, as `history --all --json` gives them.
fn messages(sb: &TestHome, name: &str) -> Vec<String> {
    let out = sb.ok(&["history", name, "--all", "--json"]);
    let mut texts = Vec::new();
    for line in out.lines() {
        let entry: Value = serde_json::from_str(line).expect("an entry");
        match entry["kind"].as_str() {
            Some("user_input") => texts.push(entry["text"].as_str().unwrap().to_string()),
            Some("assistant_item") if entry["item"]["type"] == "assistant_text" => {
                texts.push(entry["item"]["text"].as_str().unwrap().to_string());
            }
            _ => {}
        }
    }
    texts
}

/// The test's own HTML escaping, to look for a message in the page.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The tags an export may contain; anything else got out of the text.
const ALLOWED_TAGS: [&str; 14] = [
    "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "section",
    "div", "details", "summary",
];

fn assert_inert(html: &str) {
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        let tag = &rest[at + 1..];
        let end = tag.find('>').expect("every tag closes");
        let inside = &tag[..end];
        let name = inside
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace())
            .next()
            .unwrap_or_default();
        assert!(
            ALLOWED_TAGS.contains(&name) || name == "pre",
            "a tag the export does not write: <{inside}>"
        );
        let lower = inside.to_lowercase();
        for bad in [
            " on",
            "javascript:",
            "src=",
            "href=",
            "http:",
            "https:",
            "//",
        ] {
            assert!(!lower.contains(bad), "<{inside}> carries {bad}");
        }
        rest = &tag[end..];
    }
    assert!(
        html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\""),
        "a policy that forbids loading and running anything"
    );
    for fetch in ["@import", "url("] {
        assert!(!html.contains(fetch), "nothing is fetched: {fetch}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn md_and_html_hold_every_message_of_every_segment_and_the_html_is_inert() {
    let sb = TestHome::new();
    let gate = sb.gate("kid-answers");
    let script = sb.script(
        "family.jsonl",
        &[
            call("spawn_pod", json!({"name": "kid", "task": "count to one"})),
            json!({"text": "kid is counting", "thinking": "PRIVATE-THOUGHT about kids"}),
            json!({"text": "kid reported back"}),
            json!({"text": "SUMMARY-TEXT: we spawned kid and it counted"}),
            json!({"text": format!("after the summary: {HOSTILE}")}),
            for_pod("kid", json!({"text": "one", "gate": gate})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    let mut seen = Vec::new();
    sb.ok(&["send", "boss", "delegate the counting"]);
    wait_for(&mut boss, &mut seen, is_run_end).await;
    // The kid's answer ends its turn; its report wakes the boss for one more run.
    sb.open_gate("kid-answers");
    wait_for(&mut boss, &mut seen, is_run_end).await;
    let reply = sb.ok(&["send", "boss", "/compact"]);
    assert!(reply.contains("compacted"), "{reply}");
    sb.ok(&["send", "boss", HOSTILE]);

    let messages = messages(&sb, "boss");
    assert!(messages.len() >= 5, "{messages:#?}");
    assert!(messages.iter().any(|m| m == HOSTILE));

    let md = sb.ok(&["export", "boss", "--all"]);
    let html = sb.ok(&["export", "boss", "--all", "--format", "html"]);
    for message in &messages {
        assert!(md.contains(message.as_str()), "md lacks {message:?}");
        assert!(html.contains(&escaped(message)), "html lacks {message:?}");
    }
    for shown in ["SUMMARY-TEXT: we spawned kid", "Report from child pod kid"] {
        assert!(md.contains(shown), "md shows {shown}");
        assert!(html.contains(shown), "html shows {shown}");
    }
    assert!(md.contains("spawn_pod"), "the tool call is there, folded");
    assert!(
        html.contains("<details class=\"tool\"><summary>"),
        "calls fold"
    );
    assert_eq!(md.matches("\n## Segment ").count(), 2, "both segments");
    assert_inert(&html);

    // Thinking only when asked for.
    assert!(!md.contains("PRIVATE-THOUGHT") && !html.contains("PRIVATE-THOUGHT"));
    let with = sb.ok(&["export", "boss", "--all", "--thinking"]);
    assert!(with.contains("PRIVATE-THOUGHT about kids"));
    let jsonl = sb.ok(&["export", "boss", "--all", "--format", "jsonl"]);
    for line in jsonl.lines() {
        serde_json::from_str::<Value>(line).expect("each line is an entry");
    }
    assert!(!jsonl.contains("PRIVATE-THOUGHT"));

    // The default is the active segment: the summary and what came after it.
    let active = sb.ok(&["export", "boss"]);
    assert!(active.contains("SUMMARY-TEXT") && active.contains(HOSTILE));
    assert!(!active.contains("delegate the counting") || md.contains("delegate the counting"));
    assert_eq!(active.matches("\n## Segment ").count(), 1);

    // Stopped, the pod exports what it did running; -o writes a private file. (The kid keeps
    // running: stopping it too would add its "shut down" report to the boss's log.)
    sb.ok(&["stop", "boss"]);
    let file = sb.path().join("out").join("t.html");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    sb.ok(&[
        "export",
        "boss",
        "--all",
        "--format",
        "html",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), html);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
        1,
        "no temporary file left beside it"
    );
}

#[test]
fn an_unknown_pod_or_a_directory_as_output_is_refused_plainly() {
    let sb = TestHome::new();
    let out = sb.run(&["export", "ghost"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no pod named \"ghost\""));

    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "hello"]);
    let dir = sb.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let out = sb.run(&["export", "p", "-o", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(dir.is_dir(), "the directory is left alone");
}
