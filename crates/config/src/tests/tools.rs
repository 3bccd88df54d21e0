//! The tools these tests configure: the same names, order and defaults as the pod's catalogue
//! (`pod/src/catalogue.rs`, whose tests pin the real list), so a configuration here reads like
//! a real one. This crate reads whatever declarations it is given; nothing else here depends on
//! which tools exist.

use seedpod_protocol::{
    CallSummary, Effect, GuardScan, InFlush, InSmallPrompt, Policy, Preview, ToolDecl,
};

const fn tool(name: &'static str, default_policy: Policy, effect: Effect) -> ToolDecl {
    ToolDecl {
        name,
        default_policy,
        effect,
        note: None,
        small_note: None,
        in_small_prompt: InSmallPrompt::Always,
        summary: CallSummary::raw,
        guard: GuardScan::Everything,
        preview: Preview::Arguments,
        in_flush: InFlush::Never,
    }
}

const READ_FILE: ToolDecl = tool("read_file", Policy::Allow, Effect::ReadOnly);
const WRITE_FILE: ToolDecl = tool("write_file", Policy::Allow, Effect::Changes);
const EDIT_FILE: ToolDecl = tool("edit_file", Policy::Allow, Effect::Changes);
const LIST_DIR: ToolDecl = tool("list_dir", Policy::Allow, Effect::ReadOnly);
const GLOB: ToolDecl = tool("glob", Policy::Allow, Effect::ReadOnly);
const GREP: ToolDecl = tool("grep", Policy::Allow, Effect::ReadOnly);
const SHELL: ToolDecl = tool("shell", Policy::Ask, Effect::RunsCommands);
const UPDATE_TASKS: ToolDecl = tool("update_tasks", Policy::Allow, Effect::ReadOnly);
const GIT_COMMIT: ToolDecl = tool("git_commit", Policy::Ask, Effect::Changes);
const READ_PASTE: ToolDecl = tool("read_paste", Policy::Allow, Effect::ReadOnly);
const SPAWN_POD: ToolDecl = tool("spawn_pod", Policy::Allow, Effect::Changes);
const SEND_TO_POD: ToolDecl = tool("send_to_pod", Policy::Allow, Effect::Changes);
const READ_POD_OUTPUT: ToolDecl = tool("read_pod_output", Policy::Allow, Effect::ReadOnly);
const LIST_PODS: ToolDecl = tool("list_pods", Policy::Allow, Effect::ReadOnly);
const STOP_POD: ToolDecl = tool("stop_pod", Policy::Allow, Effect::Changes);

pub(crate) const TOOLS: [&ToolDecl; 15] = [
    &READ_FILE,
    &WRITE_FILE,
    &EDIT_FILE,
    &LIST_DIR,
    &GLOB,
    &GREP,
    &SHELL,
    &UPDATE_TASKS,
    &GIT_COMMIT,
    &READ_PASTE,
    &SPAWN_POD,
    &SEND_TO_POD,
    &READ_POD_OUTPUT,
    &LIST_PODS,
    &STOP_POD,
];
