//! `seedpod trust [DIR] [--revoke]`: a person lets a project's `.seedpod/config.toml` loosen
//! policy, exactly as its bytes are now (DESIGN invariant 6). What counts as loosening is
//! `seedpod_config::loosen`; the store is `seedpod_config::trust`.

use std::path::Path;

use anyhow::Result;
use seedpod_client::Home;
use seedpod_config::file::{self, CONFIG_FILE, PROJECT_DIR};
use seedpod_config::trust::{self, TrustStore};
use seedpod_config::{Effective, Inputs, Overrides, ProjectTrust, process_env};

use crate::exit::Exit;
use crate::pods::canonical_cwd;

pub fn trust(home: &Home, dir: Option<&Path>, revoke: bool) -> Result<()> {
    let dir = canonical_cwd(dir)?;
    let path = dir.join(PROJECT_DIR).join(CONFIG_FILE);
    let key = trust::project_key(&dir).map_err(|e| Exit::failure(e.to_string()))?;
    let mut store = TrustStore::load(&home.config).map_err(|e| Exit::failure(e.to_string()))?;
    if revoke {
        if store.trusted.remove(&key).is_none() {
            println!("{} was not trusted; nothing to revoke", path.display());
            return Ok(());
        }
        store
            .save(&home.config)
            .map_err(|e| Exit::failure(e.to_string()))?;
        println!(
            "no longer trusted: {}; its loosening keys are ignored from the next start",
            path.display()
        );
        return Ok(());
    }
    let Some((bytes, _)) = file::load_bytes(&path).map_err(|e| Exit::usage(e.to_string()))? else {
        return Err(Exit::usage(format!(
            "no {} to trust: {} has no project config",
            path.display(),
            dir.display()
        )));
    };
    let loosens = loosening_keys(home, &dir)?;
    let hash = trust::content_hash(&bytes);
    store.trusted.insert(key, hash.clone());
    store
        .save(&home.config)
        .map_err(|e| Exit::failure(e.to_string()))?;
    println!("trusted {} as it is now ({hash})", path.display());
    if loosens.is_empty() {
        println!("it loosens nothing today; any change to the file makes it untrusted again");
    } else {
        println!(
            "it may now set: {}; any change to the file makes it untrusted again",
            loosens.join(", ")
        );
    }
    Ok(())
}

/// The keys the project file in `dir` loosens, as the next pod there would see them
/// untrusted. A file that does not resolve is not trusted: the error says why.
fn loosening_keys(home: &Home, dir: &Path) -> Result<Vec<String>> {
    let eff = Effective::resolve(&Inputs {
        config_dir: &home.config,
        cwd: dir,
        env: &process_env,
        flags: Overrides::default(),
        tools: &seedpod_pod::catalogue::declared(),
    })
    .map_err(|e| Exit::usage(format!("{e}; fix it before trusting it")))?;
    Ok(match eff.project_trust {
        ProjectTrust::Untrusted { .. } => eff.ignored.into_iter().map(|i| i.key).collect(),
        // Already trusted as it is: a second trust changes nothing, but says what it loosens.
        ProjectTrust::Trusted => vec!["(already trusted)".to_owned()],
        ProjectTrust::NoFile | ProjectTrust::NotNeeded => Vec::new(),
    })
}
