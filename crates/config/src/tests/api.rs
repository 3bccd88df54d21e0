//! `api = "chat" | "responses"`: another way to write the OpenAI provider, with errors for the
//! values and combinations that cannot mean anything, and no way for an untrusted project to
//! change the API the person's pods speak.

use super::Fixture;
use crate::*;

fn provider(fx: &Fixture) -> ProviderChoice {
    fx.resolve().unwrap().provider.unwrap().value
}

#[test]
fn api_picks_the_openai_api_beside_the_provider_or_below_it() {
    for (text, want) in [
        (
            "provider = \"openai\"\napi = \"responses\"\n",
            ProviderChoice::OpenaiResponses,
        ),
        (
            "provider = \"openai\"\napi = \"chat\"\n",
            ProviderChoice::Openai,
        ),
        ("provider = \"openai\"\n", ProviderChoice::Openai),
        (
            "provider = \"openai-responses\"\napi = \"responses\"\n",
            ProviderChoice::OpenaiResponses,
        ),
    ] {
        let fx = Fixture::new();
        fx.user_file(text);
        assert_eq!(provider(&fx), want, "{text}");
    }
    let fx = Fixture::new();
    fx.user_file("provider = \"openai\"\napi = \"responses\"\n");
    let shown = show::render(&fx.resolve().unwrap(), "t", &|_: &str| None);
    assert!(shown.contains("provider = \"openai-responses\""), "{shown}");
}

#[test]
fn a_trusted_project_may_switch_the_api_of_the_persons_openai_provider() {
    let fx = Fixture::new();
    fx.user_file("provider = \"openai\"\n");
    fx.trusted_project_file("api = \"responses\"\n");
    assert_eq!(provider(&fx), ProviderChoice::OpenaiResponses);
    fx.trusted_project_file("api = \"chat\"\n");
    assert_eq!(provider(&fx), ProviderChoice::Openai);
    let fx = Fixture::new();
    fx.user_file("provider = \"openai-responses\"\n");
    fx.trusted_project_file("api = \"chat\"\n");
    assert_eq!(provider(&fx), ProviderChoice::Openai);
}

#[test]
fn an_untrusted_project_cannot_switch_the_api() {
    let fx = Fixture::new();
    fx.user_file("provider = \"openai\"\n");
    fx.project_file("api = \"responses\"\n");
    let eff = fx.resolve().unwrap();
    assert_eq!(eff.provider.as_ref().unwrap().value, ProviderChoice::Openai);
    let warning = eff.untrusted_warning().unwrap();
    assert!(warning.contains("provider"), "{warning}");
    // Naming the API the person already uses changes nothing, so it needs no trust.
    fx.project_file("api = \"chat\"\n");
    let eff = fx.resolve().unwrap();
    assert_eq!(eff.provider.unwrap().value, ProviderChoice::Openai);
    assert!(eff.ignored.is_empty());
}

#[test]
fn an_api_that_cannot_apply_is_refused_in_words() {
    for (text, said) in [
        // An unknown value names the allowed ones.
        (
            "provider = \"openai\"\napi = \"completions\"\n",
            "`chat` or `responses`",
        ),
        ("provider = \"openai\"\napi = 1\n", "line 2"),
        (
            "provider = \"anthropic\"\napi = \"responses\"\n",
            "only applies to the openai provider",
        ),
        (
            "provider = \"scripted\"\napi = \"chat\"\n",
            "only applies to the openai provider",
        ),
        ("api = \"responses\"\n", "no provider is set"),
        (
            "provider = \"openai-responses\"\napi = \"chat\"\n",
            "contradicts",
        ),
    ] {
        let fx = Fixture::new();
        fx.user_file(text);
        let err = fx.resolve().unwrap_err().to_string();
        assert!(err.contains(said), "{text}: {err}");
        assert!(err.contains("config.toml") || err.contains("api"), "{err}");
        assert!(!err.contains("OpenaiApi"), "no type names: {err}");
    }
}
