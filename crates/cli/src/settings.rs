//! The bridge between flags and `seedpod-config`: resolving the effective configuration for a
//! new pod in a directory or for an existing pod, and `seedpod config show`.

use std::path::Path;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::{Effective, Inputs, Overrides, ProviderChoice, Recorded, process_env, show};
use seedpod_protocol::{PodName, ProviderKind};
use seedpod_store::{PodConfig, PodMeta, load_meta};

use crate::args::{PodConfigArgs, ProviderArg};
use crate::exit::Exit;
use crate::pods::canonical_cwd;
use crate::redact::redact;

pub fn provider_choice(provider: ProviderArg) -> ProviderChoice {
    match provider {
        ProviderArg::Scripted => ProviderChoice::Scripted,
        ProviderArg::Anthropic => ProviderChoice::Anthropic,
        ProviderArg::Openai => ProviderChoice::Openai,
        ProviderArg::OpenaiResponses => ProviderChoice::OpenaiResponses,
    }
}

fn overrides(args: &PodConfigArgs) -> Overrides {
    Overrides {
        provider: args.provider.map(provider_choice),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        temperature: args.temperature,
        max_tokens: args.max_tokens,
        script: args.script.clone(),
    }
}

/// Every layer for a pod working in `cwd`; an existing pod keeps what it was created with.
pub fn resolve(
    home: &Home,
    cwd: &Path,
    args: &PodConfigArgs,
    existing: Option<&PodMeta>,
) -> Result<Effective> {
    let mut eff = Effective::resolve(&Inputs {
        config_dir: &home.config,
        cwd,
        env: &process_env,
        flags: overrides(args),
        tools: &seedpod_pod::catalogue::declared(),
    })
    .map_err(|e| Exit::usage(e.to_string()))?;
    if let Some(recorded) = existing.and_then(|meta| recorded(&meta.config)) {
        eff.keep_recorded(recorded);
    }
    if let Some(meta) = existing {
        eff.keep_recorded_responses(meta.config.responses);
    }
    Ok(eff)
}

/// The pod's `pod.json`, if it exists.
pub fn existing_meta(home: &Home, name: &PodName) -> Result<Option<PodMeta>> {
    load_meta(&home.pod_dir(name)).map_err(|e| Exit::failure(e.to_string()))
}

fn recorded(config: &PodConfig) -> Option<Recorded> {
    let provider = match config.provider {
        ProviderKind::Anthropic => ProviderChoice::Anthropic,
        ProviderKind::Openai => ProviderChoice::Openai,
        ProviderKind::OpenaiResponses => ProviderChoice::OpenaiResponses,
        ProviderKind::Scripted => ProviderChoice::Scripted,
        // A provider only a newer seedpod knows: nothing to keep that this one could use; the
        // pod itself refuses to start with a message saying to upgrade.
        ProviderKind::Unknown => return None,
    };
    Some(Recorded {
        provider,
        model: config.model.clone(),
        base_url: config.base_url.clone(),
        temperature: config.temperature,
        max_tokens: config.max_tokens,
        script: config.script.clone(),
    })
}

/// The recorded configuration of a new pod, from the effective one (`None`: no provider).
pub fn pod_config(eff: &Effective) -> Option<PodConfig> {
    let provider = eff.provider.as_ref()?.value;
    Some(PodConfig {
        provider: provider.kind(),
        model: eff.model()?.value,
        script: eff.script.as_ref().map(|s| s.value.clone()),
        // Recorded in pod.json: never with credentials (they travel by environment).
        base_url: eff
            .base_url
            .as_ref()
            .map(|s| seedpod_client::credentials::split_userinfo(&s.value).0),
        temperature: eff.temperature.as_ref().map(|s| s.value),
        max_tokens: eff.max_tokens.as_ref().map(|s| s.value),
        // Only the Responses API reads them; recorded only when one differs from its default.
        responses: (provider == ProviderChoice::OpenaiResponses)
            .then(|| eff.responses.options())
            .filter(|options| !options.is_default()),
    })
}

/// `seedpod config show [NAME]`: with a name, that pod's configuration (its recorded model
/// settings and the current operational ones from its directory); without, what a new
/// `seedpod start` in this directory would use.
pub fn show_config(home: &Home, name: Option<&PodName>) -> Result<()> {
    let (title, eff, meta) = match name {
        Some(name) => {
            let Some(meta) = existing_meta(home, name)? else {
                return Err(Exit::usage(format!(
                    "no pod named \"{name}\"; `seedpod config show` without a name shows what a new pod here would use"
                )));
            };
            let eff = resolve(home, &meta.cwd, &PodConfigArgs::default(), Some(&meta))?;
            let title = format!("pod \"{name}\" (cwd {})", meta.cwd.display());
            (title, eff, Some(meta))
        }
        None => {
            let cwd = canonical_cwd(None)?;
            let eff = resolve(home, &cwd, &PodConfigArgs::default(), None)?;
            (format!("a new pod in {}", cwd.display()), eff, None)
        }
    };
    let mut text = show::render(&eff, &title, &process_env);
    text.push_str(&format!(
        "\n# shell sandbox on this machine: {}\n",
        crate::session::sandbox_status(&eff)
    ));
    if let Some(meta) = &meta {
        text.push_str(&delegated_note(meta));
    }
    // The renderer never prints a key's value; the log redactor is a second net for anything
    // secret-shaped a person put in a model name or URL.
    print!("{}", redact(&text));
    Ok(())
}

/// For a child pod: the scope its parent delegated, which replaces `[scope] read` and `write`
/// (comments, so the output stays a valid config file). Empty for other pods.
fn delegated_note(meta: &PodMeta) -> String {
    let Some(grant) = &meta.delegated else {
        return String::new();
    };
    let parent = meta.parent.as_ref().map_or("its parent", PodName::as_str);
    let list = |paths: &[std::path::PathBuf]| {
        if paths.is_empty() {
            "nothing".to_string()
        } else {
            let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            shown.join(", ")
        }
    };
    format!(
        "\n# Child of \"{parent}\": it may read and write only what {parent} delegated, which replaces\n# [scope] read and write above ([scope] deny still applies).\n#   read:  {}\n#   write: {}\n",
        list(&grant.read),
        list(&grant.write)
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use seedpod_store::ScopeGrant;

    use super::delegated_note;
    use crate::test_support::meta;

    #[test]
    fn config_show_names_the_delegated_scope_of_a_child_only() {
        assert_eq!(delegated_note(&meta("solo", None)), "");
        let mut kid = meta("kid", Some("boss"));
        kid.delegated = Some(ScopeGrant {
            read: vec![PathBuf::from("/w"), PathBuf::from("/docs")],
            write: Vec::new(),
        });
        let note = delegated_note(&kid);
        assert!(note.contains("Child of \"boss\""), "{note}");
        assert!(note.contains("#   read:  /w, /docs\n"), "{note}");
        assert!(note.contains("#   write: nothing\n"), "{note}");
        assert!(
            note.lines().all(|l| l.is_empty() || l.starts_with('#')),
            "comments keep `config show` a valid config file: {note}"
        );
    }
}
