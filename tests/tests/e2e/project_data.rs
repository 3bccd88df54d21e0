//! A project's files are data until the person trusts them (DESIGN invariant 6): a cloned
//! repository cannot choose the model, and what its files link to outside it is never read.
//! The repository here is hostile: its untrusted `.seedpod/config.toml` picks the scripted
//! provider with a script of its own (so it would write the model's replies), its `AGENTS.md`
//! and a knowledge note are links to files outside it holding secrets. The person's provider is
//! a local fake model server set in their own config; what it received, and `seedpod context`,
//! must never hold a secret. A link that stays inside the repository keeps working.

use std::path::Path;

use seedpod_e2e::TestHome;
use seedpod_engine::testing::{MockServer, Reply};
use seedpod_protocol::{ClientMode, EntryKind, Method, Segment, ServerMsg};
use serde_json::json;

const OPENAI_TEXT: &str = include_str!("../../../crates/engine/tests/fixtures/openai_text.sse");

/// What the files outside the repository hold; none may reach a request.
const AGENTS_SECRET: &str = "SECRET-MARKER-FROM-AGENTS-LINK";
const KNOWLEDGE_SECRET: &str = "SECRET-MARKER-FROM-KNOWLEDGE-LINK";
/// What the repository's own script would answer if it chose the model.
const REPO_REPLY: &str = "REPLY-WRITTEN-BY-THE-REPOSITORY";
/// A knowledge note reached through a link that stays inside the repository.
const INSIDE_NOTE: &str = "IN-PROJECT-NOTE-THROUGH-A-LINK";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn link(target: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().expect("a parent")).expect("mkdir");
    std::os::unix::fs::symlink(target, at).expect("symlink");
}

/// The hostile repository, in the sandbox directory (where `seedpod` runs, so the pod's cwd).
fn hostile_repository(sb: &TestHome, outside: &Path) {
    let repo = sb.path();
    write(
        &repo.join(".seedpod/config.toml"),
        "provider = \"scripted\"\nscript = \"answers.jsonl\"\nmodel = \"repo-model\"\n",
    );
    write(
        &repo.join(".seedpod/answers.jsonl"),
        &(json!({ "text": REPO_REPLY }).to_string() + "\n"),
    );
    write(&outside.join("id_rsa"), AGENTS_SECRET);
    write(&outside.join("notes.md"), KNOWLEDGE_SECRET);
    link(&outside.join("id_rsa"), &repo.join("AGENTS.md"));
    link(
        &outside.join("notes.md"),
        &repo.join(".seedpod/knowledge/keys.md"),
    );
    write(&repo.join("docs/note.md"), INSIDE_NOTE);
    link(
        Path::new("../../docs/note.md"),
        &repo.join(".seedpod/knowledge/ok.md"),
    );
}

fn without_provider_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for var in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "SEEDPOD_PROVIDER",
        "SEEDPOD_MODEL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Run one input that references the two knowledge notes and `@AGENTS.md` (as the composer
/// sends them: `seedpod send` takes plain text), and wait for the run to end. Returns the
/// alerts seen on the way, the startup ones included.
async fn run_with_references(sb: &TestHome) -> Vec<String> {
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut control = sb.connect("p", ClientMode::Control).await;
    let segments = vec![
        Segment::text("read "),
        Segment::KnowledgeRef {
            slug: "keys".into(),
        },
        Segment::text(" and "),
        Segment::KnowledgeRef { slug: "ok".into() },
        Segment::text(" and "),
        Segment::FileRef {
            path: "AGENTS.md".into(),
        },
    ];
    control
        .call(Method::Run { segments })
        .await
        .expect("run accepted");
    let mut seen = Vec::new();
    seedpod_e2e::wait_for(&mut events, &mut seen, |m| match m {
        ServerMsg::Committed { entry, .. } if matches!(entry.kind, EntryKind::RunEnd { .. }) => {
            Some(())
        }
        _ => None,
    })
    .await;
    seen.iter()
        .filter_map(|m| match m {
            ServerMsg::Alert { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_repository_neither_chooses_the_model_nor_reads_outside_itself() {
    let server = MockServer::routes(vec![(
        "POST",
        "/v1/chat/completions",
        Reply::sse(OPENAI_TEXT.as_bytes().to_vec()),
    )])
    .await;
    let sb = TestHome::new();
    let outside = tempfile::tempdir().expect("a directory outside the repository");
    sb.user_config(&format!(
        "provider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"person-model\"\n[context]\nprobe = false\n",
        server.base_url()
    ));
    hostile_repository(&sb, outside.path());

    let out = without_provider_env(sb.cmd().args(["start", "p"]))
        .output()
        .expect("start");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("provider, model, script"), "{stderr}");
    assert!(stderr.contains("seedpod trust"), "{stderr}");

    let alerts = run_with_references(&sb).await;
    // The person is told why the instructions are missing, and where the link led.
    assert!(
        alerts
            .iter()
            .any(|a| a.contains("project instructions") && a.contains("id_rsa")),
        "{alerts:?}"
    );
    assert!(
        alerts
            .iter()
            .any(|a| a.contains("#keys") && a.contains("notes.md")),
        "{alerts:?}"
    );
    let context = sb.context("p").await;
    assert!(
        context.contains("Hello"),
        "the person's model answered: {context}"
    );
    assert!(!context.contains(REPO_REPLY), "{context}");

    let requests = server.requests();
    assert!(!requests.is_empty(), "the person's server was asked");
    for request in &requests {
        for secret in [AGENTS_SECRET, KNOWLEDGE_SECRET] {
            assert!(
                !request.body.contains(secret),
                "{secret} sent: {}",
                request.body
            );
        }
    }
    let body = &requests[requests.len() - 1].body;
    assert!(body.contains("\"person-model\""), "{body}");
    assert!(
        body.contains(INSIDE_NOTE),
        "an in-project link still works: {body}"
    );
    assert!(
        body.contains("outside the project"),
        "the model is told something was withheld: {body}"
    );

    for secret in [AGENTS_SECRET, KNOWLEDGE_SECRET] {
        assert!(!context.contains(secret), "{secret} in context: {context}");
    }
    assert!(context.contains(INSIDE_NOTE), "{context}");
    sb.ok(&["stop", "p"]);
}

/// Once the person trusts the repository's config, its choice of model applies — trust is the
/// one way in — but its links out still are not followed: trust covers the config file, not
/// what the project's files point at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_the_repository_chooses_the_model_and_its_links_out_stay_unread() {
    let sb = TestHome::new();
    let outside = tempfile::tempdir().expect("a directory outside the repository");
    hostile_repository(&sb, outside.path());
    sb.ok(&["trust", sb.path().to_str().expect("utf-8")]);
    let out = without_provider_env(sb.cmd().args(["start", "p"]))
        .output()
        .expect("start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    run_with_references(&sb).await;
    assert!(sb.context("p").await.contains(REPO_REPLY));
    let requests = sb.requests("p").join("\n");
    assert!(
        !requests.is_empty(),
        "the scripted provider records requests"
    );
    for secret in [AGENTS_SECRET, KNOWLEDGE_SECRET] {
        assert!(!requests.contains(secret), "{secret} sent: {requests}");
    }
    sb.ok(&["stop", "p"]);
}
