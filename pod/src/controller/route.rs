//! Where each client method is answered, decided once when the frame arrives.
//!
//! A connection answers the handshake and subscriptions itself; the controller answers the
//! rest, some on its loop and some on tasks of their own (file walks, child processes, summary
//! requests). Splitting `Method` here means each answerer matches only what it can receive:
//! nothing downstream has an arm for a method that is "answered elsewhere".

use seedpod_protocol::{
    ApprovalAnswer, CallId, CompletionKind, EntrySeq, EventSeq, Method, PodCommand, PodEvent,
    QueueId, RunTrigger, Segment, SegmentId, SpawnRequest, StandingApproval,
};

use super::commands;

/// Who answers a request.
#[derive(Debug)]
pub enum Route {
    Connection(ConnectionMethod),
    Controller(ControllerMethod),
}

/// Answered by the connection itself, never sent to the controller.
#[derive(Debug, PartialEq)]
pub enum ConnectionMethod {
    /// A second `hello` on a connection that was already greeted.
    Hello,
    Subscribe {
        since: Option<EventSeq>,
    },
    /// `get_history`: the connection takes the active segment's shared entries from the
    /// controller and encodes the reply itself, so a big segment is neither copied nor
    /// serialised on the controller's loop (docs/storage.md, "Memory").
    History,
    /// A method this pod does not know (the decoder normally refuses these first).
    Unknown,
}

/// Answered by the controller with exactly one reply frame.
#[derive(Debug)]
pub enum ControllerMethod {
    /// Answered on a task of its own from what the controller hands it, so the loop never
    /// waits on the disk, a child process or a summary request.
    Deferred(Deferred),
    /// Answered by the controller before it takes its next command.
    Now(Now),
}

#[derive(Debug)]
pub enum Deferred {
    Completions {
        kind: CompletionKind,
        prefix: String,
    },
    Earlier {
        segment_id: SegmentId,
        before_seq: EntrySeq,
    },
    Spawn(SpawnRequest),
    /// `/clear`, answered when the new segment is written.
    Clear,
    /// `/compact [focus]`, answered when the new segment is written.
    Compact {
        focus: String,
    },
    /// `/memory TEXT`: an append to a file in the project.
    Memory {
        text: String,
    },
    /// `/commit [hint]`: the repository is looked at off the loop, then a run starts.
    Commit {
        hint: String,
    },
    /// `/model` with no name: the model in use and the ones the server offers, asked off the
    /// loop.
    ModelList,
    /// `/mcp__SERVER__PROMPT args`: the server is asked for the prompt off the loop, then its
    /// text is the person's input (`mcp/prompts.rs`).
    McpPrompt {
        command: String,
        args: String,
    },
}

#[derive(Debug)]
pub enum Now {
    /// Input for the model: a person's `run` (not a pod command) or a parent's `delegate`.
    Input {
        segments: Vec<Segment>,
        trigger: RunTrigger,
    },
    Notify {
        message: String,
        wake: bool,
    },
    PodEvent {
        event: PodEvent,
        wake: bool,
    },
    Pause,
    Resume,
    Cancel,
    Shutdown,
    GetContext,
    Status,
    CancelQueued {
        queue_id: QueueId,
    },
    Approve {
        call_id: Option<CallId>,
        answer: ApprovalAnswer,
        reason: Option<String>,
    },
    Command(LoopCommand),
    DeliverReports,
    ListApprovals,
    RevokeApproval {
        standing: Option<StandingApproval>,
    },
    McpServers {
        server: Option<String>,
    },
    McpControl {
        server: String,
        action: seedpod_protocol::McpAction,
    },
}

/// The pod commands answered on the loop (`/clear`, `/compact` and `/memory` are deferred).
#[derive(Debug, PartialEq)]
pub enum LoopCommand {
    Model { name: String },
    Help,
    Mcp { server: String },
    Unknown,
}

impl LoopCommand {
    pub fn as_pod_command(&self) -> PodCommand {
        match self {
            LoopCommand::Model { .. } => PodCommand::Model,
            LoopCommand::Help => PodCommand::Help,
            LoopCommand::Mcp { .. } => PodCommand::Mcp,
            LoopCommand::Unknown => PodCommand::Unknown,
        }
    }
}

/// Where `method` is answered.
pub fn route(method: Method) -> Route {
    use ControllerMethod::{Deferred as Later, Now as Loop};
    let controller = match method {
        Method::Hello { .. } => return Route::Connection(ConnectionMethod::Hello),
        Method::Subscribe { since_seq } => {
            return Route::Connection(ConnectionMethod::Subscribe { since: since_seq });
        }
        Method::Unknown => return Route::Connection(ConnectionMethod::Unknown),
        Method::GetHistory => return Route::Connection(ConnectionMethod::History),
        Method::Run { segments } => match commands::as_command(&segments) {
            Some((name, args)) => pod_command(name, args),
            None => match mcp_prompt(&segments) {
                Some((command, args)) => Later(Deferred::McpPrompt { command, args }),
                None => Loop(Now::Input {
                    segments,
                    trigger: RunTrigger::User,
                }),
            },
        },
        // A parent's input is never a pod command: `/clear` from a parent is text.
        Method::Delegate { segments } => Loop(Now::Input {
            segments,
            trigger: RunTrigger::Parent,
        }),
        Method::Command { name, args } => pod_command(name, args),
        Method::ListCompletions { kind, prefix } => Later(Deferred::Completions { kind, prefix }),
        Method::Earlier {
            segment_id,
            before_seq,
        } => Later(Deferred::Earlier {
            segment_id,
            before_seq,
        }),
        Method::Spawn(request) => Later(Deferred::Spawn(request)),
        Method::Notify { message, wake } => Loop(Now::Notify { message, wake }),
        Method::PodEvent { event, wake } => Loop(Now::PodEvent { event, wake }),
        Method::Pause => Loop(Now::Pause),
        Method::Resume => Loop(Now::Resume),
        Method::Cancel => Loop(Now::Cancel),
        Method::Shutdown => Loop(Now::Shutdown),
        Method::GetContext => Loop(Now::GetContext),
        Method::Status => Loop(Now::Status),
        Method::CancelQueued { queue_id } => Loop(Now::CancelQueued { queue_id }),
        Method::Approve {
            call_id,
            answer,
            reason,
        } => Loop(Now::Approve {
            call_id,
            answer,
            reason,
        }),
        Method::DeliverReports => Loop(Now::DeliverReports),
        Method::ListApprovals => Loop(Now::ListApprovals),
        Method::RevokeApproval { standing } => Loop(Now::RevokeApproval { standing }),
        Method::McpServers { server } => Loop(Now::McpServers { server }),
        Method::McpControl { server, action } => Loop(Now::McpControl { server, action }),
    };
    Route::Controller(controller)
}

/// `/mcp__SERVER__PROMPT args` when a person's input is exactly that (typed, or the composer's
/// completed reference).
fn mcp_prompt(segments: &[Segment]) -> Option<(String, String)> {
    match segments {
        [Segment::WorkflowInvoke { slug, args }]
            if crate::mcp::names::server_of(slug).is_some() =>
        {
            Some((slug.clone(), args.clone()))
        }
        _ => None,
    }
}

fn pod_command(name: PodCommand, args: String) -> ControllerMethod {
    let command = match name {
        PodCommand::Compact => {
            return ControllerMethod::Deferred(Deferred::Compact { focus: args });
        }
        PodCommand::Memory => {
            return ControllerMethod::Deferred(Deferred::Memory { text: args });
        }
        PodCommand::Commit => {
            return ControllerMethod::Deferred(Deferred::Commit { hint: args });
        }
        PodCommand::Clear => return ControllerMethod::Deferred(Deferred::Clear),
        PodCommand::Model if args.trim().is_empty() => {
            return ControllerMethod::Deferred(Deferred::ModelList);
        }
        PodCommand::Model => LoopCommand::Model { name: args },
        PodCommand::Help => LoopCommand::Help,
        PodCommand::Mcp => LoopCommand::Mcp { server: args },
        PodCommand::Unknown => LoopCommand::Unknown,
    };
    ControllerMethod::Now(Now::Command(command))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> Vec<Segment> {
        vec![Segment::Text { text: text.into() }]
    }

    /// A person's `/mcp__SERVER__PROMPT` is asked of its server off the loop; a parent's is
    /// text, like any command from a parent; anything around it makes it ordinary input.
    #[test]
    fn an_mcp_prompt_is_deferred_only_when_a_person_sends_it_alone() {
        let invoke = |slug: &str| Segment::WorkflowInvoke {
            slug: slug.into(),
            args: "a=1".into(),
        };
        match route(Method::Run {
            segments: vec![invoke("mcp__t__greet")],
        }) {
            Route::Controller(ControllerMethod::Deferred(Deferred::McpPrompt {
                command,
                args,
            })) => {
                assert_eq!((command.as_str(), args.as_str()), ("mcp__t__greet", "a=1"));
            }
            other => panic!("{other:?}"),
        }
        for segments in [
            vec![invoke("review")],
            vec![invoke("mcp__t__greet"), Segment::text(" more")],
            vec![invoke("mcp__")],
        ] {
            assert!(
                matches!(
                    route(Method::Run {
                        segments: segments.clone()
                    }),
                    Route::Controller(ControllerMethod::Now(Now::Input { .. }))
                ),
                "{segments:?}"
            );
        }
        assert!(matches!(
            route(Method::Delegate {
                segments: vec![invoke("mcp__t__greet")]
            }),
            Route::Controller(ControllerMethod::Now(Now::Input { .. }))
        ));
    }

    #[test]
    fn the_handshake_and_subscriptions_stay_with_the_connection() {
        let hello = Method::Hello {
            protocol: 1,
            client: "t".into(),
            mode: seedpod_protocol::ClientMode::Attach,
        };
        for (method, expected) in [
            (hello, ConnectionMethod::Hello),
            (
                Method::Subscribe {
                    since_seq: Some(EventSeq::new(4)),
                },
                ConnectionMethod::Subscribe {
                    since: Some(EventSeq::new(4)),
                },
            ),
            (Method::Unknown, ConnectionMethod::Unknown),
            (Method::GetHistory, ConnectionMethod::History),
        ] {
            match route(method) {
                Route::Connection(got) => assert_eq!(got, expected),
                Route::Controller(other) => {
                    panic!("{expected:?} reached the controller: {other:?}")
                }
            }
        }
    }

    /// `/compact` typed as text, sent as a command or as the composer's command segment is one
    /// deferred compaction with its focus; `/model` is answered on the loop.
    #[test]
    fn compact_is_deferred_however_it_is_sent() {
        let typed = Method::Run {
            segments: text("/compact the parser"),
        };
        let named = Method::Command {
            name: PodCommand::Compact,
            args: "the parser".into(),
        };
        let composed = Method::Run {
            segments: vec![Segment::WorkflowInvoke {
                slug: "compact".into(),
                args: "the parser".into(),
            }],
        };
        for method in [typed, named, composed] {
            match route(method) {
                Route::Controller(ControllerMethod::Deferred(Deferred::Compact { focus })) => {
                    assert_eq!(focus, "the parser");
                }
                other => panic!("not a deferred compaction: {other:?}"),
            }
        }
        match route(Method::Run {
            segments: text("/model small"),
        }) {
            Route::Controller(ControllerMethod::Now(Now::Command(command))) => {
                assert_eq!(
                    command,
                    LoopCommand::Model {
                        name: "small".into()
                    }
                );
            }
            other => panic!("not a loop command: {other:?}"),
        }
        // Without a name it asks the server, which is never done on the loop.
        for typed in ["/model", "/model   "] {
            assert!(
                matches!(
                    route(Method::Run {
                        segments: text(typed),
                    }),
                    Route::Controller(ControllerMethod::Deferred(Deferred::ModelList))
                ),
                "{typed:?}"
            );
        }
    }

    /// A parent's `/clear` is text for the model, not a command; a person's is a command.
    #[test]
    fn only_a_persons_run_can_be_a_pod_command() {
        match route(Method::Delegate {
            segments: text("/clear"),
        }) {
            Route::Controller(ControllerMethod::Now(Now::Input { trigger, segments })) => {
                assert_eq!(trigger, RunTrigger::Parent);
                assert_eq!(segments, text("/clear"));
            }
            other => panic!("a parent's /clear was not input: {other:?}"),
        }
        assert!(matches!(
            route(Method::Run {
                segments: text("/clear")
            }),
            Route::Controller(ControllerMethod::Deferred(Deferred::Clear))
        ));
        assert!(matches!(
            route(Method::Run {
                segments: text("please /clear")
            }),
            Route::Controller(ControllerMethod::Now(Now::Input {
                trigger: RunTrigger::User,
                ..
            }))
        ));
    }
}
