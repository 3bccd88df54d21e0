//! `seedpod approve NAME [--deny REASON | --always] [--call ID]`: answer a tool call that waits
//! for a person, e.g. one that started while nobody was attached.

use anyhow::Result;
use seedpod_client::{ClientError, Home};
use seedpod_protocol::{
    AckOutcome, ApprovalAnswer, CallId, ClientMode, ErrorCode, Method, Preview, ServerMsg,
};

use crate::exit::Exit;
use crate::pods;

pub async fn approve(
    home: &Home,
    pod: &pods::Pod,
    deny: Option<String>,
    always: bool,
    call: Option<String>,
) -> Result<()> {
    let mut conn = pods::connect_pod(home, pod, ClientMode::Control).await?;
    // Name what is being answered, so nobody approves a command they have not seen.
    let pending = match conn.call(Method::Status).await? {
        ServerMsg::StatusReply { status, .. } => status.pending_approval,
        _ => None,
    };
    let Some(request) = pending else {
        return Err(Exit::failure(format!(
            "nothing in pod \"{pod}\" is waiting for approval"
        )));
    };
    let target = call.map_or_else(|| request.call_id.clone(), CallId::new);
    let (answer, reason) = match (deny, always) {
        (Some(reason), _) => (ApprovalAnswer::Deny, Some(reason)),
        (None, true) => (ApprovalAnswer::ApproveAlways, None),
        (None, false) => (ApprovalAnswer::Approve, None),
    };
    let reply = conn
        .call(Method::Approve {
            call_id: Some(target.clone()),
            answer,
            reason: reason.clone(),
        })
        .await;
    let what = if target == request.call_id {
        request.summary.clone()
    } else {
        format!("call {target}")
    };
    match reply {
        Ok(ServerMsg::Ack { outcome, .. }) => {
            let verb = match (answer, &reason) {
                (ApprovalAnswer::Deny, Some(reason)) => format!("denied ({reason})"),
                (ApprovalAnswer::ApproveAlways, _) if target != request.call_id => {
                    "approved (always, as the pod's rule for that call says)".to_string()
                }
                (ApprovalAnswer::ApproveAlways, _) => {
                    // How the tool's declaration previews it says what "always" meant.
                    let preview = seedpod_pod::catalogue::decl_for(&request.tool)
                        .map_or(Preview::Arguments, |decl| decl.preview);
                    match (&request.always, preview) {
                        (Some(rule), _) => {
                            format!(
                                "approved, and from now on `{}` (until revoked)",
                                rule.display()
                            )
                        }
                        (None, Preview::Command) => {
                            "approved once (no standing rule may cover this command)".to_string()
                        }
                        (None, Preview::FileWrite | Preview::FileEdit | Preview::Arguments) => {
                            format!("approved, and from now on every {} call", request.tool)
                        }
                    }
                }
                _ => "approved".to_string(),
            };
            let then = if outcome == AckOutcome::Started {
                "; the paused turn continues"
            } else {
                ""
            };
            println!("{pod}: {what}: {verb}{then}");
            Ok(())
        }
        Ok(other) => Err(Exit::failure(format!(
            "unexpected answer: {}",
            seedpod_protocol::encode(&other)
        ))),
        Err(ClientError::Refused {
            code: ErrorCode::NothingPending,
            message,
        }) => Err(Exit::failure(format!("{pod}: {message}"))),
        Err(err) => Err(err.into()),
    }
}
