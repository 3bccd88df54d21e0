//! Layering, provenance, validation and the `config show` rendering, over real files in a temp dir.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::effective::{ANTHROPIC_KEY_ENV, OPENAI_BASE_URL_ENV, OPENAI_KEY_ENV};
use crate::*;

mod agent;
mod api;
mod context;
mod loosen;
mod responses;
pub(crate) mod tools;

struct Fixture {
    _dir: tempfile::TempDir,
    config_dir: PathBuf,
    cwd: PathBuf,
    env: HashMap<String, String>,
    flags: Overrides,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let config_dir = dir.path().join("config");
        let cwd = dir.path().join("project");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::create_dir_all(cwd.join(".seedpod")).unwrap();
        Fixture {
            _dir: dir,
            config_dir,
            cwd,
            env: HashMap::new(),
            flags: Overrides::default(),
        }
    }

    fn user_file(&self, text: &str) -> &Self {
        std::fs::write(self.user_path(), text).unwrap();
        self
    }

    fn project_file(&self, text: &str) -> &Self {
        std::fs::write(self.project_path(), text).unwrap();
        self
    }

    /// Write the project file and trust exactly these bytes, as `seedpod trust` does.
    fn trusted_project_file(&self, text: &str) -> &Self {
        self.project_file(text);
        let mut store = TrustStore::load(&self.config_dir).unwrap();
        let key = trust::project_key(&self.cwd).unwrap();
        store
            .trusted
            .insert(key, trust::content_hash(text.as_bytes()));
        store.save(&self.config_dir).unwrap();
        self
    }

    fn user_path(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    fn project_path(&self) -> PathBuf {
        self.cwd.join(".seedpod/config.toml")
    }

    fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.insert(key.to_owned(), value.to_owned());
        self
    }

    fn resolve(&self) -> Result<Effective, ConfigError> {
        let env = |name: &str| self.env.get(name).cloned();
        Effective::resolve(&Inputs {
            config_dir: &self.config_dir,
            cwd: &self.cwd,
            env: &env,
            flags: self.flags.clone(),
            tools: &tools::TOOLS,
        })
    }
}

#[test]
fn nothing_configured_gives_defaults_and_no_provider() {
    let fx = Fixture::new();
    let eff = fx.resolve().unwrap();
    assert_eq!(eff.provider, None);
    assert_eq!(eff.model(), None);
    assert_eq!(eff.retry.max_retries, Setting::default(3));
    assert_eq!(eff.retry.base_delay_ms.value, 1_000);
    assert_eq!(eff.retry.max_delay_ms.value, 30_000);
    assert_eq!(eff.logging.level.value, LogLevel::Info);
    assert_eq!(eff.logging.rotation.value, Rotation::Daily);
    assert!(eff.layers.iter().all(|l| !l.found));
}

#[test]
fn each_layer_overrides_the_one_below_key_by_key() {
    let mut fx = Fixture::new();
    fx.user_file(
        "provider = \"anthropic\"\nmodel = \"user-model\"\ntemperature = 0.1\n[retry]\nmax_retries = 5\nbase_delay_ms = 200\n",
    );
    fx.trusted_project_file("model = \"project-model\"\n[retry]\nmax_retries = 1\n");
    fx.env("SEEDPOD_MODEL", "env-model");
    fx.flags.temperature = Some(0.7);

    let eff = fx.resolve().unwrap();
    let provider = eff.provider.clone().unwrap();
    assert_eq!(provider.value, ProviderChoice::Anthropic);
    assert_eq!(provider.source, Source::UserFile(fx.user_path()));
    let model = eff.model().unwrap();
    assert_eq!(model.value, "env-model");
    assert_eq!(model.source, Source::Env("SEEDPOD_MODEL"));
    let temperature = eff.temperature.clone().unwrap();
    assert_eq!(temperature.value, 0.7);
    assert_eq!(temperature.source, Source::Flag("temperature"));
    assert_eq!(eff.retry.max_retries.value, 1);
    assert_eq!(
        eff.retry.max_retries.source,
        Source::ProjectFile(fx.project_path())
    );
    // The user file's base delay survives the project file, which did not set it.
    assert_eq!(eff.retry.base_delay_ms.value, 200);
    assert!(eff.layers.iter().all(|l| l.found));
}

#[test]
fn flags_beat_the_environment() {
    let mut fx = Fixture::new();
    fx.env("SEEDPOD_PROVIDER", "anthropic")
        .env("SEEDPOD_MODEL", "m1");
    fx.flags.provider = Some(ProviderChoice::Openai);
    fx.flags.model = Some("m2".into());
    let eff = fx.resolve().unwrap();
    assert_eq!(eff.provider.clone().unwrap().value, ProviderChoice::Openai);
    assert_eq!(eff.model().unwrap().value, "m2");
}

#[test]
fn openai_base_url_env_applies_only_to_openai() {
    let mut fx = Fixture::new();
    fx.env(OPENAI_BASE_URL_ENV, "http://127.0.0.1:9/v1");
    fx.flags.provider = Some(ProviderChoice::Anthropic);
    assert_eq!(fx.resolve().unwrap().base_url, None);

    fx.flags.provider = Some(ProviderChoice::Openai);
    let url = fx.resolve().unwrap().base_url.unwrap();
    assert_eq!(url.value, "http://127.0.0.1:9/v1");
    assert_eq!(url.source, Source::Env(OPENAI_BASE_URL_ENV));

    fx.flags.base_url = Some("http://127.0.0.1:10/v1".into());
    assert_eq!(
        fx.resolve().unwrap().base_url.unwrap().source,
        Source::Flag("base-url")
    );
}

#[test]
fn script_in_a_file_is_relative_to_that_file() {
    let fx = Fixture::new();
    fx.trusted_project_file("provider = \"scripted\"\nscript = \"demo.jsonl\"\n");
    let eff = fx.resolve().unwrap();
    assert_eq!(
        eff.script.clone().unwrap().value,
        fx.cwd.join(".seedpod").join("demo.jsonl")
    );
    assert_eq!(eff.model().unwrap().value, "script");
}

#[test]
fn key_requirements_per_provider() {
    let mut fx = Fixture::new();
    fx.flags.provider = Some(ProviderChoice::Anthropic);
    let key = fx.resolve().unwrap().key_requirement().unwrap();
    assert_eq!(key.var.value, ANTHROPIC_KEY_ENV);
    assert!(key.required);

    fx.flags.provider = Some(ProviderChoice::Openai);
    let key = fx.resolve().unwrap().key_requirement().unwrap();
    assert_eq!(key.var.value, OPENAI_KEY_ENV);
    assert!(!key.required, "local OpenAI-compatible servers need no key");

    fx.user_file("api_key_env = \"OPENROUTER_API_KEY\"\n");
    let key = fx.resolve().unwrap().key_requirement().unwrap();
    assert_eq!(key.var.value, "OPENROUTER_API_KEY");
    assert!(key.required, "a named variable is meant to be set");

    fx.flags.provider = Some(ProviderChoice::Scripted);
    fx.user_file("");
    assert_eq!(fx.resolve().unwrap().key_requirement(), None);
}

#[test]
fn invalid_values_name_key_value_and_origin() {
    let cases: &[(&str, &str)] = &[
        ("temperature = 3.5\n", "temperature"),
        ("max_tokens = 0\n", "max_tokens"),
        ("base_url = \"localhost:11434\"\n", "base_url"),
        ("api_key_env = \"sk-live-abc\"\n", "api_key_env"),
        (
            "[retry]\nbase_delay_ms = 5000\nmax_delay_ms = 100\n",
            "retry.max_delay_ms",
        ),
        ("[retry]\nmax_retries = 50\n", "retry.max_retries"),
        (
            "[retry]\nretryable_statuses = [503, 200]\n",
            "retry.retryable_statuses",
        ),
        ("[timeouts]\nidle_read_ms = 0\n", "timeouts.idle_read_ms"),
        ("[logging]\nkeep_days = 0\n", "logging.keep_days"),
        (
            "[approvals]\nwrite_file = \"sandboxed\"\n",
            "approvals.write_file",
        ),
    ];
    for (text, key) in cases {
        let fx = Fixture::new();
        fx.trusted_project_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.starts_with(key), "{text:?} → {err}");
        assert!(err.contains(".seedpod/config.toml"), "{text:?} → {err}");
    }
}

#[test]
fn bad_environment_values_say_which_variable() {
    let mut fx = Fixture::new();
    fx.env("SEEDPOD_PROVIDER", "gemini");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(
        err.contains("SEEDPOD_PROVIDER") && err.contains("gemini"),
        "{err}"
    );

    let mut fx = Fixture::new();
    fx.env("SEEDPOD_LOG", "loud");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("SEEDPOD_LOG"), "{err}");
}

#[test]
fn a_parse_error_names_the_file() {
    let fx = Fixture::new();
    fx.user_file("provider = openai\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains(&fx.user_path().display().to_string()), "{err}");
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn recorded_settings_win_except_over_endpoint_flags() {
    let mut fx = Fixture::new();
    fx.trusted_project_file(
        "provider = \"anthropic\"\nmodel = \"new\"\ntemperature = 0.9\n[retry]\nmax_retries = 0\n",
    );
    fx.flags.base_url = Some("http://127.0.0.1:2/v1".into());
    let mut eff = fx.resolve().unwrap();
    eff.keep_recorded(Recorded {
        provider: ProviderChoice::Openai,
        model: "old".into(),
        base_url: Some("http://127.0.0.1:1/v1".into()),
        temperature: None,
        max_tokens: Some(100),
        script: None,
    });
    assert_eq!(eff.provider.clone().unwrap().value, ProviderChoice::Openai);
    assert_eq!(eff.model().unwrap().value, "old");
    assert_eq!(eff.model().unwrap().source, Source::Recorded);
    assert_eq!(
        eff.temperature, None,
        "the recorded pod sends no temperature"
    );
    assert_eq!(eff.max_tokens.clone().unwrap().value, 100);
    assert_eq!(eff.base_url.clone().unwrap().value, "http://127.0.0.1:2/v1");
    // Operational settings still come from the files.
    assert_eq!(eff.retry.max_retries.value, 0);
}

#[test]
fn show_lists_every_key_with_its_source_and_never_a_secret() {
    let mut fx = Fixture::new();
    fx.user_file("provider = \"openai\"\nbase_url = \"https://bob:hunter2@example.test/v1\"\n");
    fx.trusted_project_file("[logging]\nlevel = \"debug\"\n");
    fx.env(OPENAI_KEY_ENV, "sk-test-secret-value");
    let eff = fx.resolve().unwrap();
    let env = |name: &str| fx.env.get(name).cloned();
    let text = show::render(&eff, "a new pod in /p", &env);

    assert!(!text.contains("sk-test-secret-value"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("https://[REDACTED]@example.test/v1"),
        "{text}"
    );
    assert!(text.contains("set, value [REDACTED]"), "{text}");
    let provider_line = text.lines().find(|l| l.starts_with("provider = ")).unwrap();
    assert!(
        provider_line.contains(&fx.user_path().display().to_string()),
        "{provider_line}"
    );
    let level_line = text.lines().find(|l| l.starts_with("level = ")).unwrap();
    assert!(level_line.contains("\"debug\""), "{level_line}");
    assert!(level_line.contains(".seedpod/config.toml"), "{level_line}");
    let model_line = text.lines().find(|l| l.starts_with("model = ")).unwrap();
    assert!(
        model_line.contains("default for this provider"),
        "{model_line}"
    );
    for key in [
        "[timeouts]",
        "[retry]",
        "[logging]",
        "max_retries = 3",
        "retryable_statuses = [408, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529]",
        "keep_days = 7",
    ] {
        assert!(text.contains(key), "{key} missing:\n{text}");
    }
}

#[test]
fn show_output_is_a_valid_config_file() {
    let mut fx = Fixture::new();
    fx.flags.provider = Some(ProviderChoice::Anthropic);
    fx.flags.temperature = Some(1.0);
    fx.flags.script = Some(Path::new("/tmp/a \"quoted\" script.jsonl").to_path_buf());
    fx.env("HOME", "/home/u");
    fx.trusted_project_file(
        r#"
[approvals]
shell = "deny"
grep = "ask"
[scope]
read = ["~/notes", "docs/a \"b\".md"]
deny = [".env", "secrets"]
[shell]
timeout_secs = 5
max_timeout_secs = 50
[system_prompt]
identity_file = "identity.md"
[input]
guard = "block"
max_message_chars = 1000
[children]
wake = false
"#,
    );
    let eff = fx.resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    assert!(text.contains("NOT SET"), "{text}");
    // What `show` prints can be pasted into a config file and means the same.
    let file = file::parse(Path::new("shown.toml"), &text).unwrap();
    assert_eq!(file.provider, Some(ProviderChoice::Anthropic));
    assert_eq!(file.temperature, Some(1.0));
    assert_eq!(
        file.script.as_deref(),
        Some(Path::new("/tmp/a \"quoted\" script.jsonl"))
    );
    assert_eq!(file.retry.unwrap().max_retries, Some(3));
    assert_eq!(file.approvals.unwrap().get("shell"), Some(Policy::Deny));

    // Resolved from the shown text alone, the agent's settings are the same values.
    let again = Fixture::new();
    again.user_file(&text);
    let shown = again.resolve().unwrap();
    let values = |eff: &Effective| {
        (
            eff.approvals
                .all()
                .into_iter()
                .map(|(tool, p)| (tool, p.value))
                .collect::<Vec<_>>(),
            [&eff.scope.read, &eff.scope.write, &eff.scope.deny].map(|l| l.value.clone()),
            (
                eff.shell.timeout_secs.value,
                eff.shell.max_timeout_secs.value,
            ),
            eff.system_prompt.identity_file.clone().map(|i| i.value),
            (eff.input.guard.value, eff.input.max_message_chars.value),
            eff.children.wake.value,
        )
    };
    assert_eq!(values(&shown), values(&eff));
    assert_eq!(
        eff.scope.read.value,
        [
            PathBuf::from("/home/u/notes"),
            PathBuf::from("docs/a \"b\".md")
        ]
    );
}

#[test]
fn retryable_statuses_replace_the_default_list_whole() {
    let fx = Fixture::new();
    fx.user_file("[retry]\nretryable_statuses = [429, 503]\n");
    let statuses = fx.resolve().unwrap().retry.retryable_statuses;
    assert_eq!(statuses.value, [429, 503]);
    assert!(
        statuses.source.to_string().contains("config.toml"),
        "{}",
        statuses.source
    );

    // Not a status at all: the parser says where.
    let fx = Fixture::new();
    fx.user_file("[retry]\nretryable_statuses = [-1]\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("-1"), "{err}");

    // An empty list is allowed: retry only what has no status (a dropped connection).
    let fx = Fixture::new();
    fx.user_file("[retry]\nretryable_statuses = []\n");
    assert!(
        fx.resolve()
            .unwrap()
            .retry
            .retryable_statuses
            .value
            .is_empty()
    );
}

#[test]
fn show_prints_whether_each_mcp_server_is_required() {
    let fx = Fixture::new();
    fx.user_file(
        "[mcp.servers.must]\ncommand = \"m\"\nrequired = true\n\
         [mcp.servers.may]\ncommand = \"n\"\n",
    );
    let eff = fx.resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    let section = |name: &str| {
        let start = text.find(&format!("[mcp.servers.{name}]")).unwrap();
        let rest = &text[start + 1..];
        let end = rest.find("\n[").map_or(rest.len(), |e| e);
        rest[..end].to_owned()
    };
    assert!(section("must").contains("\nrequired = true\n"), "{text}");
    assert!(section("may").contains("\nrequired = false\n"), "{text}");
}

#[test]
fn show_lists_hooks_in_the_order_they_run_and_reads_back() {
    let fx = Fixture::new();
    fx.user_file(
        "[[hooks.pre_tool]]\ncommand = \"no-rm \\\"x\\\"\"\nmatcher = \"shell\"\n\
         [[hooks.turn_end]]\ncommand = \"notify-send done\"\ntimeout_secs = 3\n",
    );
    let eff = fx.resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    let pre = text.find("[[hooks.pre_tool]]").expect("pre_tool shown");
    let end = text.find("[[hooks.turn_end]]").expect("turn_end shown");
    assert!(pre < end, "{text}");
    assert!(text.contains("matcher = \"shell\""), "{text}");
    assert!(text.contains("timeout_secs = 3"), "{text}");
    let back: ConfigFile = toml::from_str(&text).expect("show's output is a config file");
    let hooks = back.hooks.expect("hooks read back");
    assert_eq!(hooks.pre_tool.expect("pre_tool")[0].command, "no-rm \"x\"");
    assert_eq!(hooks.pre_tool_may_allow, Some(false));
}
