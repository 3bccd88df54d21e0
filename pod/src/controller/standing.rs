//! Standing approvals: listing them and withdrawing them. A revocation is a log entry, like
//! the answer that granted the rule, so it survives restarts and replays the same way.

use seedpod_protocol::{EntryKind, ErrorCode, RequestId, ServerMsg, StandingApproval};
use seedpod_store::Durability;

use super::Controller;

impl Controller {
    pub(super) fn list_approvals(&self, id: RequestId) -> ServerMsg {
        ServerMsg::Approvals {
            id,
            standing: self.log.state.standing_approvals.clone(),
        }
    }

    /// Withdraw `standing` (or every standing approval): one `approval_revoked` entry each,
    /// durable before the answer.
    pub(super) async fn revoke_approval(
        &mut self,
        id: RequestId,
        standing: Option<StandingApproval>,
    ) -> ServerMsg {
        let revoked = match standing {
            Some(one) if self.log.state.standing_approvals.contains(&one) => vec![one],
            Some(one) => {
                return ServerMsg::Error {
                    id: Some(id),
                    code: ErrorCode::NothingPending,
                    message: format!(
                        "no standing approval \"{}\" is in force; `seedpod approvals NAME` lists \
                         them",
                        one.display()
                    ),
                };
            }
            None => self.log.state.standing_approvals.clone(),
        };
        for standing in revoked {
            tracing::info!(event = "approval_revoked", rule = %standing.display());
            let kind = EntryKind::ApprovalRevoked { standing };
            if let Err(err) = self.commit(kind, Durability::Sync).await {
                return err.to_reply(id);
            }
        }
        self.list_approvals(id)
    }
}
