//! `/mcp` controls in a running pod, against the repository's MCP test server: the popup's `r`
//! starts the server again (a new process; the popup shows it), `/mcp disable` stops it and
//! leaves its tools out of the next segment while the current one replays exactly (a call
//! answers why it did not run), `/mcp enable` starts it again; a name that is not a server is
//! refused in words.

use seedpod_e2e::pty::{Tui, keys};
use seedpod_e2e::{TestHome, wait_for};
use seedpod_protocol::{ClientMode, McpAction, Method, ServerMsg};
use serde_json::json;

use super::mcp::{SERVER, alert_containing, call, mcp_ls_json, toml_str, tool_results};

fn pid_of(sb: &TestHome) -> u32 {
    mcp_ls_json(sb, "p")[0]["pid"].as_u64().expect("a pid") as u32
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_popup_reconnects_a_server_and_disable_and_enable_change_the_next_segment() {
    let sb = TestHome::new();
    sb.user_config(&format!(
        "[mcp.servers.t]\ncommand = {}\n[approvals]\n\"mcp__t__*\" = \"allow\"\n",
        toml_str(SERVER)
    ));
    let script = sb.script(
        "s.jsonl",
        &[
            call("mcp__t__echo", json!({"text": "anyone there?"})),
            json!({"text": "It is switched off."}),
        ],
    );
    sb.start_scripted("p", &script);
    let first = pid_of(&sb);
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();

    // The popup lists the server with its process and the keys; `r` starts it again.
    let mut tui = Tui::spawn(&sb, &["attach", "p"]);
    tui.wait_for("connected");
    tui.send("/mcp");
    tui.send(keys::ENTER);
    tui.wait_for(&format!("t (stdio): ready, pid {first}"));
    tui.wait_for("r reconnect");
    tui.send("r");
    wait_for(&mut events, &mut seen, alert_containing("is running again")).await;
    let second = pid_of(&sb);
    assert_ne!(first, second, "a new process");
    assert!(!alive(first), "the old process {first} was stopped");
    // The popup asked again when the pod said so: it shows the new process.
    tui.wait_for(&format!("t (stdio): ready, pid {second}"));
    // Any key but its own closes it (a bare Esc followed by Ctrl-D reads as Alt-Ctrl-D).
    tui.send("q");
    tui.send(keys::CTRL_D);
    assert!(tui.wait_exit());

    // Disabled: stopped, and `mcp ls` says how to start it again.
    let said = sb.ok(&["send", "p", "/mcp disable t"]);
    assert!(said.contains("disabled"), "{said}");
    let listing = mcp_ls_json(&sb, "p");
    assert_eq!(listing[0]["state"], "disabled", "{listing}");
    assert!(
        listing[0]["last_error"].as_str().unwrap().contains("/mcp"),
        "{listing}"
    );
    // Stopped, not left behind.
    seedpod_e2e::wait_exit(second).await;
    // This segment still offers its tools (replay stays exact); a call says why it did not run.
    assert!(sb.context("p").await.contains("mcp__t__echo"));
    sb.ok(&["send", "p", "say something"]);
    let (content, is_error) = tool_results(&sb.history("p").await).pop().unwrap();
    assert!(
        is_error && content.contains("not running (disabled"),
        "{content}"
    );
    // The next segment offers none of them, and replays exactly after a restart (which starts
    // the server again: disabling lasts as long as the pod process).
    sb.ok(&["send", "p", "/clear"]);
    let next = sb.context("p").await;
    assert!(!next.contains("mcp__t__"), "{next}");
    drop(events);
    sb.ok(&["restart", "p"]);
    assert_eq!(sb.context("p").await, next);
    assert_eq!(mcp_ls_json(&sb, "p")[0]["state"], "ready");

    // Disable and enable again over the protocol, as the popup does.
    let mut control = sb.connect("p", ClientMode::Control).await;
    let mut events = sb.connect("p", ClientMode::Attach).await;
    let mut seen = Vec::new();
    let answer = |action| Method::McpControl {
        server: "t".into(),
        action,
    };
    let reply = control.call(answer(McpAction::Disable)).await.unwrap();
    assert!(matches!(reply, ServerMsg::McpServers { .. }), "{reply:?}");
    let reply = control.call(answer(McpAction::Enable)).await.unwrap();
    let ServerMsg::McpServers { servers, .. } = reply else {
        panic!("{reply:?}");
    };
    assert_eq!(servers[0].name, "t");
    wait_for(&mut events, &mut seen, alert_containing("is running again")).await;
    assert_eq!(mcp_ls_json(&sb, "p")[0]["state"], "ready");

    // Bad input: a server that does not exist, an action this pod does not know.
    let refused = control
        .call(Method::McpControl {
            server: "nope".into(),
            action: McpAction::Reconnect,
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("no MCP server named nope; this pod's servers: t"),
        "{refused}"
    );
    let refused = control
        .call(answer(McpAction::Unknown))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("reconnect, disable or enable"),
        "{refused}"
    );
    let refused = sb.run(&["send", "p", "/mcp reconnect nope"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("no MCP server named nope"),
        "{refused:?}"
    );
    sb.ok(&["stop", "p"]);
}
