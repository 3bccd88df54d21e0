//! `seedpod mcp add`, `remove` and `import`: a person edits the user's or this project's
//! config file from the command line. The file keeps its comments and layout and is written
//! atomically, 0600 (`seedpod_config::mcp_edit`). A project file is only data until the
//! person trusts it (DESIGN invariant 6): writing a server there does not make it run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::file::{CONFIG_FILE, MAX_CONFIG_BYTES, PROJECT_DIR};
use seedpod_config::mcp_edit::{self, EditError, NewServer};
use serde::Deserialize;

use crate::args::ConfigScope;
use crate::exit::Exit;
use crate::pods::canonical_cwd;

/// What `mcp add` was given, before it is checked.
pub struct Given {
    pub env: Vec<(String, String)>,
    pub header: Vec<(String, String)>,
    pub url: Option<String>,
    pub command: Vec<String>,
}

/// The file `scope` names.
pub fn scope_file(home: &Home, scope: ConfigScope) -> Result<PathBuf> {
    Ok(match scope {
        ConfigScope::User => home.config.join(CONFIG_FILE),
        ConfigScope::Project => canonical_cwd(None)?.join(PROJECT_DIR).join(CONFIG_FILE),
    })
}

fn read(path: &Path) -> Result<String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_CONFIG_BYTES => {
            return Err(Exit::usage(format!(
                "{} is larger than a config file can be",
                path.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        _ => {}
    }
    std::fs::read_to_string(path)
        .map_err(|e| Exit::failure(format!("cannot read {}: {e}", path.display())))
}

fn write(path: &Path, text: &str) -> Result<()> {
    mcp_edit::write_private(path, text.as_bytes())
        .map_err(|e| Exit::failure(format!("cannot write {}: {e}", path.display())))
}

fn edit_error(path: &Path, err: EditError) -> anyhow::Error {
    match err {
        EditError::Parse(_) => Exit::usage(format!("{}: {err}", path.display())),
        _ => Exit::usage(err.to_string()),
    }
}

fn trust_note(scope: ConfigScope) {
    if scope == ConfigScope::Project {
        println!("a project's servers start only once a person trusts the file: `seedpod trust`");
    }
}

pub fn add(home: &Home, name: &str, scope: ConfigScope, given: Given, force: bool) -> Result<()> {
    let mut words = given.command.into_iter();
    let server = NewServer {
        command: words.next(),
        args: words.collect(),
        env: given.env.into_iter().collect(),
        url: given.url,
        headers: given.header.into_iter().collect(),
    };
    if server.url.is_some() && !server.env.is_empty() {
        return Err(Exit::usage(
            "--env applies to command servers; a url server takes --header",
        ));
    }
    if server.command.is_some() && !server.headers.is_empty() {
        return Err(Exit::usage("--header applies to url servers (--url)"));
    }
    let path = scope_file(home, scope)?;
    let text = read(&path)?;
    let out =
        mcp_edit::add_server(&text, name, &server, force).map_err(|e| edit_error(&path, e))?;
    write(&path, &out)?;
    println!("added MCP server {name} to {}", path.display());
    trust_note(scope);
    Ok(())
}

pub fn remove(home: &Home, name: &str, scope: ConfigScope) -> Result<()> {
    let path = scope_file(home, scope)?;
    let text = read(&path)?;
    let out = mcp_edit::remove_server(&text, name).map_err(|e| match e {
        EditError::Missing(_) => Exit::usage(format!(
            "no MCP server named {name:?} in {}",
            path.display()
        )),
        other => edit_error(&path, other),
    })?;
    write(&path, &out)?;
    println!("removed MCP server {name} from {}", path.display());
    Ok(())
}

/// A `.mcp.json` or a desktop app's config: only `mcpServers` is read.
#[derive(Deserialize)]
struct Imported {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ImportedServer>,
}

#[derive(Deserialize)]
struct ImportedServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

impl ImportedServer {
    /// The server as seedpod writes it, or why it cannot be.
    fn convert(self) -> Result<NewServer, String> {
        for (header, value) in &self.headers {
            if !seedpod_config::expand::is_template(value) {
                return Err(format!(
                    "header {header} holds a value; seedpod writes no secret in a config file, \
                     so put it in a variable and add the server with --header '{header}=…${{VAR}}'"
                ));
            }
        }
        Ok(NewServer {
            command: self.command,
            args: self.args,
            env: self.env,
            url: self.url,
            headers: self.headers,
        })
    }
}

pub fn import(home: &Home, file: &Path, scope: ConfigScope) -> Result<()> {
    let json = std::fs::read(file)
        .map_err(|e| Exit::usage(format!("cannot read {}: {e}", file.display())))?;
    let imported: Imported = serde_json::from_slice(&json).map_err(|e| {
        Exit::usage(format!(
            "{}: not a .mcp.json or an app config with an `mcpServers` object: {e}",
            file.display()
        ))
    })?;
    let path = scope_file(home, scope)?;
    let mut text = read(&path)?;
    let mut added = Vec::new();
    for (name, server) in imported.mcp_servers {
        let converted = match server.convert() {
            Ok(converted) => converted,
            Err(why) => {
                println!("skipped {name}: {why}");
                continue;
            }
        };
        match mcp_edit::add_server(&text, &name, &converted, false) {
            Ok(out) => {
                text = out;
                added.push(name);
            }
            Err(EditError::Exists(_)) => {
                println!("skipped {name}: already in {}", path.display());
            }
            Err(EditError::Parse(e)) => return Err(edit_error(&path, EditError::Parse(e))),
            Err(other) => println!("skipped {name}: {other}"),
        }
    }
    if added.is_empty() {
        println!("added nothing to {}", path.display());
        return Ok(());
    }
    write(&path, &text)?;
    println!("added to {}: {}", path.display(), added.join(", "));
    trust_note(scope);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_desktop_config_is_read_for_its_mcp_servers_only_and_written_secrets_are_refused() {
        let text = r#"{"globalShortcut": "Ctrl+Space", "mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "fs"], "env": {"ROOT": "/srv"}},
            "web": {"type": "http", "url": "https://h/mcp", "headers": {"X-Key": "${KEY}"}},
            "leak": {"type": "sse", "url": "https://h/sse", "headers": {"X-Key": "abc123"}}
        }}"#;
        let mut imported: Imported = serde_json::from_str(text).unwrap();
        let fs = imported
            .mcp_servers
            .remove("fs")
            .unwrap()
            .convert()
            .unwrap();
        assert_eq!(fs.command.as_deref(), Some("npx"));
        assert_eq!(fs.args, ["-y", "fs"]);
        assert_eq!(fs.env["ROOT"], "/srv");
        let web = imported
            .mcp_servers
            .remove("web")
            .unwrap()
            .convert()
            .unwrap();
        assert_eq!(web.url.as_deref(), Some("https://h/mcp"));
        assert_eq!(web.headers["X-Key"], "${KEY}");
        let leak = imported.mcp_servers.remove("leak").unwrap().convert();
        assert!(leak.unwrap_err().contains("header X-Key holds a value"));
    }
}
