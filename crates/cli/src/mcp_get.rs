//! `seedpod mcp get NAME`: one MCP server as a pod started in this directory would see it,
//! each key with the file that set it. Env values and header values are masked: what is
//! shown here may be pasted anywhere.

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::file::{self, CONFIG_FILE, PROJECT_DIR};
use seedpod_config::mcp::McpServerFile;
use seedpod_config::{Effective, Inputs, McpTransport, Overrides, ProjectTrust, process_env};

use crate::exit::Exit;
use crate::pods::canonical_cwd;

/// What a masked value is shown as.
const MASK: &str = "****";

pub fn get(home: &Home, name: &str) -> Result<()> {
    let cwd = canonical_cwd(None)?;
    let eff = Effective::resolve(&Inputs {
        config_dir: &home.config,
        cwd: &cwd,
        env: &process_env,
        flags: Overrides::default(),
        tools: &seedpod_pod::catalogue::declared(),
    })
    .map_err(|e| Exit::usage(e.to_string()))?;
    let user_path = home.config.join(CONFIG_FILE);
    let project_path = cwd.join(PROJECT_DIR).join(CONFIG_FILE);
    let table = format!("mcp.servers.{name}");
    let project_ignored = eff.ignored.iter().any(|i| i.key == table);
    let Some(server) = eff.mcp.server(name) else {
        let why = if project_ignored {
            format!(
                "; {} has one, ignored until a person trusts the file (`seedpod trust`)",
                project_path.display()
            )
        } else {
            String::new()
        };
        return Err(Exit::usage(format!(
            "no MCP server named {name:?} in {} or {}{why}",
            user_path.display(),
            project_path.display()
        )));
    };
    let written = |path: &std::path::Path| -> Option<McpServerFile> {
        file::load(path).ok().flatten()?.mcp?.servers?.remove(name)
    };
    let user = written(&user_path);
    let project = if project_ignored {
        None
    } else {
        written(&project_path)
    };
    // The highest layer that wrote `key` (project over user), else the default.
    let origin = |set: &dyn Fn(&McpServerFile) -> bool| -> String {
        if project.as_ref().is_some_and(set) {
            project_path.display().to_string()
        } else if user.as_ref().is_some_and(set) {
            user_path.display().to_string()
        } else {
            "default".to_owned()
        }
    };
    let line = |key: &str, value: String, from: String| println!("  {key} = {value}  ({from})");
    println!("{name} ({})", server.transport.kind());
    match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => {
            line("command", quote(command), origin(&|f| f.command.is_some()));
            line("args", list(args), origin(&|f| f.args.is_some()));
            for key in env.keys() {
                line(
                    &format!("env.{key}"),
                    MASK.to_owned(),
                    origin(&|f| f.env.is_some()),
                );
            }
            if !env_vars.is_empty() {
                line(
                    "env_vars",
                    list(env_vars),
                    origin(&|f| f.env_vars.is_some()),
                );
            }
            if let Some(dir) = cwd {
                line(
                    "cwd",
                    quote(&dir.display().to_string()),
                    origin(&|f| f.cwd.is_some()),
                );
            }
        }
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            line(
                "url",
                quote(&seedpod_config::show::mask_url(url)),
                origin(&|f| f.url.is_some()),
            );
            for key in headers.keys() {
                line(
                    &format!("headers.{key}"),
                    MASK.to_owned(),
                    origin(&|f| f.headers.is_some()),
                );
            }
            if let Some(var) = bearer_token_env {
                line(
                    "bearer_token_env",
                    quote(var),
                    origin(&|f| f.bearer_token_env.is_some()),
                );
            }
        }
    }
    let flag = |key: &str, value: bool, set: &dyn Fn(&McpServerFile) -> bool| {
        line(key, value.to_string(), origin(set));
    };
    flag("enabled", server.enabled, &|f| f.enabled.is_some());
    flag("required", server.required, &|f| f.required.is_some());
    flag("trust_read_only", server.trust_read_only, &|f| {
        f.trust_read_only.is_some()
    });
    line(
        "startup_timeout_secs",
        server.startup_timeout.as_secs().to_string(),
        origin(&|f| f.startup_timeout_secs.is_some()),
    );
    line(
        "tool_timeout_secs",
        server.tool_timeout.as_secs().to_string(),
        origin(&|f| f.tool_timeout_secs.is_some()),
    );
    line(
        "tool_max_secs",
        server.tool_max.as_secs().to_string(),
        origin(&|f| f.tool_max_secs.is_some()),
    );
    line(
        "max_output",
        server.max_output.to_string(),
        origin(&|f| f.max_output.is_some()),
    );
    if project_ignored && matches!(eff.project_trust, ProjectTrust::Untrusted { .. }) {
        println!(
            "  ({} also sets this server; ignored until a person trusts it: `seedpod trust`)",
            project_path.display()
        );
    }
    Ok(())
}

fn quote(text: &str) -> String {
    seedpod_protocol::printable_line(&format!("{text:?}")).to_string()
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| quote(i)).collect();
    format!("[{}]", quoted.join(", "))
}
