//! `seedpod mcp login SERVER` and `seedpod mcp logout SERVER`: a person's OAuth login to a url
//! MCP server, kept in the server's login file in the data directory (docs/configuration.md
//! §MCP OAuth). Running pods see the file change and connect with it; nothing is sent to them.
//!
//! Also `seedpod mcp probe SERVER` (hidden): connect to one server as a pod does, list its
//! tools and call one, for the conformance suite's wrapper (`scripts/mcp-conformance`).

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::{Effective, Inputs, McpServer, McpTransport, Overrides, process_env};
use seedpod_pod::mcp::oauth::login::{self, LoginPlan};
use seedpod_pod::mcp::oauth::store::TokenStore;
use tokio::io::BufReader;

use crate::exit::Exit;
use crate::pods::canonical_cwd;

/// Server `name` as a pod started here would see it.
fn configured(home: &Home, name: &str) -> Result<McpServer> {
    let cwd = canonical_cwd(None)?;
    let eff = Effective::resolve(&Inputs {
        config_dir: &home.config,
        cwd: &cwd,
        env: &process_env,
        flags: Overrides::default(),
        tools: &seedpod_pod::catalogue::declared(),
    })
    .map_err(|e| Exit::usage(e.to_string()))?;
    match eff.mcp.server(name) {
        Some(server) => Ok(server.clone()),
        None => {
            let known: Vec<&str> = eff.mcp.servers.iter().map(|s| s.name.as_str()).collect();
            let known = match known.is_empty() {
                true => "none is configured".to_owned(),
                false => format!("configured: {}", known.join(", ")),
            };
            Err(Exit::usage(format!(
                "no MCP server named {name:?}; {known}"
            )))
        }
    }
}

/// The login file of url server `server`.
fn store_of(home: &Home, server: &McpServer) -> Result<TokenStore> {
    let McpTransport::Http { url, .. } = &server.transport else {
        return Err(Exit::usage(format!(
            "MCP server {} is a command server; only url servers log in",
            server.name
        )));
    };
    let lookup = |var: &str| std::env::var(var).ok();
    let url = seedpod_config::expand::expand(url, &lookup)
        .map_err(|e| Exit::usage(format!("MCP server {}: its url: {e}", server.name)))?;
    Ok(TokenStore::new(&home.data, &server.name, &url))
}

pub async fn login(home: &Home, name: &str, port: Option<u16>) -> Result<()> {
    let server = configured(home, name)?;
    let store = store_of(home, &server)?;
    let plan = LoginPlan {
        server: &server,
        store,
        port,
    };
    let pending = login::begin(plan)
        .await
        .map_err(|e| Exit::failure(e.to_string()))?;
    // stdout carries the URL alone on its line, for a person to open and a script to read.
    println!("Open this address in a browser to log in to MCP server {name}:");
    println!("{}", pending.authorize_url);
    eprintln!(
        "Waiting for the browser to come back to {}. Without a browser on this machine \
         (over ssh), paste here the address the browser ends up on, and press Enter.",
        pending.redirect_uri
    );
    let stdin = BufReader::new(tokio::io::stdin());
    let mut say = |text: &str| eprintln!("{}", seedpod_protocol::printable_line(text));
    pending
        .finish(stdin, &mut say)
        .await
        .map_err(|e| Exit::failure(e.to_string()))?;
    println!(
        "Logged in to MCP server {name}. Pods using it connect with the login within a few \
         seconds."
    );
    Ok(())
}

pub fn logout(home: &Home, name: &str) -> Result<()> {
    let server = configured(home, name)?;
    let store = store_of(home, &server)?;
    let removed = store.remove().map_err(|e| Exit::failure(e.to_string()))?;
    if removed {
        println!(
            "Logged out of MCP server {name}: its login is deleted; pods using it need a new \
             login (`seedpod mcp login {name}`) when they next connect."
        );
    } else {
        println!("MCP server {name} had no login here; nothing to do.");
    }
    Ok(())
}

/// The hidden `mcp probe`: what the conformance suite's wrapper runs as the client under test.
pub async fn probe(home: &Home, name: &str, arguments: Option<String>) -> Result<()> {
    let cwd = canonical_cwd(None)?;
    let server = configured(home, name)?;
    let arguments = match arguments {
        Some(text) => Some(
            serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| Exit::usage(format!("--arguments is not JSON: {e}")))?,
        ),
        None => None,
    };
    match seedpod_pod::mcp::probe::probe(&server, &cwd, arguments).await {
        Ok(report) => {
            println!("{report}");
            Ok(())
        }
        Err(seedpod_pod::mcp::probe::ProbeError::NeedsLogin(why)) => {
            eprintln!("{why}");
            Err(Exit::code(PROBE_NEEDS_LOGIN))
        }
        Err(seedpod_pod::mcp::probe::ProbeError::Failed(why)) => Err(Exit::failure(why)),
    }
}

/// The exit status of a probe that found the server wants a login (the wrapper logs in and
/// probes again).
pub const PROBE_NEEDS_LOGIN: i32 = 3;
