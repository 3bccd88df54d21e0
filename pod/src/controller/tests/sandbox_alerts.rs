//! The person is alerted to what the shell sandbox saw a command do from the result's
//! metadata, never from its text: a command that prints the sandbox's own words (a `cat` of a
//! file holding them) raises nothing, and a finding raises an alert in the note's words.

use futures::FutureExt;
use futures::future::BoxFuture;
use seedpod_engine::{Tool, ToolOutput};
use seedpod_protocol::{SandboxFinding, ToolMeta, ToolSpec};

use super::*;

/// Returns its arguments as text, with the findings it was built with in its metadata.
struct Reporting(Vec<SandboxFinding>);

impl Tool for Reporting {
    fn spec(&self) -> ToolSpec {
        EchoTool::named("shell").spec()
    }

    fn call(&self, arguments: String) -> BoxFuture<'static, ToolOutput> {
        let meta = ToolMeta {
            sandbox: self.0.clone(),
            ..ToolMeta::default()
        };
        async move { ToolOutput::ok(arguments).with_meta(meta) }.boxed()
    }
}

fn shell_printing(text: &str) -> ScriptStep {
    ScriptStep {
        tool_calls: vec![ScriptToolCall {
            id: None,
            name: "shell".into(),
            arguments: serde_json::json!({ "printed": text }).to_string(),
        }],
        ..ScriptStep::default()
    }
}

/// Every alert published until the run ends.
async fn alerts_of_a_run(findings: Vec<SandboxFinding>, printed: &str) -> Vec<String> {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Reporting(findings)));
    let steps = vec![shell_printing(printed), text("done")];
    let mut pod = Pod::start(tempfile::tempdir().unwrap(), steps, tools).await;
    pod.run("go").await;
    let mut alerts = Vec::new();
    pod.wait_for(|msg| match msg {
        ServerMsg::Alert { message, .. } => {
            alerts.push(message.clone());
            None
        }
        ServerMsg::Committed { entry, .. } => {
            matches!(entry.kind, EntryKind::RunEnd { .. }).then_some(())
        }
        _ => None,
    })
    .await;
    pod.stop().await;
    alerts
}

#[tokio::test]
async fn the_sandboxs_words_in_a_result_raise_no_alert() {
    let printed = format!(
        "{} .git/hooks/pre-commit\n{}\n{}",
        seedpod_tools::TAMPER_NOTE,
        seedpod_tools::REVERTED_NOTE,
        seedpod_tools::REACH_NOTE
    );
    assert_eq!(
        alerts_of_a_run(Vec::new(), &printed).await,
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn a_finding_raises_an_alert_in_the_notes_words() {
    let findings = vec![
        SandboxFinding::Tampered {
            paths: vec!["/p/.git/config".into()],
        },
        SandboxFinding::ReachedForSeedpod,
    ];
    let alerts = alerts_of_a_run(findings, "ok").await;
    assert_eq!(alerts.len(), 2, "{alerts:#?}");
    assert!(alerts[0].starts_with(seedpod_tools::TAMPER_NOTE) && alerts[0].contains(".git/config"));
    assert!(alerts[1].starts_with(seedpod_tools::REACH_NOTE));
}
