//! `[responses]`: layering, what a new pod records, what an untrusted project may not set, and
//! the errors a person gets for values that cannot work.

use seedpod_protocol::{ReasoningEffort, ReasoningSummary, ResponsesOptions};

use super::Fixture;
use crate::*;

#[test]
fn defaults_send_nothing_extra_and_keep_store_off() {
    let eff = Fixture::new().resolve().unwrap();
    assert_eq!(eff.responses.options(), ResponsesOptions::default());
    assert!(!eff.responses.store.value);
}

#[test]
fn each_key_layers_on_its_own_and_the_project_may_tighten() {
    let fx = Fixture::new();
    fx.user_file(
        "provider = \"openai-responses\"\n[responses]\nstore = true\nreasoning_effort = \"high\"\n",
    );
    fx.project_file("[responses]\nreasoning_summary = \"detailed\"\nstore = false\n");
    let eff = fx.resolve().unwrap();
    assert_eq!(
        eff.provider.as_ref().unwrap().value,
        ProviderChoice::OpenaiResponses
    );
    assert_eq!(
        eff.responses.options(),
        ResponsesOptions {
            store: false,
            reasoning_effort: Some(ReasoningEffort::High),
            reasoning_summary: Some(ReasoningSummary::Detailed),
            parallel_tool_calls: None,
        }
    );
    assert!(eff.ignored.is_empty(), "turning store off is a tightening");
    let text = show::render(&eff, "t", &|_: &str| None);
    assert!(text.contains("[responses]"), "{text}");
    assert!(text.contains("reasoning_effort = \"high\""), "{text}");
}

#[test]
fn an_untrusted_project_cannot_make_openai_keep_the_conversation() {
    let fx = Fixture::new();
    fx.user_file("provider = \"openai-responses\"\n");
    let text = "[responses]\nstore = true\nreasoning_effort = \"low\"\n";
    fx.project_file(text);
    let eff = fx.resolve().unwrap();
    assert!(!eff.responses.store.value, "store stays off");
    assert_eq!(
        eff.responses.options().reasoning_effort,
        Some(ReasoningEffort::Low),
        "effort only shapes a request to the person's own model"
    );
    let warning = eff.untrusted_warning().unwrap();
    assert!(warning.contains("responses.store"), "{warning}");
    fx.trusted_project_file(text);
    assert!(fx.resolve().unwrap().responses.store.value);
}

#[test]
fn an_existing_pod_keeps_what_it_was_created_with() {
    let fx = Fixture::new();
    fx.user_file("[responses]\nstore = true\nparallel_tool_calls = false\n");
    let mut eff = fx.resolve().unwrap();
    let recorded = ResponsesOptions {
        reasoning_effort: Some(ReasoningEffort::Minimal),
        ..ResponsesOptions::default()
    };
    eff.keep_recorded_responses(Some(recorded));
    assert_eq!(eff.responses.options(), recorded);
    assert_eq!(eff.responses.store.source, Source::Recorded);
    eff.keep_recorded_responses(None);
    assert_eq!(eff.responses.options(), ResponsesOptions::default());
}

#[test]
fn a_wrong_value_or_key_is_refused_naming_it() {
    for (text, named) in [
        ("[responses]\nreasoning_effort = \"extreme\"\n", "extreme"),
        ("[responses]\nreasoning_summary = 3\n", "line 2"),
        ("[responses]\nstor = true\n", "stor"),
    ] {
        let fx = Fixture::new();
        fx.user_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.contains(named), "{text}: {err}");
        assert!(err.contains("config.toml"), "{err}");
    }
}

#[test]
fn the_provider_name_is_spelled_with_a_dash_everywhere() {
    assert_eq!(
        ProviderChoice::parse("openai-responses"),
        Some(ProviderChoice::OpenaiResponses)
    );
    assert_eq!(ProviderChoice::OpenaiResponses.as_str(), "openai-responses");
    assert_eq!(
        ProviderChoice::OpenaiResponses.kind().as_str(),
        "openai-responses"
    );
    let fx = Fixture::new();
    fx.user_file("provider = \"openai_responses\"\n");
    let err = fx.resolve().unwrap_err().to_string();
    assert!(err.contains("openai_responses"), "{err}");
}
