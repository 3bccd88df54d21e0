//! `[context]`, `[context.windows]` and `context_window`: defaults, layering, the errors a
//! person gets for values that cannot work, and how `config show` prints them.

use std::collections::BTreeMap;

use super::Fixture;
use crate::*;

#[test]
fn defaults_follow_the_seed_ratios_and_probe_the_server() {
    let eff = Fixture::new().resolve().unwrap();
    let c = &eff.context;
    assert_eq!(c.compact_at, 0.75);
    assert_eq!(c.soft_trim_at, 0.3);
    assert_eq!(c.hard_clear_at, 0.5);
    assert_eq!(c.keep_last_assistants, 3);
    assert_eq!(c.summary_model, None);
    assert!(!c.memory_flush);
    assert!(c.probe);
    assert!(c.window_table.is_empty());
    assert_eq!(c.window, None);
    assert_eq!(
        c.sources,
        ContextSources::default(),
        "every value is the default"
    );
    assert_eq!(*c, ContextSettings::default(), "the one set of defaults");
}

#[test]
fn each_key_layers_on_its_own_and_window_tables_merge_by_prefix() {
    let fx = Fixture::new();
    fx.user_file(
        "context_window = 32768\n[context]\ncompact_at = 0.8\nsummary_model = \"small\"\n\
         [context.windows]\n\"qwen3\" = 40960\n\"llama3\" = 8192\n",
    );
    fx.project_file(
        "[context]\nmemory_flush = true\nprobe = false\n[context.windows]\n\"llama3\" = 131072\n\"my-model\" = 4096\n",
    );
    let eff = fx.resolve().unwrap();
    let user = Source::UserFile(fx.user_path());
    let project = Source::ProjectFile(fx.project_path());
    let c = &eff.context;
    assert_eq!(c.window_setting(), Some(Setting::new(32_768, user.clone())));
    assert_eq!((c.compact_at, &c.sources.compact_at), (0.8, &user));
    assert_eq!(c.sources.soft_trim_at, Source::Default);
    assert_eq!(
        (c.summary_model.as_deref(), &c.sources.summary_model),
        (Some("small"), &user)
    );
    assert_eq!((c.memory_flush, &c.sources.memory_flush), (true, &project));
    assert_eq!((c.probe, &c.sources.probe), (false, &project));
    let windows: BTreeMap<&str, (u64, Source)> = c
        .windows()
        .into_iter()
        .map(|(k, v)| (k, (v.value, v.source)))
        .collect();
    assert_eq!(
        windows,
        BTreeMap::from([
            ("llama3", (131_072, project.clone())),
            ("my-model", (4_096, project)),
            ("qwen3", (40_960, user)),
        ])
    );
    // The most specific prefix first: the table's reader takes the first match.
    assert_eq!(
        c.window_table,
        [
            ("my-model".to_string(), 4_096),
            ("llama3".to_string(), 131_072),
            ("qwen3".to_string(), 40_960),
        ]
    );
}

/// Every mistake names the key, the value and the file it is in.
#[test]
fn bad_values_are_refused_naming_key_value_and_file() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[context]\ncompact_at = 1.5\n",
            "context.compact_at = 1.5",
            "between 0 and 1",
        ),
        (
            "[context]\ncompact_at = 1\n",
            "context.compact_at = 1",
            "between 0 and 1",
        ),
        (
            "[context]\nsoft_trim_at = 0.0\n",
            "context.soft_trim_at = 0",
            "between 0 and 1",
        ),
        (
            "[context]\nhard_clear_at = -0.5\n",
            "context.hard_clear_at = -0.5",
            "between 0 and 1",
        ),
        (
            "[context]\ncompact_at = nan\n",
            "context.compact_at = NaN",
            "between 0 and 1",
        ),
        // Order: soft < hard < compact. The key a person set is the one blamed.
        (
            "[context]\nsoft_trim_at = 0.6\n",
            "context.soft_trim_at = 0.6",
            "must be below context.hard_clear_at (0.5, default)",
        ),
        (
            "[context]\nhard_clear_at = 0.2\n",
            "context.hard_clear_at = 0.2",
            "must be above context.soft_trim_at (0.3, default)",
        ),
        (
            "[context]\nhard_clear_at = 0.8\n",
            "context.hard_clear_at = 0.8",
            "must be below context.compact_at (0.75, default)",
        ),
        (
            "[context]\ncompact_at = 0.4\n",
            "context.compact_at = 0.4",
            "must be above context.hard_clear_at (0.5, default)",
        ),
        (
            "[context]\nsoft_trim_at = 0.5\nhard_clear_at = 0.5\n",
            "context.hard_clear_at = 0.5",
            "must be above context.soft_trim_at (0.5, ",
        ),
        (
            "[context]\nkeep_last_assistants = 0\n",
            "context.keep_last_assistants = 0",
            "at least 1",
        ),
        (
            "[context]\nkeep_last_assistants = -2\n",
            "context.keep_last_assistants = -2",
            "must not be negative",
        ),
        (
            "[context]\nkeep_last_assistants = 100000\n",
            "context.keep_last_assistants = 100000",
            "too many",
        ),
        (
            "[context]\nsummary_model = \" \"\n",
            "context.summary_model =  ",
            "must not be empty",
        ),
        (
            "[context.windows]\n\"qwen3\" = 0\n",
            "context.windows.\"qwen3\" = 0",
            "between 1024 and 10000000",
        ),
        (
            "[context.windows]\n\"qwen3\" = -4096\n",
            "context.windows.\"qwen3\" = -4096",
            "must not be negative",
        ),
        (
            "[context.windows]\n\"qwen3\" = 99999999999\n",
            "context.windows.\"qwen3\" = 99999999999",
            "between 1024 and 10000000",
        ),
        (
            "[context.windows]\n\"\" = 8192\n",
            "context.windows.\"\" = 8192",
            "empty model-name prefix",
        ),
        (
            "context_window = 0\n",
            "context_window = 0",
            "between 1024 and 10000000",
        ),
        (
            "context_window = 512\n",
            "context_window = 512",
            "between 1024 and 10000000",
        ),
        (
            "context_window = -1\n",
            "context_window = -1",
            "must not be negative",
        ),
        (
            "context_window = 200000000000\n",
            "context_window = 200000000000",
            "between 1024 and 10000000",
        ),
    ];
    for (text, start, reason) in cases {
        let fx = Fixture::new();
        // Trusted, so that a key that needs trust (`summary_model`) is applied and checked.
        fx.trusted_project_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.starts_with(start), "{text:?} → {err}");
        assert!(err.contains(reason), "{text:?} → {err}");
        assert!(
            err.contains(&fx.project_path().display().to_string()),
            "{text:?} names the file → {err}"
        );
    }
}

#[test]
fn the_order_check_names_the_lower_layer_of_the_other_key() {
    let fx = Fixture::new();
    fx.user_file("[context]\nsoft_trim_at = 0.4\n");
    fx.project_file("[context]\nhard_clear_at = 0.35\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "context.hard_clear_at = 0.35 (from {}) must be above context.soft_trim_at (0.4, {})",
            fx.project_path().display(),
            fx.user_path().display()
        )),
        "{err}"
    );
}

#[test]
fn numbers_too_big_for_the_file_format_name_the_line() {
    let fx = Fixture::new();
    fx.user_file(
        "[context]\nkeep_last_assistants = 3\n\n[context.windows]\n\"x\" = 99999999999999999999\n",
    );
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains(&fx.user_path().display().to_string()), "{err}");
    assert!(err.contains("line 5"), "{err}");
}

#[test]
fn unknown_context_keys_are_refused_with_their_line() {
    let fx = Fixture::new();
    fx.user_file("[context]\ncompact_at = 0.8\ncompact_ratio = 0.8\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("compact_ratio"), "{err}");
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn show_prints_the_context_section_and_it_reads_back() {
    let fx = Fixture::new();
    fx.user_file(
        "context_window = 16384\n[context]\ncompact_at = 0.7\nsummary_model = \"tiny\"\nprobe = false\n\
         [context.windows]\n\"qwen3:0.6b\" = 32768\n",
    );
    let eff = fx.resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    let user = fx.user_path().display().to_string();
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{key} missing:\n{text}"))
            .to_string()
    };
    assert!(line("context_window = 16384").contains(&user));
    assert!(line("compact_at = 0.7").contains(&user));
    assert!(line("soft_trim_at = 0.3").contains("default"));
    assert!(line("keep_last_assistants = 3").contains("default"));
    assert!(line("summary_model = \"tiny\"").contains(&user));
    assert!(line("probe = false").contains("never asked"));
    assert!(line("\"qwen3:0.6b\" = 32768").contains(&user));
    assert!(text.contains("\n[context]\n"), "{text}");
    assert!(text.contains("\n[context.windows]\n"), "{text}");

    let again = Fixture::new();
    again.user_file(&text);
    let shown = again.resolve().unwrap();
    let values = |eff: &Effective| {
        let c = &eff.context;
        (
            c.window,
            [c.compact_at, c.soft_trim_at, c.hard_clear_at],
            c.keep_last_assistants,
            c.summary_model.clone(),
            (c.memory_flush, c.probe),
            c.window_table.clone(),
        )
    };
    assert_eq!(values(&shown), values(&eff));
}

#[test]
fn show_says_when_no_window_table_is_configured() {
    let eff = Fixture::new().resolve().unwrap();
    let text = show::render(&eff, "x", &|_: &str| None);
    assert!(
        text.contains("[context.windows]\n# none: the built-in table of model families applies"),
        "{text}"
    );
    assert!(
        text.contains("# summary_model: the pod's own model writes summaries"),
        "{text}"
    );
}
