//! A fork of a fork numbers turns from the start of the whole conversation (docs/storage.md
//! §Fork and rewind): `seedpod fork B C --at 3`, B being a fork of A at turn 2, is C after the
//! third message the person saw — A's two and B's first — and C's next request is B's, byte for
//! byte. A rewind cannot go back past where its pod was forked; a source that is gone leaves a
//! fork numbering turns from its own start, with a note.

use std::process::Output;

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{LimitConfig, LimitServer};

use crate::fork_rewind::{project, seedpod, start};

/// Far above anything these conversations send.
const LIMIT: u64 = 1_000_000;

fn ok(sb: &TestHome, args: &[&str]) -> Output {
    let out = seedpod(sb, args);
    assert!(
        out.status.success(),
        "seedpod {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(sb: &TestHome, args: &[&str]) -> String {
    String::from_utf8_lossy(&ok(sb, args).stdout).into_owned()
}

/// Send `text` to `pod` and return the body of the request it made for it.
fn send(sb: &TestHome, server: &LimitServer, pod: &str, text: &str) -> String {
    let before = server.exchanges().len();
    ok(sb, &["send", pod, text]);
    let body = server.exchanges()[before].body.clone();
    assert!(body.contains(text), "{body}");
    body
}

fn start_a(sb: &TestHome, server: &LimitServer) {
    start(sb, server, "a", &project(sb, "work"));
}

#[test]
fn a_fork_of_a_fork_numbers_turns_from_the_start_of_the_conversation() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    start_a(&sb, &server);
    send(&sb, &server, "a", "one");
    send(&sb, &server, "a", "two");
    send(&sb, &server, "a", "a alone three");

    ok(&sb, &["fork", "a", "b", "--at", "2"]);
    let b_at_start = stdout(&sb, &["context", "b"]);
    send(&sb, &server, "b", "b three");
    let b_after_three = stdout(&sb, &["context", "b"]);
    let b_turn_four = send(&sb, &server, "b", "b four");

    let out = ok(&sb, &["fork", "b", "c", "--at", "3"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("after turn 3"), "{said}");
    assert!(!said.contains("note:"), "nothing is missing: {said}");
    assert_eq!(
        stdout(&sb, &["context", "c"]),
        b_after_three,
        "C starts where B was after the third message of the conversation"
    );
    assert_eq!(
        send(&sb, &server, "c", "b four"),
        b_turn_four,
        "C's request for B's fourth message is B's, byte for byte"
    );

    // Turn 2 is where B was forked: a rewind there is B's own start; turn 1 is before B.
    let refused = seedpod(&sb, &["rewind", "b", "--to", "1", "--yes"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("before b was forked from a") && err.contains("seedpod fork a NEW --at 1"),
        "{err}"
    );
    ok(
        &sb,
        &["rewind", "b", "--to", "2", "--conversation", "--yes"],
    );
    assert_eq!(stdout(&sb, &["context", "b"]), b_at_start);
    // B's conversation now goes back from its rewound segment into A, still numbered from A.
    ok(&sb, &["fork", "b", "d", "--at", "2"]);
    assert_eq!(stdout(&sb, &["context", "d"]), b_at_start);
}

#[test]
fn a_fork_whose_source_is_gone_numbers_from_its_own_start_and_says_so() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    start_a(&sb, &server);
    send(&sb, &server, "a", "one");
    send(&sb, &server, "a", "two");
    ok(&sb, &["fork", "a", "b", "--at", "2"]);
    send(&sb, &server, "b", "b three");
    let b_after_three = stdout(&sb, &["context", "b"]);
    ok(&sb, &["stop", "a"]);
    std::fs::remove_dir_all(sb.home.pod_dir(&"a".parse().unwrap())).unwrap();

    let out = ok(&sb, &["fork", "b", "c", "--at", "1"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "note: turns are numbered from b's own start: a, which it comes from, is gone"
        ),
        "{said}"
    );
    assert_eq!(stdout(&sb, &["context", "c"]), b_after_three);

    // A pod that takes the gone source's name is not mistaken for it.
    start_a(&sb, &server);
    let out = ok(&sb, &["fork", "b", "e", "--at", "1"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("a, which it comes from, is now another pod"),
        "{said}"
    );
    assert_eq!(stdout(&sb, &["context", "e"]), b_after_three);
}
