//! `seedpod archive`: a running pod's earlier segments are compressed, and everything that reads
//! them — `history --all`, paging back (`earlier`), a parent reading a child — reads the same
//! entries; damage to an archive is a clear error naming it, never a silent gap
//! (docs/storage.md, "Archived segments").

use seedpod_e2e::TestHome;
use seedpod_protocol::{ClientMode, EntrySeq, Method, ServerMsg};
use serde_json::json;

/// A running pod `p` with three cleared segments behind its active one.
fn pod_with_earlier_segments(sb: &TestHome) {
    let steps: Vec<_> = (0..3)
        .map(|n| json!({"text": format!("answer {n}")}))
        .collect();
    let script = sb.script("s.jsonl", &steps);
    sb.start_scripted("p", &script);
    for n in 0..3 {
        sb.ok(&["send", "p", &format!("question {n}")]);
        sb.ok(&["send", "p", "/clear"]);
    }
}

fn segments_dir(sb: &TestHome) -> std::path::PathBuf {
    let name = seedpod_protocol::PodName::new("p".to_owned()).expect("a valid name");
    sb.home.pod_dir(&name).join("segments")
}

fn segment_names(sb: &TestHome) -> Vec<String> {
    let dir = segments_dir(sb);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("segments directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name != "archive.lock")
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn archived_segments_read_the_same_while_the_pod_runs() {
    let sb = TestHome::new();
    pod_with_earlier_segments(&sb);
    let before = sb.ok(&["history", "p", "--all", "--json"]);
    let fresh = sb.ok(&["archive", "p", "--older-than", "1"]);
    assert!(fresh.starts_with("nothing to archive"), "{fresh}");
    assert!(fresh.contains("3 newer than 1 day"), "{fresh}");

    let out = sb.ok(&["archive", "p"]);
    assert!(
        out.starts_with("archived 3 segments of pod \"p\" ("),
        "{out}"
    );
    assert!(out.contains("never archived"), "{out}");
    let names = segment_names(&sb);
    let archived = names.iter().filter(|n| n.ends_with(".jsonl.gz")).count();
    let plain = names.iter().filter(|n| n.ends_with(".jsonl")).count();
    assert_eq!((archived, plain), (3, 1), "{names:?}");
    assert_eq!(sb.ok(&["history", "p", "--all", "--json"]), before);

    // Paging back from the active segment reaches the archived one before it.
    let mut conn = sb.connect("p", ClientMode::Control).await;
    let active = match conn.call(Method::Status).await.expect("status") {
        ServerMsg::StatusReply { status, .. } => status.segment_id,
        other => panic!("{other:?}"),
    };
    let page = conn
        .call(Method::Earlier {
            segment_id: active,
            before_seq: EntrySeq::FIRST,
        })
        .await
        .expect("earlier");
    let ServerMsg::Earlier { entries, more, .. } = page else {
        panic!("{page:?}")
    };
    assert!(more, "two more segments lie before");
    let text = serde_json::to_string(&entries).expect("encode");
    assert!(text.contains("answer 2"), "{text}");

    let again = sb.ok(&["archive", "p"]);
    assert!(again.contains("3 archived before"), "{again}");
    // The pod goes on in its active segment, which was never touched.
    sb.ok(&["send", "p", "/clear"]);
    assert!(segment_names(&sb).iter().any(|n| n.ends_with(".jsonl")));
}

#[tokio::test]
async fn a_damaged_archive_is_named_and_the_rest_still_reads() {
    let sb = TestHome::new();
    pod_with_earlier_segments(&sb);
    sb.ok(&["archive", "p"]);
    let dir = segments_dir(&sb);
    let names = segment_names(&sb);
    let archives: Vec<&String> = names.iter().filter(|n| n.ends_with(".gz")).collect();
    // The oldest is garbage, the next cut in half.
    std::fs::write(dir.join(archives[0]), b"not gzip").expect("corrupt");
    let whole = std::fs::read(dir.join(archives[1])).expect("read");
    std::fs::write(dir.join(archives[1]), &whole[..whole.len() / 2]).expect("truncate");

    let out = sb.run(&["history", "p", "--all"]);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 segment(s)"), "{stderr}");
    assert!(stderr.contains(archives[0].as_str()), "{stderr}");
    assert!(stderr.contains("gzip"), "{stderr}");
    assert!(stderr.contains("truncated"), "{stderr}");
    assert!(
        stdout.contains("answer 2"),
        "the intact ones still read: {stdout}"
    );

    // Archiving again changes nothing and says nothing is left to do.
    let again = sb.ok(&["archive", "p"]);
    assert!(again.starts_with("nothing to archive"), "{again}");
}

#[tokio::test]
async fn a_second_archiver_at_the_same_time_is_refused() {
    let sb = TestHome::new();
    pod_with_earlier_segments(&sb);
    let lock = std::fs::File::create(segments_dir(&sb).join("archive.lock")).expect("lock file");
    lock.try_lock().expect("take the lock");
    let out = sb.run(&["archive", "p"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another archiver"), "{stderr}");
    assert!(segment_names(&sb).iter().all(|n| n.ends_with(".jsonl")));
    drop(lock);
    sb.ok(&["archive", "p"]);
}
