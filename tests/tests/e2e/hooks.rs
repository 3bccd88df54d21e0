//! Lifecycle hooks end to end (docs/hooks.md): the real `seedpod` binary, a loopback model
//! server speaking OpenAI's wire format (`run COMMAND` gets a `shell` call), real hook
//! processes. A `pre_tool` hook's deny reaches the model; a `post_tool` hook's context is in the
//! log and replays byte for byte without the hook; a slow hook is killed with what it started
//! and the turn goes on; a project's hooks wait for `seedpod trust`; and the abuses — endless
//! output, output that is not JSON, hostile tool arguments.

use std::path::{Path, PathBuf};

use seedpod_e2e::limit_server::{LimitConfig, LimitServer};
use seedpod_e2e::{TestHome, is_approval_request, is_run_end, tool_results};
use seedpod_protocol::{ApprovalAnswer, Method, ServerMsg};

use crate::small_window::start_pod;

/// A window no test here comes near.
const WINDOW: u64 = 200_000;

/// Write an executable hook script under the test's home; returns its path.
fn hook_script(sb: &TestHome, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = sb.path().join("hooks");
    std::fs::create_dir_all(&dir).expect("hooks dir");
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write hook");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod hook");
    path
}

/// The user's config: `shell` runs without asking (so only hooks decide), plus `hooks`.
fn config(sb: &TestHome, hooks: &str) {
    sb.user_config(&format!("[approvals]\nshell = \"allow\"\n\n{hooks}"));
}

/// `[[hooks.EVENT]]` running `script`, with extra lines.
fn hook(event: &str, script: &Path, extra: &str) -> String {
    format!(
        "[[hooks.{event}]]\ncommand = \"{}\"\n{extra}\n",
        script.display()
    )
}

fn alert_containing(words: &'static str) -> impl FnMut(&ServerMsg) -> Option<String> {
    move |msg| match msg {
        ServerMsg::Alert { message, .. } if message.contains(words) => Some(message.clone()),
        _ => None,
    }
}

/// Whether `pid` has exited (gone, or a zombie waiting for its parent).
fn exited(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/status")) {
        Err(_) => true,
        Ok(text) => text
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_hook_denies_rm_with_a_reason_the_model_reads() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let guard = hook_script(
        &sb,
        "no-rm.sh",
        r#"event=$(cat)
if printf '%s' "$event" | grep -Eq '"command":"rm[ "]'; then
  echo '{"decision":"deny","reason":"rm is off limits in this repository; move files to ./trash"}'
fi"#,
    );
    let ran = sb.path().join("post.log");
    let after = hook_script(
        &sb,
        "after.sh",
        &format!("cat > /dev/null\necho ran >> {}", ran.display()),
    );
    config(
        &sb,
        &(hook("pre_tool", &guard, "matcher = \"shell\"") + &hook("post_tool", &after, "")),
    );
    std::fs::create_dir_all(sb.path().join("build")).expect("build dir");
    std::fs::write(sb.path().join("build/keep"), "precious").expect("a file rm would take");
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;

    pod.run("run rm -rf build").await;
    pod.wait_for(is_run_end).await;
    assert!(sb.path().join("build/keep").exists(), "the denied rm ran");
    assert!(!ran.exists(), "post_tool ran for a call that did not run");
    let results = tool_results(&sb.history("p").await);
    assert!(
        results[0].contains("pre_tool hook") && results[0].contains("rm is off limits"),
        "{results:?}"
    );
    let exchanges = server.exchanges();
    let after_call = &exchanges.last().expect("a request after the call").body;
    assert!(
        after_call.contains("rm is off limits in this repository; move files to ./trash"),
        "the reason is not in the next request: {after_call}"
    );

    // Anything else still runs: the hook narrows, it does not switch `shell` off.
    pod.run("run echo fine > ok.txt").await;
    pod.wait_for(is_run_end).await;
    assert!(sb.path().join("ok.txt").exists());
    let lines = std::fs::read_to_string(&ran).expect("post_tool ran for the call that ran");
    assert_eq!(lines.lines().count(), 1);
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_tool_hooks_context_is_committed_and_replays_without_the_hook() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let runs = sb.path().join("post-runs");
    let lint = hook_script(
        &sb,
        "lint.sh",
        &format!(
            r#"cat > /dev/null
echo ran >> {}
echo '{{"context":"lint: 2 warnings in src/main.rs"}}'"#,
            runs.display()
        ),
    );
    config(&sb, &hook("post_tool", &lint, ""));
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;
    pod.run("run echo built").await;
    pod.wait_for(is_run_end).await;

    let results = tool_results(&sb.history("p").await);
    assert!(results[0].contains("built\n"), "{results:?}");
    assert!(
        results[0].contains("[post_tool hook] lint: 2 warnings in src/main.rs"),
        "{results:?}"
    );
    let log: String = sb
        .segment_files("p")
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("segment"))
        .collect();
    assert!(
        log.contains("lint: 2 warnings in src/main.rs"),
        "not in the log"
    );
    assert!(
        server
            .exchanges()
            .last()
            .expect("request")
            .body
            .contains("lint: 2 warnings"),
        "the model did not read it"
    );
    drop(pod);

    // Restored from the log with the hook now saying something else: replay does not ask it.
    let before = sb.context("p").await;
    hook_script(&sb, "lint.sh", "echo '{\"context\":\"CHANGED\"}'");
    sb.kill9("p").await;
    start_pod(&sb, &server);
    let after = sb.context("p").await;
    assert_eq!(before, after, "the next request changed across a restore");
    assert!(!after.contains("CHANGED"));
    let ran = std::fs::read_to_string(&runs).expect("the hook ran");
    assert_eq!(ran.lines().count(), 1, "a restore ran the hook again");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_past_its_timeout_is_killed_with_its_children_and_the_turn_goes_on() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let pid_file = sb.path().join("grandchild.pid");
    let slow = hook_script(
        &sb,
        "slow.sh",
        &format!(
            "cat > /dev/null\nsleep 300 &\necho $! > {}\nwait",
            pid_file.display()
        ),
    );
    config(&sb, &hook("post_tool", &slow, "timeout_secs = 1"));
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;
    pod.run("run echo still here").await;

    let alert = pod
        .wait_for(alert_containing("did not finish within 1 s"))
        .await;
    assert!(
        alert.contains("post_tool") && alert.contains("slow.sh"),
        "{alert}"
    );
    pod.wait_for(is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert!(results[0].contains("still here\n"), "{results:?}");
    assert!(!results[0].contains("post_tool hook"), "{results:?}");
    // The turn went on to the model's answer after the result.
    assert_eq!(server.exchanges().len(), 2);

    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .expect("the hook started its child")
        .trim()
        .parse()
        .expect("a pid");
    assert!(
        exited(grandchild),
        "the hook's background sleep outlived the timeout"
    );
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_hook_is_ignored_until_the_project_is_trusted() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let marker = sb.path().join("project-hook-ran");
    let script = hook_script(
        &sb,
        "project.sh",
        &format!("cat > /dev/null\ntouch {}", marker.display()),
    );
    sb.user_config("[approvals]\nshell = \"allow\"\n");
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(project.join("config.toml"), hook("post_tool", &script, ""))
        .expect("project config");
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;
    let warning = pod.wait_for(alert_containing("is not trusted")).await;
    assert!(warning.contains("hooks"), "{warning}");
    pod.run("run echo one").await;
    pod.wait_for(is_run_end).await;
    assert!(!marker.exists(), "an untrusted project's hook ran");
    drop(pod);

    sb.ok(&["trust"]);
    sb.ok(&["restart", "p"]);
    let mut pod = sb.drive("p").await;
    pod.run("run echo two").await;
    pod.wait_for(is_run_end).await;
    assert!(marker.exists(), "the trusted project's hook did not run");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_printing_100_mb_is_cut_off_and_the_pod_stays_small() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let flood = hook_script(
        &sb,
        "flood.sh",
        "cat > /dev/null\nhead -c 100000000 /dev/zero | tr '\\0' x",
    );
    config(&sb, &hook("post_tool", &flood, "timeout_secs = 60"));
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;
    pod.run("run echo flooded").await;
    let alert = pod.wait_for(alert_containing("printed more than")).await;
    assert!(alert.contains("65536 bytes"), "{alert}");
    pod.wait_for(is_run_end).await;
    let results = tool_results(&sb.history("p").await);
    assert!(results[0].contains("flooded\n"), "{results:?}");
    assert!(!results[0].contains("xxxx"), "the flood reached the model");
    let rss = seedpod_e2e::rss_kb(sb.pid("p").await);
    assert!(rss > 0 && rss < 100_000, "the pod holds {rss} kB");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_hook_that_answers_nonsense_sends_the_call_to_a_person() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let broken = hook_script(&sb, "broken.sh", "cat > /dev/null\necho 'allow, I guess'");
    config(&sb, &hook("pre_tool", &broken, ""));
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;
    pod.run("run echo asked > asked.txt").await;
    let alert = pod.wait_for(alert_containing("not the JSON object")).await;
    assert!(alert.contains("waits for a person"), "{alert}");
    // `shell = "allow"`, yet a failed guard lets nothing through unseen.
    let request = pod.wait_for(is_approval_request).await;
    assert_eq!(request.tool, "shell");
    assert!(!sb.path().join("asked.txt").exists());
    pod.control
        .call(Method::Approve {
            call_id: Some(request.call_id),
            answer: ApprovalAnswer::Approve,
            reason: None,
        })
        .await
        .expect("approve");
    pod.wait_for(is_run_end).await;
    assert!(sb.path().join("asked.txt").exists());
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tool_arguments_reach_a_hook_as_data_never_as_shell() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let seen = sb.path().join("event.json");
    let keeper = hook_script(
        &sb,
        "keep.sh",
        &format!(
            "cat > {}\necho 'every call is refused in this test' >&2\nexit 2",
            seen.display()
        ),
    );
    config(&sb, &hook("pre_tool", &keeper, ""));
    start_pod(&sb, &server);
    let mut pod = sb.drive("p").await;
    let hostile = "echo \"$(touch pwned1)\" `touch pwned2`; touch pwned3 #' \\\" ${HOME}";
    pod.run(&format!("run {hostile}")).await;
    pod.wait_for(is_run_end).await;

    for marker in ["pwned1", "pwned2", "pwned3"] {
        assert!(!sb.path().join(marker).exists(), "{marker} was created");
    }
    let event: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&seen).expect("the hook saw the event"))
            .expect("the event is JSON");
    assert_eq!(event["event"], "pre_tool");
    assert_eq!(event["pod"], "p");
    assert_eq!(event["tool"]["name"], "shell");
    assert_eq!(event["tool"]["arguments"]["command"], hostile);
    let results = tool_results(&sb.history("p").await);
    assert!(
        results[0].contains("every call is refused in this test"),
        "{results:?}"
    );
    sb.ok(&["stop", "p"]);
}

/// Wait until `path` holds a line containing `needle` (hooks that only observe run on a task of
/// their own; nothing else signals that they ran). Gives the file's text.
async fn wait_for_line(path: &Path, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().any(|l| l.contains(needle)) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no line with {needle} in {}: {text}",
            path.display()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_prompt_hook_blocks_or_adds_context_and_observers_see_their_events() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    let sb = TestHome::new();
    let gate = hook_script(
        &sb,
        "gate.sh",
        r#"event=$(cat)
case "$event" in
  *secret*) echo 'no secrets in prompts' >&2; exit 2 ;;
esac
echo '{"context":"the branch is main"}'"#,
    );
    let events = sb.path().join("events.log");
    let observer = hook_script(
        &sb,
        "observe.sh",
        &format!(
            "line=$(cat)\necho \"$SEEDPOD_HOOK_EVENT $line\" >> {}",
            events.display()
        ),
    );
    let mut hooks = hook("user_prompt", &gate, "");
    for event in ["session_start", "turn_end", "notification"] {
        hooks.push_str(&hook(event, &observer, ""));
    }
    config(&sb, &hooks);
    start_pod(&sb, &server);
    wait_for_line(&events, "session_start").await;
    let mut pod = sb.drive("p").await;

    let blocked = pod
        .control
        .call(Method::Run {
            segments: vec![seedpod_protocol::Segment::text("the secret is 42")],
        })
        .await
        .expect_err("a blocked input is refused")
        .to_string();
    assert!(blocked.contains("no secrets in prompts"), "{blocked}");
    assert!(blocked.contains("not recorded"), "{blocked}");
    pod.run("hello there").await;
    pod.wait_for(is_run_end).await;
    let context = sb.context("p").await;
    assert!(
        !context.contains("the secret is 42"),
        "a blocked input was recorded"
    );
    assert!(
        context.contains("hello there")
            && context.contains("[user_prompt hook] the branch is main"),
        "{context}"
    );
    let seen = wait_for_line(&events, "turn_end").await;
    let turn_end = seen
        .lines()
        .find(|l| l.starts_with("turn_end "))
        .expect("a turn_end line");
    let event: serde_json::Value =
        serde_json::from_str(turn_end.trim_start_matches("turn_end ")).expect("JSON");
    assert_eq!(event["outcome"], "completed");

    sb.ok(&["notify", "p", "--no-wake", "deploy finished"]);
    let seen = wait_for_line(&events, "deploy finished").await;
    assert!(seen.contains("notification {"), "{seen}");
    sb.ok(&["stop", "p"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_allow_skips_an_ask_only_where_the_users_file_lets_it() {
    let server = LimitServer::start(LimitConfig::new(WINDOW));
    for may_allow in [false, true] {
        let sb = TestHome::new();
        let yes = hook_script(
            &sb,
            "yes.sh",
            "cat > /dev/null\necho '{\"decision\":\"allow\"}'",
        );
        sb.user_config(&format!(
            "[approvals]\nshell = \"ask\"\n\n[hooks]\npre_tool_may_allow = {may_allow}\n\n{}",
            hook("pre_tool", &yes, "")
        ));
        start_pod(&sb, &server);
        let mut pod = sb.drive("p").await;
        pod.run("run echo allowed > allowed.txt").await;
        if may_allow {
            pod.wait_for(is_run_end).await;
            assert!(sb.path().join("allowed.txt").exists());
            assert!(!pod.seen.iter().any(|m| is_approval_request(m).is_some()));
        } else {
            let request = pod.wait_for(is_approval_request).await;
            assert_eq!(request.tool, "shell");
            assert!(!sb.path().join("allowed.txt").exists());
        }
        sb.ok(&["stop", "p"]);
    }
}
