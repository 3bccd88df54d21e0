//! `seedpod prompt show [NAME]`: the layered system prompt as it renders now, each layer with
//! its source, the tools offered with it, which prompt mode applies and why, and whether the
//! pod's current segment uses exactly that text (a segment keeps the prompt it started with, so
//! editing AGENTS.md changes the next segment, not this one).

use std::path::Path;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::Effective;
use seedpod_engine::ToolRegistry;
use seedpod_pod::assemble::{PodTools, offer_pod_tools};
use seedpod_pod::context::estimate::base_tokens;
use seedpod_pod::context::window_memo::WindowMemo;
use seedpod_pod::context::{ContextSettings, SMALL_WINDOW_TOKENS, window};
use seedpod_pod::policy::Policies;
use seedpod_pod::prompt::PromptMode;
use seedpod_protocol::{
    ContextWindow, Entry, EntryKind, PodName, ToolSpec, WindowSource, thousands,
};
use seedpod_store::{PodMeta, read_segment_entries, segment_path};

use crate::exit::Exit;
use crate::pods::{canonical_cwd, name_for_start};
use crate::session::PodSession;
use crate::{args::PodConfigArgs, session, settings};

pub async fn show(home: &Home, name: Option<&PodName>) -> Result<()> {
    let existing = match name {
        Some(name) => match settings::existing_meta(home, name)? {
            Some(meta) => Some(meta),
            None => {
                return Err(Exit::usage(format!(
                    "no pod named \"{name}\"; `seedpod prompt show` without a name shows what a new pod here would get"
                )));
            }
        },
        None => {
            let cwd = canonical_cwd(None)?;
            let name = name_for_start(home, None, &cwd)?;
            settings::existing_meta(home, &name)?.filter(|meta| meta.cwd == cwd)
        }
    };
    let cwd = match &existing {
        Some(meta) => meta.cwd.clone(),
        None => canonical_cwd(None)?,
    };
    let pod_name = match &existing {
        Some(meta) => meta.name.clone(),
        None => name_for_start(home, None, &cwd)?,
    };
    let eff = settings::resolve(home, &cwd, &PodConfigArgs::default(), existing.as_ref())?;
    let grant = existing.as_ref().and_then(|meta| meta.delegated.as_ref());
    let model = eff.model().map(|m| m.value).unwrap_or_default();
    let PodSession {
        tools,
        session: pod_session,
    } = session::build(home, &cwd, &eff, grant)?;
    let active = existing
        .as_ref()
        .map(|meta| ActiveSegment::read(home, meta));
    let known = match active.as_ref().and_then(|a| a.window) {
        Some(window) => Some(Known {
            window,
            in_log: true,
        }),
        None => window_now(home, &eff, &pod_session.context, &model).await,
    };
    let specs = offered_tools(home, &pod_name, &cwd, tools, &pod_session.policies)?;
    let planned = seedpod_pod::segment_plan::plan(&seedpod_pod::segment_plan::Plan {
        prompt: &pod_session.prompt,
        pod_name: &pod_name,
        cwd: &cwd,
        model: &model,
        session_instructions: existing.as_ref().and_then(|m| m.instructions.as_deref()),
        window: known.map(|k| k.window.tokens),
        specs: &specs,
        child_tools_in_compact: pod_session.context.child_tools_in_compact,
        tool_search: pod_session.tool_search,
        previous: &[],
    });
    let rendered = planned
        .render()
        .map_err(|e| Exit::failure(format!("the system prompt cannot be rendered: {e}")))?;
    let (mode, tools) = (planned.mode, planned.tools);
    println!("{}", mode_line(mode, known));
    print!("{}", rendered.explain());
    print!("{}", tools_section(mode, &tools));
    println!(
        "\n\n{}",
        base_line(base_tokens(&rendered.text, &tools), known)
    );
    match existing.as_ref().zip(active) {
        None => println!(
            "\n(a new pod \"{pod_name}\" in {} would start with this prompt)",
            cwd.display()
        ),
        Some((meta, active)) => {
            let path = segment_path(&home.pod_dir(&meta.name), &meta.active_segment);
            match active.prompt {
                Some(stored) if stored == rendered.text => println!(
                    "\n(pod \"{}\" uses exactly this prompt in its current segment {})",
                    meta.name, meta.active_segment
                ),
                Some(_) => println!(
                    "\n(pod \"{}\" keeps the prompt stored when its segment {} started, which differs from this rendering — its history replays exactly; /clear starts a segment with the prompt above)",
                    meta.name, meta.active_segment
                ),
                None => println!(
                    "\n(the stored prompt of pod \"{}\" could not be read from {})",
                    meta.name,
                    path.display()
                ),
            }
        }
    }
    Ok(())
}

/// What a new segment of the pod offers in full mode, exactly as `pod serve` offers it: the
/// built-in tools, then the pod's own and the child-pod tools that are not denied
/// (`assemble::offer_pod_tools`). Their queues lead nowhere: nothing is called here.
fn offered_tools(
    home: &Home,
    name: &PodName,
    cwd: &Path,
    mut tools: ToolRegistry,
    policies: &Policies,
) -> Result<Vec<ToolSpec>> {
    let (senders, _receivers) = seedpod_pod::controller::channels();
    let pod = PodTools {
        home,
        name,
        cwd,
        pastes: senders.pastes,
        children: senders.children,
    };
    offer_pod_tools(&mut tools, pod, policies).map_err(|e| Exit::failure(e.to_string()))?;
    Ok(tools.specs())
}

/// A window and whether the pod's log holds it (rather than the configuration saying so now).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Known {
    window: ContextWindow,
    in_log: bool,
}

/// The window a pod starting now would find, the way it finds it: the configuration, the model
/// server at `base_url` (asked, as the pod would, when `[context] probe` is on and no pod asked
/// it recently), the tables.
async fn window_now(
    home: &Home,
    eff: &Effective,
    settings: &ContextSettings,
    model: &str,
) -> Option<Known> {
    let window = match &eff.provider {
        Some(provider) => {
            let base_url = eff.base_url.as_ref().map(|u| u.value.as_str());
            let memo = WindowMemo::in_state_dir(&home.state);
            window::resolve(
                settings,
                provider.value.kind(),
                base_url,
                model,
                Some(&memo),
            )
            .await
        }
        // No provider yet: `start` would look for a local server; nothing to ask here.
        None => window::configured(settings, model),
    };
    window.map(|window| Known {
        window,
        in_log: false,
    })
}

/// What the pod's active segment says, read without touching the file (a running pod may be
/// appending to it).
struct ActiveSegment {
    /// The system prompt stored in its `segment_start`; `None` when it cannot be read.
    prompt: Option<String>,
    /// Its `segment_start.context_window`, replaced by each later `context_window` entry.
    window: Option<ContextWindow>,
}

impl ActiveSegment {
    fn read(home: &Home, meta: &PodMeta) -> ActiveSegment {
        let path = segment_path(&home.pod_dir(&meta.name), &meta.active_segment);
        let entries = read_segment_entries(&path).unwrap_or_default();
        ActiveSegment::of(&entries)
    }

    fn of(entries: &[Entry]) -> ActiveSegment {
        let mut active = ActiveSegment {
            prompt: None,
            window: None,
        };
        for entry in entries {
            if let EntryKind::SegmentStart(start) = &entry.kind {
                active.prompt = Some(start.system_prompt.clone());
                active.window = start.context_window;
            } else if let EntryKind::ContextWindow(window) = &entry.kind {
                active.window = Some(*window);
            }
        }
        active
    }
}

/// `mode: compact (window 4,096 tokens ≤ 16,384; from config)`, `mode: full (window unknown)`.
fn mode_line(mode: PromptMode, known: Option<Known>) -> String {
    let Some(Known { window, in_log }) = known else {
        return format!("mode: {} (window unknown)", mode.as_str());
    };
    let compare = match mode {
        PromptMode::Small => "≤",
        PromptMode::Full => ">",
    };
    let mut source = match window.source {
        WindowSource::Config => "from config",
        WindowSource::Table => "from the model table",
        WindowSource::Server => "asked from the model server",
        WindowSource::Learned => "learned from the server's \"too long\" answer",
        WindowSource::Unknown => "from a newer seedpod",
    }
    .to_string();
    if in_log {
        source.push_str(", in the pod's log");
    }
    format!(
        "mode: {} (window {} tokens {compare} {}; {source})",
        mode.as_str(),
        thousands(window.tokens),
        thousands(SMALL_WINDOW_TOKENS),
    )
}

/// The tools sent with every request in `mode`: name, description, parameters.
fn tools_section(mode: PromptMode, tools: &[ToolSpec]) -> String {
    let mut out = format!(
        "\n\n── tools: {} offered in {} mode ──",
        tools.len(),
        mode.as_str()
    );
    for tool in tools {
        out.push_str(&format!(
            "\n{}: {}\n  parameters: {}",
            tool.name,
            tool.description.trim(),
            tool.parameters
        ));
    }
    out
}

/// The estimated size of what every request starts with, and its share of the window.
fn base_line(tokens: u64, known: Option<Known>) -> String {
    let share = known
        .filter(|k| k.window.tokens > 0)
        .map(|k| {
            format!(
                ", {}% of the {}-token window",
                tokens.saturating_mul(100) / k.window.tokens,
                thousands(k.window.tokens)
            )
        })
        .unwrap_or_default();
    format!(
        "base request: ~{} tokens (system prompt + tool schemas, estimated){share}",
        thousands(tokens)
    )
}

#[cfg(test)]
mod tests {
    use seedpod_protocol::{ModelConfig, Origin, ProviderKind, SegmentStart};

    use super::*;
    use seedpod_protocol::{EntrySeq, SegmentId};

    fn entry(seq: u64, kind: EntryKind) -> Entry {
        Entry {
            v: 1,
            seq: EntrySeq::new(seq),
            ts: 0,
            kind,
        }
    }

    fn start(window: Option<ContextWindow>) -> EntryKind {
        EntryKind::SegmentStart(SegmentStart {
            date: None,
            segment_id: SegmentId::new("s"),
            system_prompt: "prompt".into(),
            model: ModelConfig::new(ProviderKind::Scripted, "m"),
            tools: Vec::new(),
            seed: Vec::new(),
            standing_approvals: Vec::new(),
            origin: Origin::New,
            context_window: window,
            compaction: None,
            tasks: Vec::new(),
            totals: None,
        })
    }

    fn w(tokens: u64, source: WindowSource) -> ContextWindow {
        ContextWindow { tokens, source }
    }

    #[test]
    fn the_logged_window_is_the_last_one_recorded() {
        let none = ActiveSegment::of(&[entry(0, start(None))]);
        assert_eq!(none.window, None);
        assert_eq!(none.prompt.as_deref(), Some("prompt"));
        let config = w(200_000, WindowSource::Config);
        let learned = w(4_096, WindowSource::Learned);
        let active = ActiveSegment::of(&[
            entry(0, start(Some(config))),
            entry(1, EntryKind::ContextWindow(learned)),
        ]);
        assert_eq!(active.window, Some(learned));
        assert_eq!(ActiveSegment::of(&[]).prompt, None);
    }

    #[test]
    fn the_mode_line_says_why() {
        let known = |window, in_log| Some(Known { window, in_log });
        assert_eq!(
            mode_line(
                PromptMode::Small,
                known(w(4_096, WindowSource::Config), false)
            ),
            "mode: compact (window 4,096 tokens ≤ 16,384; from config)"
        );
        assert_eq!(
            mode_line(PromptMode::Full, None),
            "mode: full (window unknown)"
        );
        assert_eq!(
            mode_line(
                PromptMode::Full,
                known(w(200_000, WindowSource::Table), false)
            ),
            "mode: full (window 200,000 tokens > 16,384; from the model table)"
        );
        assert_eq!(
            mode_line(
                PromptMode::Small,
                known(w(12_000, WindowSource::Learned), true)
            ),
            "mode: compact (window 12,000 tokens ≤ 16,384; learned from the server's \"too long\" answer, in the pod's log)"
        );
    }

    #[test]
    fn the_base_line_gives_the_share_of_a_known_window() {
        assert_eq!(
            base_line(
                801,
                Some(Known {
                    window: w(4_096, WindowSource::Config),
                    in_log: false
                })
            ),
            "base request: ~801 tokens (system prompt + tool schemas, estimated), 19% of the 4,096-token window"
        );
        assert_eq!(
            base_line(4_989, None),
            "base request: ~4,989 tokens (system prompt + tool schemas, estimated)"
        );
    }
}
