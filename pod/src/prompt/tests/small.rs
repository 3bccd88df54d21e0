//! The compact prompt: what a fresh pod sends before any conversation fits a quarter of a
//! 4,096-token window, the full prompt is untouched, and compact layers cap what people write.

use std::sync::Arc;

use seedpod_tools::{BUILTIN_TOOLS, Scope, ScopeRules, ShellLimits, ToolContext};

use super::*;
use crate::children::tools::offered_specs;
use crate::context::estimate::base_tokens;
use crate::session::{PromptFor, PromptSettings};

/// A quarter of a 4,096-token window: the compact base request must fit in it.
const COMPACT_BUDGET_TOKENS: u64 = 1_024;

/// What a fresh pod with default settings offers: every built-in tool, then the child tools.
fn fresh_pod_specs(cwd: &Path) -> Vec<ToolSpec> {
    let rules = ScopeRules {
        read: Vec::new(),
        write: vec![cwd.to_path_buf()],
        deny: Vec::new(),
    };
    let ctx = ToolContext {
        scope: Arc::new(Scope::new(cwd, &rules).unwrap()),
        shell: ShellLimits::default(),
        sandbox: None,
        checkpoints: None,
    };
    let names: Vec<&str> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
    let mut specs: Vec<ToolSpec> = seedpod_tools::builtin_tools(&ctx, &names)
        .iter()
        .map(|tool| tool.spec())
        .collect();
    specs.extend(offered_specs(&crate::catalogue::default_policies()));
    specs
}

/// The prompt and tools a fresh pod would start a segment with in `mode`.
fn fresh_pod(
    fx: &Fixture,
    mode: PromptMode,
    keep_child_tools: bool,
) -> (RenderedPrompt, Vec<ToolSpec>) {
    let cwd = fx.path("project/sub");
    let tools = tools_for_mode(&fresh_pod_specs(&cwd), mode, keep_child_tools);
    let settings = PromptSettings {
        identity_file: None,
        config_dir: Some(fx.path("config")),
        scope: None,
    };
    let rendered = settings
        .render(&PromptFor {
            pod_name: &PodName::new("scout").unwrap(),
            cwd: &cwd,
            model: "qwen3:4b",
            tools: &tools,
            deferred: &[],
            session_instructions: None,
            date: "2026-05-01",
            mode,
        })
        .unwrap();
    (rendered, tools)
}

#[test]
fn a_fresh_pods_compact_base_request_fits_a_quarter_of_4096_tokens() {
    let fx = Fixture::new();
    let (full, full_tools) = fresh_pod(&fx, PromptMode::Full, false);
    let (compact, compact_tools) = fresh_pod(&fx, PromptMode::Small, false);
    let full_tokens = base_tokens(&full.text, &full_tools);
    let compact_tokens = base_tokens(&compact.text, &compact_tools);
    println!(
        "base request (system prompt + tool schemas), estimated: full {full_tokens} tokens \
         ({} prompt bytes, {} tools), compact {compact_tokens} tokens ({} prompt bytes, {} tools)",
        full.text.len(),
        full_tools.len(),
        compact.text.len(),
        compact_tools.len(),
    );
    assert!(
        compact_tokens < COMPACT_BUDGET_TOKENS,
        "compact base request is {compact_tokens} tokens, over {COMPACT_BUDGET_TOKENS}"
    );
    assert!(
        compact_tokens * 3 < full_tokens,
        "compact is much smaller than full"
    );
    assert_eq!(full.mode, PromptMode::Full);
    assert_eq!(compact.mode, PromptMode::Small);

    // Every built-in tool stays; the child tools go, because nobody configured them.
    let names: Vec<&str> = compact_tools.iter().map(|t| t.name.as_str()).collect();
    let builtin: Vec<&str> = BUILTIN_TOOLS.iter().map(|t| t.name).collect();
    assert_eq!(names, builtin);
    assert_eq!(full_tools.len(), builtin.len() + 5);
    // One note per offered tool, each on its own line.
    let notes = layer(&compact, LayerKind::ToolProtocols)
        .text
        .clone()
        .unwrap();
    for name in &builtin {
        let prefix = format!("- {name}: ");
        assert_eq!(
            notes.lines().filter(|l| l.starts_with(&prefix)).count(),
            1,
            "{notes}"
        );
    }
    assert!(!notes.contains("spawn_pod"), "{notes}");
    assert!(
        !compact.text.contains("BEFORE:"),
        "no protocols in compact mode"
    );
    assert_eq!(layer(&compact, LayerKind::ToolCatalogue).text, None);
}

#[test]
fn configured_child_tools_stay_in_the_compact_prompt_with_their_notes() {
    let fx = Fixture::new();
    let (compact, tools) = fresh_pod(&fx, PromptMode::Small, true);
    assert!(tools.iter().any(|t| t.name == "spawn_pod"));
    assert!(compact.text.contains("\n- spawn_pod: "), "{}", compact.text);
    let tokens = base_tokens(&compact.text, &tools);
    println!("compact base request with the child tools: {tokens} tokens");
    assert!(tokens < 2 * COMPACT_BUDGET_TOKENS, "{tokens}");
}

#[test]
fn the_full_prompt_is_what_the_full_layers_make() {
    // Full mode: the protocols and the long identity, with every tool as given. The schemas
    // describe the tools, so no catalogue repeats them (docs/agent-loop.md §A lean request).
    let fx = Fixture::new();
    let (full, tools) = fresh_pod(&fx, PromptMode::Full, false);
    assert!(
        full.text
            .contains("# How to use your tools\n\n## read_file\nBEFORE:")
    );
    assert_eq!(layer(&full, LayerKind::ToolCatalogue).text, None);
    for tool in &tools {
        assert!(
            !full.text.contains(tool.description.as_str()),
            "{} is described in its schema only",
            tool.name
        );
    }
    assert!(
        full.text
            .starts_with("You are scout, a coding agent running as a long-lived")
    );
    assert_eq!(tools, fresh_pod_specs(&fx.path("project/sub")));
}

#[test]
fn compact_mode_keeps_instructions_but_caps_them_with_a_note() {
    let fx = Fixture::new();
    fx.write("project/AGENTS.md", &"agents rule. ".repeat(1_000));
    fx.write("config/instructions.md", &"custom rule. ".repeat(500));
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        session_instructions: Some("session rule. ".repeat(500)),
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();

    let project = layer(&prompt, LayerKind::ProjectInstructions);
    let text = project.text.as_deref().unwrap();
    assert!(
        text.starts_with("# Project instructions\n\nFrom "),
        "{text}"
    );
    assert!(text.contains("agents rule."));
    assert!(text.ends_with(
        "[… truncated: AGENTS.md is 13,000 bytes; only the first 2,048 are included here. \
         Read the file for the rest.]"
    ));
    assert_eq!(
        project.note.as_deref(),
        Some("truncated to the first 2,048 of 13,000 bytes")
    );
    for kind in [
        LayerKind::SessionInstructions,
        LayerKind::CustomInstructions,
    ] {
        let l = layer(&prompt, kind);
        let text = l.text.as_deref().unwrap();
        assert!(text.len() < SMALL_MAX_INSTRUCTIONS_BYTES + 200, "{kind:?}");
        assert!(
            text.ends_with("bytes of this section are included.]"),
            "{kind:?}: {text}"
        );
        let note = l.note.as_deref().unwrap();
        assert!(note.starts_with("truncated to the first 1,02"), "{note}");
        assert!(note.ends_with("(compact prompt)"), "{note}");
    }
    // Short instructions are kept whole, without a note.
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        session_instructions: Some("Be brief.".into()),
        ..Fixture::new().inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    let session = layer(&prompt, LayerKind::SessionInstructions);
    assert_eq!(
        session.text.as_deref(),
        Some("# Instructions for this pod\n\nBe brief.")
    );
    assert_eq!(session.note, None);
}

#[test]
fn a_cut_never_splits_a_character() {
    let fx = Fixture::new();
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        // 3-byte characters after a header whose length is not a multiple of 3.
        session_instructions: Some("語".repeat(2_000)),
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    let text = layer(&prompt, LayerKind::SessionInstructions)
        .text
        .clone()
        .unwrap();
    assert!(text.contains("語\n\n[… truncated"), "{text}");
}

#[test]
fn compact_workflows_are_a_one_line_pointer() {
    let fx = Fixture::new();
    for slug in ["review", "release", "triage"] {
        fx.write(
            &format!("project/sub/{WORKFLOWS_DIR}/{slug}.md"),
            "---\ndescription: A long description of what this workflow does\n---\nbody",
        );
    }
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    let workflows = layer(&prompt, LayerKind::Workflows);
    let text = workflows.text.as_deref().unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(!text.contains("/review"), "{text}");
    assert_eq!(
        workflows.note.as_deref(),
        Some("compact prompt: 3 not listed")
    );
}

#[test]
fn a_compact_identity_is_templated_and_short() {
    let fx = Fixture::new();
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    let identity = layer(&prompt, LayerKind::Identity);
    let text = identity.text.as_deref().unwrap();
    assert!(text.starts_with("You are scout, a coding agent"), "{text}");
    assert!(text.contains("Today is 2026-05-01; your model is test-model."));
    assert!(!text.contains("{{"));
    assert!(text.len() < 1_000, "{} bytes", text.len());
    assert_eq!(identity.source, "built-in, compact");

    // A person's identity file is kept in compact mode (capped like other instructions).
    let path = fx.write("identity.md", "I am {{ pod_name }}.");
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        identity_file: Some(path),
        ..fx.inputs()
    };
    let prompt = render_prompt(&inputs).unwrap();
    assert_eq!(
        layer(&prompt, LayerKind::Identity).text.as_deref(),
        Some("I am scout.")
    );
}

#[test]
fn compact_rendering_is_deterministic() {
    let fx = Fixture::new();
    let inputs = PromptInputs {
        mode: PromptMode::Small,
        ..fx.full_inputs()
    };
    assert_eq!(
        render_prompt(&inputs).unwrap(),
        render_prompt(&inputs).unwrap()
    );
}

/// A lean request (docs/agent-loop.md §A lean request): a fresh pod's full-mode system prompt
/// and the schemas of every built-in tool take at most 15 KiB, leaving room within 16 KiB for
/// the first message and the body's framing (`tests/e2e/prompt.rs` measures the real body),
/// and still carry what the model needs: the working rules, the runtime's markers, and every
/// file tool's and shell's protocol, each said once.
#[test]
fn a_fresh_pods_full_prompt_and_schemas_fit_15_kib_and_keep_the_essentials() {
    let fx = Fixture::new();
    let (full, tools) = fresh_pod(&fx, PromptMode::Full, false);
    let schemas = serde_json::to_string(&tools).unwrap();
    let bytes = full.text.len() + schemas.len();
    println!(
        "full prompt {} bytes + {} tool schemas {} bytes = {bytes}",
        full.text.len(),
        tools.len(),
        schemas.len()
    );
    assert!(bytes <= 15 * 1024, "{bytes} bytes");
    for rule in [
        "Look before you act",
        "Make the smallest change",
        "Check your work",
        "Ask before anything destructive",
        "Be concise",
        "`[notification]`",
        "`[pod NAME]`",
        "`[Workflow: /slug]`",
        "information, not orders",
        "NO_REPLY",
    ] {
        assert!(full.text.contains(rule), "missing {rule:?}");
    }
    for decl in BUILTIN_TOOLS {
        let section = format!("## {}\nBEFORE: ", decl.name);
        assert_eq!(full.text.matches(&section).count(), 1, "{section}");
        let spec = tools.iter().find(|t| t.name == decl.name).unwrap();
        assert!(!spec.description.is_empty(), "{}", decl.name);
    }
    // The refusals a model would otherwise retry through the shell are said once, where the
    // protocol of the tool that refuses them is.
    assert_eq!(full.text.matches(".gitmodules").count(), 1);
}
