//! `seedpod mcp get NAME`: one MCP server as a pod started in this directory would see it,
//! each key with the file that set it. Env values and header values are masked: what is
//! shown here may be pasted anywhere.

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::file::{self, CONFIG_FILE, PROJECT_DIR};
use seedpod_config::mcp::McpServerFile;
use seedpod_config::{Effective, Inputs, McpTransport, Overrides, ProjectTrust, process_env};
use seedpod_pod::mcp::oauth::store::{LoginSummary, TokenStore};

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
    if let McpTransport::Http { url, .. } = &server.transport {
        oauth_lines(server, url, &line, &origin);
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

/// Which layer wrote the keys a test picks out of a server's table.
type Origin<'a> = dyn Fn(&dyn Fn(&McpServerFile) -> bool) -> String + 'a;

/// A url server's OAuth keys (names of variables and files, never a secret) and what its
/// login file says: whether there is a login, and until when (docs/configuration.md §MCP OAuth).
fn oauth_lines(
    server: &seedpod_config::McpServer,
    url: &str,
    line: &dyn Fn(&str, String, String),
    origin: &Origin<'_>,
) {
    let oauth = &server.oauth;
    line(
        "oauth",
        oauth.enabled.to_string(),
        origin(&|f| f.oauth.is_some()),
    );
    if !oauth.enabled {
        return;
    }
    line(
        "grant",
        quote(oauth.grant.as_str()),
        origin(&|f| f.grant.is_some()),
    );
    let text = |key: &str, value: &Option<String>, set: &dyn Fn(&McpServerFile) -> bool| {
        if let Some(value) = value {
            line(key, quote(value), origin(set));
        }
    };
    text("client_id", &oauth.client_id, &|f| f.client_id.is_some());
    text("client_secret_env", &oauth.client_secret_env, &|f| {
        f.client_secret_env.is_some()
    });
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    text(
        "client_secret_file",
        &path(&oauth.client_secret_file),
        &|f| f.client_secret_file.is_some(),
    );
    text("client_key_file", &path(&oauth.client_key_file), &|f| {
        f.client_key_file.is_some()
    });
    text("client_metadata_url", &oauth.client_metadata_url, &|f| {
        f.client_metadata_url.is_some()
    });
    if let Some(cross) = &oauth.cross_app {
        line(
            "id_token_command",
            list(&cross.id_token_command),
            origin(&|f| f.id_token_command.is_some()),
        );
        let endpoint = seedpod_config::show::mask_url(&cross.idp_token_endpoint);
        text("idp_token_endpoint", &Some(endpoint), &|f| {
            f.idp_token_endpoint.is_some()
        });
        text("idp_client_id", &Some(cross.idp_client_id.clone()), &|f| {
            f.idp_client_id.is_some()
        });
        text(
            "idp_client_secret_env",
            &cross.idp_client_secret_env,
            &|f| f.idp_client_secret_env.is_some(),
        );
        text(
            "idp_client_secret_file",
            &path(&cross.idp_client_secret_file),
            &|f| f.idp_client_secret_file.is_some(),
        );
    }
    if !oauth.scopes.is_empty() {
        line(
            "scopes",
            list(&oauth.scopes),
            origin(&|f| f.scopes.is_some()),
        );
    }
    let lookup = |var: &str| std::env::var(var).ok();
    let login = seedpod_config::expand::expand(url, &lookup)
        .ok()
        .and_then(|url| TokenStore::for_server(&server.name, &url).ok())
        .map(|store| store.read());
    let said = match login {
        None => "unknown (its url cannot be expanded here)".to_owned(),
        Some(Err(err)) => seedpod_protocol::printable_line(&err.to_string()).to_string(),
        Some(Ok(file)) => match file.summary() {
            None => format!("none (`seedpod mcp login {}`)", server.name),
            Some(summary) => login_words(&summary, now_secs()),
        },
    };
    println!("  login: {said}");
}

/// A login's summary in words, as of `now` (seconds since 1970).
fn login_words(summary: &LoginSummary, now: u64) -> String {
    let mut said = match summary.expires_at {
        None => "yes (the server gave no expiry)".to_owned(),
        Some(at) if at > now => format!(
            "yes, the access token expires {} UTC (in {})",
            utc(at),
            span(at - now)
        ),
        Some(at) => format!("yes, the access token expired {} UTC", utc(at)),
    };
    said.push_str(match summary.refreshable {
        true => "; a refresh token renews it",
        false => "; no refresh token",
    });
    if !summary.granted_scopes.is_empty() {
        said.push_str(&format!("; scopes {}", summary.granted_scopes.join(" ")));
    }
    if !summary.wanted_scopes.is_empty() {
        said.push_str(&format!(
            "; the server wants {} too: the next `seedpod mcp login` asks for it",
            summary.wanted_scopes.join(" ")
        ));
    }
    seedpod_protocol::printable_line(&said).to_string()
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// `YYYY-MM-DD HH:MM` of a time in seconds since 1970.
fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    format!(
        "{} {:02}:{:02}",
        seedpod_pod::calendar::civil_date(days),
        rest / 3600,
        rest % 3600 / 60
    )
}

fn span(secs: u64) -> String {
    match secs {
        0..120 => format!("{secs} s"),
        120..7_200 => format!("{} min", secs / 60),
        7_200..172_800 => format!("{} h", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}

fn quote(text: &str) -> String {
    seedpod_protocol::printable_line(&format!("{text:?}")).to_string()
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| quote(i)).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_is_described_without_showing_it() {
        let summary = LoginSummary {
            expires_at: Some(1_000 + 3_600),
            refreshable: true,
            granted_scopes: vec!["repo".into()],
            wanted_scopes: vec!["admin".into()],
        };
        let said = login_words(&summary, 1_000);
        assert_eq!(
            said,
            "yes, the access token expires 1970-01-01 01:16 UTC (in 60 min); a refresh token \
             renews it; scopes repo; the server wants admin too: the next `seedpod mcp login` \
             asks for it"
        );
        let expired = LoginSummary {
            refreshable: false,
            granted_scopes: vec![],
            wanted_scopes: vec![],
            ..summary
        };
        assert_eq!(
            login_words(&expired, 9_999),
            "yes, the access token expired 1970-01-01 01:16 UTC; no refresh token"
        );
    }
}
