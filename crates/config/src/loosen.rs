//! What a project config file may not do without trust: every key that would widen what the
//! model may do, compared with the layers below it (defaults and the user's `config.toml`).
//! One place, one table-driven test (`src/tests/loosen.rs`).
//!
//! The rules, per key (anything not listed cannot loosen policy and always applies):
//!
//! | key | loosening | tightening (always applies) |
//! |---|---|---|
//! | `[approvals] TOOL` | more permissive than below, in the order deny < ask < allow | less permissive |
//! | `[scope] read`, `write` | a root not in the list below | dropping a root |
//! | `[scope] deny` | dropping an entry of the list below | adding one |
//! | `[shell] timeout_secs`, `max_timeout_secs` | a longer limit | a shorter one |
//! | `[shell] sandbox` | `"off"` where a lower layer confines | `"scope"` |
//! | `[shell] network` | `true` where a lower layer says `false` | `false` |
//! | `[input] guard` | weaker, in the order off < log < warn < block | stronger |
//! | `[children] max_children`, `max_depth` | a higher limit: more processes one answer can start | a lower one |
//! | `provider` | any other provider: it decides who answers (and `scripted`, a file, answers instead of a model) | — |
//! | `model` | any other model than the one below (the provider's default when none is set) | — |
//! | `script` | any other script: the scripted provider's replies are the file's text | — |
//! | `[context] summary_model` | any other model: it writes the summaries the model then reads as its history | — |
//! | `base_url` | any other endpoint: it receives the conversation and the API key | — |
//! | `api_key_env` | any other variable: it picks which secret leaves the machine | — |
//! | `[logging] file` | any other file: the pod would append to a path outside the scope | — |
//! | `[notify] wrapper` | any other template: its text reaches the model with every notification | — |
//! | `[approvals] mcp__SERVER__TOOL`, `mcp__SERVER__*` | more permissive than what applies below (an MCP tool no key covers asks) | less permissive |
//! | `[mcp.servers.NAME]` | a table that sets what starts or reaches a server (`command`, `args`, `env`, `env_vars`, `cwd`, `url`, `headers`, `bearer_token_env`, the OAuth client keys `client_id`, `client_secret_env`, `client_metadata_url`, `scopes`, `grant`, `client_secret_file`, `client_key_file`, and cross-app access's `id_token_command` — a command — `idp_token_endpoint`, `idp_client_id`, `idp_client_secret_env`, `idp_client_secret_file`), `oauth = true`, `enabled = true` or `trust_read_only = true`: the whole table is left out | `enabled = false`, `trust_read_only = false`, timeouts |
//! | `[remote]` | any: its `ssh` and `bin` are commands this machine runs | — |
//! | `[responses] store` | `true` where a lower layer leaves it off: OpenAI would keep the conversation | `false` |
//! | `[hooks]` | any hook: each is a command this machine runs, outside the sandbox | — |
//! | `[system_prompt] identity_file` | a file outside the project directory (after symlinks): its text would be sent to the provider | one inside it |
//!
//! Choosing who answers is the person's alone: a repository that could set `provider` and
//! `script` would be the model, writing the replies and tool calls the pod acts on. The keys
//! that only shape a request to the person's own model (`temperature`, `max_tokens`,
//! `context_window`, `[context.windows]`, `[context] probe`, which asks the person's endpoint)
//! apply without trust: none of them changes who answers or where the conversation and the
//! key go.

use std::path::{Path, PathBuf};

use crate::agent::{GuardMode, SandboxMode};
use crate::approvals::Policy;
use crate::effective::Effective;
use crate::file::{ConfigFile, ProviderChoice};

/// A key of an untrusted project file that was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The key as written in a file: `approvals.shell`, `scope.write`.
    pub key: String,
    /// What the project file asks for (for lists: only the part that was ignored).
    pub wanted: String,
    /// What applies instead.
    pub kept: String,
}

/// Remove from `project` every loosening relative to `below` (the defaults and user layers
/// already resolved), keeping its tightenings. `project_dir` is the pod's working directory,
/// whose `.seedpod/` holds the file. Returns what was left out.
pub(crate) fn restrain(
    project: &mut ConfigFile,
    below: &Effective,
    project_dir: &Path,
) -> Vec<Ignored> {
    let mut ignored = Vec::new();
    let text = |s: &String| quote(s);
    who_answers(project, below, project_dir, &mut ignored);
    if let Some(responses) = &mut project.responses
        && responses.store == Some(true)
        && !below.responses.store.value
    {
        // Where the conversation is kept is the person's choice, like where it is sent.
        ignored.push(Ignored {
            key: "responses.store".into(),
            wanted: "true".into(),
            kept: "false".into(),
        });
        responses.store = None;
    }
    let base_url = below.base_url.as_ref().map(|s| &s.value);
    changed(
        &mut project.base_url,
        base_url,
        "base_url",
        text,
        &mut ignored,
    );
    let key_env = below.api_key_env().map(|s| &s.value);
    changed(
        &mut project.api_key_env,
        key_env,
        "api_key_env",
        text,
        &mut ignored,
    );
    if let Some(notify) = &mut project.notify {
        let wrapper = Some(&below.notify.wrapper.value);
        changed(
            &mut notify.wrapper,
            wrapper,
            "notify.wrapper",
            text,
            &mut ignored,
        );
    }
    if let Some(logging) = &mut project.logging {
        let file = below.logging.file.as_ref().map(|s| &s.value);
        let path = |p: &PathBuf| quote(&p.display().to_string());
        changed(&mut logging.file, file, "logging.file", path, &mut ignored);
    }
    if let Some(approvals) = &mut project.approvals {
        // In the declared tools' order, whatever order the file has.
        for (tool, base) in below.approvals.all() {
            let Some(at) = approvals.tools.iter().position(|k| k.tool == tool) else {
                continue;
            };
            let wanted = approvals.tools[at].policy;
            if policy_rank(wanted) > policy_rank(base.value) {
                ignored.push(Ignored {
                    key: format!("approvals.{tool}"),
                    wanted: quote(wanted.as_str()),
                    kept: quote(base.value.as_str()),
                });
                approvals.tools.remove(at);
            }
        }
    }
    if let Some(approvals) = &mut project.approvals {
        approvals.mcp.retain(|key, wanted| {
            let base = below
                .approvals
                .mcp_policy(key)
                .map_or(Policy::Ask, |s| s.value);
            let loosens = policy_rank(*wanted) > policy_rank(base);
            if loosens {
                ignored.push(Ignored {
                    key: format!("approvals.{key}"),
                    wanted: quote(wanted.as_str()),
                    kept: quote(base.as_str()),
                });
            }
            !loosens
        });
    }
    if let Some(servers) = project.mcp.as_mut().and_then(|m| m.servers.as_mut()) {
        servers.retain(|name, server| {
            let loosens = server.loosens();
            if loosens {
                let kept = if below.mcp.defines(name) {
                    "the user file's definition"
                } else {
                    "not started"
                };
                ignored.push(Ignored {
                    key: format!("mcp.servers.{name}"),
                    wanted: "a server the pod starts or connects to".into(),
                    kept: kept.into(),
                });
            }
            !loosens
        });
    }
    // `ssh` and `bin` are commands this machine runs; hosts decide where the conversation goes.
    if project.remote.take().is_some() {
        ignored.push(Ignored {
            key: "remote".into(),
            wanted: "how to reach other machines (commands this machine runs)".into(),
            kept: "the user file's [remote]".into(),
        });
    }
    // Hooks run unsandboxed, as the person's own commands (docs/hooks.md).
    if let Some(hooks) = project.hooks.take() {
        ignored.push(Ignored {
            key: "hooks".into(),
            wanted: format!("{} hook command(s) this machine runs", hooks.count()),
            kept: "the user file's hooks only".into(),
        });
    }
    if let Some(scope) = &mut project.scope {
        let roots = [
            ("scope.read", &mut scope.read, &below.scope.read.value),
            ("scope.write", &mut scope.write, &below.scope.write.value),
        ];
        for (key, slot, base) in roots {
            let Some(list) = slot else { continue };
            let (kept, added): (Vec<PathBuf>, Vec<PathBuf>) =
                list.drain(..).partition(|p| base.contains(p));
            if !added.is_empty() {
                ignored.push(Ignored {
                    key: key.into(),
                    wanted: paths(&added),
                    kept: paths(&kept),
                });
            }
            *list = kept;
        }
        if let Some(deny) = &mut scope.deny {
            let dropped: Vec<PathBuf> = below
                .scope
                .deny
                .value
                .iter()
                .filter(|p| !deny.contains(p))
                .cloned()
                .collect();
            if !dropped.is_empty() {
                ignored.push(Ignored {
                    key: "scope.deny".into(),
                    wanted: format!("without {}", paths(&dropped)),
                    kept: format!("{} still denied", paths(&dropped)),
                });
                deny.extend(dropped);
            }
        }
    }
    if let Some(shell) = &mut project.shell {
        let limits = [
            (
                "shell.timeout_secs",
                &mut shell.timeout_secs,
                &below.shell.timeout_secs.value,
            ),
            (
                "shell.max_timeout_secs",
                &mut shell.max_timeout_secs,
                &below.shell.max_timeout_secs.value,
            ),
        ];
        for (key, slot, base) in limits {
            if let Some(wanted) = *slot
                && wanted > *base
            {
                ignored.push(Ignored {
                    key: key.into(),
                    wanted: wanted.to_string(),
                    kept: base.to_string(),
                });
                *slot = None;
            }
        }
    }
    if let Some(shell) = &mut project.shell {
        if let Some(wanted) = shell.sandbox
            && wanted == SandboxMode::Off
            && below.shell.sandbox.value != SandboxMode::Off
        {
            ignored.push(Ignored {
                key: "shell.sandbox".into(),
                wanted: quote(wanted.as_str()),
                kept: quote(below.shell.sandbox.value.as_str()),
            });
            shell.sandbox = None;
        }
        if shell.network == Some(true) && !below.shell.network.value {
            ignored.push(Ignored {
                key: "shell.network".into(),
                wanted: "true".into(),
                kept: "false".into(),
            });
            shell.network = None;
        }
    }
    if let Some(children) = &mut project.children {
        let limits = [
            (
                "children.max_children",
                &mut children.max_children,
                below.children.max_children.value,
            ),
            (
                "children.max_depth",
                &mut children.max_depth,
                below.children.max_depth.value,
            ),
        ];
        for (key, slot, base) in limits {
            // A negative value is left for layering to reject with its own message.
            if let Some(wanted) = *slot
                && u64::try_from(wanted).is_ok_and(|wanted| wanted > base)
            {
                ignored.push(Ignored {
                    key: key.into(),
                    wanted: wanted.to_string(),
                    kept: base.to_string(),
                });
                *slot = None;
            }
        }
    }
    if let Some(input) = &mut project.input
        && let Some(wanted) = input.guard
    {
        let base = below.input.guard.value;
        if guard_rank(wanted) < guard_rank(base) {
            ignored.push(Ignored {
                key: "input.guard".into(),
                wanted: quote(wanted.as_str()),
                kept: quote(base.as_str()),
            });
            input.guard = None;
        }
    }
    if let Some(prompt) = &mut project.system_prompt
        && let Some(identity) = &prompt.identity_file
    {
        let written = project_dir.join(crate::file::PROJECT_DIR).join(identity);
        if !inside(&written, project_dir) {
            let kept = below
                .system_prompt
                .identity_file
                .as_ref()
                .map_or("the built-in identity".to_owned(), |s| {
                    quote(&s.value.display().to_string())
                });
            ignored.push(Ignored {
                key: "system_prompt.identity_file".into(),
                wanted: quote(&identity.display().to_string()),
                kept,
            });
            prompt.identity_file = None;
        }
    }
    ignored
}

/// `provider`, `model`, `script` and `[context] summary_model`: any value other than the one
/// below is ignored, so the person's model answers and nobody else's.
fn who_answers(
    project: &mut ConfigFile,
    below: &Effective,
    project_dir: &Path,
    ignored: &mut Vec<Ignored>,
) {
    let provider = below.provider.as_ref().map(|s| &s.value);
    let name = |p: &ProviderChoice| quote(p.as_str());
    changed(&mut project.provider, provider, "provider", name, ignored);
    // The model below includes the provider's default, so naming that default loosens nothing.
    let model = below.model().map(|s| s.value);
    let text = |s: &String| quote(s);
    changed(&mut project.model, model.as_ref(), "model", text, ignored);
    // A script named in the project file is relative to its directory (`Effective::apply_file`):
    // compare the path it would resolve to.
    let mut script = project
        .script
        .take()
        .map(|s| project_dir.join(crate::file::PROJECT_DIR).join(s));
    let path = |p: &PathBuf| quote(&p.display().to_string());
    let below_script = below.script.as_ref().map(|s| &s.value);
    changed(&mut script, below_script, "script", path, ignored);
    project.script = script;
    if let Some(context) = &mut project.context {
        let summary = below.context.summary_model.as_ref();
        changed(
            &mut context.summary_model,
            summary,
            "context.summary_model",
            text,
            ignored,
        );
    }
}

/// Any value other than the one below is a loosening (for keys that point the pod at an
/// endpoint, a secret or a file).
fn changed<T: PartialEq>(
    slot: &mut Option<T>,
    below: Option<&T>,
    key: &str,
    show: impl Fn(&T) -> String,
    ignored: &mut Vec<Ignored>,
) {
    let Some(wanted) = slot else { return };
    if Some(&*wanted) == below {
        return;
    }
    ignored.push(Ignored {
        key: key.into(),
        wanted: show(wanted),
        kept: below.map_or("not set".to_owned(), show),
    });
    *slot = None;
}

/// Whether `path`, with every symlink resolved, is inside `dir`. A path that cannot be
/// resolved (it does not exist) counts as outside: nothing can be said about where it leads.
fn inside(path: &Path, dir: &Path) -> bool {
    match (path.canonicalize(), dir.canonicalize()) {
        (Ok(path), Ok(dir)) => path.starts_with(dir),
        _ => false,
    }
}

/// Higher is more permissive.
pub fn policy_rank(policy: Policy) -> u8 {
    match policy {
        Policy::Deny => 0,
        Policy::Ask => 1,
        Policy::Sandboxed => 2,
        Policy::Allow => 3,
    }
}

/// Higher screens more.
pub fn guard_rank(guard: GuardMode) -> u8 {
    match guard {
        GuardMode::Off => 0,
        GuardMode::Log => 1,
        GuardMode::Warn => 2,
        GuardMode::Block => 3,
    }
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{}\"", text.escape_default()))
}

fn paths(list: &[PathBuf]) -> String {
    let shown: Vec<String> = list
        .iter()
        .map(|p| quote(&p.display().to_string()))
        .collect();
    format!("[{}]", shown.join(", "))
}
