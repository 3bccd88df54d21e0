//! The status line at widths 40, 80 and 120, with a fixed clock.

use std::time::{Duration, Instant};

use crate::support::queued_run;
use seedpod_protocol::{AlertLevel, PodState};
use seedpod_transcript::{ConnectionState, Notice, PodView, Theme, render::status_line_at};

fn at_widths(view: &PodView, link: &ConnectionState, now: Instant) -> String {
    let mut out = String::new();
    for width in [40u16, 80, 120] {
        let line = status_line_at(view, link, width, &Theme::plain(), now);
        assert!(line.width() <= usize::from(width));
        let pad = usize::from(width) - line.width();
        out.push_str(&format!("{line}{}|\n", " ".repeat(pad)));
    }
    out
}

fn busy_pod(now: Instant) -> PodView {
    PodView {
        name: "demo".into(),
        state: PodState::Running,
        running_since: now.checked_sub(Duration::from_secs(75)),
        provider: "anthropic".into(),
        model: "claude-sonnet-4".into(),
        tokens_in: 123_456,
        tokens_out: 7_890,
        queue: vec![queued_run(1, "next"), queued_run(2, "after")],
        ..PodView::default()
    }
}

#[test]
fn running_pod() {
    let now = Instant::now();
    insta::assert_snapshot!(at_widths(&busy_pod(now), &ConnectionState::Connected, now));
}

#[test]
fn retrying_and_reconnecting() {
    let now = Instant::now();
    let mut view = busy_pod(now);
    view.retry_notice = Some("529 overloaded; retrying in 4s (attempt 2 of 3)".into());
    let link = ConnectionState::Reconnecting {
        attempt: 3,
        reason: "the pod's socket went away".into(),
    };
    insta::assert_snapshot!(at_widths(&view, &link, now));
}

#[test]
fn idle_with_a_notice_and_incompatible() {
    let now = Instant::now();
    let view = PodView {
        name: "a-pod-with-a-rather-long-name".into(),
        notice: Some(Notice {
            level: AlertLevel::Error,
            message: "not running: nothing is running; there is nothing to pause".into(),
        }),
        ..PodView::default()
    };
    let link = ConnectionState::Incompatible {
        message: "the pod is older; run `seedpod restart demo`".into(),
    };
    insta::assert_snapshot!(at_widths(&view, &link, now));
}

#[test]
fn paused_and_waiting_states() {
    let now = Instant::now();
    let mut view = PodView {
        name: "demo".into(),
        state: PodState::Paused,
        ..PodView::default()
    };
    let paused =
        status_line_at(&view, &ConnectionState::Connected, 80, &Theme::plain(), now).to_string();
    assert_eq!(paused, "demo · paused · connected");
    view.waiting_for_approval = true;
    let waiting = status_line_at(
        &view,
        &ConnectionState::Connecting,
        80,
        &Theme::plain(),
        now,
    )
    .to_string();
    assert_eq!(waiting, "demo · waiting for approval · connecting…");
    view.waiting_for_approval = false;
    view.state = PodState::WaitingForApproval;
    let state =
        status_line_at(&view, &ConnectionState::Connected, 80, &Theme::plain(), now).to_string();
    assert_eq!(state, "demo · waiting for approval · connected");
}
