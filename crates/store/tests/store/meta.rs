//! `pod.json`: round trip, atomic replacement, tolerance of newer files, clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use seedpod_protocol::{ProviderKind, SegmentId};
use seedpod_store::{
    ChildRecord, META_FILE, OutputCursor, PodConfig, PodMeta, ScopeGrant, StoreError, load_meta,
    new_segment_id, save_meta, segment_path,
};

fn meta() -> PodMeta {
    PodMeta {
        name: "alpha".parse().unwrap(),
        cwd: PathBuf::from("/work/alpha"),
        active_segment: SegmentId::new("0190-b"),
        segments: vec![SegmentId::new("0190-a"), SegmentId::new("0190-b")],
        parent: Some("root".parse().unwrap()),
        children: vec![ChildRecord {
            name: "kid".parse().unwrap(),
            task: "count the files".into(),
            scope: ScopeGrant {
                read: vec![PathBuf::from("/work/alpha")],
                write: vec![PathBuf::from("/work/alpha/out")],
            },
            via: None,
            created_ms: 5,
            cursor: Some(OutputCursor {
                segment: SegmentId::new("0190-c"),
                index: 7,
            }),
        }],
        delegated: None,
        config: PodConfig {
            provider: ProviderKind::Scripted,
            model: "script".into(),
            script: Some(PathBuf::from("/tmp/script.jsonl")),
            base_url: None,
            temperature: None,
            max_tokens: None,
            responses: None,
        },
        created_ms: 1_700_000_000_000,
        instructions: Some("review carefully".into()),
        mcp_servers: Some(vec!["fs".into()]),
        forked_from: Some(seedpod_store::ForkRecord {
            pod: "origin".parse().unwrap(),
            segment: SegmentId::new("0190-z"),
            seq: seedpod_protocol::EntrySeq::new(12),
        }),
    }
}

#[test]
fn save_then_load_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load_meta(dir.path()).unwrap(), None, "no pod.json yet");
    save_meta(dir.path(), &meta()).unwrap();
    assert_eq!(load_meta(dir.path()).unwrap(), Some(meta()));

    let mut changed = meta();
    changed.active_segment = SegmentId::new("0190-c");
    changed.segments.push(SegmentId::new("0190-c"));
    save_meta(dir.path(), &changed).unwrap();
    assert_eq!(load_meta(dir.path()).unwrap(), Some(changed));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![META_FILE], "no temp file left behind");
}

#[test]
fn a_leftover_temp_file_does_not_break_load_or_save() {
    let dir = tempfile::tempdir().unwrap();
    save_meta(dir.path(), &meta()).unwrap();
    // A crash between writing the temp file and renaming it.
    std::fs::write(dir.path().join("pod.json.tmp"), b"{\"name\":\"half").unwrap();
    assert_eq!(load_meta(dir.path()).unwrap(), Some(meta()));
    let mut changed = meta();
    changed.children.clear();
    save_meta(dir.path(), &changed).unwrap();
    assert_eq!(load_meta(dir.path()).unwrap(), Some(changed));
}

#[test]
fn fields_from_a_newer_seedpod_are_ignored_and_optional_ones_default() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(META_FILE),
        r#"{"name":"alpha","cwd":"/w","active_segment":"s","segments":["s"],
            "config":{"provider":"hologram","model":"m","temperature":0.5},
            "created_ms":5,"labels":["new"]}"#,
    )
    .unwrap();
    let loaded = load_meta(dir.path()).unwrap().unwrap();
    assert_eq!(loaded.parent, None);
    assert!(loaded.children.is_empty());
    assert_eq!(loaded.config.provider, ProviderKind::Unknown);
    assert_eq!(loaded.config.script, None);
}

#[test]
fn an_unparsable_pod_json_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(META_FILE);
    std::fs::write(&path, b"{not json").unwrap();
    let err = load_meta(dir.path()).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(&err, StoreError::Meta { path: p, .. } if *p == path),
        "{err}"
    );
    assert!(
        message.starts_with(&path.display().to_string()),
        "{message}"
    );
}

#[test]
fn segment_paths_and_ids() {
    assert_eq!(
        segment_path(&PathBuf::from("/pods/a"), &SegmentId::new("abc")),
        PathBuf::from("/pods/a/segments/abc.jsonl")
    );
    let a = new_segment_id();
    let b = new_segment_id();
    let parsed = uuid::Uuid::parse_str(a.as_str()).unwrap();
    assert_eq!(parsed.get_version_num(), 7);
    assert_ne!(a, b);
}
