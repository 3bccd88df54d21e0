//! Child pods end to end with the real binary. Parent and children play
//! one shared script (steps tagged `"pod"` belong to the child of that name), each pod with its
//! own cursor; gates hold a child's answer so every report arrives at a known moment.

use seedpod_e2e::{TestHome, is_pod_event_from, is_run_end, wait_for};
use seedpod_protocol::{ClientMode, Entry, EntryKind, PodEvent, PodName, SystemItem};
use serde_json::{Value, json};

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": tool, "arguments": arguments.to_string()}]})
}

fn for_pod(pod: &str, mut step: Value) -> Value {
    step["pod"] = json!(pod);
    step
}

/// Turn-ended reports from `child` committed in `entries`.
fn turn_reports(entries: &[Entry], child: &str) -> usize {
    entries
        .iter()
        .filter(|e| {
            matches!(&e.kind, EntryKind::SystemItem {
                item: SystemItem::PodEvent { event: PodEvent::TurnEnded { pod, .. }, .. },
                ..
            } if pod == child)
        })
        .count()
}

/// Tool results in `entries`, in order: `(tool, content, is_error)`.
fn tool_results(entries: &[Entry]) -> Vec<(String, String, bool)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } => Some((name.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// Wait on `conn`'s events until `cond` holds; it is checked first and after every frame, so
/// what happened before the wait counts too.
async fn until<F, Fut>(conn: &mut seedpod_client::Connection, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut seen = Vec::new();
    while !cond().await {
        wait_for(conn, &mut seen, |_| Some(())).await;
    }
}

/// Whether `name` has committed `reports` turn reports from `child` and is between turns.
async fn settled_with(sb: &TestHome, name: &str, child: &str, reports: usize) -> bool {
    let history = sb.history(name).await;
    turn_reports(&history, child) == reports
        && matches!(
            history.last().map(|e| &e.kind),
            Some(EntryKind::RunEnd { .. })
        )
}

/// A stopped pod's active segment, read from disk.
fn log_entries(sb: &TestHome, name: &str) -> Vec<Entry> {
    let dir = sb.home.pod_dir(&PodName::new(name.to_string()).unwrap());
    let meta = seedpod_store::load_meta(&dir)
        .expect("pod.json readable")
        .expect("pod.json exists");
    let text = std::fs::read_to_string(seedpod_store::segment_path(&dir, &meta.active_segment))
        .expect("segment readable");
    text.lines()
        .map(|line| serde_json::from_str(line).expect("an entry"))
        .collect()
}

/// Wait for `n` more committed `run_end`s on an attached connection.
async fn run_ends(conn: &mut seedpod_client::Connection, n: usize) {
    let mut seen = Vec::new();
    for _ in 0..n {
        wait_for(conn, &mut seen, is_run_end).await;
    }
}

/// Wait until `pod` commits a pod event from `child` (any kind), on an attached connection.
async fn pod_event_from(conn: &mut seedpod_client::Connection, child: &str) -> PodEvent {
    let mut seen = Vec::new();
    wait_for(conn, &mut seen, is_pod_event_from(child)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_hears_once_per_turn_it_started_before_its_next_request() {
    let sb = TestHome::new();
    let gate1 = sb.gate("kid-turn-1");
    let gate2 = sb.gate("kid-turn-2");
    let script = sb.script(
        "family.jsonl",
        &[
            call("spawn_pod", json!({"name": "kid", "task": "count to two"})),
            json!({"text": "kid is counting"}),
            call(
                "send_to_pod",
                json!({"name": "kid", "message": "and again"}),
            ),
            json!({"text": "asked for more"}),
            json!({"text": "kid counted twice"}),
            for_pod("kid", json!({"text": "one", "gate": gate1})),
            for_pod("kid", json!({"text": "two", "gate": gate2})),
            for_pod("kid", json!({"text": "hello, person"})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "delegate the counting"]);
    run_ends(&mut boss, 1).await;

    // Kid's first turn (its task) ends: the report wakes the idle boss, which sends more work.
    sb.open_gate("kid-turn-1");
    run_ends(&mut boss, 1).await;
    sb.open_gate("kid-turn-2");
    run_ends(&mut boss, 1).await;

    let history = sb.history("boss").await;
    assert_eq!(
        turn_reports(&history, "kid"),
        2,
        "one per parent-started turn"
    );
    let requests = sb.requests("boss");
    assert_eq!(requests.len(), 5, "{requests:#?}");
    let report = "[pod kid] finished a turn";
    assert!(!requests[1].contains(report), "nothing reported yet");
    assert_eq!(
        requests[2].matches(report).count(),
        1,
        "the first report is in the request it woke"
    );
    assert_eq!(requests[4].matches(report).count(), 2);

    // A turn someone else starts in the child is not reported to the parent.
    let mut kid = sb.connect("kid", ClientMode::Attach).await;
    sb.ok(&["send", "kid", "hi"]);
    run_ends(&mut kid, 1).await;
    let kid_history = sb.history("kid").await;
    let delivered = kid_history
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::OutboxDelivered { .. }))
        .count();
    assert_eq!(
        delivered, 2,
        "only the two parent-started turns made reports"
    );
    assert_eq!(turn_reports(&sb.history("boss").await, "kid"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_made_while_the_parent_is_dead_arrives_once_after_its_restart() {
    let sb = TestHome::new();
    let gate = sb.gate("kid-done");
    let script = sb.script(
        "family.jsonl",
        &[
            call(
                "spawn_pod",
                json!({"name": "kid", "task": "take your time"}),
            ),
            json!({"text": "waiting for kid"}),
            json!({"text": "kid finished"}),
            for_pod("kid", json!({"text": "finished", "gate": gate})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "delegate"]);
    run_ends(&mut boss, 1).await;
    drop(boss);

    sb.kill9("boss").await;
    let mut kid = sb.connect("kid", ClientMode::Attach).await;
    sb.open_gate("kid-done");
    run_ends(&mut kid, 1).await;

    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    // The relinked parent nudges the child, which delivers; the report wakes the parent.
    until(&mut boss, || settled_with(&sb, "boss", "kid", 1)).await;
    assert_eq!(sb.requests("boss").len(), 3, "the report woke one turn");
    assert!(sb.requests("boss")[2].contains("[pod kid] finished a turn"));

    // Another restart of either side does not deliver it again.
    sb.ok(&["stop", "kid"]);
    sb.ok(&["restart", "boss"]);
    sb.ok(&["start", "kid"]);
    let history = sb.history("boss").await;
    assert_eq!(turn_reports(&history, "kid"), 1, "delivered exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_child_is_listed_restorable_and_after_start_still_reports() {
    let sb = TestHome::new();
    let gate1 = sb.gate("kid-1");
    let gate2 = sb.gate("kid-2");
    let script = sb.script(
        "family.jsonl",
        &[
            call("spawn_pod", json!({"name": "kid", "task": "say one"})),
            json!({"text": "kid started"}),
            json!({"text": "kid said one"}),
            call("list_pods", json!({})),
            json!({"text": "kid is down"}),
            call("send_to_pod", json!({"name": "kid", "message": "say two"})),
            json!({"text": "asked again"}),
            json!({"text": "kid said two"}),
            for_pod("kid", json!({"text": "one", "gate": gate1})),
            for_pod("kid", json!({"text": "two", "gate": gate2})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "delegate"]);
    sb.open_gate("kid-1");
    until(&mut boss, || settled_with(&sb, "boss", "kid", 1)).await;

    let context = sb.context("kid").await;
    sb.kill9("kid").await;
    sb.ok(&["send", "boss", "how is kid?"]);
    let listed = tool_results(&sb.history("boss").await)
        .into_iter()
        .find(|(tool, ..)| tool == "list_pods")
        .expect("list_pods ran");
    assert!(listed.1.contains("kid: stopped (restorable)"), "{listed:?}");

    sb.ok(&["start", "kid"]);
    assert_eq!(sb.context("kid").await, context, "restored exactly");
    sb.ok(&["send", "boss", "ask kid again"]);
    sb.open_gate("kid-2");
    until(&mut boss, || settled_with(&sb, "boss", "kid", 2)).await;
    let requests = sb.requests("boss");
    assert_eq!(requests.len(), 8, "{requests:#?}");
    assert_eq!(requests[7].matches("[pod kid] finished a turn").count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_levels_stop_the_middle_and_the_root_still_reaches_the_grandchild() {
    let sb = TestHome::new();
    std::fs::create_dir_all(sb.path().join("work/sub")).expect("work dirs");
    let mid_gate = sb.gate("mid-done");
    let grand_gate = sb.gate("grand-never");
    let write = |path: &str| call("write_file", json!({"path": path, "content": "x\n"}));
    let script = sb.script(
        "family.jsonl",
        &[
            call(
                "spawn_pod",
                json!({"name": "mid", "task": "organise work", "scope": {"write": ["work"]}}),
            ),
            json!({"text": "mid is on it"}),
            write("work/root.txt"),
            call("stop_pod", json!({"name": "mid"})),
            write("work/root.txt"),
            write("work/sub/root.txt"),
            call("list_pods", json!({})),
            call("stop_pod", json!({"name": "grand"})),
            write("work/sub/root.txt"),
            json!({"text": "all done"}),
            for_pod(
                "mid",
                call(
                    "spawn_pod",
                    json!({"name": "grand", "task": "tidy sub", "scope": {"write": ["work/sub"]}}),
                ),
            ),
            for_pod("mid", write("work/sub/mid.txt")),
            for_pod("mid", write("notes.txt")),
            for_pod("mid", json!({"text": "grand is tidying", "gate": mid_gate})),
            for_pod("mid", call("list_pods", json!({}))),
            for_pod("mid", write("work/sub/mid.txt")),
            for_pod("mid", json!({"text": "wrote it myself"})),
            for_pod("grand", json!({"text": "tidying", "gate": grand_gate})),
        ],
    );
    sb.start_scripted("root", &script);
    let mut root = sb.connect("root", ClientMode::Attach).await;
    sb.ok(&["send", "root", "organise"]);
    run_ends(&mut root, 1).await;
    sb.open_gate("mid-done");
    run_ends(&mut root, 1).await;

    let results = tool_results(&sb.history("root").await);
    let outcome: Vec<(&str, bool)> = results
        .iter()
        .map(|(tool, _, is_error)| (tool.as_str(), *is_error))
        .collect();
    assert_eq!(
        outcome,
        [
            ("spawn_pod", false),
            ("write_file", true),
            ("stop_pod", false),
            ("write_file", false),
            ("write_file", true),
            ("list_pods", false),
            ("stop_pod", false),
            ("write_file", false),
        ],
        "{results:#?}"
    );
    assert!(
        results[1].1.contains("lent to child pod mid"),
        "{}",
        results[1].1
    );
    assert!(
        results[4].1.contains("lent to child pod grand"),
        "{}",
        results[4].1
    );
    let listing = &results[5].1;
    assert!(listing.contains("mid: stopped (restorable)"), "{listing}");
    assert!(listing.contains("grand (child of mid): live"), "{listing}");
    assert_eq!(
        std::fs::read_to_string(sb.path().join("work/sub/root.txt")).expect("root wrote"),
        "x\n"
    );

    // The middle level: its grandchild's scope was withheld from it, and a child may write
    // nothing outside what it was given.
    let mid_results = tool_results(&log_entries(&sb, "mid"));
    let mid_writes: Vec<bool> = mid_results
        .iter()
        .filter(|(tool, ..)| tool == "write_file")
        .map(|(_, _, is_error)| *is_error)
        .collect();
    assert_eq!(mid_writes, [true, true], "{mid_results:#?}");
    assert!(
        mid_results
            .iter()
            .any(|(_, c, _)| c.contains("lent to child pod grand"))
    );
    assert!(mid_results.iter().any(|(_, c, _)| c.contains("read-only")));
    assert!(!sb.path().join("notes.txt").exists());
    assert!(!sb.path().join("work/sub/mid.txt").exists());

    // Restored, the middle pod finds its child stopped and has its scope back.
    sb.ok(&["start", "mid"]);
    sb.ok(&["send", "mid", "do it yourself"]);
    let mid_results = tool_results(&sb.history("mid").await);
    let (_, listing, _) = &mid_results[mid_results.len() - 2];
    assert!(listing.contains("grand: stopped (restorable)"), "{listing}");
    let (tool, content, is_error) = mid_results.last().expect("the write");
    assert_eq!(
        (tool.as_str(), *is_error),
        ("write_file", false),
        "{content}"
    );
    assert!(sb.path().join("work/sub/mid.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_writes_only_inside_its_delegated_scope() {
    let sb = TestHome::new();
    std::fs::create_dir_all(sb.path().join("out")).expect("out dir");
    let write = |path: &str| call("write_file", json!({"path": path, "content": "kid\n"}));
    let script = sb.script(
        "family.jsonl",
        &[
            call(
                "spawn_pod",
                json!({"name": "kid", "task": "write", "scope": {"write": ["out"]}}),
            ),
            json!({"text": "kid writes"}),
            json!({"text": "kid wrote"}),
            for_pod("kid", write("out/ok.txt")),
            for_pod("kid", write("../escape.txt")),
            for_pod("kid", write("elsewhere.txt")),
            for_pod("kid", json!({"text": "done"})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "delegate"]);
    while turn_reports(&sb.history("boss").await, "kid") == 0 {
        pod_event_from(&mut boss, "kid").await;
    }
    let writes: Vec<(String, bool)> = tool_results(&sb.history("kid").await)
        .into_iter()
        .map(|(_, content, is_error)| (content, is_error))
        .collect();
    assert_eq!(
        writes.iter().map(|w| w.1).collect::<Vec<_>>(),
        [false, true, true],
        "{writes:#?}"
    );
    assert!(writes[2].0.contains("read-only"), "{}", writes[2].0);
    assert_eq!(
        std::fs::read_to_string(sb.path().join("out/ok.txt")).expect("written"),
        "kid\n"
    );
    assert!(!sb.path().join("elsewhere.txt").exists());

    // A parent cannot lend what it may not write itself.
    let out = sb.run(&["spawn", "boss", "kid2", "escape", "--write", "/etc"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot delegate write access"), "{stderr}");
    assert!(
        !sb.home.pod_dir(&PodName::new("kid2").unwrap()).exists(),
        "nothing was created"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_parent_takes_the_reports_a_stopped_child_could_not_deliver() {
    let sb = TestHome::new();
    let gate = sb.gate("kid-done");
    let script = sb.script(
        "family.jsonl",
        &[
            call(
                "spawn_pod",
                json!({"name": "kid", "task": "work while I am away"}),
            ),
            json!({"text": "see you later"}),
            json!({"text": "kid finished and stopped while I was away"}),
            for_pod("kid", json!({"text": "finished", "gate": gate})),
        ],
    );
    sb.start_scripted("boss", &script);
    sb.ok(&["send", "boss", "delegate"]);
    sb.ok(&["stop", "boss"]);
    let mut kid = sb.connect("kid", ClientMode::Attach).await;
    sb.open_gate("kid-done");
    run_ends(&mut kid, 1).await;
    drop(kid);
    sb.ok(&["stop", "kid"]);

    // Nobody runs the kid now: the parent reads its undelivered reports from its log.
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    until(&mut boss, || settled_with(&sb, "boss", "kid", 1)).await;
    let requests = sb.requests("boss");
    assert_eq!(requests.len(), 3, "one woken turn for both reports");
    assert!(requests[2].contains("[pod kid] finished a turn"));
    assert!(requests[2].contains("[pod kid] shut down"));

    // Restored, the kid delivers them itself; the parent acknowledges without a second copy.
    sb.ok(&["start", "kid"]);
    let mut kid = sb.connect("kid", ClientMode::Attach).await;
    let delivered = || async {
        sb.history("kid")
            .await
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::OutboxDelivered { .. }))
            .count()
            == 2
    };
    until(&mut kid, delivered).await;
    let history = sb.history("boss").await;
    assert_eq!(turn_reports(&history, "kid"), 1);
    let shut_downs = history
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EntryKind::SystemItem {
                    item: SystemItem::PodEvent {
                        event: PodEvent::ShutDown { .. },
                        ..
                    },
                    ..
                }
            )
        })
        .count();
    assert_eq!(shut_downs, 1);
}

/// The CLI side: `seedpod spawn` with a write scope, `ls --tree`, and `stop` with and without
/// `--with-children`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_spawns_lists_the_tree_and_stops_a_family() {
    let sb = TestHome::new();
    std::fs::create_dir_all(sb.path().join("out")).expect("out dir");
    let script = sb.script(
        "family.jsonl",
        &[
            json!({"text": "noted"}),
            for_pod("kid", json!({"text": "on it"})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    let out = sb.ok(&["spawn", "boss", "kid", "tidy the output", "--write", "out"]);
    assert_eq!(out.trim(), "kid");
    let kid_meta = seedpod_store::load_meta(&sb.home.pod_dir(&PodName::new("kid").unwrap()))
        .expect("readable")
        .expect("kid has a pod.json");
    assert_eq!(kid_meta.parent, Some(PodName::new("boss").unwrap()));
    let out_dir = sb.path().join("out").canonicalize().expect("canonical");
    assert_eq!(
        kid_meta.delegated.expect("a grant").write,
        std::slice::from_ref(&out_dir)
    );
    // The child's system prompt says who started it and what it may write.
    let context = sb.context("kid").await;
    assert!(
        context.contains("You are a child pod started by pod boss"),
        "{context}"
    );
    assert!(
        context.contains(&format!("write {}", out_dir.display())),
        "{context}"
    );
    // The kid's turn ends and the boss, woken, answers: the family is settled.
    until(&mut boss, || settled_with(&sb, "boss", "kid", 1)).await;

    let tree = sb.ok(&["ls", "--tree"]);
    let lines: Vec<&str> = tree.lines().collect();
    let boss_line = lines
        .iter()
        .position(|l| l.starts_with("boss"))
        .expect(&tree);
    assert!(
        lines[boss_line + 1].starts_with("└─ kid") && lines[boss_line + 1].contains("idle"),
        "{tree}"
    );

    let stopped = sb.run(&["stop", "boss"]);
    assert!(stopped.status.success());
    let note = String::from_utf8_lossy(&stopped.stderr);
    assert!(
        note.contains("kid"),
        "the note names the child left running: {note}"
    );
    assert!(sb.ok(&["ls", "--tree"]).contains("stopped (restorable)"));
    assert!(sb.pid("kid").await > 0, "the kid still runs and answers");

    sb.start_scripted("boss", &script);
    let stopped = sb.ok(&["stop", "boss", "--with-children"]);
    let order: Vec<&str> = stopped.lines().collect();
    assert_eq!(order.len(), 2, "{stopped}");
    assert!(
        order[0].starts_with("stopped kid") && order[1].starts_with("stopped boss"),
        "children first: {stopped}"
    );
    let tree = sb.ok(&["ls", "--tree"]);
    assert_eq!(tree.matches("stopped (restorable)").count(), 2, "{tree}");
}

/// `send_to_pod` to a child that crashed restores it from its log first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_to_pod_restores_a_crashed_child() {
    let sb = TestHome::new();
    let gate1 = sb.gate("kid-1");
    let gate2 = sb.gate("kid-2");
    let script = sb.script(
        "family.jsonl",
        &[
            call("spawn_pod", json!({"name": "kid", "task": "say one"})),
            json!({"text": "kid started"}),
            json!({"text": "kid said one"}),
            call("send_to_pod", json!({"name": "kid", "message": "say two"})),
            json!({"text": "asked again"}),
            json!({"text": "kid said two"}),
            for_pod("kid", json!({"text": "one", "gate": gate1})),
            for_pod("kid", json!({"text": "two", "gate": gate2})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "delegate"]);
    sb.open_gate("kid-1");
    until(&mut boss, || settled_with(&sb, "boss", "kid", 1)).await;
    sb.kill9("kid").await;

    sb.ok(&["send", "boss", "ask kid again"]);
    let sent = tool_results(&sb.history("boss").await)
        .into_iter()
        .find(|(tool, ..)| tool == "send_to_pod")
        .expect("send_to_pod ran");
    assert!(!sent.2, "{sent:?}");
    assert!(sent.1.contains("restored it from its log"), "{sent:?}");
    sb.open_gate("kid-2");
    until(&mut boss, || settled_with(&sb, "boss", "kid", 2)).await;
}

/// Every turn a parent delegates to its child is reported back once, in order, without waking
/// the parent. How long `seedpod spawn` and each report take is measured by
/// `cargo bench -p seedpod-e2e --bench delegation-bench`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_delegated_turn_is_reported_once() {
    const ROUNDS: usize = 3;
    let sb = TestHome::new();
    // Reports are committed without waking the parent, so it needs no script of its own.
    std::fs::create_dir_all(sb.path().join(".seedpod")).expect("project dir");
    std::fs::write(
        sb.path().join(".seedpod/config.toml"),
        "[children]\nwake = false\n",
    )
    .expect("config");
    let steps: Vec<Value> = (0..=ROUNDS)
        .map(|i| for_pod("kid", json!({"text": format!("round {i}")})))
        .collect();
    let script = sb.script("family.jsonl", &steps);
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["spawn", "boss", "kid", "round zero"]);
    pod_event_from(&mut boss, "kid").await;

    let mut kid = sb.connect("kid", ClientMode::Control).await;
    for i in 1..=ROUNDS {
        kid.call(seedpod_protocol::Method::Delegate {
            segments: vec![seedpod_protocol::Segment::text(format!("round {i}"))],
        })
        .await
        .expect("delegated");
        pod_event_from(&mut boss, "kid").await;
    }
    let kid_ends = sb
        .history("kid")
        .await
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::RunEnd { .. }))
        .count();
    let boss_reports = sb
        .history("boss")
        .await
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EntryKind::SystemItem {
                    item: SystemItem::PodEvent { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(kid_ends, ROUNDS + 1);
    assert_eq!(
        boss_reports,
        ROUNDS + 1,
        "one report per parent-started turn"
    );
}

/// A child whose model fails reports `errored` with the reason, and the parent wakes to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_child_reports_the_error() {
    let sb = TestHome::new();
    let gate = sb.gate("kid-fails");
    let script = sb.script(
        "family.jsonl",
        &[
            call("spawn_pod", json!({"name": "kid", "task": "try"})),
            json!({"text": "kid is trying"}),
            json!({"text": "kid failed; I will do it myself"}),
            for_pod(
                "kid",
                json!({"text": "starting", "gate": gate, "error": {"kind": "permanent", "message": "the model server is down"}, "error_after_chars": 4}),
            ),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "delegate"]);
    sb.open_gate("kid-fails");
    let event = pod_event_from(&mut boss, "kid").await;
    match event {
        PodEvent::Errored { message, .. } => {
            assert!(message.contains("the model server is down"), "{message}");
        }
        other => panic!("expected errored, got {other:?}"),
    }
    // The first run's end was read while waiting for the report; this is the woken run's.
    run_ends(&mut boss, 1).await;
    let requests = sb.requests("boss");
    assert_eq!(requests.len(), 3, "the report woke the boss");
    assert!(
        requests[2].contains("[pod kid] stopped with an error"),
        "{}",
        requests[2]
    );
}
