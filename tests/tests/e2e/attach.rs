//! Attached clients (`seedpod events --json`) see the same committed entries in the
//! same order with strictly increasing seq; a client attaching mid-turn gets snapshot + in-flight
//! state and then exactly the remaining events.

use seedpod_e2e::TestHome;
use seedpod_e2e::events::EventsProcess;
use seedpod_protocol::{ClientMode, Entry, EventSeq, Method, Segment, ServerMsg};
use serde_json::json;

/// Frames of one client after its snapshot: (seq, frame) for every live event.
fn live_events(frames: &[ServerMsg]) -> Vec<(EventSeq, ServerMsg)> {
    frames
        .iter()
        .filter_map(|m| m.seq().map(|s| (s, m.clone())))
        .collect()
}

fn committed(frames: &[ServerMsg]) -> Vec<(EventSeq, Entry)> {
    frames
        .iter()
        .filter_map(|m| match m {
            ServerMsg::Committed { seq, entry } => Some((*seq, entry.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_clients_agree_and_a_late_client_catches_up_exactly() {
    let sb = TestHome::new();
    let gate = sb.gate("gate-1");
    let script = sb.script(
        "s.jsonl",
        &[json!({
            "text": "The quick brown fox jumps over the lazy dog, twice over.",
            "chunk_chars": 5,
            "gate": gate.to_str().unwrap(),
        })],
    );
    sb.start_scripted("p", &script);

    let mut a = EventsProcess::spawn(&sb, "p", &[]);
    let mut b = EventsProcess::spawn(&sb, "p", &[]);
    let (mut seen_a, mut seen_b) = (Vec::new(), Vec::new());
    for (events, seen) in [(&mut a, &mut seen_a), (&mut b, &mut seen_b)] {
        events
            .wait_for(seen, |m| {
                matches!(m, ServerMsg::SnapshotEnd { .. }).then_some(())
            })
            .await;
    }

    let mut control = sb.connect("p", ClientMode::Control).await;
    let reply = control
        .call(Method::Run {
            segments: vec![Segment::text("go")],
        })
        .await
        .unwrap();
    assert!(matches!(reply, ServerMsg::Ack { .. }), "{reply:?}");

    // The response is held at the gate after its first chunk: the turn is mid-flight.
    a.wait_for(&mut seen_a, |m| {
        matches!(m, ServerMsg::TextDelta { .. }).then_some(())
    })
    .await;

    let mut c = EventsProcess::spawn(&sb, "p", &[]);
    let mut seen_c = Vec::new();
    let snapshot_seq = c
        .wait_for(&mut seen_c, |m| match m {
            ServerMsg::SnapshotEnd { seq } => Some(*seq),
            _ => None,
        })
        .await;
    let in_flight_text = seen_c
        .iter()
        .find_map(|m| match m {
            ServerMsg::InFlight { text, .. } => Some(text.clone()),
            _ => None,
        })
        .expect("snapshot carries in-flight state");
    assert!(
        !in_flight_text.is_empty(),
        "mid-turn snapshot shows text so far"
    );

    sb.open_gate("gate-1");
    for (events, seen) in [
        (&mut a, &mut seen_a),
        (&mut b, &mut seen_b),
        (&mut c, &mut seen_c),
    ] {
        events.wait_for(seen, seedpod_e2e::is_run_end).await;
    }

    // A and B: identical committed entries, identical seqs, strictly increasing.
    let (ca, cb) = (committed(&seen_a), committed(&seen_b));
    assert!(!ca.is_empty());
    assert_eq!(ca, cb);
    let live_a = live_events(&seen_a);
    assert!(
        live_a.windows(2).all(|w| w[1].0 > w[0].0),
        "seq strictly increasing"
    );
    assert_eq!(
        live_a,
        live_events(&seen_b),
        "both clients saw the same event stream"
    );

    // C: its live events are exactly A's events after the snapshot seq — no gap, no duplicate.
    let live_c = live_events(&seen_c);
    let a_after: Vec<_> = live_a
        .iter()
        .filter(|(s, _)| *s > snapshot_seq)
        .cloned()
        .collect();
    assert_eq!(live_c, a_after);
    assert_eq!(live_c.first().map(|(s, _)| *s), Some(snapshot_seq + 1));

    // C's snapshot entries + its live committed entries = the whole log, entry by entry.
    let mut c_entries: Vec<Entry> = seen_c
        .iter()
        .filter_map(|m| match m {
            ServerMsg::SnapshotEntries { entries } => Some(entries.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    c_entries.extend(committed(&seen_c).into_iter().map(|(_, e)| e));
    assert_eq!(c_entries, sb.history("p").await);

    // In-flight text plus the deltas C saw afterwards is the whole answer.
    let mut text = in_flight_text;
    for (_, m) in &live_c {
        if let ServerMsg::TextDelta { text: t, .. } = m {
            text.push_str(t);
        }
    }
    assert_eq!(
        text,
        "The quick brown fox jumps over the lazy dog, twice over."
    );
}
