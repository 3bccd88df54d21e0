use std::path::Path;

use serde_json::json;

use super::*;
use crate::completions::WORKFLOWS_DIR;

/// A home with a project (`<tmp>/project`, the pod's cwd at `<tmp>/project/sub`) and a config
/// directory, all empty.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/sub")).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        Fixture { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn inputs(&self) -> PromptInputs {
        PromptInputs {
            pod_name: "scout".parse().unwrap(),
            cwd: self.path("project/sub"),
            model: "test-model".into(),
            current_date: "2026-05-01".into(),
            tools: Vec::new(),
            deferred_tools: Vec::new(),
            tool_protocols: Vec::new(),
            identity_file: None,
            session_instructions: None,
            config_dir: Some(self.path("config")),
            mode: PromptMode::Full,
            scope: None,
        }
    }

    /// Inputs with every layer's source present.
    fn full_inputs(&self) -> PromptInputs {
        self.write(
            &format!("project/sub/{WORKFLOWS_DIR}/review.md"),
            "---\ndescription: Review a change\narguments: branch\n---\nRead the diff.",
        );
        self.write("project/AGENTS.md", "Run `cargo test` before pushing.");
        self.write(
            "config/instructions.md",
            "Prefer British spelling, {{ pod_name }}.",
        );
        PromptInputs {
            tools: vec![
                ToolSpec {
                    name: "shell".into(),
                    description: "Run a command.".into(),
                    parameters: json!({"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}),
                },
                ToolSpec {
                    name: "mcp__fs__list".into(),
                    description: "List a directory.".into(),
                    parameters: json!({"type":"object","properties":{}}),
                },
            ],
            tool_protocols: vec![("shell".into(), "BEFORE: check the cwd.".into())],
            session_instructions: Some("Work on issue 12 for {{ model }}.".into()),
            ..self.inputs()
        }
    }
}

fn layer(prompt: &RenderedPrompt, kind: LayerKind) -> &Layer {
    prompt.layers.iter().find(|l| l.kind == kind).unwrap()
}

#[test]
fn with_nothing_configured_only_the_built_in_identity_is_present() {
    let fx = Fixture::new();
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let kinds: Vec<LayerKind> = prompt.layers.iter().map(|l| l.kind).collect();
    assert_eq!(kinds, LayerKind::ALL);

    let identity = layer(&prompt, LayerKind::Identity);
    assert_eq!(identity.source, "built-in");
    let text = identity.text.as_deref().unwrap();
    let cwd = fx.path("project/sub").display().to_string();
    assert!(text.starts_with("You are scout, a coding agent"), "{text}");
    assert!(text.contains(&format!(
        "You work in {cwd}. Today is 2026-05-01. Your model is test-model."
    )));
    assert!(text.contains("`[notification]`"));
    assert!(!text.contains("{{"));
    assert_eq!(prompt.text, text);

    for kind in &LayerKind::ALL[1..] {
        let l = layer(&prompt, *kind);
        assert_eq!(l.text, None, "{kind:?}");
        assert!(l.note.is_some(), "{kind:?} says why it is absent");
    }
}

#[test]
fn every_layer_present_in_order() {
    let fx = Fixture::new();
    let prompt = render_prompt(&fx.full_inputs()).unwrap();
    for l in &prompt.layers {
        assert!(l.text.is_some(), "{:?} is present", l.kind);
    }
    let texts: Vec<&str> = prompt
        .layers
        .iter()
        .filter_map(|l| l.text.as_deref())
        .collect();
    assert_eq!(prompt.text, texts.join("\n\n"));

    let markers = [
        "You are scout",
        "# MCP tools",
        "\n- fs: mcp__fs__list",
        "# How to use your tools\n\n## shell\nBEFORE: check the cwd.",
        "# Workflows",
        "- /review — Review a change (arguments: branch)",
        "# Instructions for this pod\n\nWork on issue 12 for test-model.",
        "# Project instructions",
        "Run `cargo test` before pushing.",
        "# Custom instructions\n\nPrefer British spelling, scout.",
    ];
    let mut last = 0;
    for marker in markers {
        let at = prompt
            .text
            .find(marker)
            .unwrap_or_else(|| panic!("{marker} missing"));
        assert!(at >= last, "{marker} is out of order");
        last = at;
    }
    // Each tool is described once, in the schema the request carries: not again here.
    for description in ["Run a command.", "List a directory.", "cmd"] {
        assert!(!prompt.text.contains(description), "{description}");
    }
    assert_eq!(
        layer(&prompt, LayerKind::ToolCatalogue).source,
        "generated from 2 tools"
    );
    assert_eq!(
        layer(&prompt, LayerKind::SessionInstructions).source,
        "start --instructions"
    );
    assert_eq!(
        layer(&prompt, LayerKind::CustomInstructions).source,
        fx.path("config/instructions.md").display().to_string()
    );
}

#[test]
fn rendering_twice_gives_identical_bytes() {
    let fx = Fixture::new();
    let inputs = fx.full_inputs();
    let first = render_prompt(&inputs).unwrap();
    let second = render_prompt(&inputs).unwrap();
    assert_eq!(first.text.as_bytes(), second.text.as_bytes());
    assert_eq!(first, second);
}

#[test]
fn nearest_agents_md_upward_wins_and_is_not_templated() {
    let fx = Fixture::new();
    let root = fx.write("AGENTS.md", "outer rules");
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let project = layer(&prompt, LayerKind::ProjectInstructions);
    assert_eq!(project.source, root.display().to_string());
    assert!(project.text.as_deref().unwrap().contains("outer rules"));

    let nearer = fx.write("project/AGENTS.md", "inner rules: {{ not_a_variable }}");
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let project = layer(&prompt, LayerKind::ProjectInstructions);
    assert_eq!(project.source, nearer.display().to_string());
    let text = project.text.as_deref().unwrap();
    assert_eq!(
        text,
        format!(
            "# Project instructions\n\nFrom {}:\n\ninner rules: {{{{ not_a_variable }}}}",
            nearer.display()
        )
    );
    assert!(!prompt.text.contains("outer rules"));
}

#[test]
fn agents_md_is_capped_at_a_char_boundary_with_a_note() {
    let fx = Fixture::new();
    // 'é' is two bytes and starts at an odd offset, so the cap falls inside one.
    let content = format!("x{}", "é".repeat(MAX_AGENTS_MD_BYTES));
    fx.write("project/AGENTS.md", &content);
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let project = layer(&prompt, LayerKind::ProjectInstructions);
    let text = project.text.as_deref().unwrap();
    let kept = format!("x{}", "é".repeat((MAX_AGENTS_MD_BYTES - 1) / 2));
    assert!(
        text.contains(&format!(":\n\n{kept}\n\n[… truncated")),
        "cut where expected"
    );
    assert!(text.ends_with(
        "[… truncated: AGENTS.md is 131,073 bytes; only the first 65,535 are included here. \
         Read the file for the rest.]"
    ));
    assert_eq!(
        project.note.as_deref(),
        Some("truncated to the first 65,535 of 131,073 bytes")
    );
}

#[test]
fn agents_md_of_exactly_the_cap_is_whole() {
    let fx = Fixture::new();
    fx.write("project/AGENTS.md", &"a".repeat(MAX_AGENTS_MD_BYTES));
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let project = layer(&prompt, LayerKind::ProjectInstructions);
    assert_eq!(project.note, None);
    assert!(!project.text.as_deref().unwrap().contains("truncated"));
}

#[test]
fn undefined_variable_is_an_error_naming_the_source() {
    let fx = Fixture::new();
    let path = fx.write(
        "config/instructions.md",
        "hello\n{{ pod_name }} {{ favourite_colour }}",
    );
    let err = render_prompt(&fx.inputs()).unwrap_err().to_string();
    assert!(err.contains("custom instructions"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("favourite_colour"), "{err}");
    assert!(err.contains("on line 2"), "{err}");

    let inputs = PromptInputs {
        session_instructions: Some("{{ nope }}".into()),
        ..Fixture::new().inputs()
    };
    let err = render_prompt(&inputs).unwrap_err().to_string();
    assert!(
        err.contains("session instructions layer (start --instructions)"),
        "{err}"
    );
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn template_syntax_errors_name_the_source() {
    let fx = Fixture::new();
    let path = fx.write("identity.md", "You are {{ pod_name");
    let inputs = PromptInputs {
        identity_file: Some(path.clone()),
        ..fx.inputs()
    };
    let err = render_prompt(&inputs).unwrap_err().to_string();
    assert!(
        err.contains(&format!("identity layer ({})", path.display())),
        "{err}"
    );
}

#[test]
fn identity_file_replaces_the_built_in_and_is_templated() {
    let fx = Fixture::new();
    let path = fx.write(
        "identity.md",
        "I am {{ pod_name }} on {{ model }} in {{ cwd }}, {{ current_date }}; tools: {{ tools | join(', ') }}\n",
    );
    let inputs = PromptInputs {
        identity_file: Some(path.clone()),
        tools: vec![
            ToolSpec {
                name: "a".into(),
                description: String::new(),
                parameters: json!({}),
            },
            ToolSpec {
                name: "b".into(),
                description: String::new(),
                parameters: json!({}),
            },
        ],
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    let identity = layer(&prompt, LayerKind::Identity);
    assert_eq!(identity.source, path.display().to_string());
    assert_eq!(
        identity.text.as_deref().unwrap(),
        format!(
            "I am scout on test-model in {}, 2026-05-01; tools: a, b",
            fx.path("project/sub").display()
        )
    );
}

#[test]
fn unreadable_identity_file_is_an_error_naming_it() {
    let fx = Fixture::new();
    let path = fx.path("missing-identity.md");
    let inputs = PromptInputs {
        identity_file: Some(path.clone()),
        ..fx.inputs()
    };
    let err = render_prompt(&inputs).unwrap_err();
    assert!(matches!(err, PromptError::Read { .. }));
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn missing_custom_instructions_are_skipped_but_unreadable_ones_are_an_error() {
    let fx = Fixture::new();
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let custom = layer(&prompt, LayerKind::CustomInstructions);
    assert_eq!(custom.text, None);

    std::fs::create_dir(fx.path("config/instructions.md")).unwrap();
    let err = render_prompt(&fx.inputs()).unwrap_err().to_string();
    assert!(err.contains("custom instructions"), "{err}");
}

#[test]
fn empty_sources_count_as_absent() {
    let fx = Fixture::new();
    fx.write("project/AGENTS.md", "\n\n");
    fx.write("config/instructions.md", "  ");
    let inputs = PromptInputs {
        session_instructions: Some(String::new()),
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    for kind in [
        LayerKind::ProjectInstructions,
        LayerKind::CustomInstructions,
        LayerKind::SessionInstructions,
    ] {
        assert_eq!(layer(&prompt, kind).text, None, "{kind:?}");
    }
}

#[test]
fn workflows_without_front_matter_are_listed_by_slug() {
    let fx = Fixture::new();
    fx.write(
        &format!("project/sub/{WORKFLOWS_DIR}/zeta.md"),
        "no front matter",
    );
    fx.write(
        &format!("project/sub/{WORKFLOWS_DIR}/alpha.md"),
        "---\narguments: a path\n---\nbody",
    );
    let prompt = render_prompt(&fx.inputs()).unwrap();
    let text = layer(&prompt, LayerKind::Workflows).text.clone().unwrap();
    assert!(
        text.ends_with("\n\n- /alpha (arguments: a path)\n- /zeta"),
        "{text}"
    );
}

#[test]
fn explain_names_every_layer_with_its_source() {
    let fx = Fixture::new();
    let inputs = PromptInputs {
        session_instructions: Some("Be brief.".into()),
        ..fx.inputs()
    };
    let explained = render_prompt(&inputs).unwrap().explain();
    let cwd = fx.path("project/sub");
    assert!(explained.starts_with("system prompt: "), "{explained}");
    assert!(explained.contains("from 2 of 7 layers"), "{explained}");
    assert!(explained.contains("── identity (built-in) ──\nYou are scout"));
    assert!(explained.contains("── tool catalogue: absent (no tools are enabled) ──"));
    assert!(explained.contains(
        "── session instructions (start --instructions) ──\n# Instructions for this pod\n\nBe brief."
    ));
    assert!(explained.contains(&format!(
        "── project instructions: absent (no AGENTS.md from {} upward) ──",
        cwd.display()
    )));
    assert!(explained.contains(&format!(
        "── custom instructions: absent (no {}) ──",
        fx.path("config/instructions.md").display()
    )));
    let headers = explained.lines().filter(|l| l.starts_with("── ")).count();
    assert_eq!(headers, 7);
}

#[test]
fn explain_shows_a_truncation_note_in_the_header() {
    let fx = Fixture::new();
    let path = fx.write("project/AGENTS.md", &"a".repeat(MAX_AGENTS_MD_BYTES + 1));
    let explained = render_prompt(&fx.inputs()).unwrap().explain();
    assert!(explained.contains(&format!(
        "── project instructions ({}; truncated to the first 65,536 of 65,537 bytes) ──",
        path.display()
    )));
}

#[test]
fn the_prompt_does_not_depend_on_anything_outside_its_inputs_and_files() {
    // Two fixtures with identical content at different paths differ only by those paths.
    let a = Fixture::new();
    let b = Fixture::new();
    let text_a = render_prompt(&a.full_inputs()).unwrap().text;
    let text_b = render_prompt(&b.full_inputs()).unwrap().text;
    let normalise = |text: &str, root: &Path| text.replace(&root.display().to_string(), "ROOT");
    assert_eq!(
        normalise(&text_a, a.dir.path()),
        normalise(&text_b, b.dir.path())
    );
}

mod small;

/// The full prompt, byte for byte: every new segment says this, so a change to it is made on
/// purpose and its diff reviewed (the last one dropped the catalogue's copy of the schemas:
/// docs/agent-loop.md §A lean request).
#[test]
fn the_full_prompt_is_pinned_byte_for_byte() {
    let fx = Fixture::new();
    let text = render_prompt(&fx.full_inputs()).unwrap().text;
    let text = text.replace(&fx.dir.path().display().to_string(), "ROOT");
    // `SEEDPOD_BLESS=1` rewrites the golden after a deliberate change (review its diff).
    if std::env::var_os("SEEDPOD_BLESS").is_some() {
        let golden =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("src/prompt/tests/full_prompt.golden");
        std::fs::write(golden, &text).expect("write the golden");
    }
    assert_eq!(text, include_str!("tests/full_prompt.golden"));
}

/// A repository's `AGENTS.md` that links to a private file outside it: the model gets a note
/// saying instructions were withheld, never the file; the person gets an alert naming the
/// target. A link that stays inside the project is read as before.
#[test]
fn agents_md_linked_out_of_the_project_is_a_note_and_an_alert_not_its_content() {
    let fx = Fixture::new();
    let mut inputs = fx.full_inputs();
    let secret = fx.write("elsewhere/id_rsa", "PRIVATE-KEY-MARKER");
    std::fs::remove_file(fx.path("project/AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(&secret, fx.path("project/AGENTS.md")).unwrap();
    for mode in [PromptMode::Full, PromptMode::Small] {
        inputs.mode = mode;
        let prompt = render_prompt(&inputs).unwrap();
        assert!(!prompt.text.contains("PRIVATE-KEY-MARKER"), "{mode:?}");
        let project = layer(&prompt, LayerKind::ProjectInstructions);
        let text = project.text.as_deref().unwrap();
        assert!(text.contains("Not included"), "{text}");
        assert!(text.contains("outside the project"), "{text}");
        assert!(
            !text.contains("id_rsa"),
            "the target is not the model's: {text}"
        );
        let alerts = prompt.alerts();
        assert_eq!(alerts.len(), 1, "{alerts:?}");
        assert!(alerts[0].contains("id_rsa"), "{}", alerts[0]);
        assert!(
            prompt.explain().contains("not read"),
            "{}",
            prompt.explain()
        );
    }
}

#[test]
fn agents_md_linked_inside_the_project_is_read() {
    let fx = Fixture::new();
    fx.write("project/docs/rules.md", "rules from docs");
    std::os::unix::fs::symlink("docs/rules.md", fx.path("project/AGENTS.md")).unwrap();
    let prompt = render_prompt(&fx.inputs()).unwrap();
    assert!(prompt.text.contains("rules from docs"), "{}", prompt.text);
    assert!(prompt.alerts().is_empty());
}

#[test]
fn a_workflow_linked_out_of_the_project_lends_it_no_description() {
    let fx = Fixture::new();
    let outside = fx.write(
        "elsewhere/notes.md",
        "---\ndescription: LEAKED-DESCRIPTION\n---\nbody",
    );
    let flows = fx.path(&format!("project/sub/{WORKFLOWS_DIR}"));
    std::fs::create_dir_all(&flows).unwrap();
    std::os::unix::fs::symlink(&outside, flows.join("leak.md")).unwrap();
    let prompt = render_prompt(&fx.inputs()).unwrap();
    assert!(
        prompt.text.contains("/leak"),
        "still listed: {}",
        prompt.text
    );
    assert!(
        !prompt.text.contains("LEAKED-DESCRIPTION"),
        "{}",
        prompt.text
    );
}
