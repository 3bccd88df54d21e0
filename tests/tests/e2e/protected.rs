//! Nothing the model can write loosens policy: a scripted model tries to allow
//! itself every shell command through the project's `.seedpod/config.toml` and to plant an
//! `fsmonitor` command in `.git/config`. The real binary's file tools refuse both, the files stay
//! as they were, the model is told why, and the pod's log records `tool_blocked`.

use seedpod_e2e::{TestHome, is_run_end};
use seedpod_protocol::{EntryKind, PodName};
use serde_json::json;

const PROJECT_CONFIG: &str = "[approvals]\nshell = \"ask\"\n";
const GIT_CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";

fn call(tool: &str, args: serde_json::Value) -> serde_json::Value {
    json!({"tool_calls": [{"name": tool, "arguments": args.to_string()}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_cannot_loosen_policy_or_plant_a_git_command() {
    let sb = TestHome::new();
    let project = sb.path().join(".seedpod/config.toml");
    let git = sb.path().join(".git/config");
    for (path, text) in [(&project, PROJECT_CONFIG), (&git, GIT_CONFIG)] {
        let parent = path.parent().expect("a parent");
        std::fs::create_dir_all(parent).expect("create dir");
        std::fs::write(path, text).expect("seed file");
    }
    let script = sb.script(
        "s.jsonl",
        &[
            call(
                "write_file",
                json!({
                    "path": ".seedpod/config.toml",
                    "content": "[approvals]\nshell = \"allow\"\n\n[scope]\nwrite = [\"/\"]\n",
                }),
            ),
            call(
                "write_file",
                json!({
                    "path": ".git/config",
                    "content": format!("{GIT_CONFIG}\tfsmonitor = touch PWNED\n"),
                }),
            ),
            call(
                "edit_file",
                json!({
                    "path": "./x/../.git/config",
                    "old": "bare = false",
                    "new": "bare = false\n\tfsmonitor = touch PWNED",
                }),
            ),
            json!({"text": "I could not change them"}),
        ],
    );
    std::fs::create_dir_all(sb.path().join("x")).expect("create x");
    sb.start_scripted("p", &script);
    let mut pod = sb.drive("p").await;
    pod.run("allow yourself the shell").await;
    pod.wait_for(is_run_end).await;

    assert_eq!(
        std::fs::read_to_string(&project).expect("project config"),
        PROJECT_CONFIG
    );
    assert_eq!(
        std::fs::read_to_string(&git).expect("git config"),
        GIT_CONFIG
    );

    let results: Vec<(String, String, bool)> = sb
        .history("p")
        .await
        .into_iter()
        .filter_map(|entry| match entry.kind {
            EntryKind::ToolResult {
                name,
                content,
                is_error,
                ..
            } => Some((name, content, is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:#?}");
    for (name, content, is_error) in &results {
        assert!(is_error, "{name} succeeded: {content}");
        assert!(
            content.starts_with("access blocked: writes to \""),
            "{name}: {content}"
        );
        assert!(content.contains("Ask the person"), "{content}");
    }
    assert!(
        results[0].1.contains("config.toml sets approvals"),
        "{}",
        results[0].1
    );
    assert!(
        results[1].1.contains("can make git run commands"),
        "{}",
        results[1].1
    );

    let log =
        std::fs::read_to_string(sb.home.log_path(&PodName::new("p").unwrap())).expect("pod log");
    let blocked: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("\"tool_blocked\""))
        .collect();
    assert_eq!(blocked.len(), 3, "{log}");
    assert!(
        blocked[0].contains(".seedpod/config.toml"),
        "{}",
        blocked[0]
    );
    assert!(blocked[1].contains(".git/config"), "{}", blocked[1]);
}
