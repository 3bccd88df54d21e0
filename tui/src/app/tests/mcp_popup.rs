//! `/mcp`: the popup asks the pod, lists its servers, sends the selected server's action for
//! `r`, `d` and `e`, shows the pod's answer, and asks again when the pod publishes an alert.

use crossterm::event::KeyCode;
use seedpod_protocol::{
    AlertLevel, EventSeq, McpAction, McpServerStatus, McpState, Method, RequestId, ServerMsg,
};

use super::{Harness, key, request};
use crate::app::Overlay;
use crate::connection::ConnectionEvent;

fn server(name: &str, state: McpState) -> McpServerStatus {
    McpServerStatus {
        name: name.into(),
        transport: "stdio".into(),
        state,
        tools: Vec::new(),
        last_error: None,
        restarts: 0,
        pid: None,
    }
}

fn listed(h: &Harness) -> Option<Vec<McpServerStatus>> {
    match &h.app.overlay {
        Overlay::Mcp(popup) => popup.servers.clone(),
        other => panic!("the popup is not open: {other:?}"),
    }
}

#[test]
fn mcp_lists_the_servers_and_acts_on_the_selected_one() {
    let mut h = Harness::connected();
    h.type_text("/mcp");
    let (tag, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(method, Method::McpServers { server: None });
    assert_eq!(listed(&h), None, "waiting for the pod");
    // Keys before the answer act on nothing.
    assert!(h.key(key(KeyCode::Char('r'))).is_empty());

    let servers = vec![server("a", McpState::Ready), server("b", McpState::Failed)];
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::McpServers {
            id: RequestId::new(1),
            servers: servers.clone(),
        },
    });
    assert_eq!(listed(&h), Some(servers.clone()));

    // Down past the end stays on the last; each key sends its action for that server.
    h.key(key(KeyCode::Down));
    h.key(key(KeyCode::Down));
    for (press, action) in [
        ('r', McpAction::Reconnect),
        ('d', McpAction::Disable),
        ('e', McpAction::Enable),
    ] {
        let (tag, method) = request(&h.key(key(KeyCode::Char(press))));
        assert_eq!(
            method,
            Method::McpControl {
                server: "b".into(),
                action
            }
        );
        assert!(h.flash().contains(action.as_str()), "{}", h.flash());
        h.link(ConnectionEvent::Reply {
            tag,
            msg: ServerMsg::McpServers {
                id: RequestId::new(2),
                servers: servers.clone(),
            },
        });
    }
    // The pod's answer to the last one replaces the list.
    let (tag, _) = request(&h.key(key(KeyCode::Char('r'))));
    let after = vec![
        server("a", McpState::Ready),
        server("b", McpState::Starting),
    ];
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::McpServers {
            id: RequestId::new(2),
            servers: after.clone(),
        },
    });
    assert_eq!(listed(&h), Some(after));

    // An alert (the server came up) while it is open: the popup asks again.
    let effects = h.link(ConnectionEvent::Frame(ServerMsg::Alert {
        seq: EventSeq::new(50),
        level: AlertLevel::Info,
        message: "MCP server b is running again (3 tools).".into(),
    }));
    assert_eq!(request(&effects).1, Method::McpServers { server: None });

    // Any other key closes it, and is not typed.
    h.key(key(KeyCode::Char('q')));
    assert_eq!(h.app.overlay, Overlay::None);
    assert_eq!(h.app.composer.text(), "");
}

#[test]
fn a_refused_action_keeps_the_popup_and_says_why() {
    let mut h = Harness::connected();
    h.type_text("/mcp");
    let (tag, _) = request(&h.key(key(KeyCode::Enter)));
    h.link(ConnectionEvent::Reply {
        tag,
        msg: ServerMsg::McpServers {
            id: RequestId::new(1),
            servers: vec![server("a", McpState::Disabled)],
        },
    });
    let (tag, _) = request(&h.key(key(KeyCode::Char('e'))));
    h.link(ConnectionEvent::Failed {
        tag,
        reason: "MCP server a was not passed on to this child pod by its parent".into(),
    });
    assert!(matches!(h.app.overlay, Overlay::Mcp(_)), "still open");
    assert!(h.flash().contains("not passed on"), "{}", h.flash());
}

#[test]
fn mcp_with_words_is_the_pods_command() {
    let mut h = Harness::connected();
    h.type_text("/mcp reconnect a");
    let (_, method) = request(&h.key(key(KeyCode::Enter)));
    assert_eq!(
        method,
        Method::Command {
            name: seedpod_protocol::PodCommand::Mcp,
            args: "reconnect a".into()
        }
    );
}
