//! `seedpod prompt show [NAME]`: the layered system prompt as it renders now, each layer with
//! its source, and whether the pod's current segment uses exactly that text (a segment keeps
//! the prompt it started with, so editing AGENTS.md changes the next segment, not this one).

use std::io::BufRead;
use std::path::Path;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_engine::ToolRegistry;
use seedpod_pod::children::tools::offered_specs;
use seedpod_pod::policy::Policies;
use seedpod_protocol::{Entry, EntryKind, ToolSpec};
use seedpod_store::segment_path;

use crate::args::PodConfigArgs;
use crate::exit::Exit;
use crate::pods::{canonical_cwd, name_for_start};
use crate::session::PodSession;
use crate::{session, settings};

pub fn show(home: &Home, name: Option<&str>) -> Result<()> {
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
    let tools = offered_tools(tools, &pod_session.policies);
    let rendered = pod_session
        .prompt
        .render(&seedpod_pod::session::PromptFor {
            pod_name: &pod_name,
            cwd: &cwd,
            model: &model,
            tools: &tools,
            session_instructions: existing.as_ref().and_then(|m| m.instructions.as_deref()),
            date: &seedpod_pod::restore::today(),
        })
        .map_err(|e| Exit::failure(format!("the system prompt cannot be rendered: {e}")))?;
    print!("{}", rendered.explain());
    match &existing {
        None => println!(
            "\n(a new pod \"{pod_name}\" in {} would start with this prompt)",
            cwd.display()
        ),
        Some(meta) => {
            let path = segment_path(&home.pod_dir(&meta.name), &meta.active_segment);
            match stored_prompt(&path) {
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

/// What a new segment of the pod offers: the built-in tools, then the child-pod tools that are
/// not denied (as `pod serve` adds them).
fn offered_tools(tools: ToolRegistry, policies: &Policies) -> Vec<ToolSpec> {
    let mut specs = tools.specs();
    specs.extend(offered_specs(policies));
    specs
}

/// The system prompt in a segment's first line, read without touching the file (a running pod
/// may be appending to it).
fn stored_prompt(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file).read_line(&mut line).ok()?;
    match serde_json::from_str::<Entry>(&line).ok()?.kind {
        EntryKind::SegmentStart(start) => Some(start.system_prompt),
        _ => None,
    }
}
