//! `seedpod tasks NAME`: the task list the pod's model keeps (`update_tasks`), one task per
//! line. Read from the active segment's log file, like `history --all`, so it answers the same
//! whether the pod runs or not and never disturbs one that is appending.

use anyhow::Result;
use seedpod_client::Home;
use seedpod_protocol::{PodName, Task, TaskTracker};
use seedpod_store::{read_segment_entries, segment_path};

use crate::{exit::Exit, settings};

pub fn show(home: &Home, name: &PodName, json: bool) -> Result<()> {
    let tasks = current(home, name)?;
    if json {
        let text = serde_json::to_string(&tasks)
            .map_err(|e| Exit::failure(format!("could not encode the task list: {e}")))?;
        println!("{text}");
        return Ok(());
    }
    if tasks.is_empty() {
        eprintln!("pod \"{name}\" has no task list (its model has not called update_tasks)");
        return Ok(());
    }
    for task in &tasks {
        println!(
            "{}",
            seedpod_protocol::printable_line(&task.checkbox_line())
        );
    }
    Ok(())
}

/// The list as the active segment's entries leave it.
fn current(home: &Home, name: &PodName) -> Result<Vec<Task>> {
    let Some(meta) = settings::existing_meta(home, name)? else {
        return Err(Exit::usage(format!("no pod named \"{name}\"")));
    };
    let path = segment_path(&home.pod_dir(name), &meta.active_segment);
    let entries = read_segment_entries(&path).map_err(|err| {
        Exit::failure(format!(
            "could not read pod \"{name}\"'s log {}: {err}",
            path.display()
        ))
    })?;
    let mut tracker = TaskTracker::default();
    for entry in &entries {
        tracker.apply(&entry.kind);
    }
    Ok(tracker.tasks().to_vec())
}
