//! `seedpod config show`: the effective configuration as TOML a person can copy into a file,
//! each value commented with the layer that set it. Secrets never appear: the API key is
//! described (set or not), and credentials inside a URL are masked.

use std::fmt::Write as _;

use crate::agent::Policy;
use crate::effective::Effective;
use crate::mcp::McpTransport;
use crate::source::{Setting, Source};
use crate::trust::ProjectTrust;

/// Column at which the `# source` comments start.
const COMMENT_COLUMN: usize = 36;

/// What replaces a secret in output.
pub const REDACTED: &str = "[REDACTED]";

/// Render `eff` for `title` (e.g. `a new pod in /src/app` or `pod "p"`). `env` tells whether
/// the API key variable is set, without ever printing its value.
pub fn render(eff: &Effective, title: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Effective configuration for {title}");
    let mut layers = vec!["defaults".to_owned()];
    // `layers` is the user file, then the project file.
    for (index, layer) in eff.layers.iter().enumerate() {
        let note = if !layer.found {
            " (not found)"
        } else if index == 1 {
            match &eff.project_trust {
                ProjectTrust::Trusted => " (trusted)",
                ProjectTrust::Untrusted { .. } => " (untrusted: loosening keys ignored)",
                ProjectTrust::NoFile | ProjectTrust::NotNeeded => "",
            }
        } else {
            ""
        };
        layers.push(format!("{}{note}", layer.path.display()));
    }
    layers.push("environment".into());
    layers.push("flags".into());
    let _ = writeln!(out, "# Layers, lowest first: {}", layers.join(" < "));
    ignored_keys(&mut out, eff);
    out.push('\n');

    match &eff.provider {
        Some(p) => line(&mut out, "provider", &quote(p.value.as_str()), &p.source),
        None => comment(
            &mut out,
            "provider",
            "not set: start looks for a local OpenAI-compatible server",
        ),
    }
    match eff.model() {
        Some(m) => {
            let source = if m.source == Source::Default {
                "default for this provider".to_owned()
            } else {
                m.source.to_string()
            };
            line_with(&mut out, "model", &quote(&m.value), &source);
        }
        None => comment(&mut out, "model", "not set"),
    }
    match &eff.base_url {
        Some(u) => line(&mut out, "base_url", &quote(&mask_url(&u.value)), &u.source),
        None => comment(&mut out, "base_url", "the provider's public endpoint"),
    }
    match eff.key_requirement() {
        Some(key) => {
            let state = if env(&key.var.value).is_some() {
                format!("set, value {REDACTED}")
            } else if key.required {
                "NOT SET: the pod cannot start without it".to_owned()
            } else {
                "not set (fine for local servers)".to_owned()
            };
            line_with(
                &mut out,
                "api_key_env",
                &quote(&key.var.value),
                &format!("{}; {state}", key.var.source),
            );
        }
        None => comment(&mut out, "api_key_env", "no key needed"),
    }
    opt(
        &mut out,
        "temperature",
        &eff.temperature,
        |t| format!("{t:?}"),
        "not sent",
    );
    opt(
        &mut out,
        "max_tokens",
        &eff.max_tokens,
        u32::to_string,
        "the provider's default",
    );
    opt(
        &mut out,
        "context_window",
        &eff.context.window_setting(),
        u64::to_string,
        "not set: [context.windows], the built-in table or the server says",
    );
    opt(
        &mut out,
        "script",
        &eff.script,
        |p| quote(&p.display().to_string()),
        "not set",
    );

    responses(&mut out, eff);
    out.push_str("\n[timeouts]\n");
    num(&mut out, "connect_ms", &eff.timeouts.connect_ms);
    num(&mut out, "idle_read_ms", &eff.timeouts.idle_read_ms);
    out.push_str("\n[retry]\n");
    num(&mut out, "max_retries", &eff.retry.max_retries);
    num(&mut out, "base_delay_ms", &eff.retry.base_delay_ms);
    num(&mut out, "max_delay_ms", &eff.retry.max_delay_ms);
    let statuses = &eff.retry.retryable_statuses;
    let listed: Vec<String> = statuses.value.iter().map(u16::to_string).collect();
    line(
        &mut out,
        "retryable_statuses",
        &format!("[{}]", listed.join(", ")),
        &statuses.source,
    );
    out.push_str("\n[logging]\n");
    let level = &eff.logging.level;
    line(
        &mut out,
        "level",
        &quote(level.value.as_str()),
        &level.source,
    );
    opt(
        &mut out,
        "file",
        &eff.logging.file,
        |p| quote(&p.display().to_string()),
        "state/logs/<name>.log",
    );
    let rotation = &eff.logging.rotation;
    line(
        &mut out,
        "rotation",
        &quote(rotation.value.as_str()),
        &rotation.source,
    );
    num(&mut out, "max_size_mb", &eff.logging.max_size_mb);
    num(&mut out, "keep_days", &eff.logging.keep_days);
    num(&mut out, "stdout", &eff.logging.stdout);
    agent_sections(&mut out, eff);
    out
}

/// The project file's loosening keys that do not apply because nobody trusted it, each with
/// what applies instead (comments, so the output stays a valid config file).
fn ignored_keys(out: &mut String, eff: &Effective) {
    let ProjectTrust::Untrusted { dir } = &eff.project_trust else {
        return;
    };
    for ignored in &eff.ignored {
        let _ = writeln!(
            out,
            "# {} = {} ignored: untrusted project config — `seedpod trust {}` to apply (kept: {})",
            ignored.key,
            ignored.wanted,
            dir.display(),
            ignored.kept
        );
    }
}

/// `[approvals]`, `[scope]`, `[shell]`, `[system_prompt]`, `[input]` and `[children]`.
fn agent_sections(out: &mut String, eff: &Effective) {
    out.push_str("\n[approvals]\n");
    for (tool, policy) in eff.approvals.all() {
        let note = match policy.value {
            Policy::Deny => format!("{}; not offered to the model", policy.source),
            Policy::Allow | Policy::Ask | Policy::Sandboxed => policy.source.to_string(),
        };
        line_with(out, tool, &quote(policy.value.as_str()), &note);
    }
    for (key, policy) in eff.approvals.mcp_keys() {
        line(
            out,
            &quote(key),
            &quote(policy.value.as_str()),
            &policy.source,
        );
    }
    comment(
        out,
        "mcp__SERVER__TOOL",
        "an MCP tool no key covers asks (or runs, if its server has trust_read_only and the tool says it is read-only)",
    );
    out.push_str("\n[scope]\n");
    for (key, list) in [
        ("read", &eff.scope.read),
        ("write", &eff.scope.write),
        ("deny", &eff.scope.deny),
    ] {
        let paths: Vec<String> = list
            .value
            .iter()
            .map(|p| quote(&p.display().to_string()))
            .collect();
        line(out, key, &format!("[{}]", paths.join(", ")), &list.source);
    }
    out.push_str("\n[shell]\n");
    num(out, "timeout_secs", &eff.shell.timeout_secs);
    num(out, "max_timeout_secs", &eff.shell.max_timeout_secs);
    line(
        out,
        "sandbox",
        &quote(eff.shell.sandbox.value.as_str()),
        &eff.shell.sandbox.source,
    );
    num(out, "network", &eff.shell.network);
    num(out, "login", &eff.shell.login);
    out.push_str("\n[system_prompt]\n");
    opt(
        out,
        "identity_file",
        &eff.system_prompt.identity_file,
        |p| quote(&p.display().to_string()),
        "the built-in identity",
    );
    out.push_str("\n[input]\n");
    let guard = &eff.input.guard;
    line(out, "guard", &quote(guard.value.as_str()), &guard.source);
    num(out, "max_message_chars", &eff.input.max_message_chars);
    out.push_str("\n[children]\n");
    let wake = &eff.children.wake;
    let note = if wake.value {
        format!(
            "{}; a report from a child starts a turn of an idle pod",
            wake.source
        )
    } else {
        format!("{}; a child's report waits for the next turn", wake.source)
    };
    line_with(out, "wake", &wake.value.to_string(), &note);
    let max_children = &eff.children.max_children;
    let note = format!(
        "{}; live children one pod may have at once",
        max_children.source
    );
    line_with(out, "max_children", &max_children.value.to_string(), &note);
    let max_depth = &eff.children.max_depth;
    let note = format!(
        "{}; levels of child pods below a root pod",
        max_depth.source
    );
    line_with(out, "max_depth", &max_depth.value.to_string(), &note);
    context_section(out, eff);
    loop_section(out, eff);
}

/// `[loop]`, `[tasks]` and `[notify]`.
fn loop_section(out: &mut String, eff: &Effective) {
    let settings = &eff.agent_loop;
    out.push_str("\n[loop]\n");
    num(out, "max_iterations", &settings.max_iterations);
    for (key, value) in [
        ("same_call_failures", &settings.same_call_failures),
        ("failures_in_a_row", &settings.failures_in_a_row),
        ("repeat_limit", &settings.repeat_limit),
    ] {
        off_when_zero(out, key, value);
    }
    out.push_str("\n[tasks]\n");
    off_when_zero(out, "remind_after", &settings.remind_after);
    out.push_str("\n[tool_search]\n");
    let search = &eff.tool_search;
    num(out, "max_tools", &search.max_tools);
    let share = &search.max_schema_share;
    line(
        out,
        "max_schema_share",
        &share.value.to_string(),
        &share.source,
    );
    out.push_str("\n[notify]\n");
    let wrapper = &eff.notify.wrapper;
    line(out, "wrapper", &quote(&wrapper.value), &wrapper.source);
    num(out, "max_chars", &eff.notify.max_chars);
    out.push_str("\n[tui]\n");
    let notify = &eff.tui.notify;
    line(out, "notify", &quote(notify.value.as_str()), &notify.source);
    num(out, "inline_paste_lines", &eff.tui.inline_paste_lines);
    num(out, "inline_paste_chars", &eff.tui.inline_paste_chars);
    out.push_str("\n[storage]\n");
    off_when_zero(out, "archive_after_days", &eff.storage.archive_after_days);
    off_when_zero(out, "archive_over_mb", &eff.storage.archive_over_mb);
    off_when_zero(
        out,
        "checkpoint_budget_mb",
        &eff.storage.checkpoint_budget_mb,
    );
    mcp_section(out, eff);
    hooks_section(out, eff);
}

/// `[hooks]` and one `[[hooks.EVENT]]` table per hook, in the order they run, each with the
/// file that configured it.
fn hooks_section(out: &mut String, eff: &Effective) {
    let hooks = &eff.hooks;
    out.push_str("\n[hooks]\n");
    let may = &hooks.pre_tool_may_allow;
    line(
        out,
        "pre_tool_may_allow",
        &may.value.to_string(),
        &may.source,
    );
    if hooks.hooks.is_empty() {
        out.push_str("# [[hooks.EVENT]]: no hooks configured\n");
    }
    for hook in &hooks.hooks {
        let _ = writeln!(out, "\n[[hooks.{}]]", hook.event.as_str());
        line(out, "command", &quote(&hook.command), &hook.source);
        if let Some(matcher) = &hook.matcher {
            line(out, "matcher", &quote(matcher), &hook.source);
        }
        line(
            out,
            "timeout_secs",
            &hook.timeout.as_secs().to_string(),
            &hook.source,
        );
    }
}

/// `[mcp.servers.NAME]`: one table per server, with the layer that last set it. Header and
/// token values are never in the configuration, only the names of their variables.
fn mcp_section(out: &mut String, eff: &Effective) {
    if eff.mcp.servers.is_empty() {
        out.push_str("\n# [mcp.servers.NAME]: no MCP servers configured\n");
        return;
    }
    for server in &eff.mcp.servers {
        let _ = writeln!(out, "\n[mcp.servers.{}]", server.name);
        match &server.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                env_vars,
                cwd,
            } => {
                line(out, "command", &quote(command), &server.source);
                let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
                let _ = writeln!(out, "args = [{}]", args.join(", "));
                if !env.is_empty() {
                    let keys: Vec<&str> = env.keys().map(String::as_str).collect();
                    comment(out, "env", &format!("sets {}", keys.join(", ")));
                }
                if !env_vars.is_empty() {
                    let vars: Vec<String> = env_vars.iter().map(|v| quote(v)).collect();
                    let _ = writeln!(out, "env_vars = [{}]", vars.join(", "));
                }
                if let Some(cwd) = cwd {
                    let _ = writeln!(out, "cwd = {}", quote(&cwd.display().to_string()));
                }
            }
            McpTransport::Http {
                url,
                headers,
                bearer_token_env,
            } => {
                line(out, "url", &quote(&mask_url(url)), &server.source);
                for (header, var) in headers {
                    comment(out, "headers", &format!("{header} from ${var}"));
                }
                if let Some(var) = bearer_token_env {
                    let _ = writeln!(out, "bearer_token_env = {}", quote(var));
                }
                mcp_oauth_lines(out, server);
            }
        }
        let _ = writeln!(out, "enabled = {}", server.enabled);
        let _ = writeln!(out, "required = {}", server.required);
        let _ = writeln!(out, "trust_read_only = {}", server.trust_read_only);
        let _ = writeln!(
            out,
            "startup_timeout_secs = {}",
            server.startup_timeout.as_secs()
        );
        let _ = writeln!(out, "tool_timeout_secs = {}", server.tool_timeout.as_secs());
        let _ = writeln!(out, "tool_max_secs = {}", server.tool_max.as_secs());
        let _ = writeln!(out, "max_output = {}", server.max_output);
    }
}

/// A url server's OAuth keys: names of variables and files, never a secret or a token (the
/// login itself is in the data directory: `seedpod mcp get NAME` says whether there is one).
fn mcp_oauth_lines(out: &mut String, server: &crate::McpServer) {
    let oauth = &server.oauth;
    if !oauth.enabled {
        let _ = writeln!(out, "oauth = false");
        return;
    }
    if oauth.grant != crate::McpGrant::AuthorizationCode {
        let _ = writeln!(out, "grant = {}", quote(oauth.grant.as_str()));
    }
    let text = |out: &mut String, key: &str, value: Option<String>| {
        if let Some(value) = value {
            let _ = writeln!(out, "{key} = {}", quote(&value));
        }
    };
    text(out, "client_id", oauth.client_id.clone());
    text(out, "client_secret_env", oauth.client_secret_env.clone());
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    text(out, "client_secret_file", path(&oauth.client_secret_file));
    text(out, "client_key_file", path(&oauth.client_key_file));
    text(
        out,
        "client_metadata_url",
        oauth.client_metadata_url.clone(),
    );
    if let Some(cross) = &oauth.cross_app {
        let command: Vec<String> = cross.id_token_command.iter().map(|s| quote(s)).collect();
        let _ = writeln!(out, "id_token_command = [{}]", command.join(", "));
        text(
            out,
            "idp_token_endpoint",
            Some(mask_url(&cross.idp_token_endpoint)),
        );
        text(out, "idp_client_id", Some(cross.idp_client_id.clone()));
        text(
            out,
            "idp_client_secret_env",
            cross.idp_client_secret_env.clone(),
        );
        text(
            out,
            "idp_client_secret_file",
            path(&cross.idp_client_secret_file),
        );
    }
    if !oauth.scopes.is_empty() {
        let scopes: Vec<String> = oauth.scopes.iter().map(|s| quote(s)).collect();
        let _ = writeln!(out, "scopes = [{}]", scopes.join(", "));
    }
    comment(
        out,
        "login",
        &format!(
            "`seedpod mcp get {}` says whether there is one",
            server.name
        ),
    );
}

fn off_when_zero(out: &mut String, key: &str, setting: &Setting<u64>) {
    if setting.value == 0 {
        line_with(out, key, "0", &format!("{}; off", setting.source));
    } else {
        num(out, key, setting);
    }
}

/// `[context]` and `[context.windows]`.
fn context_section(out: &mut String, eff: &Effective) {
    let context = &eff.context;
    let from = &context.sources;
    out.push_str("\n[context]\n");
    for (key, ratio, source) in [
        ("compact_at", context.compact_at, &from.compact_at),
        ("soft_trim_at", context.soft_trim_at, &from.soft_trim_at),
        ("hard_clear_at", context.hard_clear_at, &from.hard_clear_at),
    ] {
        line(out, key, &format!("{ratio:?}"), source);
    }
    let keep = Setting::new(
        context.keep_last_assistants,
        from.keep_last_assistants.clone(),
    );
    num(out, "keep_last_assistants", &keep);
    let summary_model = context
        .summary_model
        .clone()
        .map(|model| Setting::new(model, from.summary_model.clone()));
    opt(
        out,
        "summary_model",
        &summary_model,
        |m| quote(m),
        "the pod's own model writes summaries",
    );
    let flush = Setting::new(context.memory_flush, from.memory_flush.clone());
    num(out, "memory_flush", &flush);
    let note = if context.probe {
        format!("{}; a local server is asked for its window", from.probe)
    } else {
        format!("{}; the server is never asked", from.probe)
    };
    line_with(out, "probe", &context.probe.to_string(), &note);
    out.push_str("\n[context.windows]\n");
    let windows = context.windows();
    if windows.is_empty() {
        out.push_str("# none: the built-in table of model families applies\n");
    }
    for (prefix, tokens) in &windows {
        num(out, &quote(prefix), tokens);
    }
}

/// `[responses]`, for a pod on the Responses API only: no other provider reads it.
fn responses(out: &mut String, eff: &Effective) {
    let on_responses = eff
        .provider
        .as_ref()
        .is_some_and(|p| p.value == crate::file::ProviderChoice::OpenaiResponses);
    if !on_responses {
        return;
    }
    let settings = &eff.responses;
    out.push_str("\n[responses]\n");
    num(out, "store", &settings.store);
    let name = |text: &str| quote(text);
    opt(
        out,
        "reasoning_effort",
        &settings.reasoning_effort,
        |e| name(e.as_str()),
        "not sent: the model's default",
    );
    opt(
        out,
        "reasoning_summary",
        &settings.reasoning_summary,
        |s| name(s.as_str()),
        "not sent: no summary to show",
    );
    opt(
        out,
        "parallel_tool_calls",
        &settings.parallel_tool_calls,
        bool::to_string,
        "not sent: the API allows them",
    );
}

fn line(out: &mut String, key: &str, value: &str, source: &Source) {
    line_with(out, key, value, &source.to_string());
}

fn line_with(out: &mut String, key: &str, value: &str, note: &str) {
    let assignment = format!("{key} = {value}");
    let pad = COMMENT_COLUMN
        .saturating_sub(assignment.chars().count())
        .max(1);
    let _ = writeln!(out, "{assignment}{}# {note}", " ".repeat(pad));
}

fn comment(out: &mut String, key: &str, note: &str) {
    let _ = writeln!(out, "# {key}: {note}");
}

fn num<T: std::fmt::Display>(out: &mut String, key: &str, setting: &Setting<T>) {
    line(out, key, &setting.value.to_string(), &setting.source);
}

fn opt<T>(
    out: &mut String,
    key: &str,
    setting: &Option<Setting<T>>,
    show: impl Fn(&T) -> String,
    unset: &str,
) {
    match setting {
        Some(s) => line(out, key, &show(&s.value), &s.source),
        None => comment(out, key, unset),
    }
}

/// A TOML basic string. JSON's escapes are a subset of TOML's, so serde_json quotes correctly.
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{}\"", text.escape_default()))
}

/// Hide `user:password@` in a URL; everything else stays, because the host is what people
/// need to see when a request goes to the wrong place.
pub fn mask_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{REDACTED}{}", &rest[at..]),
        None => url.to_owned(),
    }
}
