//! The first exchange on every connection: `hello` → `welcome` or `incompatible`.

use crate::message::{PROTOCOL_VERSION, ServerMsg};

/// Decide whether a client speaking `client_protocol` can talk to this binary. `None` means
/// compatible; otherwise the `incompatible` frame to send before closing.
pub fn check_version(client_protocol: u32) -> Option<ServerMsg> {
    if client_protocol == PROTOCOL_VERSION {
        return None;
    }
    let reason = if client_protocol < PROTOCOL_VERSION {
        format!(
            "the client speaks protocol {client_protocol} but this pod speaks {PROTOCOL_VERSION}: \
             the client is older; upgrade seedpod"
        )
    } else {
        format!(
            "the client speaks protocol {client_protocol} but this pod speaks {PROTOCOL_VERSION}: \
             the pod is older; run `seedpod restart NAME` to restart it on the new binary \
             (it restores exactly from its log)"
        )
    };
    Some(ServerMsg::Incompatible {
        supported: PROTOCOL_VERSION,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_version_is_compatible() {
        assert!(check_version(PROTOCOL_VERSION).is_none());
    }

    #[test]
    fn newer_client_is_told_to_restart_the_pod() {
        match check_version(PROTOCOL_VERSION + 1) {
            Some(ServerMsg::Incompatible { reason, supported }) => {
                assert_eq!(supported, PROTOCOL_VERSION);
                assert!(reason.contains("seedpod restart"), "{reason}");
            }
            other => panic!("expected incompatible, got {other:?}"),
        }
    }
}
