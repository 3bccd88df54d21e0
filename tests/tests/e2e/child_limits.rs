//! Limits on child pods (`[children] max_children`, `max_depth`; `pod/src/children/limits.rs`):
//! one model answer asking for a thousand children starts exactly the limit's worth, and a
//! chain of pods stops at the configured depth. Processes are counted from `/proc`, so a child
//! started and never recorded would be caught too.

use seedpod_e2e::{TestHome, wait_for};
use seedpod_protocol::{ClientMode, Entry, EntryKind};
use serde_json::{Value, json};

/// How many `spawn_pod` calls the hostile answer carries.
const CALLS: usize = 1_000;
/// `[children] max_children` when nothing is configured.
const DEFAULT_MAX_CHILDREN: usize = 8;

fn spawn_call(name: &str, task: &str) -> Value {
    json!({"name": "spawn_pod", "arguments": json!({"name": name, "task": task}).to_string()})
}

fn for_pod(pod: &str, mut step: Value) -> Value {
    step["pod"] = json!(pod);
    step
}

/// `spawn_pod` results in `entries`, in order: `(content, is_error)`.
fn spawn_results(entries: &[Entry]) -> Vec<(String, bool)> {
    entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } if name == "spawn_pod" => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// Pids of the `pod serve` processes running with this sandbox's `SEEDPOD_HOME`, from `/proc`:
/// every pod process, whether or not it ever wrote a pod directory.
fn pod_processes(sb: &TestHome) -> Vec<u32> {
    let home = format!("SEEDPOD_HOME={}", sb.path().display());
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let read = |file: &str| std::fs::read(entry.path().join(file)).unwrap_or_default();
        let args: Vec<Vec<u8>> = read("cmdline")
            .split(|b| *b == 0)
            .map(<[u8]>::to_vec)
            .collect();
        let serves = args.windows(2).any(|w| w[0] == b"pod" && w[1] == b"serve");
        let ours = read("environ")
            .split(|b| *b == 0)
            .any(|var| var == home.as_bytes());
        if serves && ours {
            pids.push(pid);
        }
    }
    pids
}

/// Names of the pods with a directory under the sandbox's data dir.
fn pod_dirs(sb: &TestHome) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(sb.home.pods_dir())
        .expect("pods dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Pods `seedpod ls --json` lists as running (a pid).
fn running_in_ls(sb: &TestHome) -> Vec<String> {
    let mut names: Vec<String> = sb
        .ok(&["ls", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("an ls row"))
        .filter(|row| !row["pid"].is_null())
        .map(|row| row["name"].as_str().expect("a name").to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_answer_asking_for_a_thousand_children_starts_only_max_children() {
    let sb = TestHome::new();
    let names: Vec<String> = (0..CALLS).map(|i| format!("kid-{i}")).collect();
    let calls: Vec<Value> = names.iter().map(|n| spawn_call(n, "work")).collect();
    let mut steps = vec![json!({"tool_calls": calls}), json!({"text": "done"})];
    // Whichever children start stay busy (held at a gate nobody opens), so they are live
    // processes when counted; each name has a step so no child plays the parent's script.
    let held = sb.gate("never-opened");
    steps.extend(
        names
            .iter()
            .map(|n| for_pod(n, json!({"text": "working", "gate": held}))),
    );
    let script = sb.script("swarm.jsonl", &steps);
    sb.start_scripted("boss", &script);
    // `send` returns when the run has ended. The refusals end it (`[loop] failures_in_a_row`),
    // so it reports no progress; what matters is what exists afterwards.
    sb.run(&["send", "boss", "split this up as much as you can"]);

    let results = spawn_results(&sb.history("boss").await);
    assert_eq!(results.len(), CALLS, "every call got a result");
    let started: Vec<&String> = results
        .iter()
        .filter(|(_, error)| !error)
        .map(|(text, _)| text)
        .collect();
    assert_eq!(started.len(), DEFAULT_MAX_CHILDREN, "{started:?}");
    for (text, error) in &results {
        if *error {
            assert!(text.contains("no child started"), "{text}");
            assert!(text.contains("max_children = 8"), "{text}");
            assert!(text.contains("stop_pod"), "{text}");
        }
    }

    // Exactly the limit's worth exists: on disk, in `ls`, and as processes.
    let dirs = pod_dirs(&sb);
    assert_eq!(dirs.len(), 1 + DEFAULT_MAX_CHILDREN, "{dirs:?}");
    assert_eq!(running_in_ls(&sb), dirs);
    let processes = pod_processes(&sb);
    assert_eq!(processes.len(), 1 + DEFAULT_MAX_CHILDREN, "{processes:?}");
}

fn ran_to_the_end(entries: &[Entry]) -> bool {
    entries
        .iter()
        .any(|e| matches!(e.kind, EntryKind::RunEnd { .. }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_of_pods_stops_at_max_depth() {
    let sb = TestHome::new();
    sb.user_config("[children]\nmax_depth = 2\n");
    let spawn = |name: &str| json!({"tool_calls": [spawn_call(name, "go one level deeper")]});
    let script = sb.script(
        "chain.jsonl",
        &[
            spawn("c1"),
            json!({"text": "boss delegated"}),
            json!({"text": "boss heard"}),
            json!({"text": "boss heard again"}),
            for_pod("c1", spawn("c2")),
            for_pod("c1", json!({"text": "c1 delegated"})),
            for_pod("c1", json!({"text": "c1 heard"})),
            for_pod("c2", spawn("c3")),
            for_pod("c2", json!({"text": "c2 could not delegate"})),
            for_pod("c3", json!({"text": "c3 must never run"})),
        ],
    );
    sb.start_scripted("boss", &script);
    let mut boss = sb.connect("boss", ClientMode::Attach).await;
    sb.ok(&["send", "boss", "go as deep as you can"]);
    // c1's turn ends after c2 has started (its spawn_pod answers then), and wakes boss.
    let mut seen = Vec::new();
    let c2_meta = sb.home.pods_dir().join("c2").join(seedpod_store::META_FILE);
    while !c2_meta.exists() {
        wait_for(&mut boss, &mut seen, |_| Some(())).await;
    }
    let mut c2 = sb.connect("c2", ClientMode::Attach).await;
    while !ran_to_the_end(&sb.history("c2").await) {
        wait_for(&mut c2, &mut seen, |_| Some(())).await;
    }

    // c1's spawn_pod answers once c2 has started: wait for that result to be committed (the
    // pod's own history, not the file, whose buffered tail may lag behind).
    let mut c1_events = sb.connect("c1", ClientMode::Attach).await;
    while spawn_results(&sb.history("c1").await).is_empty() {
        wait_for(&mut c1_events, &mut seen, |_| Some(())).await;
    }
    let c1 = spawn_results(&sb.history("c1").await);
    assert!(matches!(c1.as_slice(), [(_, false)]), "{c1:?}");
    let c2 = spawn_results(&sb.history("c2").await);
    let [(refusal, true)] = c2.as_slice() else {
        panic!("c2's spawn_pod was not refused: {c2:?}");
    };
    assert!(refusal.contains("depth 2"), "{refusal}");
    assert!(refusal.contains("max_depth = 2"), "{refusal}");
    assert!(refusal.contains("Do this work yourself"), "{refusal}");
    assert!(!sb.home.pods_dir().join("c3").exists());
    assert_eq!(pod_dirs(&sb), ["boss", "c1", "c2"]);
    assert_eq!(pod_processes(&sb).len(), 3);
}
