//! Adding and removing `[mcp.servers.NAME]` tables in a config file a person also edits by
//! hand (`seedpod mcp add`, `remove`, `import`): the rest of the file — comments, order,
//! spacing — is kept byte for byte (`toml_edit`, docs/decisions.md).
//!
//! Every edit is checked by parsing the result as a whole config file and resolving its
//! servers, so what is written is something `seedpod start` accepts. Writing is atomic and
//! private (`write_private`).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use crate::mcp::server_name_problem;

/// A server as `mcp add` or `mcp import` writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewServer {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    /// Header name → the variable that holds its value, or a `${VAR}` template.
    pub headers: BTreeMap<String, String>,
}

/// Why an edit was refused, in the person's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("{0:?}: {1}")]
    BadName(String, String),
    #[error("a server named {0:?} already exists; `seedpod mcp remove {0}` first, or add --force")]
    Exists(String),
    #[error("no server named {0:?} in this file")]
    Missing(String),
    #[error("give either a command (after --) or --url, not both")]
    Both,
    #[error("give a command (after --) or --url")]
    Neither,
    #[error("the file is not valid TOML: {0}")]
    Parse(String),
    #[error("{0}")]
    Invalid(String),
}

fn parse(text: &str) -> Result<DocumentMut, EditError> {
    text.parse::<DocumentMut>()
        .map_err(|e| EditError::Parse(e.to_string()))
}

/// `[mcp.servers]` of `doc`, made if `create`.
fn servers_table(doc: &mut DocumentMut, create: bool) -> Option<&mut Table> {
    let root = doc.as_table_mut();
    if !root.contains_key("mcp") {
        if !create {
            return None;
        }
        let mut mcp = Table::new();
        mcp.set_implicit(true);
        root.insert("mcp", Item::Table(mcp));
    }
    let mcp = root.get_mut("mcp")?.as_table_mut()?;
    if !mcp.contains_key("servers") {
        if !create {
            return None;
        }
        let mut servers = Table::new();
        servers.set_implicit(true);
        mcp.insert("servers", Item::Table(servers));
    }
    mcp.get_mut("servers")?.as_table_mut()
}

/// Whether the file `text` has a table for server `name`.
pub fn has_server(text: &str, name: &str) -> Result<bool, EditError> {
    let mut doc = parse(text)?;
    Ok(servers_table(&mut doc, false).is_some_and(|t| t.contains_key(name)))
}

/// `text` with `[mcp.servers.NAME]` set to `server`; an existing one is refused unless
/// `force`, which replaces it.
pub fn add_server(
    text: &str,
    name: &str,
    server: &NewServer,
    force: bool,
) -> Result<String, EditError> {
    if let Some(problem) = server_name_problem(name) {
        return Err(EditError::BadName(name.to_owned(), problem));
    }
    match (&server.command, &server.url) {
        (Some(_), Some(_)) => return Err(EditError::Both),
        (None, None) => return Err(EditError::Neither),
        _ => {}
    }
    let mut doc = parse(text)?;
    let servers = servers_table(&mut doc, true)
        .ok_or_else(|| EditError::Invalid("`mcp` or `mcp.servers` is not a table".into()))?;
    if servers.contains_key(name) && !force {
        return Err(EditError::Exists(name.to_owned()));
    }
    let mut table = Table::new();
    if let Some(command) = &server.command {
        table.insert("command", value(command.as_str()));
        if !server.args.is_empty() {
            table.insert("args", value(server.args.iter().collect::<Array>()));
        }
        if !server.env.is_empty() {
            table.insert("env", value(inline(&server.env)));
        }
    }
    if let Some(url) = &server.url {
        table.insert("url", value(url.as_str()));
        if !server.headers.is_empty() {
            table.insert("headers", value(inline(&server.headers)));
        }
    }
    servers.insert(name, Item::Table(table));
    let out = doc.to_string();
    check(&out)?;
    Ok(out)
}

/// `text` without `[mcp.servers.NAME]`.
pub fn remove_server(text: &str, name: &str) -> Result<String, EditError> {
    let mut doc = parse(text)?;
    let removed = servers_table(&mut doc, false).and_then(|t| t.remove(name));
    if removed.is_none() {
        return Err(EditError::Missing(name.to_owned()));
    }
    Ok(doc.to_string())
}

fn inline(map: &BTreeMap<String, String>) -> InlineTable {
    map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Refuse an edit whose result `seedpod start` would not accept.
fn check(text: &str) -> Result<(), EditError> {
    let file: crate::ConfigFile =
        toml::from_str(text).map_err(|e| EditError::Invalid(e.message().to_owned()))?;
    let mut settings = crate::McpSettings::default();
    if let Some(mcp) = file.mcp {
        settings.layer(mcp, &crate::Source::Default);
    }
    settings
        .resolve()
        .map_err(|e| EditError::Invalid(e.to_string()))
}

/// Write `bytes` to `path` atomically (a private temporary file beside it, renamed over it),
/// mode 0600, making its directory if needed.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAND_WRITTEN: &str = "# my settings\nmodel = \"m\"  # the model I like\n\n\
        [mcp.servers.old]\n# keep this one\ncommand = \"old-server\"\n\n[approvals]\nshell = \"ask\"\n";

    fn stdio(command: &str) -> NewServer {
        NewServer {
            command: Some(command.into()),
            args: vec!["-y".into(), "pkg".into()],
            env: BTreeMap::from([("TOKEN".into(), "${MY_TOKEN}".into())]),
            ..NewServer::default()
        }
    }

    #[test]
    fn adding_keeps_every_comment_and_the_rest_of_the_file() {
        let out = add_server(HAND_WRITTEN, "fs", &stdio("npx"), false).unwrap();
        for line in HAND_WRITTEN.lines() {
            assert!(out.contains(line), "lost {line:?} in\n{out}");
        }
        assert!(out.starts_with(HAND_WRITTEN.split("[approvals]").next().unwrap()));
        let file: crate::ConfigFile = toml::from_str(&out).unwrap();
        let fs = &file.mcp.unwrap().servers.unwrap()["fs"];
        assert_eq!(fs.command.as_deref(), Some("npx"));
        assert_eq!(
            fs.args.as_deref(),
            Some(&["-y".to_owned(), "pkg".to_owned()][..])
        );
        assert_eq!(fs.env.as_ref().unwrap()["TOKEN"], "${MY_TOKEN}");
    }

    #[test]
    fn add_then_remove_gives_back_the_file_and_an_empty_file_gets_a_table() {
        let added = add_server(HAND_WRITTEN, "fs", &stdio("npx"), false).unwrap();
        assert_eq!(remove_server(&added, "fs").unwrap(), HAND_WRITTEN);
        let fresh = add_server(
            "",
            "web",
            &NewServer {
                url: Some("https://mcp.example/mcp".into()),
                headers: BTreeMap::from([("X-Api-Key".into(), "WEB_KEY".into())]),
                ..NewServer::default()
            },
            false,
        )
        .unwrap();
        assert!(fresh.contains("[mcp.servers.web]"), "{fresh}");
        assert!(has_server(&fresh, "web").unwrap());
        // Re-adding with --force replaces rather than duplicates.
        let again = add_server(&fresh, "web", &stdio("x"), true).unwrap();
        assert_eq!(again.matches("[mcp.servers.web]").count(), 1, "{again}");
        assert!(!again.contains("url"), "{again}");
    }

    #[test]
    fn refusals_name_the_problem() {
        let cases: [(&str, NewServer, EditError); 4] = [
            ("old", stdio("x"), EditError::Exists("old".into())),
            (
                "a__b",
                stdio("x"),
                EditError::BadName("a__b".into(), server_name_problem("a__b").unwrap()),
            ),
            (
                "both",
                NewServer {
                    url: Some("http://h".into()),
                    ..stdio("x")
                },
                EditError::Both,
            ),
            ("none", NewServer::default(), EditError::Neither),
        ];
        for (name, server, want) in cases {
            assert_eq!(add_server(HAND_WRITTEN, name, &server, false), Err(want));
        }
        assert!(
            EditError::Exists("old".into())
                .to_string()
                .contains("mcp remove old")
        );
        let secret = NewServer {
            url: Some("http://h".into()),
            headers: BTreeMap::from([("Authorization".into(), "Bearer sk-1".into())]),
            ..NewServer::default()
        };
        assert!(matches!(
            add_server("", "w", &secret, false),
            Err(EditError::Invalid(_))
        ));
        assert_eq!(
            remove_server(HAND_WRITTEN, "nope"),
            Err(EditError::Missing("nope".into()))
        );
    }

    #[test]
    fn written_files_are_private_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("config.toml");
        write_private(&path, b"a = 1\n").unwrap();
        write_private(&path, b"b = 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b = 2\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }
}
