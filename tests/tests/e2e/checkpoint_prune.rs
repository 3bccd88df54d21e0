//! File checkpoints are pruned with the segments that name them (docs/storage.md §Checkpoints):
//! `seedpod archive` removes the checkpoints only an archived segment named, never one a live
//! segment names, and a rewind into the archived part says those files are no longer kept.

use std::fs::{File, FileTimes};
use std::time::{Duration, SystemTime};

use seedpod_e2e::TestHome;
use seedpod_e2e::limit_server::{LimitConfig, LimitServer};
use serde_json::json;

use crate::fork_rewind::{calls, ok, project, seedpod, start};

/// Far above anything these conversations send.
const LIMIT: u64 = 1_000_000;

/// The blobs in pod `p`'s checkpoint store.
fn blobs(sb: &TestHome) -> Vec<String> {
    let dir = sb.home.pod_dir(&"p".parse().unwrap()).join("checkpoints");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Make every blob look kept two hours ago: a blob kept within the last hour is never pruned
/// (its `tool_result` may not be committed yet).
fn age_blobs(sb: &TestHome) {
    let dir = sb.home.pod_dir(&"p".parse().unwrap()).join("checkpoints");
    let then = SystemTime::now() - Duration::from_secs(2 * 3600);
    for name in blobs(sb) {
        File::options()
            .write(true)
            .open(dir.join(name))
            .unwrap()
            .set_times(FileTimes::new().set_modified(then))
            .unwrap();
    }
}

#[test]
fn archiving_prunes_the_checkpoints_only_archived_segments_name() {
    let server = LimitServer::start(LimitConfig::new(LIMIT));
    let sb = TestHome::new();
    let work = project(&sb, "work");
    std::fs::write(work.join("a.txt"), "a original\n").unwrap();
    std::fs::write(work.join("b.txt"), "b original\n").unwrap();
    start(&sb, &server, "p", &work);

    // Turn 1, in the first segment, changes a.txt.
    let write_a = json!({"path": "a.txt", "content": "a one\n"});
    ok(&sb, &["send", "p", &calls(&[("write_file", write_a)])]);
    // A rewind starts a second segment; turn 2, in it, changes b.txt.
    ok(
        &sb,
        &["rewind", "p", "--to", "1", "--conversation", "--yes"],
    );
    let write_b = json!({"path": "b.txt", "content": "b two\n"});
    ok(&sb, &["send", "p", &calls(&[("write_file", write_b)])]);
    assert_eq!(blobs(&sb).len(), 2, "a.txt's and b.txt's first contents");

    // Fresh checkpoints are not pruned, whatever names them.
    let said = ok(&sb, &["archive", "p"]);
    assert!(said.contains("archived 1 segment"), "{said}");
    assert!(!said.contains("pruned"), "{said}");
    assert_eq!(blobs(&sb).len(), 2);

    age_blobs(&sb);
    let kept_b = seedpod_tools::checkpoint_hash(b"b original\n");
    let said = ok(&sb, &["archive", "p"]);
    assert!(
        said.contains("1 file checkpoint of archived segments pruned"),
        "{said}"
    );
    assert_eq!(
        blobs(&sb),
        [kept_b],
        "the live segment's checkpoint stays, the archived one's goes"
    );

    // A rewind back into the archived segment says what it can no longer put back, and still
    // puts back what the live segment kept.
    let plan = ok(&sb, &["rewind", "p", "--to", "0", "--files", "--dry-run"]);
    assert!(plan.contains("archived segment"), "{plan}");
    let a = work.join("a.txt").display().to_string();
    let b = work.join("b.txt").display().to_string();
    assert!(
        plan.contains(&format!("NOT RESTORED {a} — its checkpoint"))
            && plan.contains("no longer kept"),
        "{plan}"
    );
    assert!(plan.contains(&format!("restore    {b}")), "{plan}");
    seedpod(&sb, &["rewind", "p", "--to", "0", "--files", "--yes"]);
    assert_eq!(std::fs::read(work.join("b.txt")).unwrap(), b"b original\n");
    assert_eq!(
        std::fs::read(work.join("a.txt")).unwrap(),
        b"a one\n",
        "nothing to put a.txt back with"
    );
}
