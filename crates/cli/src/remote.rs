//! Pods on other machines (`HOST:NAME`) and the other end of that link, `seedpod bridge`.
//!
//! The client side runs `ssh HOST seedpod bridge NAME` (`seedpod_client::remote`) for
//! everything that speaks the protocol (`attach`, `send`, `notify`, `events`, `history`,
//! `context`, `approve`, `pause`, `resume`, `cancel`), and `ssh HOST seedpod stop|restart|ls`
//! for what manages processes there. How to reach a host is `[remote]` in the user's
//! configuration.

use std::time::Duration;

use crate::terminal;
use anyhow::Result;
use seedpod_client::{Home, Remote};
use seedpod_protocol::PodName;
use tokio::io::AsyncWriteExt;

use crate::args::PodConfigArgs;
use crate::exit::Exit;
use crate::pods::{self, canonical_cwd};

/// How to reach `host`: `[remote.hosts.HOST]`, or ssh's own idea of the name.
pub fn reach(home: &Home, host: &str) -> Result<Remote> {
    let settings = remote_settings(home)?;
    let configured = settings.host(host);
    Ok(Remote {
        alias: configured.alias,
        destination: configured.destination,
        ssh: settings.ssh.value,
        bin: configured.bin,
    })
}

fn remote_settings(home: &Home) -> Result<seedpod_config::RemoteSettings> {
    let cwd = canonical_cwd(None)?;
    let eff = crate::settings::resolve(home, &cwd, &PodConfigArgs::default(), None)?;
    Ok(eff.remote)
}

/// `[remote.hosts]` for the TUI's picker; none when the configuration does not resolve (the
/// commands that need it say why).
pub fn picker_hosts(home: &Home) -> Vec<Remote> {
    let Ok(settings) = remote_settings(home) else {
        return Vec::new();
    };
    settings
        .hosts
        .values()
        .map(|host| Remote {
            alias: host.alias.clone(),
            destination: host.destination.clone(),
            ssh: settings.ssh.value.clone(),
            bin: host.bin.clone(),
        })
        .collect()
}

/// `[remote] timeout_secs`.
pub fn hosts_timeout(home: &Home) -> Duration {
    let secs = remote_settings(home)
        .map(|s| s.timeout_secs.value)
        .unwrap_or(seedpod_config::remote::DEFAULT_TIMEOUT_SECS);
    Duration::from_secs(secs)
}

/// `seedpod bridge NAME [--start]`: the pod protocol on stdin and stdout, relayed to pod
/// NAME's socket byte for byte (so frame for frame, handshake included) until either side
/// closes. It runs as whoever ssh logged in as and reaches only that user's pods: the runtime
/// directory checks apply as for any client.
pub async fn bridge(home: &Home, name: &PodName, start: bool) -> Result<()> {
    home.check_runtime_dir()?;
    if start {
        crate::attach::start_existing(home, name).await?;
    }
    let socket = home.socket_path(name);
    let stream = match open(&socket).await {
        Ok(stream) => stream,
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(Exit::usage(format!(
                "pod \"{name}\" is not running here; `seedpod start {name}` on this machine \
                 restores it"
            )));
        }
        Err(err) => {
            return Err(Exit::failure(format!(
                "cannot reach pod \"{name}\" at {}: {err}",
                socket.display()
            )));
        }
    };
    let (mut from_pod, mut to_pod) = tokio::io::split(stream);
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let up = async {
        let _ = tokio::io::copy(&mut stdin, &mut to_pod).await;
        let _ = to_pod.shutdown().await;
    };
    let down = async {
        let _ = tokio::io::copy(&mut from_pod, &mut stdout).await;
        let _ = stdout.flush().await;
    };
    // Either side closing ends the bridge: a client gone leaves nothing to relay for, and a
    // pod gone leaves the client to reconnect.
    tokio::select! {
        () = up => {}
        () = down => {}
    }
    Ok(())
}

async fn open(
    socket: &std::path::Path,
) -> std::io::Result<interprocess::local_socket::tokio::Stream> {
    use interprocess::local_socket::tokio::prelude::*;
    use interprocess::local_socket::{GenericFilePath, ToFsName};
    let name = socket.to_fs_name::<GenericFilePath>()?;
    interprocess::local_socket::tokio::Stream::connect(name).await
}

/// Run `seedpod ARGS` on `remote` and pass on what it printed and how it ended: `stop`,
/// `restart` and `ls` manage that machine's processes, so that machine's seedpod does them.
pub async fn relay(remote: &Remote, args: &[&str], limit: Duration) -> Result<()> {
    let out = remote.run(args, limit).await?;
    // That machine's output is that machine's word: a terminal escape in it (a pod name, a
    // model name, an error) is shown, not obeyed.
    print!("{}", terminal::text(&String::from_utf8_lossy(&out.stdout)));
    eprint!("{}", terminal::text(&String::from_utf8_lossy(&out.stderr)));
    if out.status.success() {
        Ok(())
    } else {
        Err(Exit::code(out.status.code().unwrap_or(1)))
    }
}

/// How long `stop` and `restart` may take there.
pub const MANAGE_LIMIT: Duration = Duration::from_secs(60);

/// `seedpod ls --all`: this machine's pods, then each configured host's, asked in parallel,
/// each within `[remote] timeout_secs`; a host that cannot be reached is a line saying why.
pub async fn ls_all(home: &Home) -> Result<()> {
    let settings = remote_settings(home)?;
    let limit = Duration::from_secs(settings.timeout_secs.value);
    let asks = settings.hosts.values().map(|host| {
        let remote = Remote {
            alias: host.alias.clone(),
            destination: host.destination.clone(),
            ssh: settings.ssh.value.clone(),
            bin: host.bin.clone(),
        };
        async move {
            let answer = remote.run(&["ls", "--json"], limit).await;
            (remote, answer)
        }
    });
    let answers = futures::future::join_all(asks).await;
    println!("local");
    let local = seedpod_client::list_pods(home, pods::CLIENT_NAME).await;
    if local.is_empty() {
        println!("  no pods");
    } else {
        print!("{}", indent(&crate::ls::table(&local)));
    }
    for (remote, answer) in answers {
        let head = if remote.destination == remote.alias {
            remote.alias.clone()
        } else {
            format!("{} ({})", remote.alias, remote.destination)
        };
        match answer {
            Ok(out) if out.status.success() => {
                println!("{head}");
                print!(
                    "{}",
                    indent(&remote_table(&String::from_utf8_lossy(&out.stdout)))
                );
            }
            Ok(out) => {
                let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
                let said = said.lines().last().unwrap_or("").to_owned();
                println!(
                    "{head}: unreachable ({}){}",
                    out.status,
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(" — {}", terminal::cell(&said))
                    }
                );
            }
            Err(err) => println!(
                "{head}: {}",
                terminal::cell(&strip_host(&err.to_string(), &remote.alias))
            ),
        }
    }
    Ok(())
}

fn strip_host(message: &str, host: &str) -> String {
    message
        .strip_prefix(&format!("{host}: "))
        .unwrap_or(message)
        .to_owned()
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Another machine's `ls --json` lines as a short table: name, state, model, directory.
fn remote_table(json_lines: &str) -> String {
    let mut rows: Vec<[String; 4]> = Vec::new();
    for line in json_lines.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(pod) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let text = |key: &str| {
            pod.get(key)
                .and_then(|v| v.as_str())
                .map(|v| seedpod_protocol::printable_line(v).into_owned())
                .unwrap_or_else(|| "-".into())
        };
        rows.push([
            text("name"),
            text("state"),
            format!("{}/{}", text("provider"), text("model")),
            text("cwd"),
        ]);
    }
    if rows.is_empty() {
        return "no pods\n".into();
    }
    let header = [
        "NAME".to_string(),
        "STATE".to_string(),
        "PROVIDER/MODEL".to_string(),
        "CWD".to_string(),
    ];
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        out.push_str(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {}\n",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_machines_listing_becomes_a_table_and_bad_lines_are_skipped() {
        let lines = "{\"name\":\"p\",\"state\":\"idle\",\"provider\":\"openai\",\"model\":\"m\",\"cwd\":\"/w\"}\nnot json\n";
        let table = remote_table(lines);
        assert!(table.starts_with("NAME  STATE"), "{table}");
        assert!(table.contains("p     idle   openai/m        /w"), "{table}");
        assert_eq!(remote_table(""), "no pods\n");
    }
}
