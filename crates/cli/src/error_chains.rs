//! The CLI prints errors as an anyhow chain (`seedpod: {err:#}`), which appends every
//! `source()` to the message. Each library error says its cause in its own message, so no
//! cause may also be its source, or people read it twice. One case per error that wraps an
//! OS error or another error.

use std::io;
use std::path::Path;

fn cause() -> io::Error {
    io::Error::other("disk on fire")
}

fn printed(err: impl std::error::Error + Send + Sync + 'static) -> String {
    format!("{:#}", anyhow::Error::new(err))
}

fn assert_once(what: &str, text: &str, cause: &str) {
    assert_eq!(text.matches(cause).count(), 1, "{what}: {text}");
}

#[test]
fn every_cause_is_printed_once_in_an_error_chain() {
    let path = Path::new("/pods/p/pod.json");
    let store = seedpod_store::StoreError::Io {
        path: path.into(),
        op: "replace",
        cause: cause(),
    };
    assert_once("store", &printed(store), "disk on fire");
    let commit_like = seedpod_pod::PodError::from(seedpod_store::StoreError::Io {
        path: path.into(),
        op: "fsync",
        cause: cause(),
    });
    assert_once("pod wrapping store", &printed(commit_like), "disk on fire");
    let client = seedpod_client::ClientError::io(path, "read", cause());
    assert_once("client", &printed(client), "disk on fire");
    let transport = seedpod_client::ClientError::from(cause());
    assert_once("client transport", &printed(transport), "disk on fire");
    let pod = seedpod_pod::PodError::from(seedpod_client::ClientError::io(path, "bind", cause()));
    assert_once("pod wrapping client", &printed(pod), "disk on fire");
    let config = seedpod_config::ConfigError::io(path, cause());
    assert_once("config", &printed(config), "disk on fire");
    let scope = seedpod_tools::ScopeError::Cwd {
        path: path.into(),
        cause: cause(),
    };
    assert_once("scope", &printed(scope), "disk on fire");
    let script = seedpod_engine::ScriptError::Read {
        path: path.into(),
        cause: cause(),
    };
    assert_once("script", &printed(script), "disk on fire");
    let prompt = seedpod_pod::prompt::PromptError::Read {
        what: "AGENTS.md",
        path: path.into(),
        cause: cause(),
    };
    assert_once("prompt", &printed(prompt), "disk on fire");
    let launch = seedpod_client::launch::LaunchError::Spawn(cause());
    assert_once("launch", &printed(launch), "disk on fire");
    let host = seedpod_engine::HostError::log(seedpod_store::StoreError::Io {
        path: path.into(),
        op: "append to",
        cause: cause(),
    });
    assert_once("host wrapping store", &printed(host), "disk on fire");
    let git = seedpod_pod::git_commit::GitError::Spawn { cause: cause() };
    assert_once("git", &printed(git), "disk on fire");
    let child = seedpod_pod::children::SpawnRefused::NotStarted {
        name: seedpod_protocol::PodName::new("kid").expect("a pod name"),
        cause: seedpod_pod::children::LaunchFailed::NoBinary { cause: cause() },
    };
    assert_once("child launch", &printed(child), "disk on fire");
    let attached = seedpod_pod::references::NotAttached::Io { cause: cause() };
    assert_once("attachment", &printed(attached), "disk on fire");
}

/// A wrapper that only repeats its inner error is transparent: its text is the inner text.
#[test]
fn wrappers_that_add_nothing_are_transparent() {
    let inner = seedpod_store::StoreError::Closed;
    let text = inner.to_string();
    let wrapped = seedpod_pod::PodError::from(seedpod_store::StoreError::Closed);
    assert_eq!(printed(wrapped), text);
}
