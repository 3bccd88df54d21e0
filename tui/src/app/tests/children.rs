//! Child pods from the parent's side: the picker's tree, `/spawn`, Ctrl-G into the child that
//! reported last and Ctrl-O back.

use std::time::SystemTime;

use crossterm::event::KeyCode;
use seedpod_client::{Liveness, PodListing};
use seedpod_protocol::{
    Entry, EntryKind, EntrySeq, ErrorCode, Method, PodEvent, PodName, ReportId, RequestId,
    ServerMsg, SpawnRequest, SystemItem,
};

use super::{Harness, ctrl, key, request, seedpod_store_meta};
use crate::app::{Effect, Overlay};
use crate::connection::ConnectionEvent;
use crate::history::InputHistory;

fn listing(name: &str, parent: Option<&str>) -> PodListing {
    let mut meta = seedpod_store_meta(name);
    meta.parent = parent.map(|p| PodName::new(p).unwrap());
    PodListing {
        name: name.parse().unwrap(),
        meta,
        liveness: Liveness::Stopped,
        last_activity_ms: None,
    }
}

fn report(pod: &str) -> EntryKind {
    EntryKind::SystemItem {
        item: SystemItem::PodEvent {
            event: PodEvent::TurnEnded {
                pod: pod.into(),
                event_id: ReportId::new(format!("{pod}-1")),
            },
            body: format!("[pod_event] {pod} finished its turn"),
        },
        queue_id: None,
    }
}

impl Harness {
    /// What the picker shows: guide and name per row.
    fn picker_rows(&self) -> Vec<String> {
        let Overlay::Picker(picker) = &self.app.overlay else {
            panic!("no picker");
        };
        picker
            .rows
            .iter()
            .flatten()
            .map(|row| format!("{}{}", row.guide, row.pod.name))
            .collect()
    }

    /// The event loop finished attaching to `pod`.
    fn switched_to(&mut self, pod: &str) {
        self.app.switch_pod(
            &PodName::new(pod.to_string()).unwrap(),
            InputHistory::in_memory(),
            self.now,
        );
    }
}

#[test]
fn the_picker_shows_children_under_their_parent_and_keeps_the_current_pod_selected() {
    let mut h = Harness::connected();
    h.switched_to("p-tests");
    assert_eq!(h.key(ctrl('p')), vec![Effect::ListPods]);
    h.app.on_pods(
        vec![
            listing("a", None),
            listing("p", None),
            listing("p-docs", Some("p")),
            listing("p-tests", Some("p")),
            listing("unit", Some("p-tests")),
            listing("z", None),
        ],
        SystemTime::now(),
    );
    assert_eq!(
        h.picker_rows(),
        ["a", "p", "├─ p-docs", "└─ p-tests", "   └─ unit", "z"]
    );
    let Overlay::Picker(picker) = &h.app.overlay else {
        panic!("no picker");
    };
    assert_eq!(
        picker.chosen().map(|p| &p.name),
        Some(&PodName::new("p-tests").unwrap())
    );
    h.key(key(KeyCode::Down));
    assert_eq!(
        h.key(key(KeyCode::Enter)),
        vec![Effect::Attach("unit".parse().unwrap())]
    );
}

#[test]
fn a_refreshed_listing_keeps_the_selection_on_the_same_pod() {
    let mut h = Harness::connected();
    h.key(ctrl('p'));
    h.app.on_pods(
        vec![listing("p", None), listing("q", None)],
        SystemTime::now(),
    );
    h.key(key(KeyCode::Down));
    // `q` became a child of `a`, which sorts first: it moves, the selection follows it.
    h.app.on_pods(
        vec![
            listing("a", None),
            listing("p", None),
            listing("q", Some("a")),
        ],
        SystemTime::now(),
    );
    assert_eq!(h.picker_rows(), ["a", "└─ q", "p"]);
    assert_eq!(
        h.key(key(KeyCode::Enter)),
        vec![Effect::Attach("q".parse().unwrap())]
    );
}

#[test]
fn ctrl_o_goes_back_to_the_pod_attached_before_and_toggles() {
    let mut h = Harness::connected();
    assert!(h.key(ctrl('o')).is_empty());
    assert!(h.flash().contains("no pod to go back to"), "{}", h.flash());

    h.switched_to("worker");
    assert!(h.flash().contains("Ctrl-O goes back to p"), "{}", h.flash());
    assert_eq!(h.key(ctrl('o')), vec![Effect::Attach("p".parse().unwrap())]);
    h.switched_to("p");
    assert_eq!(h.app.previous_pod(), Some(&"worker".parse().unwrap()));
    assert_eq!(
        h.key(ctrl('o')),
        vec![Effect::Attach("worker".parse().unwrap())]
    );
}

#[test]
fn reattaching_to_the_same_pod_keeps_the_way_back() {
    let mut h = Harness::connected();
    h.switched_to("worker");
    h.switched_to("worker");
    assert_eq!(h.app.previous_pod(), Some(&"p".parse().unwrap()));
}

#[test]
fn ctrl_g_goes_into_the_child_that_reported_last() {
    let mut h = Harness::connected();
    assert!(h.key(ctrl('g')).is_empty());
    assert!(
        h.flash().contains("no child pod has reported yet"),
        "{}",
        h.flash()
    );

    h.commit(report("docs"));
    h.commit(report("tests"));
    assert_eq!(
        h.key(ctrl('g')),
        vec![Effect::Attach("tests".parse().unwrap())]
    );
    assert_eq!(h.app.last_child(), Some(&"tests".parse().unwrap()));
}

#[test]
fn reports_in_the_snapshot_count_and_a_new_pod_starts_without_any() {
    let mut h = Harness::connected();
    h.commit(report("tests"));
    h.switched_to("other");
    assert_eq!(h.app.last_child(), None, "tests is p's child, not other's");
    assert!(h.key(ctrl('g')).is_empty());

    let entry = |seq, kind| Entry {
        v: 1,
        seq,
        ts: 1,
        kind,
    };
    h.frame(ServerMsg::SnapshotEntries {
        entries: vec![
            entry(EntrySeq::new(1), report("old")),
            entry(EntrySeq::new(2), report("newer")),
        ],
    });
    h.frame(ServerMsg::SnapshotEntries {
        entries: vec![entry(
            EntrySeq::new(3),
            EntryKind::OutboxDelivered {
                event_id: ReportId::new("x"),
            },
        )],
    });
    assert_eq!(
        h.key(ctrl('g')),
        vec![Effect::Attach("newer".parse().unwrap())]
    );
}

#[test]
fn spawn_asks_the_pod_to_start_a_child_and_ctrl_g_goes_into_it() {
    let mut h = Harness::connected();
    h.type_text("/spawn tests run the test suite and report failures");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Spawn(SpawnRequest {
            name: "tests".parse().unwrap(),
            task: "run the test suite and report failures".into(),
            read: Vec::new(),
            write: Vec::new(),
            model: None,
            instructions: None,
            mcp_servers: None,
        })
    );
    assert!(h.app.composer.is_empty());
    assert!(
        h.flash().contains("starting child pod tests"),
        "{}",
        h.flash()
    );

    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Spawned {
            id: RequestId::new(1),
            name: "tests".parse().unwrap(),
            socket: "/run/tests.sock".into(),
        },
    });
    assert_eq!(h.flash(), "started child pod tests — Ctrl-G goes into it");
    assert_eq!(
        h.key(ctrl('g')),
        vec![Effect::Attach("tests".parse().unwrap())]
    );
}

#[test]
fn a_refused_spawn_says_why() {
    let mut h = Harness::connected();
    h.type_text("/spawn p do it");
    let (tag, _) = request(&h.key(key(KeyCode::Enter)));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::Error {
            id: Some(RequestId::new(1)),
            code: ErrorCode::InvalidRequest,
            message: "a pod named \"p\" exists already".into(),
        },
    });
    assert_eq!(
        h.flash(),
        "child pod p not started: a pod named \"p\" exists already"
    );
    assert_eq!(h.app.last_child(), None);
}

#[test]
fn spawn_without_a_task_explains_itself() {
    let mut h = Harness::connected();
    for typed in ["/spawn", "/spawn tests"] {
        h.type_text(typed);
        assert!(h.key(key(KeyCode::Enter)).is_empty(), "{typed}");
        assert!(
            h.flash().starts_with("usage: /spawn NAME TASK"),
            "{}",
            h.flash()
        );
        assert!(h.app.composer.is_empty());
    }
}

#[test]
fn tab_reaches_a_childs_report_and_enter_goes_into_that_child() {
    let mut h = Harness::connected();
    h.commit(report("kid"));
    assert!(h.key(key(KeyCode::Tab)).is_empty());
    assert!(
        h.app.view.focused().is_some(),
        "the report banner takes the focus"
    );
    assert_eq!(
        h.key(key(KeyCode::Enter)),
        vec![Effect::Attach("kid".parse().unwrap())]
    );
}
