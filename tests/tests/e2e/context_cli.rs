//! Context management as a person meets it on the command line: the CONTEXT column of `ls` and
//! its JSON fields (and the TUI's gauge, which says the same), `history --all` across compacted and cleared segments, and `prompt show`
//! saying which prompt mode a window gets and why.

use seedpod_e2e::TestHome;
use seedpod_e2e::pty::Tui;
use seedpod_protocol::PodName;
use serde_json::{Value, json};

fn ls_rows(sb: &TestHome) -> Vec<Value> {
    sb.ok(&["ls", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn ls_shows_how_full_each_running_pods_context_is() {
    let sb = TestHome::new();
    sb.user_config("context_window = 16000\n");
    let script = sb.script("s.jsonl", &[json!({"text": "an answer"})]);
    sb.start_scripted("up", &script);
    sb.start_scripted("down", &script);
    sb.ok(&["send", "up", &"a question of some length ".repeat(40)]);
    sb.ok(&["stop", "down"]);

    let rows = ls_rows(&sb);
    let up = rows.iter().find(|r| r["name"] == "up").unwrap();
    let tokens = up["context_tokens"].as_u64().expect("an integer");
    assert_eq!(up["context_window"], 16_000);
    assert_eq!(up["context_window_source"], "config");
    assert!(tokens > 250, "the question alone is ~250 tokens: {tokens}");
    assert!(tokens <= 16_000, "{tokens}");
    let down = rows.iter().find(|r| r["name"] == "down").unwrap();
    assert!(
        down["context_tokens"].is_null(),
        "a stopped pod's log is not read"
    );
    assert!(down["context_window"].is_null());

    let table = sb.ok(&["ls"]);
    let lines: Vec<&str> = table.lines().collect();
    let header = lines[0];
    let at = header.find("CONTEXT").expect("a CONTEXT column");
    let cell = |name: &str| -> String {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} missing:\n{table}"));
        line[at..].split("  ").next().unwrap().trim().to_string()
    };
    // The answer was committed after the server counted the request: an estimate of the next.
    assert_eq!(up["context_basis"], "estimate");
    let percent = tokens * 100 / 16_000;
    assert_eq!(cell("up"), format!("~{percent}% of 16k"), "{table}");

    // The TUI's gauge is the same figure in the same words.
    let mut tui = Tui::spawn(&sb, &["attach", "up"]);
    let gauge = format!("ctx ~{percent}% of 16k");
    tui.wait_until("the context gauge", |screen| {
        screen.contents().contains(&gauge)
    });
    tui.send(seedpod_e2e::pty::keys::CTRL_D);
    assert!(tui.wait_exit(), "Ctrl-D leaves the TUI");
    assert_eq!(cell("down"), "-", "{table}");
    assert!(
        !table.contains("learned"),
        "no legend without a learned window"
    );
}

#[test]
fn ls_shows_the_tokens_alone_when_the_window_is_unknown() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    let rows = ls_rows(&sb);
    assert!(rows[0]["context_window"].is_null());
    assert!(rows[0]["context_window_source"].is_null());
    let tokens = rows[0]["context_tokens"].as_u64().unwrap();
    assert!(tokens > 0, "a fresh pod's prompt and tools count");
    let table = sb.ok(&["ls"]);
    let line = table.lines().find(|l| l.starts_with("p ")).unwrap();
    assert!(!line.contains("% of"), "{table}");
}

#[test]
fn history_all_prints_every_segment_in_order_running_or_stopped() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"text": "first answer"}),
            json!({"text": "second answer"}),
            json!({"text": "third answer"}),
            json!({"text": "SUMMARY: three questions were answered"}),
            json!({"text": "after the compaction"}),
        ],
    );
    sb.start_scripted("p", &script);
    for question in ["one", "two", "three"] {
        sb.ok(&["send", "p", question]);
    }
    let compacted = sb.ok(&["send", "p", "/compact"]);
    assert!(compacted.contains("compacted"), "{compacted}");
    sb.ok(&["send", "p", "four"]);
    let cleared = sb.ok(&["send", "p", "/clear"]);
    assert!(cleared.contains("new segment"), "{cleared}");

    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(
            sb.home
                .pod_dir(&PodName::new("p").unwrap())
                .join("pod.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let ids: Vec<String> = meta["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3);

    let running = sb.ok(&["history", "p", "--all"]);
    let separators: Vec<&str> = running
        .lines()
        .filter(|l| l.starts_with("— segment "))
        .collect();
    assert_eq!(separators.len(), 3, "{running}");
    assert_eq!(separators[0], format!("— segment {} (new) —", ids[0]));
    assert!(
        separators[1].starts_with(&format!(
            "— segment {} (compacted from {} by /compact: ",
            ids[1], ids[0]
        )),
        "{running}"
    );
    assert!(separators[1].contains(" messages → summary; "), "{running}");
    assert_eq!(
        separators[2],
        format!("— segment {} (cleared from {}) —", ids[2], ids[1])
    );
    // Every segment's entries follow its separator, in order.
    let at = |text: &str| {
        running
            .find(text)
            .unwrap_or_else(|| panic!("{text} missing:\n{running}"))
    };
    assert!(at("user: one") > at(separators[0]));
    assert!(at("assistant: third answer") < at(separators[1]));
    assert!(at("user: four") > at(separators[1]));
    assert!(at("user: four") < at(separators[2]));
    // Without --all, only the active (cleared, empty) segment.
    let active = sb.ok(&["history", "p"]);
    assert!(!active.contains("user: one"), "{active}");

    sb.ok(&["stop", "p"]);
    let stopped = sb.ok(&["history", "p", "--all"]);
    assert_eq!(stopped, running, "the same from the files of a stopped pod");

    let json_lines: Vec<Value> = sb
        .ok(&["history", "p", "--all", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let starts: Vec<&Value> = json_lines
        .iter()
        .filter(|e| e["kind"] == "segment_start")
        .collect();
    assert_eq!(starts.len(), 3);
    assert_eq!(json_lines[0]["kind"], "segment_start");
    assert_eq!(starts[1]["origin"]["type"], "compacted_from");
    assert_eq!(starts[1]["origin"]["segment_id"], ids[0]);
}

#[test]
fn history_all_reports_a_missing_segment_and_still_prints_the_rest() {
    let sb = TestHome::new();
    let script = sb.script("s.jsonl", &[json!({"text": "kept"})]);
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "hello"]);
    sb.ok(&["send", "p", "/clear"]);
    sb.ok(&["stop", "p"]);
    let first = sb.segment_files("p");
    // The oldest file by pod.json order is the first listed segment.
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(
            sb.home
                .pod_dir(&PodName::new("p").unwrap())
                .join("pod.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let oldest = meta["segments"][0].as_str().unwrap().to_string();
    let path = first
        .iter()
        .find(|p| p.to_string_lossy().contains(&oldest))
        .unwrap();
    std::fs::remove_file(path).unwrap();

    let out = sb.run(&["history", "p", "--all"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(&format!("— segment {oldest} (cannot be read) —")),
        "{stdout}"
    );
    assert!(
        stdout.contains("(cleared from"),
        "the rest is printed: {stdout}"
    );
    assert!(stderr.contains(&oldest), "{stderr}");
}

#[test]
fn prompt_show_says_which_mode_and_why() {
    let sb = TestHome::new();
    let full = sb.ok(&["prompt", "show"]);
    assert!(full.starts_with("mode: full (window unknown)\n"), "{full}");
    assert!(full.contains("# How to use your tools"), "{full}");
    assert!(full.contains("spawn_pod: "), "child tools offered: {full}");

    sb.user_config("context_window = 4096\n");
    let compact = sb.ok(&["prompt", "show"]);
    assert!(
        compact.starts_with("mode: compact (window 4,096 tokens ≤ 16,384; from config)\n"),
        "{compact}"
    );
    assert!(!compact.contains("# How to use your tools"), "{compact}");
    assert!(
        compact.contains("── tools: 9 offered in compact mode ──"),
        "{compact}"
    );
    assert!(!compact.contains("spawn_pod"), "{compact}");
    let base = compact
        .lines()
        .find(|l| l.starts_with("base request: ~"))
        .unwrap();
    let tokens: u64 = base["base request: ~".len()..]
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(tokens < 1_024, "{base}");
    assert!(base.ends_with("of the 4,096-token window"), "{base}");

    // A person who configured a child tool gets the child tools back.
    sb.user_config("context_window = 4096\n[approvals]\nspawn_pod = \"ask\"\n");
    let with_children = sb.ok(&["prompt", "show"]);
    assert!(with_children.contains("\nspawn_pod: "), "{with_children}");

    // The person's model table: the most specific prefix of the model's name applies.
    sb.user_config(
        "provider = \"scripted\"\n[context.windows]\n\"scr\" = 200000\n\"script\" = 8000\n",
    );
    let table = sb.ok(&["prompt", "show"]);
    assert!(
        table.starts_with("mode: compact (window 8,000 tokens ≤ 16,384; from the model table)\n"),
        "{table}"
    );
}

#[test]
fn prompt_show_for_a_pod_prefers_the_window_in_its_log() {
    let sb = TestHome::new();
    sb.user_config("context_window = 8192\n");
    let script = sb.script("s.jsonl", &[json!({"text": "hi"})]);
    sb.start_scripted("p", &script);
    // The configuration changes; the pod's log still says 8,192.
    sb.user_config("context_window = 100000\n");
    let shown = sb.ok(&["prompt", "show", "p"]);
    assert!(
        shown.starts_with(
            "mode: compact (window 8,192 tokens ≤ 16,384; from config, in the pod's log)\n"
        ),
        "{shown}"
    );
}
