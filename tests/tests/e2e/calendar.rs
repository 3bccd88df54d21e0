//! A pod that outlives a day tells its model the new date: the day changes (a test clock file
//! the pod reads, `SEEDPOD_TEST_TODAY_FILE`) between two turns; the second request carries a
//! `date_changed` reminder with the new date while the system prompt keeps its first one, and
//! the next request is byte-identical after a restart.

use seedpod_e2e::TestHome;
use seedpod_engine::testing::{MockServer, Reply};

const OPENAI_TEXT: &str = include_str!("../../../crates/engine/tests/fixtures/openai_text.sse");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_day_is_told_to_the_model_and_replays_exactly() {
    let server = MockServer::start(vec![
        Reply::sse_in_pieces(OPENAI_TEXT.as_bytes().to_vec(), &[5]),
        Reply::sse_in_pieces(OPENAI_TEXT.as_bytes().to_vec(), &[5]),
        Reply::sse_in_pieces(OPENAI_TEXT.as_bytes().to_vec(), &[5]),
    ])
    .await;
    let sb = TestHome::new();
    // The mock answers every request with its next reply: no window probes.
    let project = sb.path().join(".seedpod");
    std::fs::create_dir_all(&project).expect("project config dir");
    std::fs::write(project.join("config.toml"), "[context]\nprobe = false\n")
        .expect("project config");
    let clock = sb.path().join("today");
    std::fs::write(&clock, "2031-02-28\n").expect("clock file");

    let base = format!("{}/v1", server.base_url());
    let out = sb
        .cmd()
        .args(["start", "p", "--provider", "openai", "--base-url", &base])
        .args(["--model", "gpt-test"])
        .env_remove("OPENAI_API_KEY")
        .env("SEEDPOD_TEST_TODAY_FILE", &clock)
        .output()
        .expect("run seedpod start");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    sb.ok(&["send", "p", "first"]);
    std::fs::write(&clock, "2031-03-01\n").expect("the next day");
    sb.ok(&["send", "p", "second"]);
    // A third turn on the same day says nothing more.
    sb.ok(&["send", "p", "third"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let told = "Today's date is now 2031-03-01";
    for request in &requests {
        assert!(
            request.body.contains("Today is 2031-02-28"),
            "the system prompt keeps its first date: {}",
            request.body
        );
    }
    assert!(!requests[0].body.contains(told), "{}", requests[0].body);
    assert!(requests[1].body.contains(told), "{}", requests[1].body);
    assert_eq!(
        requests[2].body.matches(told).count(),
        1,
        "told once: {}",
        requests[2].body
    );
    // The reminder comes after the person's message that the new day's turn began with.
    let second = requests[1].body.find("second").expect("the second message");
    assert!(requests[1].body.find(told).is_some_and(|at| at > second));

    let context = sb.ok(&["context", "p"]);
    assert!(context.contains(told), "{context}");
    assert_eq!(sb.ok(&["restart", "p"]).trim(), "p");
    assert_eq!(
        sb.ok(&["context", "p"]),
        context,
        "byte-identical after restart"
    );
    let history = sb.ok(&["history", "p"]);
    assert!(history.contains("2031-03-01"), "{history}");
}
